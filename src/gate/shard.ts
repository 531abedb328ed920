import { z } from 'zod';
import { UsageError, type Problem } from '../errors.js';
import { byPolicy } from '../engine/summary.js';
import { MONEY_DECIMALS } from '../records/format.js';
import { PROBE_RECORD, SUMMARY_RECORD, TURN_RECORD, VIOLATION_RECORD, type ProbeRecord, type Results, type SummaryRecord, type TurnRecord, type ViolationRecord } from '../records/registry.js';
import { REPORT_SETTINGS, STUDY_LISTS, type ReportInfo } from '../records/info.js';
import { countSchema, MAX_USD_DIGITS, recordSchema } from '../records/schema.js';
import { weightSchema } from '../scenario/schema.js';
import type { DocPath } from '../text/document.js';
import { countProblems, FINGERPRINT_FIELDS, limitProblems, type StudyFingerprint } from './baseline.js';
import { jsonDoc, notTheFormat, readInput, throwProblems, type JsonDoc } from './_read.js';
import { isObject } from '../text/json.js';

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
  // A number past 2^53 − 1 would not be the one typed (1/99999999999999999999 would name shard 1 of 1e20).
  if (!m || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) throw new UsageError(`--shard: expected K/N with 1 ≤ K ≤ N, got "${text}"`);
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

/** A shard file read: where it came from, its content, and where a path of it is (for problems found when merging). */
export interface ReadShard {
  file: string;
  shard: ShardFile;
  problem: JsonDoc['problem'];
}

/**
 * Reads a shard file; `shown` is how errors name it. Every field is checked
 * (see `SHARD`); a problem is one line, `file:line:col path: what`, exit
 * code 2.
 */
export function readShardFile(file: string, shown = file): ReadShard {
  return readShard(shown, readInput(file, shown, 'shard file'));
}

/** A shard file's text, checked; `file` names it in errors. */
export function readShard(file: string, text: string): ReadShard {
  const doc = jsonDoc(text, file);
  const wrong = notTheFormat(doc, 'ctxsim shard file', 1, 'ctxsim-shard');
  if (wrong) throwProblems([wrong]);
  const problems: Problem[] = [];
  const shard = doc.check(SHARD, doc.value, [], problems) as ShardFile | undefined;
  throwProblems(problems);
  throwProblems(shardProblems(shard!, doc));
  return { file, shard: shard!, problem: doc.problem };
}

/**
 * Money as a shard file holds it: `{"$pico": "123"}`, whole pico-dollars,
 * at least 0 and under 10^27 ($10^15).
 */
const PICO_TEXT = new RegExp(`^\\d{1,${MAX_USD_DIGITS + MONEY_DECIMALS}}$`);
const PICO = z
  .custom<{ $pico: string }>((v) => isObject(v) && Object.keys(v).length === 1 && typeof v.$pico === 'string' && PICO_TEXT.test(v.$pico), {
    message: `expected money as {"$pico": "123"}: whole pico-dollars, at least 0 and under 10^${MAX_USD_DIGITS + MONEY_DECIMALS}`,
  })
  .transform((v) => BigInt(v.$pico));

const NAME = z.string().min(1);

/** The report info (`ReportInfo`) a shard carries for the merged reports. */
const REPORT_INFO = z.strictObject({
  studyFile: z.string().nullable(),
  fromCommandLine: z.array(z.enum(STUDY_LISTS)).min(1).optional(),
  seed: z.number().int(),
  model: NAME,
  tokenizer: z.string(),
  encoding: z.string(),
  encodingEstimate: z.boolean(),
  prices: z.string(),
  priceDate: z.string(),
  cache: z.string(),
  maxInputTokens: countSchema.nullable(),
  models: z.array(z.strictObject({ model: NAME, encoding: z.string(), encodingEstimate: z.boolean(), tokenFactor: z.number().positive().optional(), maxInputTokens: countSchema.nullable() })).min(1),
  scenarios: z.array(z.strictObject({ id: NAME, title: z.string().nullable(), source: z.string(), turns: countSchema, unloggedTokens: countSchema.optional(), weight: weightSchema.optional() })).min(1),
  policies: z.array(z.strictObject({ name: NAME, id: NAME, params: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])) })).min(1),
  upkeep: z.strictObject({ recorded: z.string(), answers: z.literal(true).optional(), judge: z.string().optional() }).optional(),
  ...REPORT_SETTINGS.shape,
});

const turn = z.number().int().min(1);

/**
 * The shard file: every record typed and bounded by its columns
 * (`recordSchema`), money as `PICO`. A key this version does not know is
 * refused: a shard is merged by the version that wrote it, and a field it
 * would leave out would make the merged reports differ from the unsharded
 * run's. Shards written before answers were measured have no `answered`
 * and `answerRetention`, before calls were counted no `calls`, and before
 * judged yeses on values not sent were counted apart no `judgedUnsent`.
 */
const SHARD = z.strictObject({
  kind: z.literal('ctxsim-shard'),
  schemaVersion: z.literal(1),
  shard: z.strictObject({ index: z.number().int().min(1), count: z.number().int().min(1) }),
  study: z.strictObject(FINGERPRINT_FIELDS),
  info: REPORT_INFO,
  turns: z.array(recordSchema(TURN_RECORD, PICO, { turn, calls: countSchema.optional() })),
  probes: z.array(recordSchema(PROBE_RECORD, PICO, { turn })),
  summary: z.array(
    recordSchema(SUMMARY_RECORD, PICO, {
      weight: weightSchema,
      answered: countSchema.optional(),
      answerRetention: z.number().min(0).max(1).optional(),
      // Absent from shards written before a judge's yeses on values not sent were counted apart.
      judgedUnsent: countSchema.optional().transform((v) => v ?? null),
    }),
  ),
  violations: z.array(recordSchema(VIOLATION_RECORD, PICO, { turn, call: turn })),
});

/** The first field of the fingerprint or the report info in which two shards differ: shards of one run have the same. */
function firstDifference(a: ShardFile, b: ShardFile): DocPath | undefined {
  for (const part of ['study', 'info'] as const) {
    const [x, y] = [a[part] as unknown as Record<string, unknown>, b[part] as unknown as Record<string, unknown>];
    for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) if (JSON.stringify(x[key]) !== JSON.stringify(y[key])) return [part, key];
  }
  return undefined;
}

/** The list names of a shard's records. */
const LISTS = ['turns', 'probes', 'summary', 'violations'] as const;

/**
 * What a shard's schema cannot say: its index within its count; its report
 * info of the study its fingerprint names (the same scenarios, policies and
 * models); every record of a scenario and policy of its study (and, but a
 * turn's, which may be a model `route` chose, of one of its models); each
 * summary row of its own slice of the work, once.
 */
function shardProblems(s: ShardFile, doc: JsonDoc): Problem[] {
  const out: Problem[] = [];
  if (s.shard.index > s.shard.count) out.push(doc.problem(['shard', 'index'], `shard ${s.shard.index} of ${s.shard.count}: expected 1 to ${s.shard.count}`));
  const scenarios = s.info.scenarios.map((c) => c.id);
  const models = s.info.models.map((m) => m.model);
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same([...scenarios].sort(), Object.keys(s.study.scenarios).sort())) out.push(doc.problem(['info', 'scenarios'], 'not the scenarios of the fingerprint (study.scenarios)'));
  if (!same(s.info.policies.map((p) => p.name), s.study.policies)) out.push(doc.problem(['info', 'policies'], 'not the policies of the fingerprint (study.policies)'));
  if (models.join(', ') !== s.study.model) out.push(doc.problem(['info', 'models'], `not the models of the fingerprint (study.model "${s.study.model}")`));
  if (new Set(s.study.policies).size !== s.study.policies.length) out.push(doc.problem(['study', 'policies'], 'a policy is listed twice'));
  out.push(...limitProblems(s.study.gate, ['study', 'gate'], doc));
  if (out.length) return out;
  const scenarioAt = new Map(scenarios.map((id, i) => [id, i]));
  const policyAt = new Map(s.study.policies.map((p, i) => [p, i]));
  const modelAt = new Map(models.map((m, i) => [m, i]));
  for (const list of LISTS) {
    s[list].forEach((rec: { scenario: string; policy: string; model: string }, i) => {
      if (!scenarioAt.has(rec.scenario)) out.push(doc.problem([list, i, 'scenario'], `"${rec.scenario}" is not a scenario of its study`));
      if (!policyAt.has(rec.policy)) out.push(doc.problem([list, i, 'policy'], `"${rec.policy}" is not a policy of its study`));
      if (list !== 'turns' && !modelAt.has(rec.model)) out.push(doc.problem([list, i, 'model'], `"${rec.model}" is not a model of its study`));
    });
  }
  if (out.length) return out;
  const seen = new Map<number, number>();
  s.summary.forEach((r, i) => {
    out.push(...countProblems(r, ['summary', i], doc));
    // The work item's number, as the run numbers them: scenario-major, then model, then policy.
    const item = (scenarioAt.get(r.scenario)! * models.length + modelAt.get(r.model)!) * policyAt.size + policyAt.get(r.policy)!;
    if (item % s.shard.count !== s.shard.index - 1) out.push(doc.problem(['summary', i], `${r.scenario} × ${r.policy} × ${r.model} is not in shard ${s.shard.index}/${s.shard.count}'s slice of the work`));
    else if (seen.has(item)) out.push(doc.problem(['summary', i], `${r.scenario} × ${r.policy} × ${r.model} again (as summary[${seen.get(item)}])`));
    else seen.set(item, i);
  });
  return out;
}

/**
 * Rebuilds the results of the unsharded run from all N shards: rows are put
 * back in the run's order (scenario, then model, then policy), and policy
 * totals recomputed.
 */
export function mergeShards(shards: readonly ReadShard[]): { study: StudyFingerprint; info: ReportInfo; results: Results } {
  if (!shards.length) throw new UsageError('merge: no shard files found');
  const head = shards[0]!;
  const first = head.shard;
  const { count } = first.shard;
  const seen = new Map<number, ReadShard>();
  for (const s of shards) {
    const { index } = s.shard.shard;
    const differs = firstDifference(first, s.shard);
    if (differs) throwProblems([s.problem(differs, `not as in ${head.file}: the shards are of different studies (or of a study that changed between them)`)]);
    if (s.shard.shard.count !== count) throwProblems([s.problem(['shard', 'count'], `shard ${index}/${s.shard.shard.count}, but ${head.file} is one of ${count} shards`)]);
    const twin = seen.get(index);
    if (twin) throwProblems([s.problem(['shard', 'index'], `shard ${index}/${count} again (as ${twin.file})`)]);
    seen.set(index, s);
  }
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((k) => !seen.has(k));
  if (missing.length) throw new UsageError(`merge: missing shard(s) ${missing.map((k) => `${k}/${count}`).join(', ')}`);

  // The run's order: its scenarios as listed (a fingerprint's keys put ids such as "7" first), its models, its policies.
  const scenarioOrder = new Map(first.info.scenarios.map((c, i) => [c.id, i]));
  const policyOrder = new Map(first.study.policies.map((p, i) => [p, i]));
  const models = first.info.models.map((m) => m.model);
  // With one model every row is of it (a turn's own `model` may be the one `route` chose).
  const modelAt = (model: string) => (models.length > 1 ? models.indexOf(model) : 0);
  const rank = (r: { scenario: string; policy: string; model: string }) => (scenarioOrder.get(r.scenario)! * models.length + modelAt(r.model)) * policyOrder.size + policyOrder.get(r.policy)!;
  // Each shard holds its own slice's summary rows once (readShard): all of them are there when their count is the run's.
  const items = scenarioOrder.size * models.length * policyOrder.size;
  if (shards.reduce((n, s) => n + s.shard.summary.length, 0) !== items) {
    const held = new Set(shards.flatMap((s) => s.shard.summary.map(rank)));
    const item = Array.from({ length: items }, (_, i) => i).find((i) => !held.has(i))!;
    const policy = first.study.policies[item % policyOrder.size]!;
    const model = models[Math.floor(item / policyOrder.size) % models.length]!;
    const scenario = first.info.scenarios[Math.floor(item / policyOrder.size / models.length)]!.id;
    throwProblems([seen.get((item % count) + 1)!.problem(['summary'], `no row for ${scenario} × ${policy} × ${model}, which is in this shard's slice of the work`)]);
  }
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
