import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usd } from '../src/records/format.js';
import { jsonValue } from '../src/records/columns.js';

/** A flat record as compact JSON, each value written by `jsonValue` (what every record kind's encoder writes its fields with). */
const recordJson = (r: object) => `{${Object.entries(r).flatMap(([k, v]) => { const j = jsonValue(v); return j === undefined ? [] : [`${JSON.stringify(k)}:${j}`]; }).join(',')}}`;

/** The definition: JSON.stringify of the record with each bigint replaced by its exact 12-decimal USD string. */
const reference = (r: object) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? usd(v, 12) : v])));

describe('results.json records', () => {
  it('are written as JSON.stringify would write them, money as exact USD strings (hand-worked)', () => {
    expect(recordJson({ scenario: 'a"b', turn: 3, cost: 13_500_000n, overflow: false, skipped: undefined, ratio: null })).toBe(
      '{"scenario":"a\\"b","turn":3,"cost":"0.000013500000","overflow":false,"ratio":null}',
    );
  });

  it('match the definition for any flat record', () => {
    const value = fc.oneof(fc.string({ unit: 'grapheme' }), fc.double(), fc.integer(), fc.bigInt(), fc.boolean(), fc.constant(undefined), fc.constant(null), fc.array(fc.string()));
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), value), (r) => {
        expect(recordJson(r)).toBe(reference(r));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});
