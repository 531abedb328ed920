import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CtxsimError } from '../errors.js';
import { usd } from '../records/format.js';
import { MONEY_DECIMALS } from '../records/json.js';
import type { Conversation, ProbeRecord, SummaryRecord } from '../types.js';

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
  /** Scenario id → hash of its content. */
  scenarios: Record<string, string>;
  /** Where upkeep came from when not simulated with the default prompts: `recorded FILE sha256:…`, `live URL`, `simulated prompts sha256:…`. */
  upkeep?: string;
}

/** One scenario × policy × model's totals, compact. */
export interface BaselineRow {
  scenario: string;
  policy: string;
  /** The chat model (a baseline written before rows named it: the study's one model). */
  model: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  auxTokens: number;
  /** Total cost in micro-dollars (exact to the pico-dollar). */
  costMicroUsd: number;
  probes: number;
  retained: number;
  overflowTurns: number;
  latencyP95Ms: number;
  /** Probes the chat model's reply held, when the run measured answers. */
  answered?: number;
  /**
   * The probes it did not retain, as `fact@turn`, in the order they were
   * probed; absent when it retained every one (and in a baseline written
   * before rows named them, which cannot tell which it lost).
   */
  lost?: string[];
}

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
    rows: summary.map((s) => ({
      scenario: s.scenario,
      policy: s.policy,
      model: s.model,
      inputTokens: s.inputTokens,
      cachedTokens: s.cachedTokens,
      outputTokens: s.outputTokens,
      auxTokens: s.auxTokens,
      costMicroUsd: Number(s.totalCost) / 1e6,
      probes: s.probes,
      retained: s.retained,
      overflowTurns: s.overflowTurns,
      latencyP95Ms: s.latencyP95Ms,
      ...(s.answered !== null && s.answered !== undefined && { answered: s.answered }),
      ...(lostBy.has(rowKey(s)) && { lost: lostBy.get(rowKey(s)) }),
    })),
  };
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
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CtxsimError(`${shown}: cannot read baseline (${(e as NodeJS.ErrnoException).code ?? e})`, 'input');
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
