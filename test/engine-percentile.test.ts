import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nearestRank } from '../src/records/columns.js';

/** The percentile of unsorted numbers, as the per-policy rows take it: sorted by value (a typed array), then the nearest rank. */
const percentile = (values: readonly number[], p: number) => nearestRank(Float64Array.from(values).sort(), p);

describe('percentile (nearest rank)', () => {
  it('picks the value at rank ceil(p% × n) of the sorted values (hand-worked)', () => {
    // sorted: 1 2 3 4 5 → p50: rank ceil(2.5) = 3 → 3; p95: rank ceil(4.75) = 5 → 5; p0: rank 1 → 1.
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 95)).toBe(5);
    expect(percentile([5, 1, 4, 2, 3], 0)).toBe(1);
    // Numbers, not strings: 10 sorts after 9.
    expect(percentile([10, 9, 100], 50)).toBe(10);
    expect(percentile([], 95)).toBe(0);
  });

  it('equals the definition on any numbers, and leaves its input as it was', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1e6, max: 1e6 }), { maxLength: 300 }), fc.integer({ min: 0, max: 100 }), (values, p) => {
        const before = [...values];
        const sorted = [...values].sort((a, b) => a - b);
        const expected = values.length ? sorted[Math.max(0, Math.ceil((p / 100) * values.length) - 1)] : 0;
        expect(percentile(values, p)).toBe(expected);
        expect(values).toEqual(before);
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
