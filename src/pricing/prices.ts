import { ScenarioError, UsageError, type Problem } from '../errors.js';
import type { Pico } from '../types.js';
import { cacheRuleFor, type CacheRule } from './cache-rules.js';
import { editDistance } from '../text/distance.js';

/** One model's prices (pico-dollars per token), limits and cache rule. */
export interface ModelPrice {
  model: string;
  provider: string;
  mode: 'chat' | 'embedding';
  input: Pico;
  output: Pico;
  /** Price of a cached input token; set when the model caches (`cache.kind` is not `none`). */
  cacheRead?: Pico;
  /** Price of writing a token to an explicit (Anthropic-style) cache, 5-minute TTL. */
  cacheWrite?: Pico;
  /** Price of writing a token to an explicit cache with the 1-hour TTL. */
  cacheWrite1h?: Pico;
  /** How the provider caches prompts. */
  cacheRule: CacheRule;
  maxInputTokens?: number;
}

export interface PriceTable {
  /** The date of the builtin snapshot, shown in captions. */
  date: string;
  /** Where the table came from: `builtin`, or `builtin + FILE`. */
  source: string;
  models: ReadonlyMap<string, ModelPrice>;
  /** Models the source lists without a per-token price (so they cannot be simulated). */
  unpriced?: ReadonlySet<string>;
  /** Models a user table named (priced ones), in file order. */
  userModels?: readonly string[];
}

/** A LiteLLM entry as read from JSON: the fields ctxsim uses (others are ignored). */
export type RawEntry = Readonly<Record<string, unknown>>;

/** USD per token as a float → exact pico-dollars (prices are rounded to the pico-dollar). */
export function picoPerToken(usd: number): Pico {
  return BigInt(Math.round(usd * 1e12));
}

/** The dearest price a table may give, in USD per token: its pico-dollars are a whole number a float holds exactly. */
const MAX_USD_PER_TOKEN = Math.floor(Number.MAX_SAFE_INTEGER / 1e12);

/** The LiteLLM fields ctxsim reads. */
export const PRICE_FIELDS = {
  input: 'input_cost_per_token',
  output: 'output_cost_per_token',
  cacheRead: 'cache_read_input_token_cost',
  cacheWrite: 'cache_creation_input_token_cost',
  cacheWrite1h: 'cache_creation_input_token_cost_above_1hr',
  maxInput: 'max_input_tokens',
} as const;

const MODES = new Set(['chat', 'embedding']);

/** Keys of a LiteLLM file that are not models. */
function isModelKey(key: string, value: unknown): boolean {
  return key !== 'sample_spec' && !key.startsWith('_') && value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether an entry is a chat or embedding model with a per-token input price (others are not simulated). */
function isPriced(e: RawEntry): boolean {
  return (e.mode === undefined || (typeof e.mode === 'string' && MODES.has(e.mode))) && e[PRICE_FIELDS.input] !== undefined;
}

/** The model entries of a parsed LiteLLM table (header keys such as `sample_spec`, `_meta`, `last_updated` skipped). */
export function rawEntries(json: unknown): Map<string, RawEntry> {
  const out = new Map<string, RawEntry>();
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return out;
  for (const [k, v] of Object.entries(json)) if (isModelKey(k, v)) out.set(k, v as RawEntry);
  return out;
}

/**
 * Compiles raw entries into a price table, checking every value. A bad value
 * (negative, not a number, cache read dearer than input) is a problem naming
 * the model and the field; `where` says where each model's entry was written.
 */
export function compileTable(
  entries: ReadonlyMap<string, RawEntry>,
  meta: { date: string; source: string },
  where: (model: string, field?: string) => Problem,
): PriceTable {
  const models = new Map<string, ModelPrice>();
  const unpriced = new Set<string>();
  const problems: Problem[] = [];
  for (const [model, e] of entries) {
    if (!isPriced(e)) {
      if (e.mode === undefined || MODES.has(e.mode as string)) unpriced.add(model);
      continue;
    }
    const bad = (field: string, message: string) => problems.push({ ...where(model, field), message });
    const usd = (field: string, required: boolean): number | undefined => {
      const v = e[field];
      if (v === undefined || v === null) {
        if (required) bad(field, 'required');
        return undefined;
      }
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
        bad(field, `expected a price in USD per token (a number ≥ 0), got ${shown(v)}`);
        return undefined;
      }
      if (v > MAX_USD_PER_TOKEN) {
        bad(field, `expected a price in USD per token of at most ${MAX_USD_PER_TOKEN} (prices are counted in whole pico-dollars), got ${shown(v)}`);
        return undefined;
      }
      return v;
    };
    const input = usd(PRICE_FIELDS.input, true);
    const output = usd(PRICE_FIELDS.output, false) ?? 0;
    const read = usd(PRICE_FIELDS.cacheRead, false);
    const write = usd(PRICE_FIELDS.cacheWrite, false);
    const write1h = usd(PRICE_FIELDS.cacheWrite1h, false);
    if (input !== undefined && read !== undefined && read > input) {
      bad(PRICE_FIELDS.cacheRead, `cache read (${read}) is dearer than input_cost_per_token (${input})`);
    }
    // LiteLLM writes 0 for "not known": no context limit is applied then.
    const max = e[PRICE_FIELDS.maxInput];
    if (max !== undefined && max !== null && !(typeof max === 'number' && Number.isInteger(max) && max >= 0)) {
      bad(PRICE_FIELDS.maxInput, `expected a whole number of tokens ≥ 0, got ${shown(max)}`);
    }
    const provider = typeof e.litellm_provider === 'string' ? e.litellm_provider : 'unknown';
    if (input === undefined) continue;
    const p: ModelPrice = {
      model,
      provider,
      mode: e.mode === 'embedding' ? 'embedding' : 'chat',
      input: picoPerToken(input),
      output: picoPerToken(output),
      cacheRule: cacheRuleFor(model, provider, read !== undefined, write !== undefined),
      ...(typeof max === 'number' && Number.isInteger(max) && max > 0 && { maxInputTokens: max }),
    };
    // Anthropic-style defaults when the table is silent: write 1.25×, read 0.1×, 1-hour write 2× input.
    if (p.cacheRule.kind === 'explicit') {
      p.cacheRead = read !== undefined ? picoPerToken(read) : (p.input + 5n) / 10n;
      p.cacheWrite = write !== undefined ? picoPerToken(write) : (p.input * 5n + 2n) / 4n;
      p.cacheWrite1h = write1h !== undefined ? picoPerToken(write1h) : p.input * 2n;
    } else if (p.cacheRule.kind === 'automatic') {
      p.cacheRead = picoPerToken(read!);
    }
    models.set(model, p);
  }
  if (problems.length) throw new ScenarioError(problems);
  return { date: meta.date, source: meta.source, models, unpriced };
}

/**
 * Lays a user table over a base: a model the user names keeps the base
 * entry's fields the user left out or wrote as null (as JSON dumps write an
 * absent value); new models are added.
 */
export function mergeEntries(base: ReadonlyMap<string, RawEntry>, over: ReadonlyMap<string, RawEntry>): Map<string, RawEntry> {
  const out = new Map(base);
  for (const [k, v] of over) out.set(k, { ...(base.get(k) ?? {}), ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null)) });
  return out;
}

/** A bad value as the user wrote it (NaN and Infinity included). */
function shown(v: unknown): string {
  return typeof v === 'number' ? String(v) : JSON.stringify(v);
}

/** Looks a model up; an unknown one is a usage error naming the closest known names. */
export function lookup(table: PriceTable, model: string): ModelPrice {
  const m = table.models.get(model);
  if (m) return m;
  if (table.unpriced?.has(model)) {
    throw new UsageError(`model "${model}": the price table (${table.source}) has no ${PRICE_FIELDS.input} for it; add one with --prices FILE`);
  }
  const near = closest(model, [...table.models.keys()], 3);
  throw new UsageError(`unknown model "${model}"${near.length ? ` (closest: ${near.join(', ')})` : ''}`);
}

/** Names this long get no suggestions: an edit distance to every known name would cost their length times the table's. */
const MAX_SUGGEST_LENGTH = 100;

/**
 * The `n` names nearest to `name` (none for a name of 100 characters or
 * more), case ignored: by edit distance to the whole name or, two more, to
 * the nearest part of it, whichever is less (`llama` → the llama models
 * rather than `o1`; a typo inside a longer name counts its edits, not the
 * letters around it; a near whole name still comes first), then by edit
 * distance to the whole name, then by name.
 */
export function closest(name: string, names: readonly string[], n: number): string[] {
  if (name.length >= MAX_SUGGEST_LENGTH) return [];
  const lower = name.toLowerCase();
  return names
    .map((c) => {
      const whole = editDistance(lower, c.toLowerCase());
      return [c, Math.min(whole, editDistance(lower, c.toLowerCase(), true) + 2), whole] as const;
    })
    .sort((a, b) => a[1] - b[1] || a[2] - b[2] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, n)
    .map(([c]) => c);
}

/** Whether a model pattern is a glob: it holds `*` or `?`. */
const isGlob = (pattern: string) => /[*?]/.test(pattern);

/**
 * A glob over model names as a regular expression: `*` any run of
 * characters, `/` included (`groq/*`, `*llama*`), `?` one character; the
 * rest literal, case ignored. Model names are not paths, so a path glob's
 * rules (a `*` stops at `/`) do not fit.
 */
function globRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

/**
 * The models of the table a pattern names, sorted: a model's exact name is
 * that model; a glob (`groq/*`, `gpt-4o*`) the names it matches; anything
 * else the names that hold it, ignoring case (`qwen`). No match is a usage
 * error naming the closest names, as an unknown model is.
 */
export function matchModels(table: PriceTable, pattern: string): string[] {
  if (table.models.has(pattern) || table.unpriced?.has(pattern)) return [pattern];
  const names = [...table.models.keys()];
  const test = isGlob(pattern) ? globRegExp(pattern) : undefined;
  const lower = pattern.toLowerCase();
  const found = names.filter((m) => (test ? test.test(m) : m.toLowerCase().includes(lower))).sort();
  if (found.length) return found;
  const near = isGlob(pattern) ? [] : closest(pattern, names, 3);
  throw new UsageError(`no model matches "${pattern}"${near.length ? ` (closest: ${near.join(', ')})` : ''}`);
}

