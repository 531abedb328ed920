/**
 * Preloaded by scripts/bench.mjs (`node --import`) into a measured process and,
 * through execArgv, into each of its worker threads: times every call of the
 * tokenizer (js-tiktoken's encode) and, when the thread exits, appends one line
 * `{"ms":…,"calls":…,"chars":…}` to the file named by $CTXSIM_BENCH_TIMER.
 */
import { appendFileSync } from 'node:fs';
import { Tiktoken } from 'js-tiktoken/lite';

const file = process.env.CTXSIM_BENCH_TIMER;
const total = { ms: 0, calls: 0, chars: 0 };
const encode = Tiktoken.prototype.encode;
Tiktoken.prototype.encode = function timedEncode(text, ...rest) {
  const t0 = performance.now();
  try {
    return encode.call(this, text, ...rest);
  } finally {
    total.ms += performance.now() - t0;
    total.calls++;
    total.chars += text.length;
  }
};
if (file) process.on('exit', () => appendFileSync(file, `${JSON.stringify(total)}\n`));
