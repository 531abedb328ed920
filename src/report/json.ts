import { UsageError } from '../errors.js';
import type { Results } from '../types.js';
import { usd } from './format.js';
import type { ReportInfo } from './info.js';

/** Bumped when a field changes meaning or goes away (adding fields does not bump it). */
export const SCHEMA_VERSION = 1;

/** Decimals of money in results.json: 12, i.e. exact to the pico-dollar. */
export const MONEY_DECIMALS = 12;

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

/** The document `results.json` holds, as parsed back (money as bigint pico-dollars). */
export interface ResultsDocument {
  schemaVersion: number;
  meta: ResultsMeta;
  study: ReportInfo;
  results: Results;
}

/** Money fields are the ones whose name contains "cost" (cost, cumulativeCost, costInput, totalCost, …). */
const isMoneyKey = (key: string) => /cost/i.test(key);

function encodeRecord(r: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? usd(v, MONEY_DECIMALS) : v]));
}

/**
 * results.json: every record of the run (policies, summary, turns, probes, violations),
 * the resolved study, and `meta` (version, price-table date, time written).
 * Money is an exact decimal string of USD with 12 decimals ("0.000013500000"):
 * JSON numbers cannot hold pico-dollar totals exactly.
 */
export function resultsJson(results: Results, study: ReportInfo, meta: ResultsMeta): string {
  const fields: [string, string][] = [
    ['schemaVersion', JSON.stringify(SCHEMA_VERSION)],
    ['meta', JSON.stringify(meta)],
    ['money', JSON.stringify(`USD, exact decimal strings with ${MONEY_DECIMALS} decimals`)],
    ['study', JSON.stringify(study, null, 1).replace(/\n/g, '\n ')],
    ['policies', records(results.policies)],
    ['summary', records(results.summary)],
    ['turns', records(results.turns)],
    ['probes', records(results.probes)],
    ['violations', records(results.violations)],
  ];
  return `{\n${fields.map(([k, v]) => ` ${JSON.stringify(k)}: ${v}`).join(',\n')}\n}\n`;
}

/** A list of records, one per line: compact, and a diff shows which rows changed. */
function records(rows: readonly object[]): string {
  return rows.length ? `[\n${rows.map((r) => `  ${JSON.stringify(encodeRecord(r))}`).join(',\n')}\n ]` : '[]';
}

/** Decimal USD text → pico-dollars, exactly. */
export function picoFromUsd(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,12}))?$/.exec(text);
  if (!m) throw new Error(`not a USD amount: ${JSON.stringify(text)}`);
  const pico = BigInt(m[2]!) * 1_000_000_000_000n + BigInt((m[3] ?? '').padEnd(12, '0'));
  return m[1] ? -pico : pico;
}

function decodeRecords<T>(rows: unknown, where: string): T[] {
  if (!Array.isArray(rows)) throw new Error(`${where}: expected a list`);
  return rows.map((row, i) => {
    if (!row || typeof row !== 'object') throw new Error(`${where}[${i}]: expected an object`);
    return Object.fromEntries(
      Object.entries(row).map(([k, v]) => {
        if (!isMoneyKey(k)) return [k, v];
        if (typeof v !== 'string') throw new Error(`${where}[${i}].${k}: expected a USD string`);
        return [k, picoFromUsd(v)];
      }),
    ) as T;
  });
}

/** Reads a results.json back (e.g. to merge or compare runs); `file` names it in errors. */
export function parseResultsJson(text: string, file: string): ResultsDocument {
  try {
    const doc = JSON.parse(text) as Record<string, unknown>;
    if (doc.schemaVersion !== SCHEMA_VERSION) {
      throw new Error(`schemaVersion: expected ${SCHEMA_VERSION}, got ${JSON.stringify(doc.schemaVersion)}`);
    }
    return {
      schemaVersion: SCHEMA_VERSION,
      meta: doc.meta as ResultsMeta,
      study: doc.study as ReportInfo,
      results: {
        policies: decodeRecords(doc.policies, 'policies'),
        summary: decodeRecords(doc.summary, 'summary'),
        turns: decodeRecords(doc.turns, 'turns'),
        probes: decodeRecords(doc.probes, 'probes'),
        // Files written before provider rules were checked have none.
        violations: doc.violations === undefined ? [] : decodeRecords(doc.violations, 'violations'),
      },
    };
  } catch (e) {
    throw new UsageError(`${file}: not a ctxsim results.json (${(e as Error).message})`);
  }
}
