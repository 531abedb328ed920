import { contentWords } from './_text.js';

/** A sparse, L2-normalised vector: bucket → weight. */
export type Vector = ReadonlyMap<number, number>;

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
  const w = contentWords(text);
  const sums = new Map<number, number>();
  const add = (hash: number, weight: number) => {
    const b = hash % EMBED_BUCKETS;
    sums.set(b, (sums.get(b) ?? 0) + weight);
  };
  // The features in `features` order; a bigram's hash continues its first word's over " " and the second word.
  const hashes = w.map((x) => fnv1a(x));
  for (const h of hashes) add(h, 1);
  for (let i = 1; i < w.length; i++) add(fnv1a(w[i]!, fnv1aStep(hashes[i - 1]!, 32)), BIGRAM_WEIGHT);
  let norm = 0;
  sums.forEach((c) => (norm += c * c));
  norm = Math.sqrt(norm);
  // Setting an existing key keeps its place: the vector keeps the features' order.
  sums.forEach((c, b) => sums.set(b, c / norm));
  return sums;
}

/** Cosine similarity of two normalised vectors (0 when either is empty). */
export function cosine(a: Vector, b: Vector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [k, v] of small) {
    const w = large.get(k);
    if (w !== undefined) dot += v * w;
  }
  return dot;
}

/** 32-bit FNV-1a over UTF-16 code units (continuing from `h`): small, fast and the same everywhere. */
function fnv1a(text: string, h = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) h = fnv1aStep(h, text.charCodeAt(i));
  return h >>> 0;
}

function fnv1aStep(h: number, unit: number): number {
  return Math.imul(h ^ unit, 0x01000193);
}
