import type { TokenCounter } from '../tokens/counter.js';

/** The filler word, as it follows a text. */
const FILLER = ' x';
/** Filler words counted alone to learn what one weighs (`chars4` counts two to a token: one alone would weigh 1). */
const SAMPLE = 64;

/**
 * The text followed by as many filler words as keep it within `target`
 * tokens: the most in [0, 4 × (target − the text's tokens)] (a word may count
 * less than a token: `chars4`).
 *
 * Counting a padded text costs its length, so the number of words is not
 * searched by halving from the top (about 14 counts of up to 8 × target
 * characters for a stand-in of 2,000 tokens): it is guessed from what
 * `SAMPLE` words weigh alone, then found from the guess by steps that
 * double (two counts when the guess is right). Halving found, and this
 * finds, the one number of words that fits with one more not fitting, as
 * long as adding a word never lowers a text's count: true of exact counts
 * with ctxsim's tokenizers (with an OpenAI encoding each word after the
 * first adds one token), not promised of an estimate (bounded.ts), which
 * only a pathological text gets.
 */
export function padTo(tokens: TokenCounter, text: string, target: number): string {
  const room = target - tokens.text(text);
  const most = Math.max(0, room) * 4;
  if (most === 0) return text;
  const fits = (n: number) => tokens.text(text + FILLER.repeat(n)) <= target;
  const each = tokens.text(FILLER.repeat(SAMPLE)) / SAMPLE;
  const guess = each > 0 ? Math.min(most, Math.floor(room / each)) : most;
  // `lo` fits (no words always do: room > 0); `up` does not, or is past `most`.
  let lo = 0;
  let up = most + 1;
  if (fits(guess)) {
    lo = guess;
    for (let step = 1; lo + 1 < up; step *= 2) {
      const n = Math.min(lo + step, up - 1);
      if (!fits(n)) {
        up = n;
        break;
      }
      lo = n;
    }
  } else {
    up = guess;
    for (let step = 1; lo + 1 < up; step *= 2) {
      const n = Math.max(up - step, 1);
      if (fits(n)) {
        lo = n;
        break;
      }
      up = n;
    }
  }
  while (lo + 1 < up) {
    const mid = Math.floor((lo + up) / 2);
    if (fits(mid)) lo = mid;
    else up = mid;
  }
  return text + FILLER.repeat(lo);
}
