import { contentWords, STOPWORDS, wordEnd, wordStart, wordText } from '../text/normalize.js';

/** A sparse, L2-normalised vector: its buckets in the order their features first occur, with their weights. */
export interface Vector {
  readonly buckets: readonly number[];
  readonly weights: readonly number[];
}

/**
 * Hash buckets of the lexical embedding. Large enough that two different
 * words almost never share a bucket (a shared bucket would be a spurious
 * match); vectors are sparse, so the size costs nothing.
 */
export const EMBED_BUCKETS = 1 << 18;

/**
 * Dimensions a stored embedding is sized at for storage figures: those of
 * text-embedding-3-small (the default `embedModel`), 4 bytes each. The
 * lexical embedding itself is sparse over EMBED_BUCKETS hash buckets; no
 * real store would keep it dense, and a backend would store the model's
 * vectors, so its size is what an architect plans for.
 */
export const STORED_DIMENSIONS = 1536;

/** Weight of a bigram relative to a word: phrases sharpen a match without drowning single-word matches. */
export const BIGRAM_WEIGHT = 0.5;

/** The features of a text with their weights: its topic words (1 each), then each pair of neighbouring topic words. */
export function features(text: string): [feature: string, weight: number][] {
  const w = contentWords(text);
  const out: [string, number][] = w.map((x) => [x, 1]);
  for (let i = 1; i < w.length; i++) out.push([`${w[i - 1]} ${w[i]}`, BIGRAM_WEIGHT]);
  return out;
}

/**
 * The deterministic lexical embedding: hashed word unigrams and bigrams
 * (bigrams at half weight), summed, L2-normalised. Needs no model download
 * and gives the same vector on every machine; a text without topic words
 * gives the empty vector, which matches nothing.
 */
export function embed(text: string): Vector {
  // The features in `features` order, hashed straight from the text: each topic word as it is
  // scanned; the bigrams after them, each the previous topic word's hash continued over " " and the word.
  const s = wordText(text);
  // Room for every feature at once (so the loops below need not check): words are a character
  // at least and apart, so there are at most (length + 1) / 2 of them, and as many bigrams.
  const most = (s.length + 1) >> 1;
  if (most > roomFor) grow(most);
  let n = 0;
  let pairs = 0;
  let previous = -1;
  for (let start = wordStart(s, 0); start < s.length; ) {
    const end = wordEnd(s, start);
    let h = FNV_OFFSET;
    let pair = previous < 0 ? 0 : fnv1aStep(previous, 32);
    for (let i = start; i < end; i++) {
      const unit = s.charCodeAt(i);
      h = fnv1aStep(h, unit);
      pair = fnv1aStep(pair, unit);
    }
    h >>>= 0;
    if (!isStopword(h, s, start, end)) {
      n = addFeature(n, h, 1);
      if (previous >= 0) bigrams[pairs++] = pair >>> 0;
      previous = h;
    }
    start = wordStart(s, end);
  }
  for (let i = 0; i < pairs; i++) n = addFeature(n, bigrams[i]!, BIGRAM_WEIGHT);
  let norm = 0;
  for (let i = 0; i < n; i++) {
    slot[sumBuckets[i]!] = 0;
    norm += sumWeights[i]! * sumWeights[i]!;
  }
  norm = Math.sqrt(norm);
  // Sized once: the vector is kept as long as its message is stored.
  const buckets = new Array<number>(n);
  const weights = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    buckets[i] = sumBuckets[i]!;
    weights[i] = sumWeights[i]! / norm;
  }
  return { buckets, weights };
}

/**
 * Adds a feature's weight to its bucket among the `n` buckets summed so far
 * (a new one the first time the text meets the bucket); returns how many
 * there are now.
 */
function addFeature(n: number, hash: number, weight: number): number {
  const b = hash & (EMBED_BUCKETS - 1);
  const at = slot[b]!;
  if (at) {
    sumWeights[at - 1]! += weight;
    return n;
  }
  sumBuckets[n] = b;
  sumWeights[n] = weight;
  slot[b] = n + 1;
  return n + 1;
}

/**
 * Scratch lists of `embed`, reused from text to text: the buckets summed so
 * far with their weights, and the bigram hashes held until the text's words
 * are done (unsigned, as hashes are). They have room for the features of
 * `roomFor` words (twice as many buckets, as many bigrams), grown for a
 * longer text and never shrunk.
 */
let roomFor = 128;
let sumBuckets: Int32Array = new Int32Array(2 * roomFor);
let sumWeights: Float64Array = new Float64Array(2 * roomFor);
let bigrams: Uint32Array = new Uint32Array(roomFor);

/** Makes the scratch lists room for a text of `words` words (they are empty between texts: nothing is copied). */
function grow(words: number): void {
  roomFor = Math.max(words, 2 * roomFor);
  bigrams = new Uint32Array(roomFor);
  // A text has no more buckets than there are.
  sumBuckets = new Int32Array(Math.min(2 * roomFor, EMBED_BUCKETS));
  sumWeights = new Float64Array(Math.min(2 * roomFor, EMBED_BUCKETS));
}

/** `a` if it holds `n` items, else a copy with room for them (at least twice as long, so appending stays linear). */
export function room<A extends Uint8Array | Int32Array | Uint32Array | Float64Array>(a: A, n: number): A {
  if (n <= a.length) return a;
  const b = new (a.constructor as new (length: number) => A)(Math.max(n, 2 * a.length));
  b.set(a);
  return b;
}

/** Cosine similarity of two normalised vectors (0 when either is empty), summed in the shorter one's order. */
export function cosine(a: Vector, b: Vector): number {
  const [small, large] = a.buckets.length <= b.buckets.length ? [a, b] : [b, a];
  large.buckets.forEach((bucket, i) => (slot[bucket] = i + 1));
  let dot = 0;
  small.buckets.forEach((bucket, i) => {
    const at = slot[bucket]!;
    if (at) dot += small.weights[i]! * large.weights[at - 1]!;
  });
  for (const bucket of large.buckets) slot[bucket] = 0;
  return dot;
}

/**
 * Scratch table of `embed` and `cosine`: bucket → 1 + its index in the
 * vector at hand, 0 for none; zero again whenever they return. One per
 * thread, so building a vector needs no hash map.
 */
const slot = new Int32Array(EMBED_BUCKETS);

const FNV_OFFSET = 0x811c9dc5;

/** 32-bit FNV-1a over UTF-16 code units: small, fast and the same everywhere. */
function fnv1a(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) h = fnv1aStep(h, text.charCodeAt(i));
  return h >>> 0;
}

function fnv1aStep(h: number, unit: number): number {
  return Math.imul(h ^ unit, 0x01000193);
}

/** Stopwords by the low bits of their hash, so a word is checked with one load, without being copied out of the text. */
const STOP_BITS = 0xfff;
const STOP_SLOTS: (readonly string[] | undefined)[] = Array.from({ length: STOP_BITS + 1 }, () => undefined);
for (const w of STOPWORDS) STOP_SLOTS[fnv1a(w) & STOP_BITS] = [...(STOP_SLOTS[fnv1a(w) & STOP_BITS] ?? []), w];

/** Whether the span [start, end) of `s`, whose hash is `h`, is a stopword. */
function isStopword(h: number, s: string, start: number, end: number): boolean {
  const candidates = STOP_SLOTS[h & STOP_BITS];
  if (candidates === undefined) return false;
  for (const w of candidates) if (w.length === end - start && s.startsWith(w, start)) return true;
  return false;
}

const denseBuckets = new Map<number, readonly number[]>();

/**
 * A model's embedding as a `Vector`: dimension i is bucket i (one bucket list
 * per dimension count, shared), the values L2-normalised, so `cosine` and
 * the vector store take it as they take the lexical embedding.
 */
export function denseVector(values: ArrayLike<number>): Vector {
  let buckets = denseBuckets.get(values.length);
  if (!buckets) denseBuckets.set(values.length, (buckets = Array.from({ length: values.length }, (_, i) => i)));
  let norm = 0;
  for (let i = 0; i < values.length; i++) norm += values[i]! * values[i]!;
  norm = Math.sqrt(norm) || 1;
  return { buckets, weights: Array.from(values, (v) => v / norm) };
}
