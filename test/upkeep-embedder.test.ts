import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BIGRAM_WEIGHT, cosine, EMBED_BUCKETS, embed, features, type Vector } from '../src/upkeep/embedder.js';

/** 32-bit FNV-1a of a whole string (offset basis 2166136261, prime 16777619). */
function fnv1a(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** The embedding by its definition: each feature's string hashed into a bucket, weights summed, L2-normalised. */
function reference(text: string): Vector {
  const sums = new Map<number, number>();
  for (const [f, w] of features(text)) sums.set(fnv1a(f) % EMBED_BUCKETS, (sums.get(fnv1a(f) % EMBED_BUCKETS) ?? 0) + w);
  const norm = Math.sqrt([...sums.values()].reduce((a, c) => a + c * c, 0));
  return { buckets: [...sums.keys()], weights: [...sums.values()].map((c) => c / norm) };
}

const KAVYA = "Hi, I'm Kavya. My order SE-10423 hasn't arrived.";

describe('lexical embedder', () => {
  it('uses topic words and neighbouring pairs, identifiers kept whole, stopwords left out', () => {
    // hi, i'm, my, hasn't are stopwords; SE-10423 stays one word.
    expect(features(KAVYA)).toEqual([
      ['kavya', 1],
      ['order', 1],
      ['se-10423', 1],
      ['arrived', 1],
      ['kavya order', BIGRAM_WEIGHT],
      ['order se-10423', BIGRAM_WEIGHT],
      ['se-10423 arrived', BIGRAM_WEIGHT],
    ]);
    expect(features('can you repeat that?')).toEqual([['repeat', 1]]);
  });

  it('scores by cosine of L2-normalised vectors (hand-worked)', () => {
    // query: order, number (1 each) + "order number" (0.5): |q| = sqrt(1 + 1 + 0.25) = 1.5
    // doc: 4 words + 3 bigrams: |d| = sqrt(4 + 3 × 0.25) = sqrt(4.75) = 2.17945
    // shared: "order" only → cos = 1 / (1.5 × 2.17945) = 0.305888
    expect(cosine(embed('what was my order number?'), embed(KAVYA))).toBeCloseTo(0.305888, 6);
    // Same words, other order: unigrams agree (2), bigrams differ → 2 / 2.25 = 0.8889.
    expect(cosine(embed('order number'), embed('number order'))).toBeCloseTo(2 / 2.25, 10);
    expect(cosine(embed(KAVYA), embed(KAVYA))).toBeCloseTo(1, 12);
  });

  it('is normalised, deterministic, and empty for text without topic words', () => {
    const v = embed(KAVYA);
    expect(v.weights.reduce((a, x) => a + x * x, 0)).toBeCloseTo(1, 12);
    expect(embed(KAVYA)).toEqual(v);
    expect(embed('can you do that?')).toEqual({ buckets: [], weights: [] });
    expect(cosine(embed(''), v)).toBe(0);
    // Case and punctuation do not matter.
    expect(embed('ORDER, number!')).toEqual(embed('order number'));
  });

  it('hashes each feature string, bigrams included, into its bucket', () => {
    const word = fc.constantFrom('order', 'se-10423', 'kavya', 'refund', 'blue', 'the', 'my', "It’s", "don't", 'Ünïcode', '𝐀x', 'late', 'the-end', '.');
    fc.assert(
      fc.property(fc.array(word, { maxLength: 15 }), (w) => {
        const text = w.join(' ');
        expect(embed(text)).toEqual(reference(text));
      }),
      { seed: 42, numRuns: 300 },
    );
    // Long texts of many distinct words: more bigrams and more buckets than the scratch lists first hold (256 each).
    const anyWord = fc.oneof(word, fc.stringMatching(/^[a-z]{2,7}$/));
    fc.assert(
      fc.property(fc.array(anyWord, { minLength: 400, maxLength: 800, size: 'max' }), (w) => {
        expect(new Set(features(w.join(' ')).map(([f]) => f)).size).toBeGreaterThan(256);
        const text = w.join(' ');
        expect(embed(text)).toEqual(reference(text));
      }),
      { seed: 42, numRuns: 20 },
    );
  });
});
