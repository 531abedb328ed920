/**
 * Bounded-time token counting. js-tiktoken's byte-pair merge is quadratic in
 * the length of a pre-tokenized piece, so a 50,000-character run without
 * spaces (a DNA string, `"a"` × 50,000) takes minutes, and even short random
 * pieces are slow in bulk. A text is counted exactly when its BPE work fits a
 * budget; beyond it, part of the work is sampled and the rest extrapolated,
 * and the count is flagged as an estimate. Every exact count is the
 * tokenizer's own: a text is the sum of its pre-tokenized pieces, and a piece
 * encoded alone is that same piece (the pattern has no look-behind, and its
 * only look-ahead, `(?!\S)`, succeeds at the end of a text).
 *
 * The constants are measured; docs/README-tokens.md has the table.
 */

/** A token count, and whether it is an estimate (the text was too costly to count exactly). */
export interface TokenCount {
  tokens: number;
  estimated: boolean;
}

/** Counts the tokens of a text through the tokenizer (no bounds). */
export type EncodeLength = (text: string) => number;

/** The knobs of bounded counting. */
export interface Limits {
  /** Texts up to this many UTF-16 units are encoded in one call, unscanned (worst case ~80 ms). */
  shortText: number;
  /** Texts up to this many units with no run (of spaces or of non-spaces) as long as `run` are encoded in one call. */
  mediumText: number;
  run: number;
  /** Exact BPE work allowed per text, in `pieceWork` units (about 0.1 µs each on the reference machine). */
  budget: number;
  /** Pieces longer than this many UTF-8 bytes are estimated from windows; shorter ones are sampled whole. */
  longPiece: number;
  /** UTF-8 bytes per window sampled from a long piece. */
  window: number;
}

export const LIMITS: Readonly<Limits> = {
  shortText: 256,
  mediumText: 4096,
  run: 32,
  budget: 8_000_000,
  longPiece: 256,
  window: 128,
};

/**
 * The cost of encoding one piece of `bytes` UTF-8 bytes, in units of about
 * 0.1 µs: the merge loop rescans every pair after each merge (b²), plus
 * per-byte and per-call overhead. Fitted on random letters, DNA, CJK and runs.
 */
export function pieceWork(bytes: number): number {
  return bytes * bytes + 32 * bytes + 32;
}

/** One distinct piece of a text. */
interface Piece {
  text: string;
  bytes: number;
  /** How often it occurs in the text. */
  times: number;
  /** Exact tokens, or -1 while not counted. */
  tokens: number;
}

/**
 * Makes a counter that never spends much more than `limits.budget` of BPE
 * work on one text. `pattern` is the encoding's pre-tokenizer (`pat_str`).
 *
 * Phases, cheapest first:
 * 1. short text, or medium text without long runs: one `encode` call (exact);
 * 2. scan the pieces; total work within budget: one `encode` call (exact);
 * 3. distinct pieces within budget: each distinct piece once (exact);
 * 4. otherwise estimate: short pieces repeated in the text are counted first,
 *    then a systematic sample of the others per byte length; long pieces
 *    are estimated from evenly spaced windows (tokens per byte × bytes).
 */
export function boundedCounter(encodeLength: EncodeLength, pattern: string, limits: Readonly<Limits> = LIMITS): (text: string) => TokenCount {
  const re = new RegExp(pattern, 'gu');
  const runs = new RegExp(`\\S{${limits.run}}|\\s{${limits.run}}`);
  const exact = (p: Piece) => {
    if (p.tokens < 0) p.tokens = encodeLength(p.text);
    return p.tokens;
  };

  return (text) => {
    if (text.length <= limits.shortText || (text.length <= limits.mediumText && !runs.test(text))) {
      return { tokens: encodeLength(text), estimated: false };
    }
    const pieces = scan(re, text);
    let all = 0;
    let distinct = 0;
    for (const p of pieces) {
      const w = pieceWork(p.bytes);
      distinct += w;
      all += w * p.times;
    }
    if (all <= limits.budget) return { tokens: encodeLength(text), estimated: false };
    if (distinct <= limits.budget) {
      let tokens = 0;
      for (const p of pieces) tokens += exact(p) * p.times;
      return { tokens, estimated: false };
    }

    const short = pieces.filter((p) => p.bytes <= limits.longPiece);
    const long = pieces.filter((p) => p.bytes > limits.longPiece);
    const ws = totalWork(short);
    const wl = totalWork(long);
    // Whichever side is cheap is counted exactly; the rest of the budget goes to the other.
    const half = limits.budget / 2;
    const shortBudget = ws <= half ? ws : wl <= half ? limits.budget - wl : half;
    const longBudget = limits.budget - shortBudget;
    const s = estimateShort(short, shortBudget, exact);
    const l = estimateLong(long, longBudget, limits.window, encodeLength, s.rate);
    return { tokens: Math.round(s.tokens + l), estimated: true };
  };
}

/** The distinct pieces of a text, in order of first occurrence, with how often each occurs. */
function scan(re: RegExp, text: string): Piece[] {
  const byText = new Map<string, Piece>();
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const t = m[0];
    const p = byText.get(t);
    if (p) p.times++;
    else byText.set(t, { text: t, bytes: Buffer.byteLength(t, 'utf8'), times: 1, tokens: -1 });
  }
  return [...byText.values()];
}

function totalWork(pieces: readonly Piece[]): number {
  let w = 0;
  for (const p of pieces) w += pieceWork(p.bytes);
  return w;
}

/**
 * Short pieces within `budget` of work. Pieces that occur more than once are
 * counted first, most frequent first (their error would be multiplied); of
 * the rest, a systematic sample in each byte length is counted and the
 * others get their length's mean. Returns the tokens and the pooled tokens
 * per byte of the sample (for long pieces without windows of their own).
 */
function estimateShort(pieces: readonly Piece[], budget: number, exact: (p: Piece) => number): { tokens: number; rate: number } {
  const meanByLength = new Map<number, number>();
  if (totalWork(pieces) <= budget) {
    for (const p of pieces) exact(p);
  } else {
    let spent = 0;
    // Stable sort: equal counts keep their order of first occurrence.
    const repeated = pieces.filter((p) => p.times > 1).sort((a, b) => b.times - a.times);
    for (const p of repeated) {
      const w = pieceWork(p.bytes);
      if (spent + w > budget / 2) continue;
      exact(p);
      spent += w;
    }
    const rest = pieces.filter((p) => p.tokens < 0);
    const fraction = Math.min(1, (budget - spent) / Math.max(1, totalWork(rest)));
    const byLength = new Map<number, Piece[]>();
    for (const p of rest) {
      const group = byLength.get(p.bytes);
      if (group) group.push(p);
      else byLength.set(p.bytes, [p]);
    }
    for (const [bytes, group] of byLength) {
      // Every piece in the group costs the same, so selecting floor(n × fraction) keeps within budget.
      let acc = 0;
      let n = 0;
      let sum = 0;
      for (const p of group) {
        acc += fraction;
        if (acc < 1) continue;
        acc -= 1;
        sum += exact(p);
        n++;
      }
      if (n) meanByLength.set(bytes, sum / n);
    }
  }
  let countedTokens = 0;
  let countedBytes = 0;
  for (const p of pieces) {
    if (p.tokens < 0) continue;
    countedTokens += p.tokens;
    countedBytes += p.bytes;
  }
  // Without anything counted (a tiny budget), a quarter token per byte is the usual rate of text.
  const rate = countedBytes ? countedTokens / countedBytes : 0.25;
  let tokens = 0;
  for (const p of pieces) {
    const each = p.tokens >= 0 ? p.tokens : (meanByLength.get(p.bytes) ?? rate * p.bytes);
    tokens += each * p.times;
  }
  return { tokens, rate };
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Long pieces within `budget` of work: exact when it fits; otherwise windows
 * of about `window` bytes at evenly spaced slots over all long pieces, and
 * each piece gets its windows' tokens per byte (or the pooled rate of all
 * windows when none fell in it) times its bytes, plus half a token for the
 * partial token at its end.
 */
function estimateLong(pieces: readonly Piece[], budget: number, window: number, encodeLength: EncodeLength, fallbackRate: number): number {
  if (!pieces.length) return 0;
  let tokens = 0;
  if (totalWork(pieces) <= budget) {
    for (const p of pieces) tokens += encodeLength(p.text) * p.times;
    return tokens;
  }
  const slotsOf = pieces.map((p) => Math.floor(p.bytes / window));
  const slots = slotsOf.reduce((a, b) => a + b, 0);
  const windows = Math.max(1, Math.min(slots, Math.floor(budget / pieceWork(window))));
  const sampled = pieces.map(() => ({ tokens: 0, bytes: 0 }));
  let k = 0;
  let first = 0; // global index of the piece's first slot
  for (const [i, p] of pieces.entries()) {
    const n = slotsOf[i]!;
    const unitsPerWindow = Math.max(1, Math.round((window * p.text.length) / p.bytes));
    // Slots k with floor((k + 0.5) × slots / windows) inside this piece.
    for (; k < windows; k++) {
      const slot = Math.floor(((k + 0.5) * slots) / windows);
      if (slot >= first + n) break;
      let start = Math.floor(((slot - first) * p.text.length) / n);
      let end = Math.min(p.text.length, start + unitsPerWindow);
      if (start > 0 && isLowSurrogate(p.text.charCodeAt(start))) start++;
      if (end < p.text.length && isLowSurrogate(p.text.charCodeAt(end))) end++;
      const w = p.text.slice(start, end);
      sampled[i]!.tokens += encodeLength(w);
      sampled[i]!.bytes += Buffer.byteLength(w, 'utf8');
    }
    first += n;
  }
  let allTokens = 0;
  let allBytes = 0;
  for (const s of sampled) {
    allTokens += s.tokens;
    allBytes += s.bytes;
  }
  const pooled = allBytes ? allTokens / allBytes : fallbackRate;
  for (const [i, p] of pieces.entries()) {
    const s = sampled[i]!;
    const rate = s.bytes ? s.tokens / s.bytes : pooled;
    tokens += (rate * p.bytes + 0.5) * p.times;
  }
  return tokens;
}
