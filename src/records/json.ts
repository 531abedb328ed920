import { UsageError } from '../errors.js';
import { type ColumnSpec, type RecordKind, type RecordOf } from './columns.js';
import { MONEY_DECIMALS } from './format.js';
import type { ReportInfo } from './info.js';
import { POLICY_RECORD, PROBE_RECORD, SUMMARY_RECORD, TURN_RECORD, VIOLATION_RECORD, type Results } from './registry.js';

/** Bumped when a field changes meaning or goes away (adding fields does not bump it). */
export const SCHEMA_VERSION = 1;

/** Where and when the file was made: the only part that differs between two runs of the same study. */
export interface ResultsMeta {
  tool: 'ctxsim';
  /** ctxsim's package version. */
  version: string;
  /** The price table's snapshot date. */
  priceTable: string;
  /** ISO 8601 UTC time the file was written. */
  generatedAt: string;
}

/**
 * Which records an output folder and its results.json hold: `full`, every
 * record; `summary`, no turn or probe rows (no turns.csv or probes.csv, no
 * `turns` or `probes` list in results.json). The reports are made from the
 * summaries and the digest either way, so they are the same in both.
 */
export type RecordsMode = 'full' | 'summary';
export const RECORDS_MODES: readonly RecordsMode[] = ['full', 'summary'];

/** The document `results.json` holds, as parsed back (money as bigint pico-dollars). */
export interface ResultsDocument {
  schemaVersion: number;
  meta: ResultsMeta;
  study: ReportInfo;
  /** `summary` when the file was written without its turn and probe rows: then `results.turns` and `results.probes` are empty because they were left out. */
  records: RecordsMode;
  results: Results;
}

/** The lists of results.json a streamed run writes as its records come, in file order; the file's head (policies, summary) is known only at the end. */
export const STREAMED_LISTS = ['turns', 'probes', 'violations'] as const;
export type StreamedList = (typeof STREAMED_LISTS)[number];

/** The streamed lists (and their CSV files) a run writes with `records`, in file order: with `summary`, violations only. */
export function streamedLists(records: RecordsMode): readonly StreamedList[] {
  return records === 'full' ? STREAMED_LISTS : (['violations'] as const);
}

/** results.json around its streamed lists: each list it holds (in file order) with the text before it, and the text after the last. */
export interface ResultsJsonFrame {
  lists: { list: StreamedList; before: string }[];
  end: string;
}

/** How a list of records opens and closes in results.json (one record per line between); an empty list is `[]`. */
export const LIST_OPEN = '[\n';
export const LIST_CLOSE = '\n ]';
export const EMPTY_LIST = '[]';

/**
 * One record's line in a results.json list: the first of the list is the
 * record alone, each later one starts with the `,\n` that ends the line
 * before. Written one after another they give the lines of the whole list.
 */
export function jsonRow<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, r: RecordOf<Cs>, first: boolean): string {
  return `${first ? '' : ',\n'}  ${kind.json(r)}`;
}

/** The lines of records of a results.json list, joined by `,\n`. */
export function jsonRows<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, rows: readonly RecordOf<Cs>[]): string {
  let out = '';
  for (let i = 0; i < rows.length; i++) out += jsonRow(kind, rows[i]!, i === 0);
  return out;
}

/** A whole list of records, one per line: compact, and a diff shows which rows changed. */
function records<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, rows: readonly RecordOf<Cs>[]): string {
  return rows.length ? `${LIST_OPEN}${jsonRows(kind, rows)}${LIST_CLOSE}` : EMPTY_LIST;
}

/**
 * results.json's frame: schemaVersion, meta, money, (with `summary` records:
 * `"records": "summary"`), study, policies, summary, then the streamed lists
 * the mode writes.
 */
export function resultsJsonFrame(results: Pick<Results, 'policies' | 'summary'>, study: ReportInfo, meta: ResultsMeta, mode: RecordsMode = 'full'): ResultsJsonFrame {
  const head: [string, string][] = [
    ['schemaVersion', JSON.stringify(SCHEMA_VERSION)],
    ['meta', JSON.stringify(meta)],
    ['money', JSON.stringify(`USD, exact decimal strings with ${MONEY_DECIMALS} decimals`)],
    ...(mode === 'full' ? [] : [['records', JSON.stringify(mode)] as [string, string]]),
    ['study', JSON.stringify(study, null, 1).replace(/\n/g, '\n ')],
    ['policies', records(POLICY_RECORD, results.policies)],
    ['summary', records(SUMMARY_RECORD, results.summary)],
  ];
  const key = (k: string) => `,\n ${JSON.stringify(k)}: `;
  const start = `{\n${head.map(([k, v]) => ` ${JSON.stringify(k)}: ${v}`).join(',\n')}`;
  return {
    lists: streamedLists(mode).map((list, i) => ({ list, before: (i === 0 ? start : '') + key(list) })),
    end: '\n}\n',
  };
}

/**
 * results.json: every record of the run (policies, summary, turns, probes, violations),
 * the resolved study, and `meta` (version, price-table date, time written);
 * with `summary` records, no turns or probes (and `"records": "summary"`).
 * Money is an exact decimal string of USD with 12 decimals ("0.000013500000"):
 * JSON numbers cannot hold pico-dollar totals exactly.
 */
export function resultsJson(results: Results, study: ReportInfo, meta: ResultsMeta, mode: RecordsMode = 'full'): string {
  const frame = resultsJsonFrame(results, study, meta, mode);
  return `${frame.lists.map(({ list, before }) => before + listRecords(list, results)).join('')}${frame.end}`;
}

/** A streamed list's records as results.json holds them. */
function listRecords(list: StreamedList, results: Results): string {
  if (list === 'turns') return records(TURN_RECORD, results.turns);
  if (list === 'probes') return records(PROBE_RECORD, results.probes);
  return records(VIOLATION_RECORD, results.violations);
}

/** Decimal USD text → pico-dollars, exactly. */
export function picoFromUsd(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,12}))?$/.exec(text);
  if (!m) throw new Error(`not a USD amount: ${JSON.stringify(text)}`);
  const pico = BigInt(m[2]!) * 1_000_000_000_000n + BigInt((m[3] ?? '').padEnd(12, '0'));
  return m[1] ? -pico : pico;
}

/** A list's records as parsed, money columns (by kind) read back to pico-dollars. */
function decodeRecords<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, rows: unknown, where: string): RecordOf<Cs>[] {
  if (!Array.isArray(rows)) throw new Error(`${where}: expected a list`);
  return rows.map((row, i) => {
    if (!row || typeof row !== 'object') throw new Error(`${where}[${i}]: expected an object`);
    return Object.fromEntries(
      Object.entries(row).map(([k, v]) => {
        if (!kind.money.has(k)) return [k, v];
        if (typeof v !== 'string') throw new Error(`${where}[${i}].${k}: expected a USD string`);
        return [k, picoFromUsd(v)];
      }),
    ) as RecordOf<Cs>;
  });
}

/** Reads a results.json back (e.g. to merge or compare runs); `file` names it in errors. */
export function parseResultsJson(text: string, file: string): ResultsDocument {
  try {
    const doc = JSON.parse(text) as Record<string, unknown>;
    if (doc.schemaVersion !== SCHEMA_VERSION) {
      throw new Error(`schemaVersion: expected ${SCHEMA_VERSION}, got ${JSON.stringify(doc.schemaVersion)}`);
    }
    // Files written with `--records summary` say so, and hold no turns or probes.
    const mode = doc.records ?? 'full';
    if (mode !== 'summary' && mode !== 'full') throw new Error(`records: expected "summary" or none, got ${JSON.stringify(doc.records)}`);
    const rows = <Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>): RecordOf<Cs>[] => {
      if (mode === 'full') return decodeRecords(kind, doc[kind.name], kind.name);
      if (doc[kind.name] !== undefined) throw new Error(`${kind.name}: a file of summary records holds none`);
      return [];
    };
    return {
      schemaVersion: SCHEMA_VERSION,
      meta: doc.meta as ResultsMeta,
      study: doc.study as ReportInfo,
      records: mode,
      results: {
        policies: decodeRecords(POLICY_RECORD, doc.policies, 'policies'),
        summary: decodeRecords(SUMMARY_RECORD, doc.summary, 'summary'),
        turns: rows(TURN_RECORD),
        probes: rows(PROBE_RECORD),
        // Files written before provider rules were checked have none.
        violations: doc.violations === undefined ? [] : decodeRecords(VIOLATION_RECORD, doc.violations, 'violations'),
      },
    };
  } catch (e) {
    throw new UsageError(`${file}: not a ctxsim results.json (${(e as Error).message})`);
  }
}
