import { z } from 'zod';
import { parseDuration } from '../text/duration.js';

export const DEFAULT_PROMPT_CACHE_TTL = 300;

/** The two TTLs Anthropic offers, in seconds: a longer TTL takes the 1-hour tier. */
export const FIVE_MINUTES = 300;
export const ONE_HOUR = 3600;

/** The slowest prefill or decode rate a study may set, in tokens per second. */
export const MIN_TOKENS_PER_SECOND = 0.001;

/** The longest time to first token a study may set: one day, in milliseconds. */
export const MAX_TTFT_MS = 86_400_000;

/** How a study file and a flag write a duration (`5m`, `1h`, or seconds): the written form of `promptCacheTtl`. */
export const DURATION = z
  .union([z.number(), z.string()])
  .refine((v) => parseDuration(v) !== undefined, { message: 'expected a duration such as 300s or 5m' });

/** Where an explicit cache's breakpoints go: at the end of every call, or only after the stable prefix. */
const CACHE_BREAKPOINT = z.enum(['call', 'turn']);

/** Route each turn to a light or a strong model by the size of the user message. */
const ROUTE = z.strictObject({
  light: z.string().min(1),
  strong: z.string().min(1),
  strongWhen: z.strictObject({ userTokensOver: z.number().int().min(0) }),
});

/** A seeded share `rate` of model calls fail and are retried on `model`. */
const FALLBACK = z.strictObject({ model: z.string().min(1), rate: z.number().min(0).max(1) });

/** Latency figures by model (`default`: every model), over the builtin ones (`latencyFor`). */
const LATENCY = z.record(
  z.string().min(1),
  z.strictObject({
    // Bounded so that a turn's latency stays a finite number of milliseconds.
    /** Milliseconds to the first token. */
    ttftMs: z.number().min(0).max(MAX_TTFT_MS).optional(),
    /** Prompt tokens processed per second. */
    prefillTps: z.number().min(MIN_TOKENS_PER_SECOND).optional(),
    /** Output tokens written per second. */
    decodeTps: z.number().min(MIN_TOKENS_PER_SECOND).optional(),
    /** Share of a cached token's prefill time that remains (0: cached tokens are free). */
    cachedPrefillFactor: z.number().min(0).max(1).optional(),
  }),
);

/**
 * How calls are priced, beyond the price table: declared once here; the run
 * spec's settings of the same names are these schemas (engine/spec.ts), and
 * `CostSettings` is what it checks.
 */
export const COST_SETTINGS = z.strictObject({
  /** Prompt caching: `auto` applies the model's provider rule, `off` caches nothing. */
  promptCache: z.enum(['auto', 'off']).default('auto'),
  /**
   * Simulated seconds after which a cached prefix is gone. Unset: 300, except
   * on an explicit (Anthropic-style) cache replaying a transcript whose calls
   * wrote 1-hour entries, which keeps that TTL.
   */
  promptCacheTtl: z.number().positive().optional(),
  /**
   * Where an explicit cache's breakpoints go: `call` (default) at the end of
   * every call's prompt as well as after the policy's stable prefix, so the
   * calls of one agent turn read what the earlier ones wrote (Claude Code and
   * Anthropic's automatic caching); `turn` only after the stable prefix.
   */
  cacheBreakpoint: CACHE_BREAKPOINT.optional(),
  /** Every conversation starts with an empty cache, even one whose transcript's first call found part of its prompt cached (`warm_start:`). */
  coldStart: z.boolean().optional(),
  route: ROUTE.optional(),
  fallback: FALLBACK.optional(),
  latency: LATENCY.optional(),
});

/**
 * How calls are priced, beyond the price table (`COST_SETTINGS`, checked).
 * A checked run spec is one (the engine hands it to the meter whole).
 */
export type CostSettings = z.output<typeof COST_SETTINGS>;
/** The cost settings when none is given: `COST_SETTINGS`' defaults. */
export const DEFAULT_COSTS: CostSettings = COST_SETTINGS.parse({});
/** Route each turn to a light or a strong model by the size of the user message. */
export type Route = z.output<typeof ROUTE>;
/**
 * A seeded share `rate` of model calls fail and are retried on `model`.
 * @public (the type of `CostSettings.fallback`)
 */
export type Fallback = z.output<typeof FALLBACK>;

/** The chat model of a turn: `strong` when the user message has more than `userTokensOver` tokens, else `light`. */
export function chooseModel(route: Route | undefined, model: string, userTokens: number): string {
  if (!route) return model;
  return userTokens > route.strongWhen.userTokensOver ? route.strong : route.light;
}

/** Every model the settings name besides the chat model (checked against the price table up front). */
export function settingsModels(s: Partial<CostSettings>): string[] {
  return [...(s.route ? [s.route.light, s.route.strong] : []), ...(s.fallback ? [s.fallback.model] : [])];
}
