import { CtxsimError } from '../errors.js';
import { finishSteps, finishStepsPausing } from '../process.js';
import type { PolicyVariant } from '../policies/spec.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, type PriceTable } from '../pricing/prices.js';
import { ruleSetFor, type RuleSet } from '../message-rules/provider.js';
import { settingsModels } from '../pricing/settings.js';
import { openTokenCounter, type TokenCounter } from '../tokens/counter.js';
import { encodingForModel, type ResolvedEncoding } from '../tokens/encoding.js';
import type { Conversation } from '../types.js';
import type { Results, SummaryRecord, TurnRecord } from '../records/registry.js';
import { Cassette } from '../upkeep/cassette.js';
import type { Vector } from '../upkeep/embedder.js';
import { Readings } from '../upkeep/readings.js';
import { CassetteMissError } from '../upkeep/origin.js';
import type { Miss } from '../upkeep/upkeep.js';
import { replay, type RecordedResponses, type ReplayContext } from './replay.js';
import { ReplayCache } from './replay-cache.js';
import { engineId } from './version.js';
import { evictStore } from '../store/store.js';
import { byPolicy, summaryOf, type Measured } from './summary.js';
import { memoryOf } from '../records/memory.js';
import { checkExecution, runSpecOf, unitSpec, type CheckedSpec, type Execution, type RunOptions, type RunSpec, type UnitSpec } from './spec.js';

/** What a response the cassette lacks is called in the error. */
const MISSING_WHAT = { summary: 'summary', extract: 'extraction', embed: 'embedding', answer: 'answer to a probe turn', judge: 'verdict of the judge' } as const;

/** A replay that needs a response its cassette does not have: exit 2, naming where and how to record it. */
export function missError(file: string, recordCommand: string): (miss: Miss) => never {
  return (m) => {
    throw new CassetteMissError(
      `${file} has no ${MISSING_WHAT[m.request.kind]} by ${m.request.model} for scenario ${m.scenario}, policy ${m.policy}, ${m.turn ? `turn ${m.turn}` : 'before turn 1'}: record it with \`${recordCommand}\``,
    );
  };
}

/** A recorded upkeep's responses (`RunSpec.upkeep.recorded`), made once for a run's contexts; `cassette` names the recording in the error a missing response is. */
function recordedResponses(u: CheckedSpec['upkeep'], cassette: Execution['cassette'] = { file: 'the cassette', recordCommand: 'ctxsim run --upkeep record' }): RecordedResponses | undefined {
  return u?.recorded && { cassette: new Cassette(u.recorded.entries), onMiss: missError(cassette.file, cassette.recordCommand) };
}

/** What a run used for one of its chat models. */
export interface RunModel {
  model: string;
  encoding: ResolvedEncoding;
  /** The provider message rules its prompts were checked against. */
  messageRules: RuleSet;
}

export interface RunResults extends Results {
  /** The first model's encoding (see `models` for each). */
  encoding: ResolvedEncoding;
  prices: PriceTable;
  tokenizerCalls: number;
  /** Problems with the token cache (a damaged file rebuilt, a failed write), one line each, for stderr. */
  warnings: string[];
  /** The first model's message rules (see `models` for each). */
  messageRules: RuleSet;
  /** Each chat model of the run, in the order given. */
  models: RunModel[];
  /** Units (scenario × model × policy variant) replayed. */
  replayedUnits: number;
  /** Units whose records came from the replay cache instead. */
  cachedUnits: number;
}

/** What `replayContext` makes one chat model's context of: its settings as a run takes them (`RunSpec`), on that model alone. */
type ContextOptions = Omit<RunSpec, 'models'> &
  Pick<Execution, 'cacheFolder' | 'cassette'> & {
    model: string;
    /** When the conversation replayed was recorded (a transcript's date): the prompt format its model name served then (see `encodingForModel`). */
    recorded?: string;
  };

/** A replay context with the encoding resolved for its model. */
export type ModelContext = ReplayContext & { encoding: ResolvedEncoding };

/** A chat model's context in a run, with what of the run's spec its units depend on (`unitSpec`: their replay-cache key). */
export type UnitContext = ModelContext & { unitSpec: UnitSpec };

/** What a context is made with besides its checked spec and model: nothing here is a setting. */
interface ContextMaking {
  /** The spec's price table, loaded (`pricesOf`). */
  prices: PriceTable;
  /** Token counters by encoding: a model whose encoding has one shares it. */
  counters: Map<string, TokenCounter>;
  cacheFolder?: Execution['cacheFolder'];
  /** The spec's recorded upkeep's responses (`recordedResponses`). */
  responses?: RecordedResponses | undefined;
  /** A transcript's date (`ContextOptions.recorded`). */
  recorded?: string | undefined;
}

/** A checked spec's price table: given loaded, or loaded from its name. */
function pricesOf(spec: CheckedSpec): PriceTable {
  return typeof spec.prices === 'object' ? spec.prices : loadPrices(spec.prices);
}

/**
 * One chat model's context of a spec already checked (`runSpecOf`; the one
 * place a context is made): the spec itself, and what is resolved of it for
 * the model — its token counter (count once across policies; taken from
 * `counters` when another model of the run has the same encoding; an
 * open-weight tokenizer's packages are checked here, its files loaded on
 * the first count, so a unit served by the replay cache needs none), the
 * price table (every model the settings name checked up front), the
 * provider rule set (the spec's, or the model's).
 */
export function modelContext(spec: CheckedSpec, model: string, making: ContextMaking): ModelContext {
  const { prices, counters, responses } = making;
  const encoding = encodingForModel(model, spec.tokenizer, spec.tokenFactor, making.recorded);
  for (const m of [model, ...settingsModels(spec)]) lookup(prices, m);
  const messageRules = spec.messageRules ?? ruleSetFor(lookup(prices, model).provider, model);
  const key = `${encoding.name} ×${encoding.factor ?? 1}`;
  let tokens = counters.get(key);
  if (!tokens) counters.set(key, (tokens = openTokenCounter(encoding.name, making.cacheFolder, encoding.factor)));
  return { spec, model, tokens, prices, messageRules, encoding, ...(encoding.estimate && { standIn: true }), ...(responses && { recorded: responses }) };
}

/**
 * One chat model's context, its settings given as a run's are (raw): they
 * are checked here (`runSpecOf`), on this model alone, once per call. For
 * contexts of a spec already checked: `replayContexts`, `modelContext`.
 */
export function replayContext(opts: ContextOptions, counters = new Map<string, TokenCounter>()): ModelContext {
  const spec = runSpecOf({ ...opts, models: [opts.model] });
  return modelContext(spec, opts.model, { prices: pricesOf(spec), counters, cacheFolder: opts.cacheFolder, responses: recordedResponses(spec.upkeep, opts.cassette), recorded: opts.recorded });
}

/**
 * One context per chat model of a run whose spec is checked (`runSpecOf`,
 * once per run: a worker thread is given it checked), sharing one price
 * table, one token counter per encoding, and one cassette.
 */
export function replayContexts(spec: CheckedSpec, exec: Pick<Execution, 'cacheFolder' | 'cassette'> = {}): UnitContext[] {
  const prices = pricesOf(spec);
  const counters = new Map<string, TokenCounter>();
  const responses = recordedResponses(spec.upkeep, exec.cassette);
  // What the simulated memory reads is kept beside the token counts: one store for every model of the run.
  const readings = exec.cacheFolder ? Readings.open(exec.cacheFolder, engineId()) : undefined;
  return spec.models.map((model) => ({
    ...modelContext(spec, model, { prices, counters, cacheFolder: exec.cacheFolder, responses }),
    ...(readings && { readings }),
    unitSpec: unitSpec(spec, model),
  }));
}

/** The token counters of a run's contexts, each once. */
function countersOf(ctxs: readonly ReplayContext[]): TokenCounter[] {
  return [...new Set(ctxs.map((c) => c.tokens))];
}

/** What a run tells of its contexts once they are done: saves each token counter and the readings once; the counts and warnings of its replay cache, if any. */
export function finishContexts(ctxs: readonly ModelContext[], cache?: ReplayCache): RunInfo {
  const counters = countersOf(ctxs);
  for (const c of counters) c.save();
  const readings = ctxs[0]?.readings;
  readings?.save();
  const first = ctxs[0]!;
  return {
    encoding: first.encoding,
    prices: first.prices,
    tokenizerCalls: counters.reduce((n, c) => n + c.tokenizerCalls, 0),
    warnings: [...counters.flatMap((c) => [...c.warnings]), ...(readings?.warnings ?? []), ...(cache?.warnings ?? [])],
    messageRules: first.messageRules,
    models: ctxs.map((c) => ({ model: c.model, encoding: c.encoding, messageRules: c.messageRules })),
    replayedUnits: cache?.replayed ?? 0,
    cachedUnits: cache?.cached ?? 0,
  };
}

/** What a run tells besides its records. */
export type RunInfo = Omit<RunResults, keyof Results>;

/**
 * Takes each scenario's records (its turns, probes, summary and violations
 * under every policy), in scenario order, as soon as they exist; `index` is
 * the scenario's place in the study. The engine keeps none of them. `E` is
 * what the run's encoder makes of a scenario (`Execution.encoder`).
 */
export type RecordSink<E = unknown> = (records: ScenarioRecords<E>, index: number) => void;

/** A sink of a run on the calling thread: it is sent lists (an encoder is for worker threads). */
export type ListSink = (records: ScenarioRecordLists, index: number) => void;

/**
 * Runs a study: every conversation through every policy variant, in the
 * order given, each scenario's records handed to `sink` as it finishes.
 * Per-policy totals are the sink's to make (`byPolicy` of the summaries).
 */
export function streamStudy(opts: RunOptions, sink: ListSink): RunInfo {
  return finishSteps(studySteps(opts, sink));
}

/**
 * `streamStudy` that gives the event loop a turn between units (scenario ×
 * model × policy variant), at most every `TURN_MS` of replay, so that what
 * the process is told meanwhile (a signal: Ctrl-C, SIGTERM) is heard at once
 * rather than when the run ends. The records are the same.
 */
export async function streamStudyYielding(opts: RunOptions, sink: ListSink): Promise<RunInfo> {
  return finishStepsPausing(studySteps(opts, sink));
}

/** `streamStudy`'s loop, pausing (`yield`) after each unit replayed. */
function* studySteps(opts: RunOptions, sink: ListSink): Generator<void, RunInfo> {
  checkExecution(opts);
  const ctxs = replayContexts(runSpecOf(opts), opts);
  const { conversations } = opts;
  const cache = replayCacheOf(opts);
  let replayed = 0;
  for (let i = 0; i < conversations.length; i++) {
    const conversation = conversations.at(i)!;
    const records = yield* scenarioSteps(conversation, i, opts.policies, ctxs, opts.shard, cache);
    replayed += records.summary.length;
    sink(records, i);
    opts.onProgress?.(i + 1, conversations.length, conversation.id);
  }
  const info = finishContexts(ctxs, cache);
  keepWithinBound(opts);
  return cache ? info : { ...info, replayedUnits: replayed };
}

/** The replay cache of a run: in its cache folder, unless `cacheReplays` is false. */
export function replayCacheOf(opts: Pick<Execution, 'cacheFolder' | 'cacheReplays'>): ReplayCache | undefined {
  return opts.cacheFolder && opts.cacheReplays !== false ? new ReplayCache(opts.cacheFolder) : undefined;
}

/** At the end of a run: its cache folder, every namespace together, kept within `cacheMaxBytes`. */
export function keepWithinBound(opts: Pick<Execution, 'cacheFolder' | 'cacheMaxBytes'>): void {
  if (opts.cacheFolder) evictStore(opts.cacheFolder, opts.cacheMaxBytes);
}

/** A sink that keeps every record, and the results it makes of them once the run has told its `RunInfo`. */
export function collectRecords(): { sink: RecordSink; results(info: RunInfo): RunResults } {
  const all: RecordLists = { turns: [], probes: [], summary: [], violations: [] };
  return {
    sink: (records) => {
      if (records.kind === 'encoded') throw new CtxsimError('collectRecords: a run with an encoder cannot keep its records as lists', 'internal');
      appendRecords(all, records);
    },
    results: (info) => ({ ...all, policies: byPolicy(all.summary), ...info }),
  };
}

/**
 * Runs a study and keeps every record: every conversation through every
 * policy variant, in the order given, then the per-policy summaries.
 */
export function runStudy(opts: RunOptions): RunResults {
  const collected = collectRecords();
  return collected.results(streamStudy(opts, collected.sink));
}

/** Records as lists: turns, probes, summaries, violations. */
export type RecordLists = Pick<Results, 'turns' | 'probes' | 'summary' | 'violations'>;

/** One scenario's records under every policy variant, as lists. */
export interface ScenarioRecordLists extends RecordLists {
  kind: 'records';
}

/**
 * One scenario's records as a worker thread sends them when the run names an
 * encoder (`Execution.encoder`): what the encoder made of them (`encoded`),
 * with the summaries (one per policy variant).
 */
export interface EncodedScenario<E = unknown> {
  kind: 'encoded';
  summary: SummaryRecord[];
  encoded: E;
}

/** One scenario's records: as lists, or encoded on a worker thread. */
export type ScenarioRecords<E = unknown> = ScenarioRecordLists | EncodedScenario<E>;

/** What an encoder knows of the run besides a scenario's records. */
export interface EncoderContext {
  /** The run's chat models (every scenario is replayed on each). */
  models: readonly string[];
}

/**
 * The function an encoder module exports as `encodeScenario`, called on a
 * worker thread with each scenario's records and the encoder's `options`:
 * what it makes of them (sent as `EncodedScenario.encoded`) and the
 * ArrayBuffers in it to hand over without a copy.
 */
export type EncodeScenario<O = unknown, E = unknown> = (records: ScenarioRecordLists, options: O, ctx: EncoderContext) => { encoded: E; transfer: ArrayBuffer[] };

/** Appends one scenario's records (one by one: spreading a large array into push overflows the stack). */
export function appendRecords(to: RecordLists, from: RecordLists): void {
  for (const t of from.turns) to.turns.push(t);
  for (const q of from.probes) to.probes.push(q);
  for (const s of from.summary) to.summary.push(s);
  for (const v of from.violations) to.violations.push(v);
}

/**
 * Replays scenario number `i` on every model (a context each) through every
 * policy variant (only the work items of `shard`, numbered scenario, model,
 * policy): what one thread does for one scenario, in a serial or a parallel
 * run.
 */
export function replayScenario(...args: Parameters<typeof scenarioSteps>): ScenarioRecordLists {
  return finishSteps(scenarioSteps(...args));
}

/** `replayScenario`, pausing (`yield`) after each unit replayed or taken from the cache. */
function* scenarioSteps(
  conversation: Conversation,
  i: number,
  policies: readonly PolicyVariant[],
  ctxs: readonly UnitContext[],
  shard?: RunOptions['shard'],
  cache?: ReplayCache,
): Generator<void, ScenarioRecordLists> {
  const out: ScenarioRecordLists = { kind: 'records', turns: [], probes: [], summary: [], violations: [] };
  const p = policies.length;
  let scenarioKey: string | undefined;
  // Every variant and model replayed here embeds a text of the scenario once.
  const embeddings = new Map<string, Vector>();
  for (const [m, ctx] of ctxs.entries()) {
    const withEmbeddings = { ...ctx, embeddings };
    for (const [j, variant] of policies.entries()) {
      if (shard && ((i * ctxs.length + m) * p + j) % shard.count !== shard.index - 1) continue;
      if (!cache) {
        const r = replay(conversation, variant, withEmbeddings);
        appendRecords(out, { ...r, summary: [summaryOf(r.turns, r.probes, r.end, conversation.weight ?? 1, ctx.model, measured(variant, ctx, r.turns))] });
        yield;
        continue;
      }
      scenarioKey ??= cache.conversationKey(conversation);
      const key = cache.unitKey(scenarioKey, variant, ctx, ctx.unitSpec);
      let unit = cache.get(key);
      if (unit) cache.cached++;
      else {
        const r = replay(conversation, variant, withEmbeddings);
        unit = { turns: r.turns, probes: r.probes, summary: [summaryOf(r.turns, r.probes, r.end, conversation.weight ?? 1, ctx.model, measured(variant, ctx, r.turns))], violations: r.violations };
        cache.replayed++;
        cache.put(key, unit);
      }
      appendRecords(out, unit);
      yield;
    }
  }
  for (const c of countersOf(ctxs)) c.forgetScenario();
  return out;
}

/** How a unit was measured: where its policy's memory came from (a policy module's told by whether this replay did upkeep), whether answers were, and by a judge. */
function measured(variant: PolicyVariant, ctx: ReplayContext, turns: readonly TurnRecord[]): Measured {
  const recorded = ctx.recorded !== undefined;
  const didUpkeep = turns.some((t) => t.auxInputTokens + t.auxOutputTokens + t.embedTokens > 0);
  const answers = recorded && ctx.spec.upkeep?.answers === true;
  return { memory: memoryOf({ id: variant.policy.id, params: variant.params }, recorded, didUpkeep), answers, judge: answers && ctx.spec.upkeep?.judge !== undefined };
}
