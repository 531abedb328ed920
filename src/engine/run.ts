import { CtxsimError } from '../errors.js';
import type { PolicyVariant } from '../policies/spec.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, type PriceTable } from '../pricing/prices.js';
import { ruleSetFor, type RuleSet } from '../message-rules/provider.js';
import { DEFAULT_COSTS, settingsModels, type CostSettings } from '../pricing/settings.js';
import { openTokenCounter } from '../tokens/counter.js';
import { encodingForModel, type ResolvedEncoding } from '../tokens/encoding.js';
import type { DigestPart } from '../records/digest.js';
import type { RecordText } from '../records/encode.js';
import type { Conversation, Results, SummaryRecord } from '../types.js';
import { replay, type ReplayContext } from './replay.js';
import { Presence } from './score.js';
import { byPolicy, summaryOf } from './summary.js';

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
  model: string;
  tokenizer: string;
  /** `builtin`, a path to a LiteLLM-format table laid over the builtin one, or a loaded table. */
  prices?: string | PriceTable;
  promptCache?: CostSettings['promptCache'];
  promptCacheTtl?: number;
  route?: CostSettings['route'];
  fallback?: CostSettings['fallback'];
  latency?: CostSettings['latency'];
  /** Provider message rules to check prompts against (default: from the chat model's provider). */
  messageRules?: RuleSet;
  /** Run only the work items (scenario × policy, numbered scenario-major from 0) with `n % count === index - 1`. */
  shard?: { index: number; count: number };
  /** Called after each scenario with how many are done. */
  onProgress?: (done: number, total: number, scenario: string) => void;
  /** Folder of the persistent token-count cache, loaded before and saved after the run; omitted or false: none. */
  tokenCache?: string | false;
  /** Worker threads for `runStudyParallel` (parallel.ts); `runStudy` itself always runs on the calling thread. */
  jobs?: number;
  /**
   * For a sink that writes the record files and the reports (as `ctxsim run
   * --out DIR` does): worker threads send each scenario encoded
   * (`EncodedScenario`: its text in the record files and its part of the
   * report digest) instead of its lists of records, so the writing thread
   * only writes bytes and adds up sums. A one-thread run sends the lists.
   */
  recordText?: boolean;
}

export interface RunResults extends Results {
  encoding: ResolvedEncoding;
  prices: PriceTable;
  tokenizerCalls: number;
  /** Problems with the token cache (a damaged file rebuilt, a failed write), one line each, for stderr. */
  warnings: string[];
  /** The provider message rules prompts were checked against. */
  messageRules: RuleSet;
}

type ContextOptions = Pick<RunOptions, 'seed' | 'model' | 'tokenizer' | 'prices' | 'promptCache' | 'promptCacheTtl' | 'route' | 'fallback' | 'latency' | 'tokenCache' | 'messageRules'>;

/**
 * A run's shared context: one token counter (count once across policies),
 * prices (every model the settings name checked up front), cost settings,
 * presence memo, the provider rule set (given, or the chat model's).
 */
export function replayContext(opts: ContextOptions): ReplayContext & { encoding: ResolvedEncoding; prices: PriceTable; costs: CostSettings } {
  const encoding = encodingForModel(opts.model, opts.tokenizer);
  const prices = typeof opts.prices === 'object' ? opts.prices : loadPrices(opts.prices ?? 'builtin');
  const costs: CostSettings = {
    promptCache: opts.promptCache ?? DEFAULT_COSTS.promptCache,
    promptCacheTtl: opts.promptCacheTtl ?? DEFAULT_COSTS.promptCacheTtl,
    ...(opts.route && { route: opts.route }),
    ...(opts.fallback && { fallback: opts.fallback }),
    ...(opts.latency && { latency: opts.latency }),
  };
  for (const m of [opts.model, ...settingsModels(costs)]) lookup(prices, m);
  const messageRules = opts.messageRules ?? ruleSetFor(lookup(prices, opts.model).provider, opts.model);
  return { seed: opts.seed, model: opts.model, tokens: openTokenCounter(encoding.name, opts.tokenCache), prices, costs, presence: new Presence(), messageRules, encoding };
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
  const ctx = replayContext(opts);
  const { conversations } = opts;
  for (let i = 0; i < conversations.length; i++) {
    const conversation = conversations.at(i)!;
    sink(replayScenario(conversation, i, opts.policies, ctx, opts.shard), i);
    opts.onProgress?.(i + 1, conversations.length, conversation.id);
  }
  ctx.tokens.save();
  return { encoding: ctx.encoding, prices: ctx.prices, tokenizerCalls: ctx.tokens.tokenizerCalls, warnings: [...ctx.tokens.warnings], messageRules: ctx.messageRules };
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
 * Replays scenario number `i` through every policy variant (only the work
 * items of `shard`, numbered scenario-major): what one thread does for one
 * scenario, in a serial or a parallel run.
 */
export function replayScenario(
  conversation: Conversation,
  i: number,
  policies: readonly PolicyVariant[],
  ctx: ReplayContext,
  shard?: RunOptions['shard'],
): ScenarioRecordLists {
  const out: ScenarioRecordLists = { kind: 'records', turns: [], probes: [], summary: [], violations: [] };
  const p = policies.length;
  // Memos keyed by this scenario's messages live as long as the scenario.
  const scoped: ReplayContext = { ...ctx, presence: new Presence() };
  for (const [j, variant] of policies.entries()) {
    if (shard && (i * p + j) % shard.count !== shard.index - 1) continue;
    const r = replay(conversation, variant, scoped);
    appendRecords(out, { ...r, summary: [summaryOf(r.turns, r.probes, r.end, conversation.weight ?? 1)] });
  }
  ctx.tokens.forgetScenario();
  return out;
}
