import { z } from 'zod';
import { UsageError } from '../errors.js';
import { RULE_SETS } from '../message-rules/provider.js';
import type { PolicyVariant } from '../policies/spec.js';
import type { PriceTable } from '../pricing/prices.js';
import { COST_KEYS, settingsModels } from '../pricing/settings.js';
import { toolFields } from '../scenario/schema.js';
import type { Conversation } from '../types.js';
import type { CassetteEntry } from '../upkeep/cassette.js';
import { DEFAULT_PROMPTS } from '../upkeep/prompts.js';

/**
 * A run is three things apart:
 *
 * - the **work**: the conversations and the policy variants (each unit of
 *   work, a conversation × variant × model, keyed by its content);
 * - the **`RunSpec`**: everything else that decides a record — models,
 *   seed, tokenizer, prices, cost settings, message rules, tool
 *   definitions, upkeep. Plain data, declared once below as a zod schema:
 *   the run checks a library caller's settings with it, and a unit's
 *   replay-cache key is the hash of its canonical form (`unitSpec`), so
 *   a setting added here keys the cache with nothing else to change;
 * - the **`Execution`**: how this machine runs it — threads, caches,
 *   shards, the encoder the sink names, progress events. It never changes
 *   a record, so it never enters a key.
 */

const tokenFactor = z.union([z.number().positive(), z.record(z.string().min(1), z.number().positive())]);
const priceTable = z.custom<PriceTable>((v) => !!v && typeof v === 'object' && (v as { models?: unknown }).models instanceof Map, { message: 'expected a price table (from loadPrices)' });
const promptKeys = Object.fromEntries(Object.keys(DEFAULT_PROMPTS).map((k) => [k, z.string()])) as Record<keyof typeof DEFAULT_PROMPTS, z.ZodString>;

/** A run's upkeep settings, as plain data (they cross to worker threads). */
export const RUN_UPKEEP = z.strictObject({
  prompts: z.strictObject(promptKeys).optional().describe('the upkeep prompts (default: `DEFAULT_PROMPTS`)'),
  recorded: z
    .strictObject({ entries: z.custom<readonly CassetteEntry[]>((v) => Array.isArray(v), { message: 'expected a cassette’s entries' }) })
    .optional()
    .describe('a real model’s recorded responses: every upkeep request of the run must be among them'),
  answers: z.boolean().optional().describe('each probe turn’s first prompt goes to the chat model, and probes are scored on its recorded reply too (needs `recorded`)'),
  judge: z.string().min(1).optional().describe('with `answers`: the model that grades a reply that does not hold the value as written'),
});

/** The settings that decide a run's records (see above). */
export const RUN_SPEC = z.strictObject({
  seed: z.number().int().describe('the seed of every random stream'),
  models: z
    .array(z.string().min(1))
    .min(1, 'no chat model given')
    .readonly()
    .superRefine((models, ctx) => {
      const twice = models.find((m, i) => models.indexOf(m) !== i);
      if (twice !== undefined) ctx.addIssue({ code: 'custom', message: `model ${twice} given twice` });
    })
    .describe('the chat models: every conversation × policy is replayed on each, in the order given'),
  tokenizer: z.string().min(1).describe('`auto` (from the model) or a tokenizer id'),
  tokenFactor: tokenFactor.optional().describe('a correction of the counts of models whose tokenizer is a stand-in: a number for every such model, or a factor by model; each count is multiplied and rounded'),
  prices: z.union([z.string().min(1), priceTable]).default('builtin').describe('`builtin`, a path to a LiteLLM-format table laid over the builtin one, or a loaded table'),
  promptCache: z.enum(['auto', 'off']).default('auto').describe('prompt caching: the provider’s rule, or none'),
  promptCacheTtl: z.number().positive().optional().describe('seconds a cached prefix lives in simulated time'),
  cacheBreakpoint: COST_KEYS.cacheBreakpoint.describe('where an explicit cache’s breakpoints go'),
  route: COST_KEYS.route.describe('each turn to a light or a strong model by the size of its user message'),
  fallback: COST_KEYS.fallback.describe('a model that answers a seeded share of the calls instead'),
  latency: COST_KEYS.latency.describe('latency settings per model'),
  messageRules: z.enum(RULE_SETS).optional().describe('the provider message rules prompts are checked against (default: the chat model’s provider’s)'),
  toolDefs: z.array(z.strictObject(toolFields)).readonly().optional().describe('tools offered in every call of every conversation, before its own `tool_defs`'),
  upkeep: RUN_UPKEEP.optional().describe('where upkeep comes from (absent: simulated, with the default prompts)'),
});

/** The settings that decide a run's records, as a caller gives them (defaults may be left out). */
export type RunSpec = z.input<typeof RUN_SPEC>;
/** A run's upkeep settings (`RunSpec.upkeep`). */
export type RunUpkeep = z.input<typeof RUN_UPKEEP>;
/** A `RunSpec` checked, with its defaults: its canonical form. */
export type CanonicalSpec = z.output<typeof RUN_SPEC>;

/** How this machine runs a study: nothing here changes a record, nor a replay-cache key. */
export interface Execution {
  /** Run only the work items (scenario × model × policy, numbered in that order from 0) with `n % count === index - 1`. */
  shard?: { index: number; count: number };
  /** Called after each scenario with how many are done. */
  onProgress?: (done: number, total: number, scenario: string) => void;
  /** Folder of the persistent token-count cache, loaded before and saved after the run; omitted or false: none. */
  tokenCache?: string | false;
  /**
   * The cache folder of the replay cache (the CLI's is the token cache's;
   * units go in its `replay/` namespace): each unit's records are kept by a
   * key of everything they depend on (the work item's content and
   * `unitSpec`), and a unit whose key is there is not replayed. Omitted or
   * false: none.
   */
  replayCache?: string | false;
  /** The cache folder's size bound in bytes (default `DEFAULT_STORE_BYTES`, 1 GB): past it, the least recently used entries are removed at the end of the run. */
  replayCacheMaxBytes?: number;
  /** Worker threads for `runStudyParallel` (parallel.ts); `runStudy` itself always runs on the calling thread. */
  jobs?: number;
  /** Seconds one call into a policy module may take on a worker thread (default `DEFAULT_POLICY_TIMEOUT`, 10; see module-watch.ts). */
  policyTimeout?: number;
  /** MB of heap a worker thread that runs policy modules may use (default `WORKER_OLD_MB`, 1024). */
  policyMemory?: number;
  /**
   * For a sink that writes encoded records (as `ctxsim run --out DIR` does:
   * the record files' bytes and the report digest's sums): worker threads
   * import this module and send each scenario as it encodes it
   * (`EncodedScenario`) instead of its lists of records, so the writing
   * thread only writes bytes and adds up sums. The engine does not know the
   * encoding. A one-thread run sends the lists (the sink encodes them).
   */
  encoder?: ScenarioEncoder;
  /** With `upkeep.recorded`: the cassette as displayed, and the command that records what it lacks, for the error a missing response is. */
  cassette?: { file: string; recordCommand: string };
}

/**
 * A module a worker thread imports (by URL, once) to encode each scenario's
 * records, and the options it is called with (structured-cloned to the
 * worker). The module exports `encodeScenario` (`EncodeScenario`, run.ts).
 */
export interface ScenarioEncoder {
  /** The module's URL (a `file:` URL, as `import.meta.url` gives it). */
  module: string;
  options?: unknown;
}

/** What a run needs: the work (conversations, policy variants), the settings that decide its records, and how to run it. */
export type RunOptions = RunWork & RunSpec & Execution;

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

/** A run's work: every conversation through every policy variant. */
export interface RunWork {
  conversations: Conversations;
  policies: readonly PolicyVariant[];
}

/** The `RunSpec` keys, in schema order. */
export const RUN_SPEC_KEYS = Object.keys(RUN_SPEC.shape) as (keyof RunSpec)[];

/**
 * The `RunSpec` of any object that holds one among other things (run
 * options, a study), checked, in schema order, with its defaults: a setting
 * that does not hold is a usage error naming it and its value. The values
 * given are kept as they are (a tool's JSON Schema keeps its key order).
 */
export function runSpecOf(from: RunSpec): CanonicalSpec {
  const picked: Record<string, unknown> = {};
  for (const k of RUN_SPEC_KEYS) if (from[k] !== undefined) picked[k] = from[k];
  if (picked.upkeep && typeof picked.upkeep === 'object' && 'mode' in picked.upkeep) {
    throw new UsageError('run settings: upkeep: a study’s upkeep settings (its mode, endpoint and cassette) are not a run’s: give the run `...await studyUpkeep(study, conversations, displayPath)` (ctxsim/study), or run the study with runStudyPipeline');
  }
  const r = RUN_SPEC.safeParse(picked);
  if (r.success) {
    const spec: Record<string, unknown> = {};
    for (const k of RUN_SPEC_KEYS) if (r.data[k] !== undefined) spec[k] = picked[k] ?? r.data[k];
    return spec as CanonicalSpec;
  }
  const issue = r.error.issues[0]!;
  const value = issue.path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), picked);
  const shown = value === undefined ? '' : ` (got ${typeof value === 'object' ? JSON.stringify(value)?.slice(0, 80) : String(value)})`;
  throw new UsageError(`run settings: ${issue.path.join('.') || 'settings'}: ${issue.message}${shown}`);
}

/** What of a run's spec one chat model's units depend on. */
export type UnitSpec = Omit<CanonicalSpec, 'models' | 'prices'> & { model: string };

/**
 * What one chat model's units depend on of the spec: all of it but the other
 * models and the price table (whose entries a unit can price join its key
 * apart, by variant: see `ReplayCache.unitKey`), and of the settings given
 * by model (`latency`, a `tokenFactor` by model) only the entries of the
 * models its calls can go to (it, and the route and fallback models). Its
 * hash keys the units.
 */
export function unitSpec(spec: CanonicalSpec, model: string): UnitSpec {
  const { models: _models, prices: _prices, latency, tokenFactor, ...rest } = spec;
  const reached = new Set([model, ...settingsModels(spec)]);
  /** The entries of the models reached; none: no setting. */
  const own = <V>(byModel: Readonly<Record<string, V>> | undefined) => {
    const kept = Object.entries(byModel ?? {}).filter(([m]) => reached.has(m));
    return kept.length ? Object.fromEntries(kept) : undefined;
  };
  const ownLatency = own(latency);
  const ownFactor = typeof tokenFactor === 'object' ? own(tokenFactor) : tokenFactor;
  return { ...rest, ...(ownFactor !== undefined && { tokenFactor: ownFactor }), ...(ownLatency && { latency: ownLatency }), model };
}
