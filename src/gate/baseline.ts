import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Problem } from '../errors.js';
import { MONEY_DECIMALS, usd } from '../records/format.js';
import type { Conversation } from '../types.js';
import type { ColumnSpec, ValueOf } from '../records/columns.js';
import { BASELINE_ORDER, SUMMARY_RECORD, type ProbeRecord, type SummaryRecord } from '../records/registry.js';
import { columnSchema, MAX_USD_DIGITS } from '../records/schema.js';
import type { DocPath } from '../text/document.js';
import { gateLimitProblem, LIMIT_KEYS, type LimitKey, type LimitsText } from './limits.js';
import { jsonDoc, notTheFormat, readInput, throwProblems, type JsonDoc } from './_read.js';

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
  /** Policy id → hash of the files its module imports, for the modules that import some (absent when none does, and in baselines saved before it was recorded). */
  moduleImports?: Record<string, string>;
  /** Hash of the study's tool definitions (absent when it has none). */
  toolDefs?: string;
  /** The run's settings that no field here tells (`route`, `fallback`, `latency`, `tokenFactor`), each by a hash of its value; absent when none is set. */
  settings?: Record<string, string>;
  /** Scenario id → hash of its content. */
  scenarios: Record<string, string>;
  /** Where upkeep came from when not simulated with the default prompts: `recorded FILE sha256:…`, `live URL`, `simulated prompts sha256:…`. */
  upkeep?: string;
  /** The engine's version (`ENGINE_VERSION`): another makes other records of the same study; absent in baselines saved before it was recorded. */
  engine?: number;
  /** The study's gate limits, in its words, a default given for each it leaves out (`limitsWords`): a check applies none looser (`appliedLimits`); absent in baselines saved before it was recorded. */
  gate?: LimitsText;
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
  // `micro` is a whole number of pico-dollars ÷ 10^6, in floating point: of the whole numbers next to micro × 10^6 (which
  // may be off by a few), the one that gives `micro` back, so that the file reads back as the very number saved.
  const near = Math.round(micro * 1e6);
  const exact = [0, -1, 1, -2, 2, -3, 3, -4, 4].map((d) => near + d).find((p) => p >= 0 && p / 1e6 === micro);
  return usd(BigInt(exact ?? near), MONEY_DECIMALS);
}

/** A row as the file holds it: its cost as `totalCost`, USD as a decimal string (as results.json), where `costMicroUsd` stood. */
const rowFile = (r: BaselineRow) => Object.fromEntries(Object.entries(r).map(([k, v]) => (k === 'costMicroUsd' ? ['totalCost', usdOfMicro(v as number)] : [k, v])));

/** Serialized with one row per line, so a diff of a committed baseline reads well. */
export function baselineJson(b: Baseline): string {
  const head = JSON.stringify({ schemaVersion: b.schemaVersion, studyHash: b.studyHash, study: b.study }, null, 2).slice(0, -2);
  return `${head},\n  "rows": [\n${b.rows.map((r) => `    ${JSON.stringify(rowFile(r))}`).join(',\n')}\n  ]\n}\n`;
}

/**
 * Reads a baseline written by `run --save-baseline`; `shown` is how errors
 * name the file. Every field is checked (see `BASELINE`); a problem is one
 * line, `file:line:col path: what`, exit code 2.
 */
export function readBaseline(file: string, shown = file): Baseline {
  return parseBaseline(readInput(file, shown, 'baseline'), shown);
}

/** Money read back from a file: whole dollars of at most 15 digits (under $10^15). */
const USD_TEXT = new RegExp(`^\\d{1,${MAX_USD_DIGITS}}\\.\\d{${MONEY_DECIMALS}}$`);

/** A row's cost as the file holds it: USD as a decimal string with 12 decimals (`usdOfMicro`). */
const USD = z.string().regex(USD_TEXT, `expected USD with ${MONEY_DECIMALS} decimals such as "0.000051300000", at least 0 and under 10^${MAX_USD_DIGITS}`);

/** A lost probe's name: `fact@turn`. */
const PROBE_NAME = z.string().regex(/^[^]+@[1-9]\d*$/, 'expected a probe as fact@turn');

/**
 * A baseline row as the file holds it: the columns of `BASELINE_ORDER`
 * typed and bounded by their kind (`recordSchema`'s), `answered` absent
 * when not measured; its cost as `totalCost`, or as baselines held it
 * before, `costMicroUsd` (micro-dollars); `model` absent in rows written
 * before rows named it; `lost` absent when it lost none. Unknown keys are
 * left out: a later version adds a column at the end of the rows, and this
 * one compares the columns it knows.
 */
const FILE_ROW = z.object({
  ...Object.fromEntries(BASELINE_COLUMNS.map((c) => [c.key, c.kind === 'money' ? USD.optional() : c.nullable || c.key === 'model' ? columnSchema(c).optional() : columnSchema(c)])),
  costMicroUsd: z.number().min(0).lt(10 ** (MAX_USD_DIGITS + 6)).optional(),
  lost: z.array(PROBE_NAME).optional(),
});

/** A name: a non-empty string. */
const NAME = z.string().min(1);
const HASHES = z.record(z.string(), z.string());

/** The fingerprint's fields, as baselines and shard files hold them. */
export const FINGERPRINT_FIELDS = {
  model: NAME,
  tokenizer: z.string(),
  prices: z.string(),
  cache: z.string(),
  rules: z.string(),
  seed: z.number().int(),
  policies: z.array(NAME).min(1),
  modules: HASHES.optional(),
  moduleImports: HASHES.optional(),
  toolDefs: z.string().optional(),
  settings: HASHES.optional(),
  scenarios: z.record(NAME, z.string()),
  upkeep: z.string().optional(),
  engine: z.number().int().min(1).optional(),
  // Each limit read as a study's `gate.<key>` is (`limitProblems`).
  gate: z.object(Object.fromEntries(LIMIT_KEYS.map((k) => [k, z.string()])) as Record<LimitKey, z.ZodString>).optional(),
};

/** What a baseline's fingerprint says for a field written after it was saved (`rules`: the provider rule set). */
const NOT_RECORDED = 'not recorded';

/** The baseline file: unknown keys left out, as in its rows (a later version's additions). */
const BASELINE = z.object({
  schemaVersion: z.literal(1),
  studyHash: z.string(),
  // Baselines saved before the provider rule set was fingerprinted have none.
  study: z.object({ ...FINGERPRINT_FIELDS, rules: z.string().optional() }),
  rows: z.array(FILE_ROW).min(1),
});

/**
 * Counts a row holds that cannot exceed another of its counts (`retained`
 * of `probes`): a row breaking one would let the gate compare shares above
 * 100%.
 */
const AT_MOST = [
  ['retained', 'probes'],
  ['answered', 'probes'],
  ['cachedTokens', 'inputTokens'],
] as const;

/** The problems of a row (at `path`) whose counts exceed the count that holds them. */
export function countProblems(row: Partial<Record<(typeof AT_MOST)[number][number], number | null>>, path: DocPath, doc: Pick<JsonDoc, 'problem'>): Problem[] {
  const out: Problem[] = [];
  for (const [part, whole] of AT_MOST) {
    const [a, b] = [row[part], row[whole]];
    if (typeof a === 'number' && typeof b === 'number' && a > b) out.push(doc.problem([...path, part], `${a} is more than its ${whole} (${b})`));
  }
  return out;
}

/** The problems of a fingerprint's gate limits (at `path`), each as a study's `gate.<key>` would have it. */
export function limitProblems(gate: Partial<LimitsText> | undefined, path: DocPath, doc: Pick<JsonDoc, 'problem'>): Problem[] {
  return LIMIT_KEYS.flatMap((k) => {
    const problem = gate?.[k] === undefined ? undefined : gateLimitProblem(k, gate[k]);
    return problem ? [doc.problem([...path, k], problem)] : [];
  });
}

/** A baseline's text, checked; `file` names it in errors. */
function parseBaseline(text: string, file: string): Baseline {
  const doc = jsonDoc(text, file);
  const wrong = notTheFormat(doc, 'ctxsim baseline', 1);
  if (wrong) throwProblems([wrong]);
  const problems: Problem[] = [];
  const b = doc.check(BASELINE, doc.value, [], problems);
  throwProblems(problems);
  throwProblems(limitProblems(b!.study.gate, ['study', 'gate'], doc));
  const { rules, ...fields } = b!.study;
  const study = { ...fields, rules: rules ?? NOT_RECORDED } as StudyFingerprint;
  const rows = b!.rows.map((r, i) => baselineRow(r as FileRow, i, study, doc, problems));
  throwProblems(problems);
  throwProblems(rowSetProblems(rows, study, doc));
  return { schemaVersion: 1, studyHash: b!.studyHash, study, rows };
}

type FileRow = Omit<BaselineRow, 'costMicroUsd' | 'model'> & { model?: string; totalCost?: string; costMicroUsd?: number };

/** A row of the file as the gate compares it (its problems go to `out`). */
function baselineRow(r: FileRow, i: number, study: StudyFingerprint, doc: JsonDoc, out: Problem[]): BaselineRow {
  const at = ['rows', i];
  if (r.totalCost !== undefined && r.costMicroUsd !== undefined) out.push(doc.problem([...at, 'costMicroUsd'], 'a row holds its cost once: totalCost (USD), or costMicroUsd as baselines did before'));
  else if (r.totalCost === undefined && r.costMicroUsd === undefined) out.push(doc.problem([...at, 'totalCost'], 'required but missing'));
  if (!Object.hasOwn(study.scenarios, r.scenario)) out.push(doc.problem([...at, 'scenario'], `"${r.scenario}" is not a scenario of the baseline's study`));
  if (!study.policies.includes(r.policy)) out.push(doc.problem([...at, 'policy'], `"${r.policy}" is not a policy of the baseline's study`));
  out.push(...countProblems(r, at, doc));
  const row: Record<string, unknown> = {};
  for (const c of BASELINE_COLUMNS) {
    // The cost as micro-dollars, as `makeBaseline` computes them.
    if (c.kind === 'money') row.costMicroUsd = r.totalCost !== undefined ? microOfUsd(r.totalCost) : r.costMicroUsd;
    // Rows written before baselines named their model are of the study's one model.
    else if (c.key === 'model') row.model = r.model ?? study.model;
    else if ((r as Record<string, unknown>)[c.key] !== undefined) row[c.key] = (r as Record<string, unknown>)[c.key];
  }
  if (r.lost) row.lost = r.lost;
  return row as BaselineRow;
}

/** USD as `usdOfMicro` writes it → micro-dollars, as `makeBaseline` computes them. */
const microOfUsd = (text: string): number => Number(BigInt(text.replace('.', ''))) / 1e6;

/**
 * A baseline holds one row per scenario × policy of its study, on each model
 * it has rows of, and no row twice: a row given twice would be compared
 * once, and one left out never.
 */
function rowSetProblems(rows: readonly BaselineRow[], study: StudyFingerprint, doc: JsonDoc): Problem[] {
  const out: Problem[] = [];
  const seen = new Map<string, number>();
  rows.forEach((r, i) => {
    const key = rowKey(r);
    const first = seen.get(key);
    if (first !== undefined) out.push(doc.problem(['rows', i], `${r.scenario} × ${r.policy} × ${r.model} again (as rows[${first}])`));
    else seen.set(key, i);
  });
  if (out.length) return out;
  for (const model of new Set(rows.map((r) => r.model))) {
    for (const scenario of Object.keys(study.scenarios)) {
      for (const policy of study.policies) {
        if (!seen.has(rowKey({ scenario, policy, model }))) return [doc.problem(['rows'], `no row for ${scenario} × ${policy} × ${model}: a baseline has one for each scenario × policy of its study, on each model`)];
      }
    }
  }
  return out;
}
