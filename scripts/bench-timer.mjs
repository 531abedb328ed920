/**
 * Preloaded by scripts/bench.mjs (`node --import`) into a measured process and,
 * through execArgv, into each of its worker threads: times token counting —
 * every call of ctxsim's text counter (pre-tokenizing, the per-piece memo and
 * the js-tiktoken calls it makes) and every direct call of js-tiktoken's
 * encode (the reference rows) — and, when the thread exits, appends one line
 * `{"ms":…,"calls":…,"chars":…}` to the file named by $CTXSIM_BENCH_TIMER.
 */
import { appendFileSync } from 'node:fs';
import { Tiktoken } from 'js-tiktoken/lite';
import { BoundedCounter } from '../dist/tokens/bounded.js';

const file = process.env.CTXSIM_BENCH_TIMER;
const total = { ms: 0, calls: 0, chars: 0 };
let depth = 0;

/** Wraps a method so that its outermost calls are timed (the counter's own encode calls are inside its time). */
function time(proto, name) {
  const inner = proto[name];
  proto[name] = function timed(text, ...rest) {
    if (depth) return inner.call(this, text, ...rest);
    depth++;
    const t0 = performance.now();
    try {
      return inner.call(this, text, ...rest);
    } finally {
      total.ms += performance.now() - t0;
      total.calls++;
      total.chars += text.length;
      depth--;
    }
  };
}

time(Tiktoken.prototype, 'encode');
time(BoundedCounter.prototype, 'count');
if (file) process.on('exit', () => appendFileSync(file, `${JSON.stringify(total)}\n`));
