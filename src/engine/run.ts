import { CtxsimError, UsageError } from '../errors.js';
import { finishSteps, finishStepsPausing } from '../process.js';
import type { PolicyVariant } from '../policies/spec.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, type PriceTable } from '../pricing/prices.js';
import { ruleSetFor, type RuleSet } from '../message-rules/provider.js';
import { DEFAULT_COSTS, settingsModels, type CostSettings } from '../pricing/settings.js';
import { openTokenCounter, type TokenCounter } from '../tokens/counter.js';
import { encodingForModel, type ResolvedEncoding, type TokenFactor } from '../tokens/encoding.js';
import type { DigestPart } from '../records/digest.js';
import type { RecordText } from '../records/encode.js';
import type { StreamedList } from '../records/json.js';
import type { Conversation, ToolDef } from '../types.js';
import type { Results, SummaryRecord, TurnRecord } from '../records/registry.js';
import { Cassette, type CassetteEntry } from '../upkeep/cassette.js';
import { DEFAULT_PROMPTS, type UpkeepPrompts } from '../upkeep/prompts.js';
import type { Vector } from '../upkeep/embedder.js';
import { CassetteMissError, type Miss } from '../upkeep/upkeep.js';
import { replay, type ReplayContext, type UpkeepContext } from './replay.js';
import { evictReplayCache, ReplayCache } from './replay-cache.js';
import { byPolicy, summaryOf, type Measured } from './summary.js';
import { memoryOf } from '../records/memory.js';

/**
 * The conversations of a run: an array, or any source that gives each by
 * index. The run asks for them in order and keeps none, so a source that
 * reads them from disk on demand holds one at a time. (Choosing `jobs` by
 * default reads the first ones once more, to measure their text.)
 */
export interface Conversations {
  readonly length: number;
  at(index: number): Conversation | undefined;
}

/** What a run needs: conversations, policy variants and the model settings. */
export interface RunOptions {
  conversations: Conversations;
  policies: readonly PolicyVariant[];
  seed: number;
  /** The chat models: every conversation × policy is replayed on each, in the order given. */
  models: readonly string[];
  tokenizer: string;
  /**
   * A correction of the counts of models whose tokenizer is a stand-in: a
   * number for every such model, or a factor by model (any model). Each
   * text's count is multiplied and rounded.
   */
  tokenFactor?: TokenFactor;
  /** `builtin`, a path to a LiteLLM-format table laid over the builtin one, or a loaded table. */
  prices?: string | PriceTable;
  promptCache?: CostSettings['promptCache'];
  promptCacheTtl?: number;
  cacheBreakpoint?: CostSettings['cacheBreakpoint'];
  route?: CostSettings['route'];
  fallback?: CostSettings['fallback'];
  latency?: CostSettings['latency'];
  /** Provider message rules to check prompts against (default: from the chat model's provider). */
  messageRules?: RuleSet;
  /** Run only the work items (scenario × model × policy, numbered in that order from 0) with `n % count === index - 1`. */
  shard?: { index: number; count: number };
  /** Called after each scenario with how many are done. */
  onProgress?: (done: number, total: number, scenario: string) => void;
  /** Folder of the persistent token-count cache, loaded before and saved after the run; omitted or false: none. */
  tokenCache?: string | false;
  /**
   * Folder of the replay cache (the CLI's is `replay/` in the token-cache
   * folder): each unit's records (scenario × model × policy variant) are kept
   * by a key of everything they depend on, and a unit whose key is there is
   * not replayed. Omitted or false: none.
   */
  replayCache?: string | false;
  /** The replay cache's size bound in bytes (default `DEFAULT_REPLAY_CACHE_BYTES`, 1 GB): past it, the least recently used entries are removed at the end of the run. */
  replayCacheMaxBytes?: number;
  /** Worker threads for `runStudyParallel` (parallel.ts); `runStudy` itself always runs on the calling thread. */
  jobs?: number;
  /** Seconds one call into a policy module may take on a worker thread (default `DEFAULT_POLICY_TIMEOUT`, 10; see module-watch.ts). */
  policyTimeout?: number;
  /** MB of heap a worker thread that runs policy modules may use (default `WORKER_OLD_MB`, 1024). */
  policyMemory?: number;
  /**
   * For a sink that writes the record files and the reports (as `ctxsim run
   * --out DIR` does): worker threads send each scenario encoded
   * (`EncodedScenario`: its text in the record files and its part of the
   * report digest) instead of its lists of records, so the writing thread
   * only writes bytes and adds up sums. A one-thread run sends the lists.
   */
  recordText?: boolean | readonly StreamedList[];
  /** Where upkeep comes from (absent: simulated, with the default prompts). */
  upkeep?: RunUpkeep;
  /** Tools offered in every call of every conversation, before each conversation's own `tool_defs`. */
  toolDefs?: readonly ToolDef[];
}

/** A run's upkeep settings, as plain data (they cross to worker threads). */
export interface RunUpkeep {
  /** The upkeep prompts (default: `DEFAULT_PROMPTS`). */
  prompts?: UpkeepPrompts;
  /** A real model's recorded responses: every upkeep request of the run must be among them. */
  recorded?: {
    entries: readonly CassetteEntry[];
    /** The cassette as displayed, and the command that records what it lacks: for the error a missing response is. */
    file: string;
    recordCommand: string;
  };
  /** Each probe turn's first prompt goes to the chat model, and probes are scored on its recorded reply too (needs `recorded`). */
  answers?: boolean;
  /** With `answers`: the model that grades a reply that does not hold the value as written (the study's `judge`). */
  judge?: string;
}

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

/** The upkeep of a run's contexts, made once from its settings. */
export function upkeepContext(u: RunUpkeep | undefined): UpkeepContext | undefined {
  if (!u) return undefined;
  const prompts = u.prompts ?? DEFAULT_PROMPTS;
  if (!u.recorded) return { prompts };
  return { prompts, recorded: { cassette: new Cassette(u.recorded.entries), onMiss: missError(u.recorded.file, u.recorded.recordCommand) }, ...(u.answers && { answers: true }), ...(u.answers && u.judge !== undefined && { judge: u.judge }) };
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

/** The chat models of a run, checked: none, or one given twice, is a usage error. */
function modelList(models: readonly string[]): readonly string[] {
  if (!models.length) throw new UsageError('no chat model given');
  const twice = models.find((m, i) => models.indexOf(m) !== i);
  if (twice !== undefined) throw new UsageError(`model ${twice} given twice`);
  return models;
}

type ContextOptions = Pick<RunOptions, 'seed' | 'tokenizer' | 'tokenFactor' | 'prices' | 'promptCache' | 'promptCacheTtl' | 'cacheBreakpoint' | 'route' | 'fallback' | 'latency' | 'tokenCache' | 'messageRules' | 'toolDefs'> & {
  model: string;
  upkeep?: UpkeepContext;
};

/** A replay context with what was resolved for it. */
export type ModelContext = ReplayContext & { encoding: ResolvedEncoding; prices: PriceTable; costs: CostSettings };

/**
 * A chat model's context: its token counter (count once across policies;
 * taken from `counters` when another model of the run has the same
 * encoding; an open-weight tokenizer's packages are checked here, its files
 * loaded on the first count, so a unit served by the replay cache needs
 * none), prices (every model the settings name checked up front), cost
 * settings, the provider rule set (given, or the model's).
 */
export function replayContext(opts: ContextOptions, counters = new Map<string, TokenCounter>()): ModelContext {
  const encoding = encodingForModel(opts.model, opts.tokenizer, opts.tokenFactor);
  const prices = typeof opts.prices === 'object' ? opts.prices : loadPrices(opts.prices ?? 'builtin');
  const costs: CostSettings = {
    promptCache: opts.promptCache ?? DEFAULT_COSTS.promptCache,
    ...(opts.promptCacheTtl !== undefined && { promptCacheTtl: opts.promptCacheTtl }),
    ...(opts.cacheBreakpoint !== undefined && { cacheBreakpoint: opts.cacheBreakpoint }),
    ...(opts.route && { route: opts.route }),
    ...(opts.fallback && { fallback: opts.fallback }),
    ...(opts.latency && { latency: opts.latency }),
  };
  for (const m of [opts.model, ...settingsModels(costs)]) lookup(prices, m);
  const messageRules = opts.messageRules ?? ruleSetFor(lookup(prices, opts.model).provider, opts.model);
  const key = `${encoding.name} ×${encoding.factor ?? 1}`;
  let tokens = counters.get(key);
  if (!tokens) counters.set(key, (tokens = openTokenCounter(encoding.name, opts.tokenCache, encoding.factor)));
  return {
    seed: opts.seed,
    model: opts.model,
    tokens,
    prices,
    costs,
    messageRules,
    encoding,
    ...(encoding.estimate && { standIn: true }),
    ...(opts.upkeep && { upkeep: opts.upkeep }),
    ...(opts.toolDefs?.length && { toolDefs: opts.toolDefs }),
  };
}

/** One context per chat model of the run, sharing one price table and one token counter per encoding. */
export function replayContexts(opts: Omit<ContextOptions, 'model' | 'upkeep'> & Pick<RunOptions, 'models' | 'upkeep'>): ModelContext[] {
  const prices = typeof opts.prices === 'object' ? opts.prices : loadPrices(opts.prices ?? 'builtin');
  const counters = new Map<string, TokenCounter>();
  const { upkeep: settings, ...rest } = opts;
  const upkeep = upkeepContext(settings);
  return modelList(opts.models).map((model) => replayContext({ ...rest, model, prices, ...(upkeep && { upkeep }) }, counters));
}

/** The token counters of a run's contexts, each once. */
function countersOf(ctxs: readonly ReplayContext[]): TokenCounter[] {
  return [...new Set(ctxs.map((c) => c.tokens))];
}

/** What a run tells of its contexts once they are done: saves each token counter once; the counts and warnings of its replay cache, if any. */
export function finishContexts(ctxs: readonly ModelContext[], cache?: ReplayCache): RunInfo {
  const counters = countersOf(ctxs);
  for (const c of counters) c.save();
  const first = ctxs[0]!;
  return {
    encoding: first.encoding,
    prices: first.prices,
    tokenizerCalls: counters.reduce((n, c) => n + c.tokenizerCalls, 0),
    warnings: [...counters.flatMap((c) => [...c.warnings]), ...(cache?.warnings ?? [])],
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
 * the scenario's place in the study. The engine keeps none of them.
 */
export type RecordSink = (records: ScenarioRecords, index: number) => void;

/**
 * Runs a study: every conversation through every policy variant, in the
 * order given, each scenario's records handed to `sink` as it finishes.
 * Per-policy totals are the sink's to make (`byPolicy` of the summaries).
 */
export function streamStudy(opts: RunOptions, sink: RecordSink): RunInfo {
  return finishSteps(studySteps(opts, sink));
}

/**
 * `streamStudy` that gives the event loop a turn between units (scenario ×
 * model × policy variant), at most every `TURN_MS` of replay, so that what
 * the process is told meanwhile (a signal: Ctrl-C, SIGTERM) is heard at once
 * rather than when the run ends. The records are the same.
 */
export async function streamStudyYielding(opts: RunOptions, sink: RecordSink): Promise<RunInfo> {
  return finishStepsPausing(studySteps(opts, sink));
}

/** `streamStudy`'s loop, pausing (`yield`) after each unit replayed. */
function* studySteps(opts: RunOptions, sink: RecordSink): Generator<void, RunInfo> {
  const ctxs = replayContexts(opts);
  const { conversations } = opts;
  const cache = opts.replayCache ? new ReplayCache(opts.replayCache) : undefined;
  let replayed = 0;
  for (let i = 0; i < conversations.length; i++) {
    const conversation = conversations.at(i)!;
    const records = yield* scenarioSteps(conversation, i, opts.policies, ctxs, opts.shard, cache);
    replayed += records.summary.length;
    sink(records, i);
    opts.onProgress?.(i + 1, conversations.length, conversation.id);
  }
  const info = finishContexts(ctxs, cache);
  if (opts.replayCache) evictReplayCache(opts.replayCache, opts.replayCacheMaxBytes);
  return cache ? info : { ...info, replayedUnits: replayed };
}

/** A sink that keeps every record, and the results it makes of them once the run has told its `RunInfo`. */
export function collectRecords(): { sink: RecordSink; results(info: RunInfo): RunResults } {
  const all: RecordLists = { turns: [], probes: [], summary: [], violations: [] };
  return {
    sink: (records) => {
      if (records.kind === 'encoded') throw new CtxsimError('collectRecords: a run asked for encoded records (recordText) cannot keep them as lists', 'internal');
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
 * One scenario's records as a worker thread sends them when the run asks for
 * it (`RunOptions.recordText`): their text in the record files and their part
 * of the report digest, with the summaries (one per policy variant).
 */
export interface EncodedScenario {
  kind: 'encoded';
  summary: SummaryRecord[];
  text: RecordText;
  digest: DigestPart;
}

/** One scenario's records: as lists, or encoded by a worker thread. */
export type ScenarioRecords = ScenarioRecordLists | EncodedScenario;

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
  ctxs: readonly ReplayContext[],
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
      const key = cache.unitKey(scenarioKey, variant, ctx);
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

/** How a unit was measured: where its policy's memory came from (a policy module's told by whether this replay did upkeep), and whether answers were. */
function measured(variant: PolicyVariant, ctx: ReplayContext, turns: readonly TurnRecord[]): Measured {
  const recorded = ctx.upkeep?.recorded !== undefined;
  const didUpkeep = turns.some((t) => t.auxInputTokens + t.auxOutputTokens + t.embedTokens > 0);
  return { memory: memoryOf({ id: variant.policy.id, params: variant.params }, recorded, didUpkeep), answers: ctx.upkeep?.answers === true };
}
