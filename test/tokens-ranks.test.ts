import { createRequire } from 'node:module';
import fc from 'fast-check';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { describe, expect, it } from 'vitest';
import { loadTiktoken, rankMap } from '../src/tokens/ranks.js';

const requireCjs = createRequire(import.meta.url);
type Internals = { rankMap: Map<string, number> };

describe('loading an encoding', () => {
  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: builds the rank map js-tiktoken's constructor builds, entry by entry, and encodes alike`, () => {
      const ranks = requireCjs(`js-tiktoken/ranks/${name}`) as TiktokenBPE;
      const library = new Tiktoken(ranks);
      const fast = loadTiktoken(ranks);
      const expected = (library as unknown as Internals).rankMap;
      const got = (fast as unknown as Internals).rankMap;
      expect(got.size).toBe(expected.size);
      let different = 0;
      for (const [key, rank] of expected) if (got.get(key) !== rank) different++;
      expect(different).toBe(0);
      fc.assert(
        fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (text) => {
          expect(fast.encode(text, [], [])).toEqual(library.encode(text, [], []));
        }),
        { seed: 42, numRuns: 200 },
      );
    });
  }

  it('reads the rank list format: ranks count up from each line’s first, padding and blank lines ignored', () => {
    // "AQ==" is byte 1, "AgM=" bytes 2,3, "/w==" byte 255.
    expect([...rankMap('! 0 AQ== AgM=\n\n! 7 /w==\n')]).toEqual([
      ['1', 0],
      ['2,3', 1],
      ['255', 7],
    ]);
  });
});
