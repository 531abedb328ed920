import { resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../errors.js';
import { RULE_SETS } from '../message-rules/provider.js';
import type { PolicyVariant } from '../policies/spec.js';
import type { PriceTable } from '../pricing/prices.js';
import { COST_SETTINGS, DURATION, settingsModels } from '../pricing/settings.js';
import { toolDefSchema, toolFields } from '../scenario/schema.js';
import { parseDuration } from '../text/duration.js';
import { TOKENIZERS } from '../tokens/encoding.js';
import type { Conversation } from '../types.js';
import { cassetteDigest, type CassetteEntry } from '../upkeep/cassette.js';
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

/** Tool definitions as a study file writes them: either shape of a tool (`toolDefSchema`). */
const TOOL_DEFS = z.array(toolDefSchema).min(1);

/** Each item of `list` whose `id` an earlier one has: at its place below the setting `key`, saying where the first is. */
function repeats<T>(key: string, list: readonly T[], id: (t: T) => string, at: (i: number) => (string | number)[], said: (t: T) => string): ValueProblem[] {
  const first = new Map<string, number>();
  return list.flatMap((t, i) => {
    const j = first.get(id(t));
    if (j === undefined) first.set(id(t), i);
    return j === undefined ? [] : [{ path: at(i), message: `${said(t)} twice (also ${key}[${j}])` }];
  });
}
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

/**
 * How a setting is written outside the library: its key in a study file and
 * its command-line flag. The study file's schema, keys and JSON Schema, how
 * it is read, and the flags of the commands that run a study all derive
 * from these (study/settings.ts, cli/_study-options.ts), so a setting
 * declared below with them is a study key and a flag with nothing else to
 * write.
 */
export interface SettingMeta {
  /** Its key in a study file (default: its name); `false`: a study file does not hold it. */
  key?: string | false;
  /** A study file may give a list of one as this key instead (`model: x` for `models: [x]`), which means `about`. */
  one?: { key: string; about: string };
  /** What the key means, for a study file's JSON Schema. */
  about?: string;
  /** How a study file and a flag write it, when not as the spec holds it: the written form's schema, and how it reads (a path from `folder`: the study file's, or the working folder for a flag). */
  written?: WrittenForm;
  /** The command-line flag that sets it, and what its help says; its kind (a whole number, a choice, a list, text) and its bounds follow from the schema. */
  flag?: SettingFlag;
  /**
   * Of a setting inside a setting (an `upkeep:` key): its value as written
   * when the study file does not write it, read as a written one is (a path
   * from the study's folder); none: it stays unset.
   */
  default?: unknown;
  /**
   * Outside `RUN_SPEC` (whose every setting decides the records): its value
   * can change a record (the run's upkeep is made of it), so `ctxsim
   * check`'s command that accepts a change repeats its flag.
   */
  decidesRecords?: true;
  /** A study file's key read apart, by the code that uses it (a study's scenarios and policies, which load files), not with the others. */
  apart?: true;
  /**
   * Checks across a value's items that the schema holds (a model listed
   * twice), run once it holds: so that in a study file they are listed
   * with every other problem, not instead of them.
   */
  problems?: (value: unknown) => ValueProblem[];
}

/** A setting's command-line flag: its name, its help, and what the help says its default is when the schema has none. */
export interface SettingFlag {
  name: string;
  describe: string;
  defaultDescription?: string;
  /** `describe` names the values of a choice in its own words (`full | summary: …`): the flag takes text, checked as the study key is, not a list of choices after the help. */
  valuesInHelp?: true;
  /** How the flag writes the value, when not as the study key does (a list as comma-separated text): its kind follows from this schema, and its value reads through it. */
  written?: WrittenForm;
  /** Given more than once, the last one counts (a flag scripts add to a command line: `--no-token-cache` after `--token-cache DIR`), rather than being refused. */
  lastWins?: true;
  /** It takes the next word whatever it is: `--out -` is stdout, and `--max-cost-increase -5%` a limit to refuse, not another flag. */
  nextWord?: true;
}

/** A problem inside a setting's value: where, below the setting, and what. */
export interface ValueProblem {
  path: (string | number)[];
  message: string;
}

/** Checks of a value of the type its schema holds. */
function checks<T>(fn: (value: T) => ValueProblem[]): (value: unknown) => ValueProblem[] {
  return (value) => fn(value as T);
}

/** A setting's written form (`SettingMeta.written`): its schema, and how a value it checked reads. */
export interface WrittenForm {
  schema: z.ZodType;
  read(value: unknown, folder: string): unknown;
  /**
   * What is wrong with a value the schema let through, in words that name
   * it (`a saving is at most 100%, got 150%`), or nothing: checked where
   * the setting is read, so that in a study file it is listed with every
   * other problem.
   */
  problem?(value: unknown): string | undefined;
}

/** The meta of each `RUN_SPEC` setting (and each report setting, report/settings.ts), by its schema (kept apart from zod's global registry, which JSON Schema output copies whole). */
const SETTING_META = new Map<z.ZodType, SettingMeta>();

/** `schema`, its meta registered. */
export function setting<S extends z.ZodType>(schema: S, meta: SettingMeta): S {
  SETTING_META.set(schema, meta);
  return schema;
}

/** The meta registered with a setting's schema (none: `{}`). */
export function metaOf(schema: z.ZodType): SettingMeta {
  return SETTING_META.get(schema) ?? {};
}

/** Whether `schema` was declared a setting (`setting`): a setting whose value is an object of such (the study's `gate:`, its `upkeep:`) is written and read field by field. */
export function isSetting(schema: z.ZodType): boolean {
  return SETTING_META.has(schema);
}

/** A form written otherwise than held: `read` (default: the value as it is) is given only values `schema` checked, and `problem` found nothing wrong with. */
export function written<W>(schema: z.ZodType<W>, read: (value: W, folder: string) => unknown = (value) => value, problem?: (value: W) => string | undefined): WrittenForm {
  return { schema, read: (value, folder) => read(value as W, folder), ...(problem && { problem: (value: unknown) => problem(value as W) }) };
}

/** The settings that decide a run's records (see above). */
export const RUN_SPEC = z.strictObject({
  seed: setting(z.number().int().describe('the seed of every random stream'), {
    about: 'seed of every random stream (default 42)',
    flag: { name: 'seed', describe: 'random seed' },
  }),
  models: setting(
    z
      .array(z.string().min(1))
      .min(1, 'no chat model given')
      .readonly()
      .describe('the chat models: every conversation × policy is replayed on each, in the order given'),
    {
      one: { key: 'model', about: 'the chat model: prices, context window, tokenizer (default gpt-4o-mini)' },
      problems: checks((models: readonly string[]) => repeats('models', models, (m) => m, (i) => [i], (m) => `model ${m} is listed`)),
      about: 'several chat models, instead of model: every conversation and policy runs on each, a row per policy and model',
      flag: {
        name: 'model',
        describe: 'chat model, e.g. gpt-4o-mini (repeatable: every policy runs on each model; replaces the study’s)',
        // A blank one is refused before a study is read (a shell variable left empty), and one given twice is said as given.
        written: written(z.array(z.string()), undefined, (models) => {
          if (models.some((m) => !m.trim())) return 'name a chat model, e.g. --model gpt-4o-mini';
          const twice = models.find((m, i) => models.indexOf(m) !== i);
          return twice === undefined ? undefined : `${twice} given twice`;
        }),
      },
    },
  ),
  tokenizer: setting(z.string().min(1).describe('`auto` (from the model) or a tokenizer id'), {
    written: written(z.enum(['auto', ...TOKENIZERS])),
    about: 'auto picks the tokenizer from the model: an OpenAI encoding, an open-weight family with its chat template, or o200k_base as an estimate (default auto)',
    flag: { name: 'tokenizer', describe: 'the tokenizer (auto: from the model)' },
  }),
  tokenFactor: setting(
    tokenFactor.optional().describe('a correction of the counts of models whose tokenizer is a stand-in: a number for every such model, or a factor by model; each count is multiplied and rounded'),
    { about: 'multiplies the token counts of models whose tokenizer is a stand-in (a number), or of the models named (model: factor), e.g. 1.15 when you measured that o200k_base undercounts your model by 15%' },
  ),
  prices: setting(z.union([z.string().min(1), priceTable]).default('builtin').describe('`builtin`, a path to a LiteLLM-format table laid over the builtin one, or a loaded table'), {
    about: 'builtin, or the path of a LiteLLM-format JSON price table',
    written: written(z.string().min(1), (v, folder) => (v === 'builtin' ? v : resolve(folder, v))),
    flag: { name: 'prices', describe: 'LiteLLM-format price table JSON' },
  }),
  promptCache: setting(COST_SETTINGS.shape.promptCache.describe('prompt caching: the provider’s rule, or none'), {
    key: 'cache',
    about: 'prompt caching: auto (the model’s provider’s rules) or off',
    flag: { name: 'cache', describe: 'prompt caching' },
  }),
  promptCacheTtl: setting(COST_SETTINGS.shape.promptCacheTtl.describe('seconds a cached prefix lives in simulated time'), {
    key: 'cacheTtl',
    about: 'how long a cached prompt prefix lives in simulated time, e.g. 5m; on Claude above 5m takes the 1-hour tier, whose writes are priced at their own rate (default 5m, or 1h for a transcript whose calls wrote 1-hour entries)',
    written: written(DURATION, (v) => parseDuration(v)),
    flag: { name: 'cache-ttl', describe: 'how long a cached prompt prefix lives, e.g. 5m or 1h (over the study’s cacheTtl)' },
  }),
  cacheBreakpoint: setting(COST_SETTINGS.shape.cacheBreakpoint.describe('where an explicit cache’s breakpoints go'), {
    about: 'where Claude-style explicit caches put breakpoints: call (default: at the end of every call’s prompt too, so the calls of one agent turn read what the earlier ones wrote) or turn (only after the policy’s stable prefix)',
    flag: { name: 'cache-breakpoint', describe: 'Claude-style explicit caches: call (default) puts a breakpoint at the end of every call’s prompt too, turn only after the policy’s stable prefix' },
  }),
  coldStart: setting(COST_SETTINGS.shape.coldStart.describe('every conversation starts with an empty prompt cache, its transcript’s warm start ignored'), {
    about: 'start every conversation with an empty prompt cache: a transcript whose first call found part of its prompt cached (warm_start:, written by ctxsim import) is replayed as if it had not (default false: warm starts are kept)',
    flag: { name: 'cold-start', describe: 'start every conversation with an empty prompt cache, ignoring the warm starts imported transcripts recorded (warm_start:)' },
  }),
  route: setting(COST_SETTINGS.shape.route.describe('each turn to a light or a strong model by the size of its user message'), {
    about: 'send a turn to the light or the strong model by the length of its user message',
  }),
  fallback: setting(COST_SETTINGS.shape.fallback.describe('a model that answers a seeded share of the calls instead'), {
    about: 'a model that answers a share of the calls instead (failures drawn from the seed)',
  }),
  latency: setting(COST_SETTINGS.shape.latency.describe('latency settings per model'), { about: 'latency settings per model: time to first token, prefill and decode speed' }),
  messageRules: setting(z.enum(RULE_SETS).optional().describe('the provider message rules prompts are checked against (default: the chat model’s provider’s)'), {
    key: 'rules',
    about: 'the provider message rules prompts are checked against (default: the chat model’s provider’s)',
    flag: { name: 'rules', describe: 'the provider message rules prompts are checked against (over the study’s rules)' },
  }),
  toolDefs: setting(z.array(z.strictObject(toolFields)).readonly().optional().describe('tools offered in every call of every conversation, before its own `tool_defs`'), {
    about: 'tools offered in every call of every conversation (name, description, JSON Schema parameters): their definitions are part of each prompt; a scenario’s tool_defs of the same name replace them',
    written: written(TOOL_DEFS),
    problems: checks((tools: readonly { name: string }[]) => repeats('toolDefs', tools, (t) => t.name, (i) => [i, 'name'], (t) => `tool ${t.name} is defined`)),
  }),
  upkeep: setting(RUN_UPKEEP.optional().describe('where upkeep comes from (absent: simulated, with the default prompts)'), {
    // A study's own upkeep, answers and judge keys make it (recording/upkeep.ts: `studyUpkeep`).
    key: false,
  }),
});

/** The settings that decide a run's records, as a caller gives them (defaults may be left out). */
export type RunSpec = z.input<typeof RUN_SPEC>;
/** A run's upkeep settings (`RunSpec.upkeep`). */
export type RunUpkeep = z.input<typeof RUN_UPKEEP>;
/** A `RunSpec` checked, with its defaults: its canonical form. */
export type CanonicalSpec = z.output<typeof RUN_SPEC>;
/** Marks a spec as made by `runSpecOf` (a type only: nothing at run time). */
declare const checked: unique symbol;
/**
 * A `CanonicalSpec` that `runSpecOf` made: what replay contexts are made of
 * (`replayContexts`, `modelContext`), so that another object that has the
 * spec's fields (a study, a spec put together by hand) cannot stand for it
 * unchecked.
 */
export type CheckedSpec = CanonicalSpec & { readonly [checked]: true };

/** How this machine runs a study: nothing here changes a record, nor a replay-cache key. */
export interface Execution {
  /** Run only the work items (scenario × model × policy, numbered in that order from 0) with `n % count === index - 1`. */
  shard?: { index: number; count: number };
  /** Called after each scenario with how many are done. */
  onProgress?: (done: number, total: number, scenario: string) => void;
  /**
   * The cache folder (the CLI's is the user's, `~/.cache/ctxsim` on Linux, or `--token-cache DIR`),
   * one store for every persistent cache (store/store.ts): token counts,
   * loaded before the run and merged in after it; and each unit's records,
   * kept by a key of everything they depend on (the work item's content and
   * `unitSpec`), so that a unit whose key is there is not replayed. At the
   * end of the run the folder is kept within `cacheMaxBytes`. Omitted or
   * false: no persistent cache at all.
   */
  cacheFolder?: string | false;
  /**
   * With a cache folder: whether units are looked up in it and kept there
   * (default true). False replays every unit and keeps only token counts:
   * for a run that measures the replay itself (a benchmark), or a trial run
   * whose records are thrown away.
   */
  cacheReplays?: boolean;
  /** The cache folder's size bound in bytes (default `DEFAULT_STORE_BYTES`, 1 GB): past it, the least recently used entries are removed at the end of the run. */
  cacheMaxBytes?: number;
  /** Worker threads for `runStudyParallel` (parallel.ts); `runStudy` itself always runs on the calling thread. */
  jobs?: number;
  /** Seconds one call into a policy module may take on its thread (default `DEFAULT_POLICY_TIMEOUT`, 10; see module-watch.ts). */
  policyTimeout?: number;
  /** MB of heap a policy module's thread may use, and MB it may hold outside its heap (default `DEFAULT_POLICY_MEMORY`, 1024). */
  policyMemory?: number;
  /**
   * For a sink that writes encoded records (as `ctxsim run --out DIR` does:
   * the record files' bytes and the report digest's sums): worker threads
   * import this module and send each scenario as it encodes it
   * (`EncodedScenario`) instead of its lists of records, so the writing
   * thread only writes bytes and adds up sums. The engine does not know the
   * encoding. A one-thread run sends the lists (the sink encodes them).
   * @internal The protocol between the study's sinks and the worker threads.
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

/** How a setting is written in a study file and on the command line (see `SettingMeta`). */
export function settingMeta(name: keyof RunSpec): SettingMeta {
  return metaOf(RUN_SPEC.shape[name]);
}

/**
 * The `RunSpec` of any object that holds one among other things (run
 * options, a study), checked, in schema order, with its defaults: a setting
 * that does not hold is a usage error naming it and its value. The values
 * given are kept as they are (a tool's JSON Schema keeps its key order).
 */
export function runSpecOf(from: RunSpec): CheckedSpec {
  const picked: Record<string, unknown> = {};
  for (const k of RUN_SPEC_KEYS) if (from[k] !== undefined) picked[k] = from[k];
  // A study's upkeep (where it comes from: a mode, an endpoint, a cassette) is not the run's, which `studyUpkeep` makes of it: without, the run would go simulated, without a word.
  const studysGiven = picked.upkeep && typeof picked.upkeep === 'object' && 'mode' in picked.upkeep;
  if (studysGiven || ((from as { upkeepSource?: unknown }).upkeepSource !== undefined && !('upkeep' in from))) {
    throw new UsageError('run settings: upkeep: a study’s upkeep settings (its mode, endpoint and cassette) are not a run’s: give the run `...await studyUpkeep(study, conversations)` (ctxsim/study), or run the study with runStudyPipeline');
  }
  const r = RUN_SPEC.safeParse(picked);
  if (!r.success) throw settingError(r.error.issues[0]!, picked);
  for (const k of RUN_SPEC_KEYS) {
    const [p] = r.data[k] === undefined ? [] : (settingMeta(k).problems?.(r.data[k]) ?? []);
    if (p) throw settingError({ path: [k, ...p.path], message: p.message }, picked);
  }
  const spec: Record<string, unknown> = {};
  for (const k of RUN_SPEC_KEYS) if (r.data[k] !== undefined) spec[k] = picked[k] ?? r.data[k];
  return spec as CheckedSpec;
}

/**
 * Checks what of a run's `Execution` a caller can get wrong in a way no
 * record would show: a shard outside 1 ≤ index ≤ count runs no unit at all.
 */
export function checkExecution(exec: Pick<Execution, 'shard'>): void {
  const s = exec.shard;
  if (s && !(Number.isInteger(s.index) && Number.isInteger(s.count) && s.index >= 1 && s.index <= s.count)) {
    throw new UsageError(`run options: shard: expected whole numbers with 1 ≤ index ≤ count, got ${JSON.stringify(s)}`);
  }
}

/** A setting that does not hold, as one usage error naming it and its value (`run settings: models[2]: … (got gpt-4o)`). */
function settingError({ path, message }: { path: readonly PropertyKey[]; message: string }, given: Readonly<Record<string, unknown>>): UsageError {
  const value = path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), given);
  const shown = value === undefined ? '' : ` (got ${typeof value === 'object' ? JSON.stringify(value)?.slice(0, 80) : String(value)})`;
  const at = path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i ? `.${String(k)}` : String(k))).join('');
  return new UsageError(`run settings: ${at || 'settings'}: ${message}${shown}`);
}

/** What of a run's spec one chat model's units depend on: a recorded upkeep by its cassette's digest. */
export type UnitSpec = Omit<CanonicalSpec, 'models' | 'prices' | 'upkeep'> & { upkeep?: Omit<NonNullable<CanonicalSpec['upkeep']>, 'recorded'> & { recorded?: { sha256: string } }; model: string };

/**
 * What one chat model's units depend on of the spec: all of it but the other
 * models and the price table (whose entries a unit can price join its key
 * apart, by variant: see `ReplayCache.unitKey`), and of the settings given
 * by model (`latency`, a `tokenFactor` by model) only the entries of the
 * models its calls can go to (it, and the route and fallback models). Its
 * hash keys the units.
 */
export function unitSpec(spec: CanonicalSpec, model: string): UnitSpec {
  const { models: _models, prices: _prices, latency, tokenFactor, upkeep, ...rest } = spec;
  const reached = new Set([model, ...settingsModels(spec)]);
  /** The entries of the models reached; none: no setting. */
  const own = <V>(byModel: Readonly<Record<string, V>> | undefined) => {
    const kept = Object.entries(byModel ?? {}).filter(([m]) => reached.has(m));
    return kept.length ? Object.fromEntries(kept) : undefined;
  };
  const ownLatency = own(latency);
  const ownFactor = typeof tokenFactor === 'object' ? own(tokenFactor) : tokenFactor;
  // A recorded upkeep by its cassette's digest: its text may be larger than a string can be, and every key would hash it again.
  const { recorded, ...upkeepSettings } = upkeep ?? {};
  const ownUpkeep = upkeep && { ...upkeepSettings, ...(recorded && { recorded: { sha256: cassetteDigest(recorded.entries) } }) };
  return { ...rest, ...(ownUpkeep && { upkeep: ownUpkeep }), ...(ownFactor !== undefined && { tokenFactor: ownFactor }), ...(ownLatency && { latency: ownLatency }), model };
}
