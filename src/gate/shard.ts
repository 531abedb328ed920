import { z } from 'zod';
import { CtxsimError, UsageError } from '../errors.js';
import { formatPath } from '../text/document.js';
import { byPolicy } from '../engine/summary.js';
import type { ProbeRecord, Results, SummaryRecord, TurnRecord, ViolationRecord } from '../records/registry.js';
import type { ReportInfo } from '../records/info.js';
import type { StudyFingerprint } from './baseline.js';

/** The part `--shard K/N` ran, written losslessly so `merge` can rebuild the whole run. */
export interface ShardFile {
  kind: 'ctxsim-shard';
  schemaVersion: 1;
  shard: { index: number; count: number };
  study: StudyFingerprint;
  info: ReportInfo;
  turns: TurnRecord[];
  probes: ProbeRecord[];
  summary: SummaryRecord[];
  violations: ViolationRecord[];
}

/** Parses `K/N` (1 ≤ K ≤ N). */
export function parseShard(text: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count) throw new UsageError(`--shard: expected K/N with 1 ≤ K ≤ N, got "${text}"`);
  return { index, count };
}

/** An engine that runs N copies of a job and tells each its index (and, most, the count) in its environment. */
interface ShardEngine {
  name: string;
  index: string;
  /** Kubernetes Indexed Jobs give the pod no count: it comes from `--shard auto/N`. */
  count?: string;
  /** What the engine's first index is. */
  base: 0 | 1;
}

/** Checked in this order; the first whose index variable is set wins. */
const SHARD_ENGINES: readonly ShardEngine[] = [
  { name: 'GitLab CI', index: 'CI_NODE_INDEX', count: 'CI_NODE_TOTAL', base: 1 },
  { name: 'Buildkite', index: 'BUILDKITE_PARALLEL_JOB', count: 'BUILDKITE_PARALLEL_JOB_COUNT', base: 0 },
  { name: 'CircleCI', index: 'CIRCLE_NODE_INDEX', count: 'CIRCLE_NODE_TOTAL', base: 0 },
  { name: 'AWS Batch', index: 'AWS_BATCH_JOB_ARRAY_INDEX', count: 'AWS_BATCH_JOB_ARRAY_SIZE', base: 0 },
  { name: 'Kubernetes Indexed Job', index: 'JOB_COMPLETION_INDEX', base: 0 },
];

/** The shard to run (1-based index, as `K/N`) and, for `--shard auto`, the engine and variables it came from. */
export interface ShardChoice {
  index: number;
  count: number;
  from?: { engine: string; variables: string };
}

/**
 * Reads `--shard`: `K/N` as {@link parseShard}; `auto` takes the index and
 * count from the environment `env` of the engine running the job (GitLab CI
 * `parallel`, Buildkite, CircleCI, AWS Batch array jobs, in that order);
 * `auto/N` also gives the count, which must agree with the engine's, and is
 * the only count a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`) has.
 */
export function shardFromEnv(text: string, env: Readonly<Record<string, string | undefined>>): ShardChoice {
  const m = /^auto(?:\/(.*))?$/.exec(text.trim());
  if (!m) return parseShard(text);
  let given: number | undefined;
  if (m[1] !== undefined) {
    given = wholeNumber(m[1]);
    if (given === undefined || given < 1) throw new UsageError(`--shard: expected auto/N with N a whole number ≥ 1, got "${text}"`);
  }
  const value = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const engine = SHARD_ENGINES.find((e) => value(e.index) !== undefined);
  if (!engine) {
    const looked = SHARD_ENGINES.map((e) => `${e.count ? `${e.index}/${e.count}` : e.index} (${e.name})`).join(', ');
    throw new UsageError(`--shard ${text.trim()}: no shard index in the environment; looked for ${looked}; or give --shard K/N`);
  }
  const rawIndex = value(engine.index)!;
  const index = wholeNumber(rawIndex);
  if (index === undefined) throw new UsageError(`--shard ${text.trim()}: ${engine.index}="${rawIndex}" (${engine.name}) is not a whole number`);
  const rawCount = engine.count === undefined ? undefined : value(engine.count);
  let count: number;
  let variables = `${engine.index}=${rawIndex}`;
  if (rawCount !== undefined) {
    const n = wholeNumber(rawCount);
    if (n === undefined || n < 1) throw new UsageError(`--shard ${text.trim()}: ${engine.count}="${rawCount}" (${engine.name}) is not a whole number ≥ 1`);
    if (given !== undefined && given !== n) throw new UsageError(`--shard ${text.trim()}: ${engine.count}=${rawCount} (${engine.name}) says ${n} shards, --shard says ${given}`);
    count = n;
    variables += `, ${engine.count}=${rawCount}`;
  } else if (given !== undefined) {
    count = given;
    variables += `, count ${given} from --shard auto/${given}`;
  } else {
    const why = engine.count ? `${engine.count} is not set` : 'it gives no count';
    throw new UsageError(`--shard auto: ${engine.index}=${rawIndex} (${engine.name}) is set but ${why}; give the count as --shard auto/N`);
  }
  const last = count - 1 + engine.base;
  if (index < engine.base || index > last) {
    throw new UsageError(`--shard ${text.trim()}: ${engine.index}=${rawIndex} (${engine.name}, counting from ${engine.base}) is out of range ${engine.base}–${last} for ${count} shard${count === 1 ? '' : 's'}`);
  }
  return { index: index - engine.base + 1, count, from: { engine: engine.name, variables } };
}

/** The stderr line saying which shard `--shard auto` chose and why. */
export const shardNote = (s: ShardChoice) => `shard ${s.index}/${s.count}${s.from ? ` (from ${s.from.engine}: ${s.from.variables})` : ''}`;

/** A whole number written in decimal digits (no sign, no fraction), else undefined. */
function wholeNumber(text: string): number | undefined {
  if (!/^\d+$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The file name a shard writes. */
export const shardFileName = (s: { index: number; count: number }) => `shard-${s.index}-of-${s.count}.json`;

/** JSON with bigint money kept exact as `{"$pico": "…"}`. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? { $pico: v.toString() } : v))}\n`;
}

export function fromJson(text: string): unknown {
  return JSON.parse(text, (_k, v) => (v && typeof v === 'object' && typeof v.$pico === 'string' ? BigInt(v.$pico) : v));
}

/** Reads a shard file; anything else is an error naming the file. */
export function readShard(file: string, text: string): ShardFile {
  let v: unknown;
  try {
    v = fromJson(text);
  } catch {
    throw new CtxsimError(`${file}: not a ctxsim shard file (invalid JSON)`, 'input');
  }
  const s = v as Partial<ShardFile>;
  if (s?.kind !== 'ctxsim-shard' || s.schemaVersion !== 1) throw new CtxsimError(`${file}: not a ctxsim shard file (schemaVersion 1)`, 'input');
  const r = SHARD.safeParse(v);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new CtxsimError(`${file}: a malformed shard file: ${formatPath(issue.path as (string | number)[]) || 'the file'}: ${issue.message}`, 'input');
  }
  const shard = v as ShardFile;
  const scenarios = new Set(Object.keys(shard.study.scenarios));
  const policies = new Set(shard.study.policies);
  for (const list of ['turns', 'probes', 'summary', 'violations'] as const) {
    shard[list].forEach((rec, i) => {
      if (!scenarios.has(rec.scenario)) throw new CtxsimError(`${file}: a malformed shard file: ${list}[${i}].scenario: "${rec.scenario}" is not a scenario of its study`, 'input');
      if (!policies.has(rec.policy)) throw new CtxsimError(`${file}: a malformed shard file: ${list}[${i}].policy: "${rec.policy}" is not a policy of its study`, 'input');
    });
  }
  return shard;
}

// The shape merge relies on: the study's lists, each record's scenario and policy, the counts and money it sums.
const count = z.number().int().min(0);
const pico = z.bigint();
const keyed = { scenario: z.string(), policy: z.string(), turn: z.number().int().min(1) };
const SHARD = z.looseObject({
  shard: z.strictObject({ index: z.number().int().min(1), count: z.number().int().min(1) }),
  study: z.looseObject({ policies: z.array(z.string()), scenarios: z.record(z.string(), z.string()) }),
  info: z.looseObject({ models: z.array(z.looseObject({ model: z.string() })).min(1) }),
  turns: z.array(z.looseObject({ ...keyed, inputTokens: count, outputTokens: count, cost: pico, cumulativeCost: pico })),
  probes: z.array(z.looseObject({ ...keyed, fact: z.string(), outcome: z.string() })),
  summary: z.array(
    z.looseObject({
      scenario: z.string(),
      policy: z.string(),
      model: z.string(),
      turns: count,
      inputTokens: count,
      cachedTokens: count,
      outputTokens: count,
      auxTokens: count,
      totalCost: pico,
      costPerTurn: pico,
      probes: count,
      retained: count,
      stale: count,
      missing: count,
      overflowProbes: count,
      retention: z.number().nullable(),
      latencyP50Ms: z.number(),
      latencyP95Ms: z.number(),
      weight: z.number().positive(),
      // Absent from shards written before answers were measured.
      answered: count.nullable().optional(),
      answerRetention: z.number().nullable().optional(),
      // Absent from shards written before a judge's yeses on values not sent were counted apart.
      judgedUnsent: count.nullable().optional(),
    }),
  ),
  violations: z.array(z.looseObject({ ...keyed, rule: z.string(), detail: z.string() })),
});

/**
 * Rebuilds the results of the unsharded run from all N shards: rows are put
 * back in the run's order (scenario, then model, then policy), and policy
 * totals recomputed.
 */
export function mergeShards(shards: readonly { file: string; shard: ShardFile }[]): { study: StudyFingerprint; info: ReportInfo; results: Results } {
  if (!shards.length) throw new UsageError('merge: no shard files found');
  const first = shards[0]!.shard;
  const fp = JSON.stringify(first.study);
  const seen = new Map<number, string>();
  for (const { file, shard } of shards) {
    if (JSON.stringify(shard.study) !== fp) throw new UsageError(`merge: ${file} comes from a different study than ${shards[0]!.file}`);
    if (shard.shard.count !== first.shard.count) throw new UsageError(`merge: ${file} is shard ${shard.shard.index}/${shard.shard.count}, expected …/${first.shard.count}`);
    if (seen.has(shard.shard.index)) throw new UsageError(`merge: shard ${shard.shard.index}/${shard.shard.count} given twice (${seen.get(shard.shard.index)}, ${file})`);
    seen.set(shard.shard.index, file);
  }
  const missing = Array.from({ length: first.shard.count }, (_, i) => i + 1).filter((k) => !seen.has(k));
  if (missing.length) throw new UsageError(`merge: missing shard(s) ${missing.map((k) => `${k}/${first.shard.count}`).join(', ')}`);

  const scenarioOrder = new Map(Object.keys(first.study.scenarios).map((id, i) => [id, i]));
  const policyOrder = new Map(first.study.policies.map((p, i) => [p, i]));
  const models = first.info.models.map((m) => m.model);
  // With one model every row is of it (a turn's own `model` may be the one `route` chose).
  const modelAt = (model: string) => (models.length > 1 ? models.indexOf(model) : 0);
  const rank = (r: { scenario: string; policy: string; model: string }) => (scenarioOrder.get(r.scenario)! * models.length + modelAt(r.model)) * policyOrder.size + policyOrder.get(r.policy)!;
  const byRank = <T extends { scenario: string; policy: string; model: string }>(rows: T[]) =>
    rows.map((r, i) => [r, i] as const).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([r]) => r);
  const ordered = [...shards].sort((a, b) => a.shard.shard.index - b.shard.shard.index);
  const summary = byRank(ordered.flatMap((s) => s.shard.summary));
  return {
    study: first.study,
    info: first.info,
    results: {
      turns: byRank(ordered.flatMap((s) => s.shard.turns)),
      probes: byRank(ordered.flatMap((s) => s.shard.probes)),
      summary,
      policies: byPolicy(summary),
      violations: byRank(ordered.flatMap((s) => s.shard.violations)),
    },
  };
}
