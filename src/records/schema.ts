import { z } from 'zod';
import type { Pico } from '../types.js';
import type { ColumnSpec, RecordKind, RecordOf } from './columns.js';

/**
 * The schema of a record read back from a file, from its kind's columns:
 * a count is a whole number, at least 0, a safe integer; a number any
 * finite number, at least 0, decimals allowed; a duration whole
 * milliseconds, at least 0; a ratio from 0 to 1; a flag true or false; text
 * a string (one of its values, when the column lists them); a list of such
 * strings. Money is as the file writes it: `money` reads it to pico-dollars.
 * A nullable column may be null, an optional one absent. `overrides` gives
 * a column a schema of its own (a weight is not a whole number).
 */
export function recordSchema<Cs extends readonly ColumnSpec[]>(
  kind: RecordKind<Cs>,
  money: z.ZodType<Pico>,
  overrides: Partial<Record<Cs[number]['key'], z.ZodType>> = {},
): z.ZodType<RecordOf<Cs>> {
  const shape: Record<string, z.ZodType> = {};
  for (const c of kind.columns) {
    const own = (overrides as Partial<Record<string, z.ZodType>>)[c.key];
    let s = own ?? columnSchema(c, money);
    if (c.nullable) s = s.nullable();
    if (c.optional) s = s.optional();
    shape[c.key] = s;
  }
  return z.strictObject(shape) as unknown as z.ZodType<RecordOf<Cs>>;
}

/** Money read back from a file is under 10^15 USD: at most 15 digits of whole dollars (27 of pico-dollars). */
export const MAX_USD_DIGITS = 15;

/** A whole number from 0 to `Number.MAX_SAFE_INTEGER`. */
// `min` first: a negative count is told it must be ≥ 0 (the reader keeps the first problem of each field).
export const countSchema = z.number().min(0).int();

/** The schema of one column's value (null and absence aside), money by `money`. */
export function columnSchema(c: ColumnSpec, money: z.ZodType<Pico> = z.never()): z.ZodType {
  const text = c.values ? z.enum(c.values as [string, ...string[]]) : z.string();
  switch (c.kind) {
    case 'count':
    case 'duration':
      return countSchema;
    case 'number':
      return z.number().min(0);
    case 'money':
      return money;
    case 'ratio':
      return z.number().min(0).max(1);
    case 'flag':
      return z.boolean();
    case 'text':
      return text;
    case 'list':
      return z.array(text);
  }
}
