import type { Message, Pico } from '../types.js';
import { lookup, type ModelPrice, type PriceTable } from './prices.js';

/** One model call to price. */
export interface CallRequest {
  model: string;
  /** The prompt as sent (caching compares it with the previous call's). */
  messages: readonly Message[];
  promptTokens: number;
  /** Leading messages the policy marks as its stable prefix (where a cache breakpoint goes). */
  stablePrefix: number;
  outputTokens: number;
  /** Simulated seconds since the conversation started. */
  time: number;
}

/** What a call cost. `inputTokens` includes `cachedTokens`. */
export interface CallCost {
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  input: Pico;
  cached: Pico;
  output: Pico;
  latencyMs: number;
  overflow: boolean;
}

/** Simple latency defaults: time to first token, prefill and decode speed. */
const LATENCY = { ttftMs: 300, prefillTps: 5000, decodeTps: 80 };

/**
 * Prices the calls of one conversation under one policy. It is stateful so
 * that caching can look at the previous call of the same conversation.
 */
export class Meter {
  constructor(private readonly table: PriceTable) {}

  price(model: string): ModelPrice {
    return lookup(this.table, model);
  }

  /** A chat model call. Over the context window: an overflow, recorded and not priced. */
  call(req: CallRequest): CallCost {
    const p = this.price(req.model);
    const overflow = p.maxInputTokens !== undefined && req.promptTokens > p.maxInputTokens;
    if (overflow) {
      return { inputTokens: req.promptTokens, cachedTokens: 0, outputTokens: 0, input: 0n, cached: 0n, output: 0n, latencyMs: 0, overflow };
    }
    return {
      inputTokens: req.promptTokens,
      cachedTokens: 0,
      outputTokens: req.outputTokens,
      input: BigInt(req.promptTokens) * p.input,
      cached: 0n,
      output: BigInt(req.outputTokens) * p.output,
      latencyMs: LATENCY.ttftMs + (req.promptTokens / LATENCY.prefillTps) * 1000 + (req.outputTokens / LATENCY.decodeTps) * 1000,
      overflow,
    };
  }

  /** An upkeep call (summary, extraction, embedding): priced on its own model, never cached. */
  upkeep(model: string, inputTokens: number, outputTokens: number): { cost: Pico; latencyMs: number } {
    const p = this.price(model);
    return {
      cost: BigInt(inputTokens) * p.input + BigInt(outputTokens) * p.output,
      latencyMs: LATENCY.ttftMs + (inputTokens / LATENCY.prefillTps) * 1000 + (outputTokens / LATENCY.decodeTps) * 1000,
    };
  }
}
