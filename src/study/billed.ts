import { replay, type ReplayContext } from '../engine/replay.js';
import { modelContext, replayContext, type ModelContext } from '../engine/run.js';
import { runSpecOf } from '../engine/spec.js';
import { REGISTRY } from '../policies/index.js';
import { resolveSpec, type PolicyVariant } from '../policies/spec.js';
import { loadPrices } from '../pricing/load.js';
import { priceUsage } from '../pricing/meter.js';
import type { ModelPrice } from '../pricing/prices.js';
import { fraction, grouped, usd } from '../records/format.js';
import type { TokenCounter } from '../tokens/counter.js';
import { encodingForModel } from '../tokens/encoding.js';
import type { ScenarioOut } from '../scenario/docs.js';
import type { BilledCall, Conversation, Pico } from '../types.js';
import { UsageError } from '../errors.js';
import { modelsNamed, type Study } from './study.js';

/** What ctxsim counts for a transcript's calls against what the provider billed for them. */
export interface BilledCheck {
  scenario: string;
  model: string;
  /** Calls whose billed usage the transcript recorded. */
  calls: number;
  /** Prompt tokens ctxsim counts for those calls, sending everything (`full`). */
  counted: number;
  /** Prompt tokens the provider billed for them. */
  billed: number;
  /** Against a conversation's billed total (`billed:`): the calls the bill covers. */
  billedCalls?: number;
  /**
   * When the bill covers every call of the replay and says what it cached:
   * ctxsim's cached prompt tokens and cost (pico-dollars), and the bill's
   * (its usage priced with the same table: uncached input, cache reads,
   * 5-minute and 1-hour writes, output); and the same without output, the
   * prompts' cost (a log may under-report output: Claude Code's does).
   */
  priced?: { cached: number; billedCached: number; cost: Pico; billedCost: Pico; promptCost: Pico; billedPromptCost: Pico };
  /**
   * Against per-call bills: the prompt tokens the transcript's first call
   * found cached (`warm_start:`, 0 when none), and whether the replay started
   * with them cached (`warm`; not with `coldStart`, nor with caching off).
   */
  start?: { cached: number; warm: boolean };
  /** The log's output counts are partial (Claude Code writes them before the reply ends): the prompts' cost is the comparison; the bill's whole cost is short. */
  outputPartial?: true;
}

/** The policy that sends everything: the prompts the transcript's agent sent. */
const FULL = (resolveSpec(REGISTRY, 'full', []) as PolicyVariant[])[0]!;

/** Whether any call's bill counts its output only partly (`output_partial`). */
const partialOutput = (c: Conversation) => c.turns.some((t) => t.tools.some((m) => m.billed?.outputPartial) || t.assistant?.billed?.outputPartial);

/** Whether a conversation records what a provider billed for any of its calls. */
export const hasBilledCalls = (c: Conversation) => c.turns.some((t) => t.tools.some((m) => m.billed) || t.assistant?.billed);

/** What a bill's usage costs at a model's prices: uncached input, cache reads, cache writes at the 5-minute and 1-hour rates, output. */
export function billedCost(p: ModelPrice, b: BilledCall): Pico {
  const written = b.written ?? 0;
  const long = Math.min(written, b.written1h ?? 0);
  const short = priceUsage(p, { input: b.input - long, cached: b.cached ?? 0, written: written - long, output: b.output ?? 0 });
  const hour = priceUsage(p, { input: long, cached: 0, written: long, output: 0 }, p.cacheWrite1h ?? p.input);
  return short.input + short.cached + short.output + hour.input;
}

/**
 * For each conversation that records billed usage (an imported agent
 * transcript), ctxsim's count of the prompts of those calls under `full` —
 * tool definitions included — against the bill: the check of ctxsim's
 * accounting on real traffic. A conversation that records a total only
 * (`billed:`) is compared over all of `full`'s calls. The replay is on the
 * model the transcript was recorded on when it names one the price table
 * knows, else on the study's first model when the study names its models
 * (a study file or `--model`); a bill is never priced on the default study's
 * model: a transcript that names no model the table knows, in a study that
 * names none, is a usage error. When the bill covers every call
 * and says what was cached (per-call usage that gives cached or written
 * tokens, on one call at least; usage without, or a total, on a model that caches nothing), the
 * cached share and the cost are compared too. Against per-call
 * bills, the check says whether the replay started warm (the transcript's
 * `warm_start:`, unless `coldStart`), and whether the log's output counts are
 * partial.
 */
export function billedChecks(
  conversations: readonly Conversation[],
  study: Pick<Study, 'seed' | 'models' | 'tokenizer' | 'prices' | 'toolDefs'> & Partial<Pick<Study, 'tokenFactor' | 'promptCache' | 'promptCacheTtl' | 'cacheBreakpoint' | 'coldStart'>>,
): BilledCheck[] {
  const billedOnes = conversations.filter((c) => hasBilledCalls(c) || c.billed);
  if (!billedOnes.length) return [];
  const prices = loadPrices(study.prices);
  // The study's settings, checked once: each context replays them on its model.
  const spec = runSpecOf({ ...study, prices });
  const counters = new Map<string, TokenCounter>();
  const contexts = new Map<string, ModelContext>();
  // One context per model and the format it served when each transcript was recorded (DeepSeek's names changed formats).
  const contextFor = (model: string, recorded: string | undefined): ModelContext => {
    const e = encodingForModel(model, study.tokenizer, study.tokenFactor, recorded);
    const key = `${model} ${e.name} ${e.estimate}`;
    let ctx = contexts.get(key);
    if (!ctx) contexts.set(key, (ctx = modelContext(spec, model, { prices, counters, cacheFolder: false, recorded })));
    return ctx;
  };
  return billedOnes.map((c) => {
    const known = c.model !== undefined && prices.models.has(c.model);
    if (!known && !modelsNamed(study)) throw new UsageError(unknownModel(c));
    const ctx = contextFor(known ? c.model! : study.models[0]!, c.recorded);
    const price = prices.models.get(ctx.model)!;
    const total = hasBilledCalls(c) ? undefined : c.billed!;
    const check: BilledCheck = { scenario: c.id, model: ctx.model, calls: 0, counted: 0, billed: total?.input ?? 0, ...(total && { billedCalls: total.calls }) };
    if (!total) {
      const cached = c.warmStart ?? 0;
      check.start = { cached, warm: cached > 0 && !ctx.spec.coldStart && ctx.spec.promptCache !== 'off' };
    }
    if (partialOutput(c)) check.outputPartial = true;
    let calls = 0;
    let billedCached = 0;
    // Whether any call's usage says what was cached (cached or written tokens): a log that never does is no bill of its cache reads, one that does for some calls read nothing on the others.
    let cacheSaid = false;
    let bill = total ? billedCost(price, total) : 0n;
    let billPrompt = total ? billedCost(price, { ...total, output: 0 }) : 0n;
    const r = replay(c, FULL, ctx, (_, call) => {
      calls++;
      const b = call.output?.billed;
      if (!total && !b) return;
      check.calls++;
      check.counted += call.promptTokens;
      if (!b) return;
      check.billed += b.input;
      billedCached += b.cached ?? 0;
      if (b.cached !== undefined || b.written !== undefined) cacheSaid = true;
      bill += billedCost(price, b);
      billPrompt += billedCost(price, { ...b, output: 0 });
    });
    // A total says nothing of what was cached, nor does a log whose usage never gives cached or written tokens: its cost compares only on a model that caches nothing.
    const uncached = price.cacheRule.kind === 'none' || ctx.spec.promptCache === 'off';
    const comparable = total ? total.calls === calls && uncached : calls === check.calls && (cacheSaid || uncached);
    if (comparable) {
      const cached = r.turns.reduce((n, t) => n + t.cachedTokens, 0);
      const promptCost = r.turns.reduce((n, t) => n + t.costInput + t.costCached, 0n);
      const cost = r.turns.reduce((n, t) => n + t.costOutput, promptCost);
      check.priced = { cached, billedCached, cost, billedCost: bill, promptCost, billedPromptCost: billPrompt };
    }
    return check;
  });
}

/** Why a transcript's bill cannot be priced without a model from the user: it names none, or one the price table does not know. */
function unknownModel(c: Conversation): string {
  if (c.model === undefined) return `${c.source}: billed: names no model (model:), so its bill is not priced: give the model it ran on with --model, or model: in the study`;
  return `${c.source}: billed: model ${c.model} is not in the price table, so its bill is not priced: give a table that has it with --prices, or the model to price it on with --model`;
}

/** A change as a signed percentage: `+2.3%`, `−8.6%`. */
const change = (ours: number, theirs: number) => {
  // A bill of nothing (a hand-written `billed: {input: 0}`) has no ratio to give: not +Infinity%.
  if (theirs === 0) return 'nothing to compare with';
  const diff = ours / theirs - 1;
  return `${diff >= 0 ? '+' : '−'}${fraction(Math.abs(diff) * 100, 1)}%`;
};

/** How a replay against per-call bills started: `warm start, 10,136 cached`, `cold start`, or cold although the log's first call read from the cache. */
function startText(s: NonNullable<BilledCheck['start']>): string {
  if (s.warm) return `warm start, ${grouped(s.cached)} cached`;
  return s.cached ? `cold start; the log's first call read ${grouped(s.cached)} cached` : 'cold start';
}

/**
 * `billed: s1 (full on deepseek-chat, 124 calls, warm start, 320 cached): ctxsim counts 4,870,481 prompt tokens, the provider billed 4,930,216 (−1.2%)`,
 * then, when the cost compares, `; cached 99.2% (billed 99.2%); cost $0.162049, billed $0.164044 (−1.2%); prompts $0.145861, billed $0.147652 (−1.2%)`; against a
 * total over a different number of calls than the replay makes, `(full on gpt-4o, 12 calls; 13 billed)`. When the log's output counts are partial,
 * the prompts' cost comes first and the whole cost after it, with a note: `; prompts …; cost $0.479050, billed $0.450660 (+6.3%; …)`.
 */
export function billedLine(b: BilledCheck): string {
  const calls = `${b.calls} calls${b.billedCalls !== undefined && b.billedCalls !== b.calls ? `; ${b.billedCalls} billed` : ''}${b.start ? `, ${startText(b.start)}` : ''}`;
  const head = `billed: ${b.scenario} (full on ${b.model}, ${calls}): ctxsim counts ${grouped(b.counted)} prompt tokens, the provider billed ${grouped(b.billed)} (${change(b.counted, b.billed)})`;
  const p = b.priced;
  if (!p) return head;
  const share = (n: number, of: number) => (of ? `${fraction((n / of) * 100, 1)}%` : '-');
  // A total is compared only where nothing is cached: no share to show.
  const cached = b.billedCalls === undefined ? `; cached ${share(p.cached, b.counted)} (billed ${share(p.billedCached, b.billed)})` : '';
  const cost = (ours: Pico, theirs: Pico, note = '') => `$${usd(ours, 6)}, billed $${usd(theirs, 6)} (${change(Number(ours), Number(theirs))}${note})`;
  if (b.outputPartial) return `${head}${cached}; prompts ${cost(p.promptCost, p.billedPromptCost)}; cost ${cost(p.cost, p.billedCost, OUTPUT_PARTIAL)}`;
  return `${head}${cached}; cost ${cost(p.cost, p.billedCost)}; prompts ${cost(p.promptCost, p.billedPromptCost)}`;
}

/** The whole cost's note when the log's output counts are partial. */
const OUTPUT_PARTIAL = '; the log counts output before each reply ends, so its bill is short';

/** What a transcript's log leaves out of every prompt, as `--unlogged-prefix billed` sizes it. */
export interface UnloggedPrefix {
  /** The first billed call's prompt tokens minus `counted`: the stand-in's size. */
  tokens: number;
  billed: number;
  /** ctxsim's count of that call's prompt as the log holds it (`full`, tool definitions included). */
  counted: number;
}

/** One billed call of a replay under `full`: ctxsim's count of its prompt (of which the unlogged prefix), and the prompt tokens billed. */
export interface BilledCount {
  counted: number;
  unlogged: number;
  billed: number;
}

/** The prompts of a transcript's billed calls as ctxsim counts them under `full` on `ctx`, in order, with their bills. */
export function billedCounts(c: Conversation, ctx: ReplayContext): BilledCount[] {
  const out: BilledCount[] = [];
  replay(c, FULL, ctx, (_, call) => {
    const b = call.output?.billed;
    if (b) out.push({ counted: call.promptTokens, unlogged: call.unloggedTokens, billed: b.input });
  });
  return out;
}

/**
 * `import --unlogged-prefix billed`: what each transcript's log leaves out
 * of every prompt (Claude Code logs neither its system prompt nor its tool
 * definitions) is the first billed call's prompt tokens minus ctxsim's count
 * of that call under `full`, on the tokenizer of the model the transcript ran
 * on (o200k_base, an estimate, for one whose tokenizer is not public). Writes
 * `unlogged_prefix` (before the turns) into each document whose log does not
 * hold the whole first prompt; gives each document's sizing (none without
 * billed usage; `tokens` 0 when the log holds the whole prompt).
 */
export function addUnloggedPrefixes(docs: ScenarioOut[], conversations: readonly Conversation[]): { id: string; prefix?: UnloggedPrefix }[] {
  // Only the tokenizer matters to a count: any priced model carries it, one context per tokenizer.
  const prices = loadPrices('builtin');
  const counters = new Map<string, TokenCounter>();
  const contexts = new Map<string, ReplayContext>();
  const contextFor = (tokenizer: string): ReplayContext => {
    let ctx = contexts.get(tokenizer);
    if (!ctx) contexts.set(tokenizer, (ctx = replayContext({ seed: 0, model: 'gpt-4o-mini', tokenizer, prices, cacheFolder: false }, counters)));
    return ctx;
  };
  return docs.map((doc, i) => {
    const c = conversations[i]!;
    const first = hasBilledCalls(c) ? billedCounts(c, contextFor(encodingForModel(c.model ?? '', 'auto', undefined, c.recorded).name))[0] : undefined;
    if (!first) return { id: doc.id };
    const prefix: UnloggedPrefix = { billed: first.billed, counted: first.counted, tokens: Math.max(0, first.billed - first.counted) };
    if (prefix.tokens) {
      const { turns, ...head } = doc;
      docs[i] = { ...head, unlogged_prefix: { tokens: prefix.tokens, from: 'billed' }, turns };
    }
    return { id: doc.id, prefix };
  });
}
