/**
 * Preloaded by scripts/bench.mjs (`node --import`) into a measured process and,
 * through execArgv, into each of its worker threads: times token counting —
 * every call of ctxsim's text counter (pre-tokenizing, the per-piece memo and
 * the js-tiktoken calls it makes), every call of an open-weight tokenizer's
 * encode (@huggingface/tokenizers), loading an open-weight tokenizer, and
 * every direct call of js-tiktoken's encode (the reference rows) — and the first sight of each text in a
 * scenario (`TokenCounter`'s `first`: the text's SHA-256 key, the run's
 * index and the token cache, and counting it when they do not know it),
 * and the simulated memory's reading of texts (what `Readings.get` reads
 * when the cache folder does not hold it: statements, notes, a tool result's
 * lines — language processing that a rerun does not do, as it counts no
 * token), and, when the thread exits, appends one line
 * `{"ms":…,"calls":…,"chars":…,"firstMs":…,"readerMs":…}` to the file named by
 * $CTXSIM_BENCH_TIMER (`ms` the counting; `firstMs` first sight, counting
 * included; `readerMs` the reading).
 */
import { appendFileSync } from 'node:fs';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { Tiktoken } from 'js-tiktoken/lite';
import { BoundedCounter } from '../dist/tokens/bounded.js';
import { TokenCounter } from '../dist/tokens/counter.js';
import { Readings } from '../dist/upkeep/readings.js';

const file = process.env.CTXSIM_BENCH_TIMER;
const total = { ms: 0, calls: 0, chars: 0, firstMs: 0, readerMs: 0 };

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
// Reading a text the cache folder's readings do not hold: the `read` a get is given, timed when it runs.
let reading = 0;
const get = Readings.prototype.get;
Readings.prototype.get = function timedGet(as, text, read) {
  return get.call(this, as, text, () => {
    if (reading) return read();
    reading++;
    const t0 = performance.now();
    try {
      return read();
    } finally {
      total.readerMs += performance.now() - t0;
      reading--;
    }
  });
};
if (file) process.on('exit', () => appendFileSync(file, `${JSON.stringify(total)}\n`));
