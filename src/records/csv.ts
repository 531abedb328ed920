import type { Column } from './columns.js';
import { POLICY_RECORD, PROBE_RECORD, SUMMARY_RECORD, TURN_RECORD, VIOLATION_RECORD, type Results } from './registry.js';

export type { Column } from './columns.js';

/** First characters that make a spreadsheet run a text cell as a formula: such a cell gets a leading `'`. */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20']);
const NEEDS_QUOTES = /[",\n]/;

/**
 * One CSV cell (RFC 4180, as csv-stringify writes it with `escape_formulas`):
 * numbers as they print (a negative number is not a formula); text that
 * starts like a formula gets a leading `'`; text with a quote, comma or
 * newline (the record delimiter) is quoted, its quotes doubled; nothing is
 * written for null or undefined.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  let s = FORMULA_START.has(value.charAt(0)) ? `'${value}` : value;
  if (NEEDS_QUOTES.test(value)) s = `"${s.replaceAll('"', '""')}"`;
  return s;
}

/** One CSV line: the cells, comma-separated, and a newline. */
export function csvLine(cells: readonly (string | number | boolean | null | undefined)[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? ',' : '') + csvCell(cells[i]);
  return `${line}\n`;
}

/** One row as a CSV line with explicit columns (formula-like cells escaped), newline included. */
export function csvRow<T>(columns: readonly Column<T>[], row: T): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) line += (i ? ',' : '') + csvCell(columns[i]![1](row));
  return `${line}\n`;
}

/** The header line of `columns`. */
export function csvHeader<T>(columns: readonly Column<T>[]): string {
  return csvLine(columns.map(([h]) => h));
}

/**
 * Writes rows with explicit columns; cells that a spreadsheet would run as
 * formulas are escaped. Every row ends with a newline and is written on its
 * own, so a file written row by row (the header first) has the bytes of one
 * call.
 */
export function csvRows<T>(columns: readonly Column<T>[], rows: readonly T[], header = true): string {
  let out = header ? csvHeader(columns) : '';
  for (const r of rows) out += csvRow(columns, r);
  return out;
}

/** The columns of each CSV file, in file order, from the record registries. */
export const TURN_COLUMNS = TURN_RECORD.csv;
export const PROBE_COLUMNS = PROBE_RECORD.csv;
export const SUMMARY_COLUMNS = SUMMARY_RECORD.csv;
export const POLICY_COLUMNS = POLICY_RECORD.csv;
export const VIOLATION_COLUMNS = VIOLATION_RECORD.csv;

export const turnsCsv = (r: Pick<Results, 'turns'>): string => csvRows(TURN_COLUMNS, r.turns);
export const probesCsv = (r: Pick<Results, 'probes'>): string => csvRows(PROBE_COLUMNS, r.probes);
export const summaryCsv = (r: Pick<Results, 'summary'>): string => csvRows(SUMMARY_COLUMNS, r.summary);
export const policiesCsv = (r: Pick<Results, 'policies'>): string => csvRows(POLICY_COLUMNS, r.policies);
export const violationsCsv = (r: Pick<Results, 'violations'>): string => csvRows(VIOLATION_COLUMNS, r.violations);
