import { describe, expect, it } from 'vitest';
import { BIGRAM_WEIGHT, cosine, embed, features } from '../src/upkeep/embedder.js';

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
    expect([...v.values()].reduce((a, x) => a + x * x, 0)).toBeCloseTo(1, 12);
    expect(embed(KAVYA)).toEqual(v);
    expect(embed('can you do that?').size).toBe(0);
    expect(cosine(embed(''), v)).toBe(0);
    // Case and punctuation do not matter.
    expect(embed('ORDER, number!')).toEqual(embed('order number'));
  });
});
