import { contentWords } from './_text.js';

/** A sparse, L2-normalised vector: bucket → weight. */
export type Vector = ReadonlyMap<number, number>;

/**
 * Hash buckets of the lexical embedding. Large enough that two different
 * words almost never share a bucket (a shared bucket would be a spurious
 * match); vectors are sparse, so the size costs nothing.
 */
export const EMBED_BUCKETS = 1 << 18;

/** The features of a text: its topic words, then each pair of neighbouring topic words. */
export function features(text: string): string[] {
  const w = contentWords(text);
  const out = [...w];
  for (let i = 1; i < w.length; i++) out.push(`${w[i - 1]} ${w[i]}`);
  return out;
}

/**
 * The deterministic lexical embedding: hashed word unigrams and bigrams,
 * counted, L2-normalised. Needs no model download and gives the same vector
 * on every machine; an empty text gives the empty vector.
 */
export function embed(text: string): Vector {
  const counts = new Map<number, number>();
  for (const f of features(text)) {
    const b = fnv1a(f) % EMBED_BUCKETS;
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  let norm = 0;
  for (const c of counts.values()) norm += c * c;
  norm = Math.sqrt(norm);
  const out = new Map<number, number>();
  for (const [b, c] of counts) out.set(b, c / norm);
  return out;
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

/** 32-bit FNV-1a over UTF-16 code units: small, fast and the same everywhere. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
