/**
 * Bounded-time token counting. js-tiktoken's byte-pair merge is quadratic in
 * the length of a pre-tokenized piece, so a 50,000-character run without
 * spaces (a DNA string, `"a"` × 50,000) takes minutes, and even short random
 * pieces are slow in bulk. A text is counted exactly when its BPE work fits a
 * budget; beyond it, part of the text is counted and the rest extrapolated,
 * and the count is flagged as an estimate. Every count of text goes through
 * the tokenizer; a text's count is the sum of its pre-tokenized pieces', and
 * a piece encoded alone is that same piece (the pattern has no look-behind,
 * and its only look-ahead, `(?!\S)`, succeeds at the end of a text).
 *
 * The constants are measured; docs/tokens.md has the table.
 */

/** A token count, and whether it is an estimate (the text was too costly to count exactly). */
export interface TokenCount {
  tokens: number;
  estimated: boolean;
}

/** Counts the tokens of a text through the tokenizer (no bounds). */
export type EncodeLength = (text: string) => number;

/** An encoding's tokenizer without bounds, and its pre-tokenizer pattern (`pat_str`). */
export interface Tokenizer {
  encodeLength: EncodeLength;
  pattern: string;
}

/** The knobs of bounded counting. */
export interface Limits {
  /** Texts up to this many UTF-16 units are encoded in one call, unscanned. */
  shortText: number;
  /** Texts up to `mediumText` units with no run of `run` spaces or non-spaces are encoded in one call, unscanned. */
  mediumText: number;
  run: number;
  /** BPE work allowed per text, in `pieceWork` units (about 0.1 µs each on the reference machine). */
  budget: number;
  /** Pieces longer than this many UTF-8 bytes are estimated from windows. */
  longPiece: number;
  /** UTF-8 bytes per window sampled from a long piece. */
  window: number;
  /** UTF-8 bytes per segment sampled from the rest of the text. */
  segment: number;
}

export const LIMITS: Readonly<Limits> = {
  shortText: 256,
  mediumText: 4096,
  run: 32,
  budget: 6_000_000,
  longPiece: 64,
  window: 128,
  segment: 512,
};

/**
 * The cost of encoding one piece of `bytes` UTF-8 bytes, in units of about
 * 0.1 µs: the merge loop rescans every pair after each merge (b²), plus
 * per-byte and per-call overhead. Fitted on random letters, DNA and CJK.
 */
export function pieceWork(bytes: number): number {
  return bytes * bytes + 32 * bytes + 32;
}

/**
 * The cost of a window cut from a long piece: runs of one character (few,
 * long tokens) cost about twice random text of the same length, and the
 * budget must hold for both.
 */
export function windowWork(bytes: number): number {
  return 2 * bytes * bytes + 32 * bytes + 32;
}

/** The pre-tokenized pieces of a text: positions and UTF-8 sizes, in order. */
interface Pieces {
  start: number[];
  end: number[];
  bytes: number[];
  /** Work of encoding every piece (a single `encode` of the text). */
  all: number;
  /** Each distinct piece and how often it occurs, while their work fits the budget; then undefined. */
  distinct: Map<string, number> | undefined;
}

/** Pieces up to this many UTF-16 units are remembered with their count (longer ones are rare and would hold memory). */
const MEMO_PIECE = 64;
/** Distinct pieces remembered at most; the memo starts afresh beyond (counts are exact either way). */
const MEMO_SIZE = 1 << 17;

/**
 * Counts texts in bounded time, spending at most about `limits.budget` of
 * BPE work on one text. `load` gives the tokenizer; it is called on the
 * first text, not before (loading an encoding takes about half a second).
 *
 * Whether a text is counted exactly or estimated depends on the text alone.
 * Exact counts are sums over pre-tokenized pieces, and each short piece goes
 * through the tokenizer once: chat text repeats its words, so most pieces of
 * a new text were met before (a text's count is the sum of its pieces'
 * counts, see the top of this file).
 *
 * Phases, cheapest first:
 * 1. a short text, or a medium one without long runs: exact, piece by piece;
 * 2. scan the pieces; their total work within budget: exact, piece by piece;
 * 3. the distinct pieces' work within budget: exact, each distinct piece once;
 * 4. otherwise estimate: long pieces from evenly spaced windows (tokens per
 *    byte × bytes), the rest from a systematic sample of segments cut at
 *    piece boundaries (tokens per byte of the sample × bytes).
 */
export class BoundedCounter {
  /** The tokenizer and its pattern, once loaded. */
  private loaded?: { encodeLength: EncodeLength; re: RegExp };
  /** Tokens of each short piece met so far. */
  private readonly memo = new Map<string, number>();

  constructor(
    private readonly load: () => Tokenizer,
    private readonly limits: Readonly<Limits> = LIMITS,
  ) {}

  count(text: string): TokenCount {
    const { encodeLength, re } = (this.loaded ??= this.open());
    const { limits } = this;
    if (text.length <= limits.shortText || (text.length <= limits.mediumText && !hasRun(text, limits.run))) {
      return { tokens: this.byPieces(re, text), estimated: false };
    }
    const pieces = scan(re, text, limits.budget);
    if (pieces.all <= limits.budget) {
      let tokens = 0;
      for (let i = 0; i < pieces.start.length; i++) tokens += this.piece(text.slice(pieces.start[i], pieces.end[i]));
      return { tokens, estimated: false };
    }
    if (pieces.distinct) {
      let tokens = 0;
      for (const [piece, times] of pieces.distinct) tokens += this.piece(piece) * times;
      return { tokens, estimated: false };
    }
    return { tokens: Math.round(estimate(text, pieces, limits, encodeLength)), estimated: true };
  }

  private open(): { encodeLength: EncodeLength; re: RegExp } {
    const t = this.load();
    return { encodeLength: t.encodeLength, re: new RegExp(t.pattern, 'gu') };
  }

  private byPieces(re: RegExp, text: string): number {
    let tokens = 0;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) tokens += this.piece(m[0]);
    return tokens;
  }

  /** Tokens of one piece: remembered when short. */
  private piece(piece: string): number {
    const { encodeLength } = this.loaded!;
    if (piece.length > MEMO_PIECE) return encodeLength(piece);
    let n = this.memo.get(piece);
    if (n === undefined) {
      n = encodeLength(piece);
      if (this.memo.size >= MEMO_SIZE) this.memo.clear();
      // A copy: the piece as matched shares the memory of its whole text.
      this.memo.set(`${piece} `.slice(0, -1), n);
    }
    return n;
  }
}

/** Phase 3 alone, for tests: the sum over distinct pieces of tokens × occurrences (no budget, no memo). */
export function countByPieces(encodeLength: EncodeLength, pattern: string, text: string): number {
  let tokens = 0;
  for (const [piece, times] of scan(new RegExp(pattern, 'gu'), text, Infinity).distinct!) tokens += encodeLength(piece) * times;
  return tokens;
}

/** Phase 4 alone, for tests: the estimate under `limits` (exact when the budget covers everything). */
export function estimateTokens(encodeLength: EncodeLength, pattern: string, text: string, limits: Readonly<Limits> = LIMITS): number {
  return Math.round(estimate(text, scan(new RegExp(pattern, 'gu'), text, 0), limits, encodeLength));
}

/** Scans the pieces of a text; keeps the distinct ones while they fit `budget`. */
function scan(re: RegExp, text: string, budget: number): Pieces {
  const ascii = Buffer.byteLength(text, 'utf8') === text.length;
  const start: number[] = [];
  const end: number[] = [];
  const bytes: number[] = [];
  let all = 0;
  let distinct: Map<string, number> | undefined = new Map();
  let distinctWork = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const piece = m[0];
    const b = ascii ? piece.length : Buffer.byteLength(piece, 'utf8');
    const w = pieceWork(b);
    start.push(m.index);
    end.push(m.index + piece.length);
    bytes.push(b);
    all += w;
    if (distinct) {
      const times = distinct.get(piece);
      if (times !== undefined) distinct.set(piece, times + 1);
      else if ((distinctWork += w) <= budget) distinct.set(piece, 1);
      else distinct = undefined;
    }
  }
  return { start, end, bytes, all, distinct };
}

/** Whitespace as the pattern's `\s` sees it (the code units that can end a whitespace piece). */
function isSpace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Whether the text has `run` spaces or `run` non-spaces in a row (without one, no piece is longer than about twice `run`). */
function hasRun(text: string, run: number): boolean {
  let n = 0;
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const s = isSpace(text.charCodeAt(i));
    if (s !== space) {
      space = s;
      n = 1;
    } else if (++n >= run) return true;
  }
  return false;
}

/** A stretch of whole pieces, counted in one call when sampled. */
interface Segment {
  /** First piece, and one past the last. */
  first: number;
  last: number;
  bytes: number;
  work: number;
  /**
   * Ends in whitespace: alone, the pattern might split its end differently
   * (`\s+(?!\S)` sees the end of the text, not the next piece), so it is
   * counted piece by piece.
   */
  piecewise: boolean;
}

/** A distinct long piece and how often it occurs. */
interface Long {
  text: string;
  bytes: number;
  times: number;
}

/** Estimated tokens of a text whose BPE work exceeds the budget (see `boundedCounter`). */
function estimate(text: string, p: Pieces, limits: Readonly<Limits>, encodeLength: EncodeLength): number {
  const long = new Map<string, Long>();
  const segments: Segment[] = [];
  let seg: Segment | undefined;
  const close = () => {
    if (!seg) return;
    const endsInSpace = seg.last < p.start.length && isSpace(text.charCodeAt(p.end[seg.last - 1]! - 1));
    seg.piecewise = endsInSpace;
    seg = undefined;
  };
  for (let i = 0; i < p.start.length; i++) {
    const b = p.bytes[i]!;
    if (b > limits.longPiece) {
      close();
      const t = text.slice(p.start[i], p.end[i]);
      const l = long.get(t);
      if (l) l.times++;
      else long.set(t, { text: t, bytes: b, times: 1 });
      continue;
    }
    if (!seg) segments.push((seg = { first: i, last: i, bytes: 0, work: 0, piecewise: false }));
    seg.last = i + 1;
    seg.bytes += b;
    seg.work += pieceWork(b);
    // Cut after a piece that does not end in whitespace, where the pattern
    // splits the segment alone as it splits the whole text; past twice the
    // size, cut anyway and count that segment piece by piece.
    if (seg.bytes >= 2 * limits.segment || (seg.bytes >= limits.segment && !isSpace(text.charCodeAt(p.end[i]! - 1)))) close();
  }
  close();
  const longs = [...long.values()];
  let ws = 0;
  for (const s of segments) ws += s.work + pieceWork(0);
  let wl = 0;
  for (const l of longs) wl += windowWork(l.bytes);
  // Whichever side is cheap is counted exactly; the rest of the budget goes to the other.
  const half = limits.budget / 2;
  const segmentBudget = ws <= half ? ws : wl <= half ? limits.budget - wl : half;
  const s = estimateSegments(text, p, segments, segmentBudget, encodeLength);
  return s.tokens + estimateLong(longs, limits.budget - segmentBudget, limits.window, encodeLength, s.rate);
}

/**
 * Segments within `budget`: all of them when they fit; otherwise a systematic
 * sample (every k-th, in text order) and tokens per byte of the sample for
 * the others. Returns the tokens and that rate.
 */
function estimateSegments(
  text: string,
  p: Pieces,
  segments: readonly Segment[],
  budget: number,
  encodeLength: EncodeLength,
): { tokens: number; rate: number } {
  let total = 0;
  for (const s of segments) total += s.work + pieceWork(0);
  const fraction = Math.min(1, budget / Math.max(1, total));
  let acc = 0;
  let tokens = 0;
  let countedBytes = 0;
  let otherBytes = 0;
  for (const s of segments) {
    acc += fraction;
    if (acc >= 1 - 1e-9) {
      acc -= 1;
      if (!s.piecewise) tokens += encodeLength(text.slice(p.start[s.first], p.end[s.last - 1]));
      else for (let i = s.first; i < s.last; i++) tokens += encodeLength(text.slice(p.start[i], p.end[i]));
      countedBytes += s.bytes;
    } else otherBytes += s.bytes;
  }
  // Without any sample (no segments, or a tiny budget) a quarter token per byte is the usual rate of text.
  const rate = countedBytes ? tokens / countedBytes : 0.25;
  return { tokens: tokens + rate * otherBytes, rate };
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The first character of a piece after leading whitespace: runs of one letter differ by letter. */
function signature(piece: string): number {
  return piece.trimStart().codePointAt(0) ?? 0x20;
}

/**
 * Long pieces within `budget`: exact when it fits; otherwise windows of about
 * `window` bytes at evenly spaced slots over all long pieces (a piece no
 * longer than a window is one slot, counted whole when picked). A piece gets
 * its own windows' tokens per byte, or else that of the windows of pieces
 * starting with the same character, or else of all windows, times its bytes,
 * plus half a token for the partial token at its end.
 */
function estimateLong(pieces: readonly Long[], budget: number, window: number, encodeLength: EncodeLength, fallbackRate: number): number {
  if (!pieces.length) return 0;
  let tokens = 0;
  let work = 0;
  for (const p of pieces) work += windowWork(p.bytes);
  if (work <= budget) {
    for (const p of pieces) tokens += encodeLength(p.text) * p.times;
    return tokens;
  }
  const slotsOf = pieces.map((p) => Math.max(1, Math.floor(p.bytes / window)));
  const slots = slotsOf.reduce((a, b) => a + b, 0);
  const windows = Math.max(1, Math.min(slots, Math.floor(budget / windowWork(window))));
  const sampled = pieces.map(() => ({ tokens: 0, bytes: 0, whole: false }));
  const bySignature = new Map<number, { tokens: number; bytes: number }>();
  let allTokens = 0;
  let allBytes = 0;
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
      const t = encodeLength(w);
      const b = Buffer.byteLength(w, 'utf8');
      const s = sampled[i]!;
      s.tokens += t;
      s.bytes += b;
      s.whole = start === 0 && end === p.text.length;
      const sig = signature(p.text);
      const g = bySignature.get(sig);
      if (g) {
        g.tokens += t;
        g.bytes += b;
      } else bySignature.set(sig, { tokens: t, bytes: b });
      allTokens += t;
      allBytes += b;
    }
    first += n;
  }
  const pooled = allBytes ? allTokens / allBytes : fallbackRate;
  for (const [i, p] of pieces.entries()) {
    const s = sampled[i]!;
    if (s.whole) {
      tokens += s.tokens * p.times;
      continue;
    }
    const g = s.bytes ? s : bySignature.get(signature(p.text));
    const rate = g ? g.tokens / g.bytes : pooled;
    tokens += rate * p.bytes * p.times;
  }
  return tokens;
}
