/**
 * Preloaded by scripts/bench.mjs (`node --import`) into a measured process and,
 * through execArgv, into each of its worker threads: times token counting —
 * every call of ctxsim's text counter (pre-tokenizing, the per-piece memo and
 * the js-tiktoken calls it makes), every call of an open-weight tokenizer's
 * encode (@huggingface/tokenizers), loading an open-weight tokenizer, and
 * every direct call of js-tiktoken's encode (the reference rows) — and the first sight of each text in a
 * scenario (`TokenCounter`'s `first`: the text's SHA-256 key, the run's
 * index and the token cache, and counting it when they do not know it), and,
 * when the thread exits, appends one line
 * `{"ms":…,"calls":…,"chars":…,"firstMs":…}` to the file named by
 * $CTXSIM_BENCH_TIMER (`ms` the counting; `firstMs` first sight, counting
 * included).
 */
import { appendFileSync } from 'node:fs';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { Tiktoken } from 'js-tiktoken/lite';
import { BoundedCounter } from '../dist/tokens/bounded.js';
import { TokenCounter } from '../dist/tokens/counter.js';

const file = process.env.CTXSIM_BENCH_TIMER;
const total = { ms: 0, calls: 0, chars: 0, firstMs: 0 };

/**
 * A clock adding to `total[field]`: `wrap(proto, name)` times the outermost
 * calls of a method (calls made inside a timed call of the same clock, as the
 * counter's own encode calls, are inside its time).
 */
function clock(field, counted) {
  let depth = 0;
  const wrap = (proto, name) => {
    const inner = proto[name];
    proto[name] = function timed(text, ...rest) {
      if (depth) return inner.call(this, text, ...rest);
      depth++;
      const t0 = performance.now();
      try {
        return inner.call(this, text, ...rest);
      } finally {
        total[field] += performance.now() - t0;
        if (counted) {
          total.calls++;
          total.chars += text.length;
        }
        depth--;
      }
    };
  };
  /** Whether a timed call of this clock is running. */
  wrap.busy = () => depth > 0;
  /** Runs `f` as if inside a timed call of this clock: the calls it makes are not timed apart. */
  wrap.within = (f) => {
    depth++;
    try {
      return f();
    } finally {
      depth--;
    }
  };
  return wrap;
}

const counting = clock('ms', true);
counting(Tiktoken.prototype, 'encode');
counting(HfTokenizer.prototype, 'encode');
counting(BoundedCounter.prototype, 'count');
const firstSight = clock('firstMs', false);
firstSight(TokenCounter.prototype, 'first');

// Loading an open-weight tokenizer (its files, its template) is tokenizer time wherever the call that needs it comes
// from; outside a first sight it is added to that clock too, as first sight is reported less the tokenizer time.
const chat = TokenCounter.prototype.chat;
TokenCounter.prototype.chat = function timedChat() {
  if (this.loadedChat) return chat.call(this);
  const t0 = performance.now();
  try {
    // The load encodes a few texts to check the tokenizer's ids: inside its time, not counted again.
    return counting.within(() => chat.call(this));
  } finally {
    const ms = performance.now() - t0;
    total.ms += ms;
    if (!firstSight.busy()) total.firstMs += ms;
  }
};
if (file) process.on('exit', () => appendFileSync(file, `${JSON.stringify(total)}\n`));
