import { createHash } from 'node:crypto';
import { CtxsimError } from '../errors.js';
import { readInputText, unreadableReason } from '../process.js';
import { MONEY_DECIMALS, usd } from '../records/format.js';
import type { Conversation } from '../types.js';
import type { ColumnSpec, ValueOf } from '../records/columns.js';
import { BASELINE_ORDER, SUMMARY_RECORD, type ProbeRecord, type SummaryRecord } from '../records/registry.js';

/** What a run was: the settings a baseline is compared on. */
export interface StudyFingerprint {
  /** The chat models, comma-separated in the study's order. */
  model: string;
  tokenizer: string;
  prices: string;
  cache: string;
  /** Provider message rules the prompts were checked against. */
  rules: string;
  seed: number;
  policies: string[];
  /** Policy id → hash of its module's file, for the policies loaded from modules (absent when there are none). */
  modules?: Record<string, string>;
  /** Hash of the study's tool definitions (absent when it has none). */
  toolDefs?: string;
  /** The run's settings that no field here tells (`route`, `fallback`, `latency`, `tokenFactor`), each by a hash of its value; absent when none is set. */
  settings?: Record<string, string>;
  /** Scenario id → hash of its content. */
  scenarios: Record<string, string>;
  /** Where upkeep came from when not simulated with the default prompts: `recorded FILE sha256:…`, `live URL`, `simulated prompts sha256:…`. */
  upkeep?: string;
}

/** The summary columns a baseline row keeps (`BASELINE_ORDER`), in the order of its fields. */
const BASELINE_COLUMNS: readonly ColumnSpec[] = BASELINE_ORDER.map((k) => SUMMARY_RECORD.columns.find((c) => c.key === k)!);

type Kept = Extract<(typeof SUMMARY_RECORD.columns)[number], { key: (typeof BASELINE_ORDER)[number] }>;

/**
 * One scenario × policy × model's totals, compact: the summary columns
 * of `BASELINE_ORDER`, a nullable one absent when null (`answered`: when the
 * run measured answers), and the cost in micro-dollars (exact to the
 * pico-dollar) as `costMicroUsd`.
 */
export type BaselineRow = {
  [C in Kept as C extends { kind: 'money' } | { nullable: true } ? never : C['key']]: ValueOf<C>;
} & {
  [C in Kept as C extends { nullable: true } ? C['key'] : never]?: NonNullable<ValueOf<C>>;
} & {
  /** Total cost in micro-dollars (exact to the pico-dollar); the file holds it as `totalCost`, USD. */
  costMicroUsd: number;
  /**
   * The probes it did not retain, as `fact@turn`, in the order they were
   * probed; absent when it retained every one (and in a baseline written
   * before rows named them, which cannot tell which it lost).
   */
  lost?: string[];
};

export interface Baseline {
  schemaVersion: 1;
  studyHash: string;
  study: StudyFingerprint;
  rows: BaselineRow[];
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A stable hash of a conversation's content (what is replayed, not where it
 * came from, nor what a transcript says of how it was run: its model and
 * billed total change no record).
 */
export function conversationHash(c: Conversation): string {
  const { source: _source, model: _model, billed: _billed, ...content } = c;
  // A single system message is hashed as one message, none as no key: the hashes of baselines made before lists of them.
  const system = c.system.length > 1 ? c.system : c.system[0];
  return sha256(JSON.stringify({ ...content, system })).slice(0, 16);
}

/** The `scenarios` of a study's fingerprint: each conversation's content hash by id. */
export function scenarioHashes(conversations: readonly Conversation[]): Record<string, string> {
  return Object.fromEntries(conversations.map((c) => [c.id, conversationHash(c)]));
}

/** A probe as a baseline row names it among those it lost: `fact@turn`. */
export const probeName = (p: Pick<ProbeRecord, 'fact' | 'turn'>): string => `${p.fact}@${p.turn}`;

/** The key of a row's records: scenario, policy and model. */
const rowKey = (r: Pick<ProbeRecord, 'scenario' | 'policy' | 'model'>) => `${r.scenario}\0${r.policy}\0${r.model}`;

/**
 * The baseline of a run: per scenario × policy × model totals, the probes
 * each did not retain (from `lost`, the run's probes that were not retained),
 * and the study's fingerprint.
 */
export function makeBaseline(study: StudyFingerprint, summary: readonly SummaryRecord[], lost: readonly ProbeRecord[] = []): Baseline {
  const lostBy = new Map<string, string[]>();
  for (const p of lost) {
    const list = lostBy.get(rowKey(p));
    if (list) list.push(probeName(p));
    else lostBy.set(rowKey(p), [probeName(p)]);
  }
  return {
    schemaVersion: 1,
    studyHash: sha256(JSON.stringify(study)).slice(0, 16),
    study,
    rows: summary.map((s) => ({ ...baselineFields(s), ...(lostBy.has(rowKey(s)) && { lost: lostBy.get(rowKey(s)) }) })),
  };
}

/** A summary row's baseline columns, in baseline order: money as micro-dollars (`costMicroUsd`), a null (or absent) value left out. */
function baselineFields(s: SummaryRecord): BaselineRow {
  const row: Record<string, unknown> = {};
  const values = s as Record<string, unknown>;
  for (const c of BASELINE_COLUMNS) {
    const v = values[c.key] ?? null;
    if (c.kind === 'money') row.costMicroUsd = Number(v as bigint) / 1e6;
    else if (v !== null) row[c.key] = v;
  }
  return row as BaselineRow;
}

/** Micro-dollars (a baseline row's unit) as USD, a decimal string with 12 decimals: exact to the pico-dollar, as results.json writes money. */
export function usdOfMicro(micro: number): string {
  return usd(BigInt(Math.round(micro * 1e6)), MONEY_DECIMALS);
}

/** USD as `usdOfMicro` writes it → micro-dollars, as `makeBaseline` computes them; undefined for another text. */
function microOfUsd(text: unknown): number | undefined {
  const m = typeof text === 'string' ? /^(-?\d+)\.(\d{12})$/.exec(text) : null;
  return m ? Number(BigInt(`${m[1]}${m[2]}`)) / 1e6 : undefined;
}

/** A row as the file holds it: its cost as `totalCost`, USD as a decimal string (as results.json), where `costMicroUsd` stood. */
const rowFile = (r: BaselineRow) => Object.fromEntries(Object.entries(r).map(([k, v]) => (k === 'costMicroUsd' ? ['totalCost', usdOfMicro(v as number)] : [k, v])));

/** Serialized with one row per line, so a diff of a committed baseline reads well. */
export function baselineJson(b: Baseline): string {
  const head = JSON.stringify({ schemaVersion: b.schemaVersion, studyHash: b.studyHash, study: b.study }, null, 2).slice(0, -2);
  return `${head},\n  "rows": [\n${b.rows.map((r) => `    ${JSON.stringify(rowFile(r))}`).join(',\n')}\n  ]\n}\n`;
}

/** Reads a baseline written by `run --save-baseline`; `shown` is how errors name the file. */
export function readBaseline(file: string, shown = file): Baseline {
  let text: string;
  try {
    text = readInputText(file, { shown, json: true });
  } catch (e) {
    throw new CtxsimError(`${shown}: ${unreadableReason(e, 'baseline')}`, 'input');
  }
  let b: Partial<Baseline>;
  try {
    b = JSON.parse(text);
  } catch (e) {
    throw new CtxsimError(`${shown}: baseline is not valid JSON (${(e as Error).message})`, 'input');
  }
  if (b?.schemaVersion !== 1 || !Array.isArray(b.rows) || !b.study) {
    throw new CtxsimError(`${shown}: not a ctxsim baseline (expected schemaVersion 1 with study and rows)`, 'input');
  }
  for (const [i, r] of (b.rows as (Partial<BaselineRow> & { totalCost?: unknown })[]).entries()) {
    // Rows written before baselines named their model are of the study's one model.
    r.model ??= b.study.model;
    // The cost as the file holds it (USD as a decimal string), or as baselines held it before (micro-dollars).
    if ('totalCost' in r) {
      const micro = microOfUsd(r.totalCost);
      if (micro === undefined) throw new CtxsimError(`${shown}: rows[${i}].totalCost: expected USD with 12 decimals such as "0.000051300000", got ${JSON.stringify(r.totalCost)}`, 'input');
      r.costMicroUsd = micro;
      delete r.totalCost;
    }
  }
  return b as Baseline;
}
