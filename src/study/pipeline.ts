import { UsageError, type Problem } from '../errors.js';
import { autoJobs, streamStudyParallel } from '../engine/parallel.js';
import type { RunInfo } from '../engine/run.js';
import { RUN_SPEC_KEYS, runSpecOf, type CanonicalSpec, type Conversations, type RunOptions, type RunSpec } from '../engine/spec.js';
import { byPolicy } from '../engine/summary.js';
import { ENGINE_VERSION } from '../engine/version.js';
import { limitsWords, studyLimits } from '../gate/limits.js';
import { baselineJson, conversationHash, makeBaseline, sha256, type StudyFingerprint } from '../gate/baseline.js';
import { lookup } from '../pricing/prices.js';
import { reportInfo, scenarioShape, type ReportInfo, type ScenarioShape } from '../records/info.js';
import type { ResultsMeta } from '../records/json.js';
import { lostProbes } from '../records/digest.js';
import type { Conversation } from '../types.js';
import type { PolicyRecord, ProbeRecord, SummaryRecord } from '../records/registry.js';
import { checkFileTarget, OutputSet } from '../output/files.js';
import { recordEncoder, type StudyRecords } from '../output/record-encoder.js';
import type { StudyDone, StudySink } from '../output/sink.js';
import { ctxsimVersion, readInputText } from '../process.js';
import { displayPath } from '../output/display.js';
import { studyConversations, type Study, type StudyConversations } from './study.js';
import { NETWORK_MODES, studyUpkeep, upkeepFingerprint } from '../recording/upkeep.js';
import { billedChecks, type BilledCheck } from './billed.js';
import { priceWarnings } from './price-check.js';
import { reportSettingsOf } from '../report/settings.js';

/**
 * Runs a study end to end. The phases, in order:
 *
 *  1. load     — the study's conversations (`studyConversations`): scenario
 *                files and imported datasets read and checked; generated
 *                sets only numbered, each conversation made when the run
 *                asks for it, so none is held whole;
 *  2. describe — what the fingerprint and the reports need of them: for a
 *                transcript that records what the provider billed,
 *                ctxsim's count against the bill, before the run; each
 *                conversation's content hash and shape as the run takes
 *                it, before it is let go (`describing`);
 *  3. upkeep   — where summaries, extractions and embeddings come from:
 *                simulated, or a cassette of a real model's responses, read
 *                or first recorded (recording/upkeep.ts);
 *  4. replay   — every conversation × policy variant, on worker threads when
 *                the study is large (engine/parallel.ts); each scenario's
 *                records go to the sink in study order as they exist;
 *  5. digest   — the study's fingerprint and the report info;
 *  6. finish   — the sink makes its output (keeps the records, writes an
 *                output folder, renders one report, writes a shard file);
 *  7. baseline — written when asked, once the sink has finished; the
 *                sink's files and the baseline are committed together
 *                (an `OutputSet`): all are in place, or none.
 *
 * Every output of ctxsim goes through a `StudySink` (output/sink.ts);
 * `ctxsim merge` feeds a sink from shard files instead of a replay
 * (study/merge.ts).
 */

/** A study ready to run: where its token counts and replayed units are cached and on how many threads. */
export type RunnableStudy = Study & Pick<RunOptions, 'cacheFolder' | 'cacheReplays' | 'cacheMaxBytes' | 'jobs' | 'policyTimeout' | 'policyMemory'>;

/** What the caller hears while a study runs; every callback is optional (a library call is silent). */
export interface StudyEvents {
  /** Notes from loading (an importer's report of dataset quirks). */
  onNote?: (line: string) => void;
  /** After each scenario: how many are done, of how many. */
  onProgress?: (done: number, total: number, scenario: string) => void;
  /** Problems that did not stop the run (a damaged token cache rebuilt). */
  onWarning?: (line: string) => void;
}

export interface PipelineOptions extends StudyEvents {
  /** Run only slice `index` of `count` of the scenario × policy work. */
  shard?: RunOptions['shard'];
  /** Also write a baseline for `ctxsim check` to this (absolute) path. */
  baseline?: string;
  /**
   * Stage the sink's files and the baseline here, and leave the commit to the
   * caller (who may add outputs of its own); the pipeline aborts it if the
   * run fails. Without it, the pipeline commits them when the run is done.
   */
  outputs?: OutputSet;
}

/** A sink's output, with the per-policy totals and what describes the run. */
export interface SinkOutcome<R> extends StudyDone {
  output: R;
  summary: SummaryRecord[];
  /** The probes the run did not retain, in record order: a baseline names them per row, the gate those a change lost. */
  lost: ProbeRecord[];
  policies: PolicyRecord[];
}

/** A study as run: its sink's outcome, and what the run told (encoding, prices, token counting). */
export interface StudyOutcome<R> extends SinkOutcome<R> {
  run: RunInfo;
  /** For each transcript that records billed usage: ctxsim's count of those calls against the bill. */
  billed: BilledCheck[];
  /** Where each conversation is written, by id: a scenario file's `id:` line, a generated or imported one's study entry (what the gate points a changed scenario at). */
  scenarioPlaces: ReadonlyMap<string, Problem>;
}

/** Runs `study` through the phases above into `sink`; on failure the sink is aborted and nothing is left behind. */
export async function runStudyPipeline<R>(study: RunnableStudy, sink: StudySink<R>, opts: PipelineOptions = {}): Promise<StudyOutcome<R>> {
  const outputs = opts.outputs ?? new OutputSet();
  try {
    // Refused before the run: a device, a folder or a file on the way is never written.
    if (opts.baseline) checkFileTarget(opts.baseline);
    const mode = study.upkeepSource?.mode;
    if (opts.shard && (mode === 'record' || mode === 'live')) {
      throw new UsageError(`--shard: record the upkeep cassette first (ctxsim run --upkeep record), then run the shards with --upkeep replay`);
    }
    // Prices that look like unit mistakes upstream are said before any work (a typo there can bill 100,000 times over).
    if (opts.onWarning) for (const w of priceWarnings(study)) opts.onWarning(w);
    const scenarioPlaces = new Map<string, Problem>();
    const loaded = studyConversations(study.scenarios, { seed: study.seed, ...(opts.onNote && { onNote: opts.onNote }), onPlace: (id, at) => scenarioPlaces.set(id, at) });
    const jobs = study.jobs ?? autoJobs(loaded);
    // Generated conversations record no billed usage: the ones read from files are all there is to check.
    const billed = billedChecks(loaded.read(), study);
    // A recording plans the calls of every conversation, so it has them all at once (in `every` alone, which the run empties); otherwise upkeep reads none.
    const every = mode && NETWORK_MODES.includes(mode) ? Array.from({ length: loaded.length }, (_, i) => taken(loaded, i)) : undefined;
    const upkeep = await studyUpkeep(study, every ?? [], displayPath, opts);
    const described = describing(every ? handOver(every) : loaded);
    const summary: SummaryRecord[] = [];
    const lost: ProbeRecord[] = [];
    const run = await streamStudyParallel(
      {
        ...study,
        conversations: described,
        jobs,
        ...(opts.shard && { shard: opts.shard }),
        ...(sink.encodedLists && { encoder: recordEncoder(sink.encodedLists) }),
        ...(opts.onProgress && { onProgress: opts.onProgress }),
        ...upkeep,
      },
      (records: StudyRecords, i) => {
        for (const s of records.summary) summary.push(s);
        for (const p of records.kind === 'encoded' ? records.encoded.digest.lost : lostProbes(records.probes)) lost.push(p);
        sink.add(records, i);
      },
    );
    for (const w of run.warnings) opts.onWarning?.(w);
    const upkeepUsed = upkeepFingerprint(study, upkeep);
    const fingerprint = { ...studyFingerprint(study, run, described.hashes()), ...(upkeepUsed && { upkeep: upkeepUsed }) };
    const { upkeep: used, cassette } = upkeep;
    const info = studyInfo(study, run, described.shapes(), used?.recorded && cassette && { recorded: cassette.file, ...(used.answers && { answers: true as const }), ...(used.judge !== undefined && { judge: used.judge }) });
    const done: StudyDone = { fingerprint, info, meta: resultsMeta(info.priceDate) };
    const output = await sink.finish(done, outputs);
    if (opts.baseline) outputs.file(opts.baseline, baselineJson(makeBaseline(fingerprint, summary, lost)));
    if (!opts.outputs) outputs.commit();
    return { ...done, output, summary, lost, policies: byPolicy(summary), run, billed, scenarioPlaces };
  } catch (e) {
    sink.abort();
    outputs.abort();
    throw e;
  }
}

/** What a baseline records of the study, to tell what changed between two runs. */
function studyFingerprint(study: Study, run: RunInfo, scenarios: Record<string, string>): StudyFingerprint {
  return {
    model: study.models.join(', '),
    tokenizer: [...new Set(run.models.map((m) => `${m.encoding.name}${m.encoding.factor !== undefined ? ` ×${m.encoding.factor}` : ''}`))].join(', '),
    prices: study.prices === 'builtin' ? `builtin ${run.prices.date}` : `${displayPath(study.prices)} sha256:${sha256(readInputText(study.prices, { shown: displayPath(study.prices) })).slice(0, 12)}`,
    cache: `${study.promptCache} ttl=${study.promptCacheTtl === undefined ? 'default' : `${study.promptCacheTtl}s`} breakpoints=${study.cacheBreakpoint ?? 'call'}`,
    rules: [...new Set(run.models.map((m) => m.messageRules))].join(', '),
    seed: study.seed,
    policies: study.policies.map((p) => p.name),
    ...moduleHashes(study),
    ...(study.toolDefs && { toolDefs: sha256(JSON.stringify(study.toolDefs)).slice(0, 16) }),
    ...otherSettings(study),
    scenarios,
    engine: ENGINE_VERSION,
    gate: limitsWords(studyLimits(study.gate)),
  };
}

/** The settings of the run's spec that the fingerprint tells by fields of their own (above, and `upkeep`). */
const TOLD: readonly (keyof RunSpec)[] = ['seed', 'models', 'tokenizer', 'prices', 'promptCache', 'promptCacheTtl', 'cacheBreakpoint', 'messageRules', 'toolDefs', 'upkeep'];

/** JSON with every object's keys sorted: a value's text whatever order its keys were written in. */
const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));

/** Every other setting of the study's spec that is set, by a hash of its value (16 hex digits; keys in any order): so that the gate names a change of any. */
function otherSettings(study: Study): Pick<StudyFingerprint, 'settings'> {
  const spec: Partial<CanonicalSpec> = runSpecOf({ ...study, upkeep: undefined });
  const set = RUN_SPEC_KEYS.filter((k) => !TOLD.includes(k) && spec[k] !== undefined);
  return set.length ? { settings: Object.fromEntries(set.map((k) => [k, sha256(sortedJson(spec[k])).slice(0, 16)])) } : {};
}

/**
 * Each module policy's id with the hash of its file (16 hex digits), and of
 * the files it imports for those that import some (so that the gate names a
 * change of a helper as the module's); nothing when every policy is built in.
 */
function moduleHashes(study: Study): Pick<StudyFingerprint, 'modules' | 'moduleImports'> {
  const modules = study.policies.flatMap((v) => (v.module ? [[v.policy.id, v.module.hash.slice(0, 16)] as const] : []));
  const imports = study.policies.flatMap((v) => (v.module?.imports ? [[v.policy.id, v.module.imports.slice(0, 16)] as const] : []));
  return { ...(modules.length && { modules: Object.fromEntries(modules) }), ...(imports.length && { moduleImports: Object.fromEntries(imports) }) };
}

/** What the reports say about the run besides its records; `upkeep` when memory is a real model's, recorded. */
function studyInfo(study: Study, run: RunInfo, shapes: readonly ScenarioShape[], upkeep: ReportInfo['upkeep']): ReportInfo {
  return reportInfo({
    ...(upkeep && { upkeep }),
    studyFile: study.file ? displayPath(study.file) : null,
    ...(study.fromCommandLine && { fromCommandLine: study.fromCommandLine }),
    seed: study.seed,
    models: run.models.map((m) => ({ model: m.model, encoding: m.encoding, maxInputTokens: lookup(run.prices, m.model).maxInputTokens })),
    tokenizer: study.tokenizer,
    prices: study.prices === 'builtin' ? 'builtin' : displayPath(study.prices),
    priceDate: run.prices.date,
    cache: study.promptCache,
    conversations: shapes,
    policies: study.policies,
    report: reportSettingsOf(study),
  });
}

/**
 * The loaded conversations as the run takes them: each handed out once, in
 * order, and let go here (the run keeps none either), so a large study's
 * memory falls as it runs instead of holding every conversation to the end.
 */
export function handOver(list: (Conversation | undefined)[]): Conversations & Pick<StudyConversations, 'release'> {
  return {
    length: list.length,
    at(i) {
      const c = list[i];
      list[i] = undefined;
      return c;
    },
    release() {},
  };
}

/** Conversation `i` of `source`, which lets it go. */
function taken(source: StudyConversations, i: number): Conversation {
  const c = source.at(i);
  source.release(i);
  return c;
}

/** A run's conversations, described as the run takes them: what the fingerprint and the reports need of each, by index. */
interface Described extends Conversations {
  /** Each conversation's content hash, by id, in study order (the fingerprint's `scenarios`). */
  hashes(): Record<string, string>;
  /** Each conversation's shape, in study order (the report info's `conversations`). */
  shapes(): ScenarioShape[];
}

/**
 * `source` as the run takes it, each conversation described (its content
 * hash and shape) when the run asks for it and then let go: the description
 * is all that is kept of it, so neither a generated set (made as the run asks)
 * nor the conversations read from files are held to the end. One the run did
 * not ask for (none, when it finishes) is asked for when described.
 */
function describing(source: Conversations & Pick<StudyConversations, 'release'>): Described {
  const ids: string[] = [];
  const hashes: string[] = [];
  const shapes: ScenarioShape[] = [];
  const describe = (i: number): Conversation | undefined => {
    const c = source.at(i);
    source.release(i);
    if (c) {
      ids[i] = c.id;
      hashes[i] = conversationHash(c);
      shapes[i] = scenarioShape(c);
    }
    return c;
  };
  const all = () => {
    for (let i = 0; i < source.length; i++) if (ids[i] === undefined) describe(i);
  };
  return {
    length: source.length,
    at: describe,
    hashes() {
      all();
      return Object.fromEntries(ids.map((id, i) => [id, hashes[i]!]));
    },
    shapes() {
      all();
      return shapes;
    },
  };
}

/** `results.json`'s meta: package version, price-table date, and the time (`SOURCE_DATE_EPOCH` if set, for reproducible builds). */
export function resultsMeta(priceDate: string, env: Readonly<Record<string, string | undefined>> = process.env, now = () => new Date()): ResultsMeta {
  const epoch = env.SOURCE_DATE_EPOCH;
  const at = epoch && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : now();
  return { tool: 'ctxsim', version: ctxsimVersion(), priceTable: priceDate, generatedAt: at.toISOString() };
}
