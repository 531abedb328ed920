import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, csvRows, type Column } from '../src/records/csv.js';

type Cell = string | number | boolean;

/** The reference: csv-stringify with the options ctxsim's CSV files follow (RFC 4180, formula escaping, \n). */
const reference = (header: string[], rows: Cell[][]) =>
  stringify(rows, { header: true, columns: header, escape_formulas: true, cast: { boolean: (b) => (b ? 'true' : 'false') }, record_delimiter: 'unix' });

describe('CSV cells', () => {
  it('escapes formulas, quotes and line breaks (hand-worked)', () => {
    expect(csvCell('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvCell('-0.5')).toBe("'-0.5"); // text that starts like a formula
    expect(csvCell(-0.5)).toBe('-0.5'); // a number does not
    expect(csvCell('say "hi", twice')).toBe('"say ""hi"", twice"');
    expect(csvCell('+a,b')).toBe(`"'+a,b"`);
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(false)).toBe('false');
    expect(csvCell('')).toBe('');
  });

  it('writes the bytes csv-stringify writes, for any text, number or boolean', () => {
    const text = fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('=1', '+1', '-1', '@a', '\tx', '\rx', '＝1', '＋1', '－1', '＠a', 'a"b', 'a,b', 'a\nb', ''));
    const cell = fc.oneof(text, fc.integer(), fc.double({ noNaN: false }), fc.boolean());
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 3, maxLength: 3 }), { maxLength: 8 }), (rows) => {
        const columns: Column<Cell[]>[] = ['a', 'b,c', '=d'].map((h, i) => [h, (r: Cell[]) => r[i]!] as const);
        expect(csvRows(columns, rows)).toBe(reference(['a', 'b,c', '=d'], rows));
      }),
      { seed: 42, numRuns: 1000 },
    );
  });
});
