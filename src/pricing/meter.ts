import type { Message, Pico } from '../types.js';
import type { PromptSequence } from '../tokens/templated.js';
import { BreakpointCache, PrefixCache, type MessageTokens } from './prompt-cache.js';
import { callLatencyMs, latencyFor, type Latency } from './latency.js';
import { lookup, type ModelPrice, type PriceTable } from './prices.js';
import { DEFAULT_COSTS, DEFAULT_PROMPT_CACHE_TTL, FIVE_MINUTES, ONE_HOUR, type CostSettings } from './settings.js';

/** One model call to price. */
export interface CallRequest {
  model: string;
  /** The prompt as sent (caching compares it with earlier calls'). */
  messages: readonly Message[];
  promptTokens: number;
  /** Leading messages of `messages` the policy marks as its stable prefix (where a cache breakpoint goes; with `cacheBreakpoint: call` another goes at the end); the tool definitions are always before it. */
  stablePrefix: number;
  outputTokens: number;
  /** The message the call wrote, as later prompts hold it (a cache that keeps outputs reads it back). */
  output?: Message;
  /** Simulated seconds since the conversation started. */
  time: number;
  /** Seconds between the previous call's reply and this call, when a transcript recorded them (a round's `gap:`): a cache that needs time to make what it wrote readable is read with it. */
  gap?: number;
  /** The prompt as rendered by the model's chat template, piece by piece: automatic prefix caching compares these (the template's framing and tools included) instead of messages. */
  sequence?: PromptSequence;
}

/** What a call cost. `inputTokens` includes `cachedTokens` and `cacheWriteTokens`. */
export interface CallCost {
  /** The model that answered (the fallback model after a failure). */
  model: string;
  /** The call failed on its model and was retried on the fallback model. */
  fallback: boolean;
  inputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** Uncached input and cache writes. */
  input: Pico;
  cached: Pico;
  output: Pico;
  latencyMs: number;
  overflow: boolean;
}

/** Token counts of one priced attempt; `input` includes `cached` and `written`. */
export interface Usage {
  input: number;
  cached: number;
  written: number;
  output: number;
}

/**
 * The price of one attempt: uncached input at the input price, cache reads at
 * the cache-read price, cache writes at the write price, output at the output price.
 */
export function priceUsage(p: ModelPrice, u: Usage, writePrice: Pico = p.cacheWrite ?? p.input): { input: Pico; cached: Pico; output: Pico } {
  return {
    input: times(u.input - u.cached - u.written, p.input) + times(u.written, writePrice),
    cached: times(u.cached, p.cacheRead ?? p.input),
    output: times(u.output, p.output),
  };
}

/** `tokens` at `price` per token (a call often has no cache reads or writes: no BigInt is made for those). */
const times = (tokens: number, price: Pico): Pico => (tokens === 0 ? 0n : BigInt(tokens) * price);

/** What the Meter needs besides the price table. */
export interface MeterOptions {
  settings?: CostSettings;
  /** Tokens of one message in a prompt (chat overhead included): caching measures prefixes with it. */
  count?: MessageTokens;
  /** Tokens of the tool definitions offered with every call (in `promptTokens`, not in `messages`): sent first, so caching sees them before the messages. */
  toolTokens?: number;
  /** Tokens sent before everything else in every call (a transcript's unlogged prefix; in `promptTokens`): always inside a cached prefix. */
  pinnedTokens?: number;
  /** The seeded stream that decides which calls fail (used only with `fallback`). */
  random?: () => number;
  /** The explicit-cache TTL the conversation's transcript recorded (seconds), used when the settings set none. */
  recordedTtl?: number;
  /** Tokens of the first prompt the provider already held in its cache (a transcript's warm start): read by the first call on each model, unless the settings start cold. */
  warmTokens?: number;
}

/**
 * Prices the calls of one conversation under one policy. It is stateful:
 * caching looks at the earlier calls of the same conversation, per model.
 */
export class Meter {
  private readonly settings: CostSettings;
  private readonly count: MessageTokens;
  private readonly random: () => number;
  /** Tokens of the tool definitions sent before every prompt (0: none). */
  private readonly toolTokens: number;
  private readonly pinnedTokens: number;
  private readonly recordedTtl: number | undefined;
  private readonly warmTokens: number;
  private readonly prefix = new Map<string, PrefixCache>();
  private readonly breakpoints = new Map<string, BreakpointCache>();
  private readonly latencies = new Map<string, Latency>();

  constructor(
    private readonly table: PriceTable,
    opts: MeterOptions = {},
  ) {
    this.settings = opts.settings ?? DEFAULT_COSTS;
    this.count = opts.count ?? (() => 0);
    this.random = opts.random ?? (() => 1);
    this.toolTokens = opts.toolTokens ?? 0;
    this.pinnedTokens = opts.pinnedTokens ?? 0;
    this.recordedTtl = opts.recordedTtl;
    this.warmTokens = this.settings.coldStart ? 0 : (opts.warmTokens ?? 0);
  }

  price(model: string): ModelPrice {
    return lookup(this.table, model);
  }

  latency(model: string): Latency {
    let l = this.latencies.get(model);
    if (!l) {
      l = latencyFor(model, this.settings.latency);
      this.latencies.set(model, l);
    }
    return l;
  }

  /**
   * A chat model call. With `fallback`, one draw from the seeded stream per
   * call decides whether it fails; a failed attempt is billed for its prompt
   * (no output) and its time to first token, then the call is retried on the
   * fallback model. Over the context window: an overflow, recorded and not
   * priced (and not retried).
   */
  call(req: CallRequest): CallCost {
    const fb = this.settings.fallback;
    const fails = fb !== undefined && this.random() < fb.rate;
    const first = this.attempt(req.model, req, fails ? 0 : req.outputTokens);
    if (!fails || first.overflow) return first;
    const retry = this.attempt(fb.model, req, req.outputTokens);
    return {
      model: retry.model,
      fallback: true,
      inputTokens: first.inputTokens + retry.inputTokens,
      cachedTokens: first.cachedTokens + retry.cachedTokens,
      cacheWriteTokens: first.cacheWriteTokens + retry.cacheWriteTokens,
      outputTokens: retry.outputTokens,
      input: first.input + retry.input,
      cached: first.cached + retry.cached,
      output: retry.output,
      latencyMs: first.latencyMs + retry.latencyMs,
      overflow: retry.overflow,
    };
  }

  /** One attempt on one model: overflow check, cache, price, latency. */
  private attempt(model: string, req: CallRequest, outputTokens: number): CallCost {
    const p = this.price(model);
    if (p.maxInputTokens !== undefined && req.promptTokens > p.maxInputTokens) {
      return {
        model,
        fallback: false,
        inputTokens: req.promptTokens,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 0,
        input: 0n,
        cached: 0n,
        output: 0n,
        latencyMs: 0,
        overflow: true,
      };
    }
    const use = this.cacheUse(p, req);
    const cost = priceUsage(p, { input: req.promptTokens, cached: use.read, written: use.written, output: outputTokens }, use.writePrice);
    const latencyMs = callLatencyMs(this.latency(model), req.promptTokens - use.read, use.read, outputTokens);
    // The prefix cache's clock: when this call's reply ended (what it wrote becomes readable from then).
    this.prefix.get(p.model)?.took(latencyMs / 1000);
    return {
      model,
      fallback: false,
      inputTokens: req.promptTokens,
      cachedTokens: use.read,
      cacheWriteTokens: use.written,
      outputTokens,
      input: cost.input,
      cached: cost.cached,
      output: cost.output,
      latencyMs,
      overflow: false,
    };
  }

  private cacheUse(p: ModelPrice, req: CallRequest): { read: number; written: number; writePrice?: Pico } {
    const { promptCache, promptCacheTtl, cacheBreakpoint } = this.settings;
    if (promptCache === 'off') return { read: 0, written: 0 };
    const rule = p.cacheRule;
    if (rule.kind === 'automatic') {
      let c = this.prefix.get(p.model);
      if (!c) this.prefix.set(p.model, (c = new PrefixCache(rule, promptCacheTtl ?? DEFAULT_PROMPT_CACHE_TTL, this.toolTokens, this.pinnedTokens, this.warmTokens)));
      return { read: c.call(req.messages, req.time, this.count, req.sequence, rule.output && req.output && { promptTokens: req.promptTokens, message: req.output, tokens: req.outputTokens }, req.gap), written: 0 };
    }
    if (rule.kind === 'explicit') {
      // Anthropic offers two TTLs: one above five minutes takes the 1-hour tier (dearer writes), capped at one hour.
      const ttl = promptCacheTtl ?? this.recordedTtl ?? DEFAULT_PROMPT_CACHE_TTL;
      let c = this.breakpoints.get(p.model);
      if (!c) this.breakpoints.set(p.model, (c = new BreakpointCache(rule.minTokens, Math.min(ttl, ONE_HOUR), this.pinnedTokens + this.toolTokens, this.warmTokens)));
      const marks = cacheBreakpoint === 'turn' ? [req.stablePrefix] : [req.stablePrefix, req.messages.length];
      const { read, written } = c.call(req.messages, marks, req.time, this.count);
      return { read, written, writePrice: ttl > FIVE_MINUTES ? p.cacheWrite1h : p.cacheWrite };
    }
    return { read: 0, written: 0 };
  }

  /**
   * An upkeep call (summary, extraction, embedding), priced on its own model.
   * Its prompt is not known message by message, so it is never cached; over
   * the model's context window it is an overflow and is not priced.
   */
  upkeep(model: string, inputTokens: number, outputTokens: number): { cost: Pico; latencyMs: number; overflow: boolean } {
    const p = this.price(model);
    if (p.maxInputTokens !== undefined && inputTokens > p.maxInputTokens) return { cost: 0n, latencyMs: 0, overflow: true };
    const c = priceUsage(p, { input: inputTokens, cached: 0, written: 0, output: outputTokens });
    return { cost: c.input + c.cached + c.output, latencyMs: callLatencyMs(this.latency(model), inputTokens, 0, outputTokens), overflow: false };
  }
}
