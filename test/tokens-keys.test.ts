import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CacheKey } from '../src/tokens/token-cache.js';
import { KeyTable } from '../src/tokens/keys.js';

const word = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const key = fc.tuple(word, word, word, word) as fc.Arbitrary<CacheKey>;

describe('key table', () => {
  it('holds what a Map by the whole key holds, through growth and replacement (property)', () => {
    // Few distinct first words: keys collide on their slot and probe past each other.
    const crowded = fc.tuple(fc.integer({ min: 0, max: 7 }), word, fc.integer({ min: 0, max: 3 }), word) as fc.Arbitrary<CacheKey>;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(key, crowded), fc.integer({ min: -1e9, max: 1e9 })), { maxLength: 400 }), (entries) => {
        const table = new KeyTable(2);
        const map = new Map<string, number>();
        for (const [k, v] of entries) {
          table.set(k, v);
          map.set(k.join(','), v);
          expect(table.get(k)).toBe(v);
        }
        expect(table.size).toBe(map.size);
        for (const [k] of entries) expect(table.get(k)).toBe(map.get(k.join(',')));
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('tells a key apart from one that differs in any single word', () => {
    const table = new KeyTable();
    table.set([1, 2, 3, 4], 10);
    for (const other of [[9, 2, 3, 4], [1, 9, 3, 4], [1, 2, 9, 4], [1, 2, 3, 9]] as CacheKey[]) expect(table.get(other)).toBeUndefined();
    expect(table.get([1, 2, 3, 4])).toBe(10);
    table.set([1, 2, 3, 4], -5);
    expect(table.get([1, 2, 3, 4])).toBe(-5);
    expect(table.size).toBe(1);
  });
});
