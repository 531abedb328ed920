import type { Pico } from '../types.js';
import { fraction, MONEY_DECIMALS, usd } from './format.js';

/**
 * A record kind is declared once, as a list of columns (`defineRecord`);
 * its TypeScript type, CSV columns, results.json field order, money
 * handling, the plain sums of the rows above it and the docs' column
 * tables are derived from that list.
 */

/**
 * What a column holds, which says how it is typed and written: `count`
 * (a whole number: tokens, turns, probes), `number` (a number that may
 * have decimals: a scenario's weight), `money` (pico-dollars, a bigint;
 * USD in the CSV files with 8 decimals, in results.json as an exact
 * string with 12), `ratio` (a fraction, 4 decimals in the CSV files; null
 * when undefined), `flag` (true or false), `duration` (whole
 * milliseconds), `text`, `list` (of text, `;`-separated in the CSV files).
 */
export type ColumnKind = 'count' | 'number' | 'money' | 'ratio' | 'flag' | 'duration' | 'text' | 'list';

/**
 * How a column is made from the rows below it (a turn's model calls, a
 * conversation's turns, a policy's conversations): `sum`, `max`, `p50` and
 * `p95` (nearest rank) and `mean` (rounded) of the column `of` (by default
 * the one of the same name) are computed by `aggregate`; `count` (of rows,
 * or of probes with an outcome), `weighted mean` (by the scenarios'
 * weights) and `none` (a key, or a figure of its own) where the record is
 * made. A turn's columns are made by the replay loop, their `sum` being
 * over the turn's model calls.
 */
export type Aggregation = 'sum' | 'max' | 'p50' | 'p95' | 'mean' | 'count' | 'weighted mean' | 'none';

/** The aggregations `aggregate` computes from the rows below. */
const COMPUTED = ['sum', 'max', 'p50', 'p95', 'mean'] as const;
type Computed = (typeof COMPUTED)[number];

/** One column of a record kind. */
export interface ColumnSpec {
  /** The record's field, and its key in results.json. */
  readonly key: string;
  /** Its header in the CSV file; absent: the column is in results.json only. */
  readonly csv?: string;
  readonly kind: ColumnKind;
  /** The values a `text` or `list` column takes, when they are a fixed set (its type is their union). */
  readonly values?: readonly string[];
  /** The value may be null (written as an empty cell, `null` in results.json). */
  readonly nullable?: true;
  /** The field may be absent (an empty cell; left out of results.json). */
  readonly optional?: true;
  readonly agg: Aggregation;
  /** The column(s) of the rows below it is made from (by default the one of the same name); several are added up. */
  readonly of?: string | readonly string[];
  /** What it is, in one line, for the docs. */
  readonly doc: string;
}

/** The TypeScript type of a column kind's values. */
interface KindValue {
  count: number;
  number: number;
  money: Pico;
  ratio: number;
  flag: boolean;
  duration: number;
  text: string;
  list: string[];
}

type BaseValue<C extends ColumnSpec> = C extends { values: readonly (infer U)[] } ? (C['kind'] extends 'list' ? U[] : U) : KindValue[C['kind']];

/** The TypeScript type of a column's values. */
export type ValueOf<C extends ColumnSpec> = C extends { nullable: true } ? BaseValue<C> | null : BaseValue<C>;

type Flat<T> = { [K in keyof T]: T[K] };

/** The record a list of columns declares: a field per column, optional ones optional. */
export type RecordOf<Cs extends readonly ColumnSpec[]> = Flat<
  { [C in Cs[number] as C extends { optional: true } ? never : C['key']]: ValueOf<C> } & {
    [C in Cs[number] as C extends { optional: true } ? C['key'] : never]?: ValueOf<C>;
  }
>;

/** A CSV column: its header and how a row gives its cell. */
export type Column<T> = readonly [header: string, value: (row: T) => string | number | boolean | null | undefined];

/** A record kind: its columns and what is derived from them once. */
export interface RecordKind<Cs extends readonly ColumnSpec[] = readonly ColumnSpec[]> {
  /** The list's name in results.json (`turns`, `summary`, …); its CSV file is `<name>.csv`. */
  readonly name: string;
  /** In results.json (and record) order. */
  readonly columns: Cs;
  /** The CSV file's columns, in file order. */
  readonly csv: readonly Column<RecordOf<Cs>>[];
  /** The CSV file's columns as specs, in file order. */
  readonly csvSpecs: readonly ColumnSpec[];
  /** One record as compact JSON in registry order, money as exact USD strings; absent fields left out. */
  readonly json: (row: RecordOf<Cs>) => string;
  /** The keys of money columns: what results.json holds as USD strings. */
  readonly money: ReadonlySet<string>;
}

/**
 * A record kind from its columns, in results.json order. `csvOrder` lists
 * the keys of the CSV file's columns in the order the file has had them;
 * a CSV column it does not name comes after them, in registry order, so a
 * column added at the end of the list is last in the file and in every
 * results.json record.
 */
export function defineRecord<const Cs extends readonly ColumnSpec[]>(name: string, columns: Cs, csvOrder: readonly Cs[number]['key'][] = []): RecordKind<Cs> {
  const byKey = new Map(columns.map((c) => [c.key, c]));
  const listed = csvOrder.map((k) => byKey.get(k)!);
  const csvSpecs = [...listed, ...columns.filter((c) => c.csv !== undefined && !listed.includes(c))];
  return {
    name,
    columns,
    csv: csvSpecs.map((c) => [c.csv!, csvValue<RecordOf<Cs>>(c)] as const),
    csvSpecs,
    json: jsonEncoder<RecordOf<Cs>>(columns),
    money: new Set(columns.filter((c) => c.kind === 'money').map((c) => c.key)),
  };
}

/** How a row gives a column's cell (before CSV escaping): money in USD with 8 decimals, a ratio with 4, a list joined by `;`. */
function csvValue<T>(c: ColumnSpec): Column<T>[1] {
  const key = c.key;
  switch (c.kind) {
    case 'money':
      return (r) => usd((r as Record<string, Pico>)[key]!);
    case 'ratio':
      return (r) => fraction((r as Record<string, number | null | undefined>)[key] ?? null);
    case 'list':
      return (r) => (r as Record<string, string[]>)[key]!.join(';');
    default:
      return (r) => (r as Record<string, string | number | boolean | null | undefined>)[key];
  }
}

/** Characters JSON.stringify escapes in a string (a lone surrogate among them). */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * One value as `JSON.stringify` writes it in an object (undefined for a
 * value it leaves out), a bigint as an exact USD string.
 */
export function jsonValue(v: unknown): string | undefined {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'bigint':
      return `"${usd(v, MONEY_DECIMALS)}"`;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'string':
      return ESCAPED.test(v) ? JSON.stringify(v) : `"${v}"`;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return JSON.stringify(v);
  }
}

/**
 * The JSON encoder of a record kind, built once (records are written by
 * the million): its fields in registry order (money, a bigint, as an exact
 * USD string: `jsonValue`).
 */
function jsonEncoder<T>(columns: readonly ColumnSpec[]): (row: T) => string {
  const keys = columns.map((c) => c.key);
  const heads = columns.map((c) => `${JSON.stringify(c.key)}:`);
  return (row) => {
    const r = row as Record<string, unknown>;
    let out = '';
    for (let i = 0; i < keys.length; i++) {
      const value = jsonValue(r[keys[i]!]);
      if (value !== undefined) out += (out ? ',' : '{') + heads[i] + value;
    }
    return out ? `${out}}` : '{}';
  };
}

/** The record's fields `aggregate` computes. */
export type Aggregated<Cs extends readonly ColumnSpec[]> = Pick<RecordOf<Cs>, Extract<Cs[number], { agg: Computed }>['key'] & keyof RecordOf<Cs>>;

/**
 * The columns of a kind that are a sum, max, percentile or mean of the
 * rows below it (`agg`, `of`): a flag counts 1 when true; a money column
 * sums to a bigint; a nullable sum is null when every row's value is
 * (or is absent, in rows read from older files). Percentiles are nearest
 * rank, means rounded to a whole number.
 */
export function aggregate<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, rows: readonly object[]): Aggregated<Cs> {
  const out: Record<string, unknown> = {};
  const sorted = new Map<string, Float64Array>();
  const ranked = (key: string, p: number) => {
    let s = sorted.get(key);
    // A typed array sorts numbers by value without a comparator call per comparison: several times faster.
    if (!s) sorted.set(key, (s = Float64Array.from(column(rows, key)).sort()));
    return nearestRank(s, p);
  };
  for (const c of kind.columns) {
    if (!(COMPUTED as readonly string[]).includes(c.agg)) continue;
    const of = c.of === undefined ? [c.key] : typeof c.of === 'string' ? [c.of] : c.of;
    if (c.agg === 'sum') out[c.key] = sum(c, of, rows);
    // A loop, not Math.max(...): spreading a long conversation's rows would overflow the stack.
    else if (c.agg === 'max') out[c.key] = column(rows, of[0]!).reduce((m, v) => Math.max(m, v), -Infinity);
    else if (c.agg === 'p50') out[c.key] = ranked(of[0]!, 50);
    else if (c.agg === 'p95') out[c.key] = ranked(of[0]!, 95);
    else out[c.key] = Math.round((sum(c, of, rows) as number) / rows.length);
  }
  return out as Aggregated<Cs>;
}

function column(rows: readonly object[], key: string): number[] {
  return rows.map((r) => (r as Record<string, number>)[key]!);
}

function sum(c: ColumnSpec, of: readonly string[], rows: readonly object[]): number | bigint | null {
  if (c.kind === 'money') {
    let total = 0n;
    for (const r of rows) for (const k of of) total += (r as Record<string, bigint>)[k]!;
    return total;
  }
  let total = 0;
  let some = false;
  for (const r of rows) {
    for (const k of of) {
      const v = (r as Record<string, number | boolean | null | undefined>)[k] ?? null;
      if (v === null) continue;
      some = true;
      total += typeof v === 'boolean' ? (v ? 1 : 0) : v;
    }
  }
  return c.nullable && !some ? null : total;
}

/** Nearest-rank percentile of numbers sorted in ascending order (0 for none). */
export function nearestRank(sorted: Float64Array, p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * A record with its fields in registry order (the order results.json and
 * every JSON of it list them); an absent or undefined field stays absent.
 */
export function assemble<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, values: RecordOf<Cs>): RecordOf<Cs> {
  const v = values as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const c of kind.columns) if (v[c.key] !== undefined) out[c.key] = v[c.key];
  return out as RecordOf<Cs>;
}
