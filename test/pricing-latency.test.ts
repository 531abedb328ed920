import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import type { Policy } from '../src/policies/types.js';
import { callLatencyMs, latencyFor } from '../src/pricing/latency.js';
import { builtinPrices } from '../src/pricing/load.js';
import { Meter } from '../src/pricing/meter.js';
import { growing, priceFile, study } from './_pricing.js';

const PRICES = priceFile({
  'cached-1k': { litellm_provider: 'openai', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000005 },
});
const LATENCY = { 'cached-1k': { ttftMs: 100, prefillTps: 1000, decodeTps: 50 } };

describe('latency figures', () => {
  it('has builtin defaults by class of model, overridable per model', () => {
    expect(latencyFor('gpt-4o-mini')).toEqual({ ttftMs: 300, prefillTps: 8000, decodeTps: 100, cachedPrefillFactor: 0 });
    expect(latencyFor('gpt-4o')).toEqual({ ttftMs: 500, prefillTps: 4000, decodeTps: 50, cachedPrefillFactor: 0 });
    expect(latencyFor('text-embedding-3-small').ttftMs).toBe(50);
    const o = { default: { ttftMs: 1 }, 'gpt-4o': { ttftMs: 2, decodeTps: 10 } };
    expect(latencyFor('gpt-4o', o)).toEqual({ ttftMs: 2, prefillTps: 4000, decodeTps: 10, cachedPrefillFactor: 0 });
    expect(latencyFor('gpt-4o-mini', o).ttftMs).toBe(1);
  });

  it('is ttft + uncached prompt / prefill + output / decode', () => {
    // 200 + 3000/6000 s + 100/40 s = 200 + 500 + 2500 = 3200 ms; cached tokens at factor 0.5:
    // 2000 cached → 1000 token-equivalents → +1000/6000 s = +166.67 ms.
    const l = { ttftMs: 200, prefillTps: 6000, decodeTps: 40, cachedPrefillFactor: 0 };
    expect(callLatencyMs(l, 3000, 0, 100)).toBe(3200);
    expect(callLatencyMs(l, 3000, 2000, 100)).toBe(3200);
    expect(callLatencyMs({ ...l, cachedPrefillFactor: 0.5 }, 3000, 2000, 100)).toBeCloseTo(3366.667, 3);
  });
});

describe('latency in a run', () => {
  const conv = growing('lat', 10, { system: 1100 });

  it('skips the prefill of cached tokens', () => {
    const r = study([conv], ['full'], { model: 'cached-1k', prices: PRICES, latency: LATENCY });
    // Turn 1: 100 + 1600 ms prefill + 100/50 s = 3700. Turn 2: 2100 sent, 1536 cached:
    // 100 + 564 + 2000 = 2664.
    expect(r.turns.slice(0, 2).map((t) => t.latencyMs)).toEqual([3700, 2664]);
  });

  it('reports p50 and p95 per scenario', () => {
    const r = study([conv], ['full'], { model: 'cached-1k', prices: PRICES, latency: LATENCY, promptCache: 'off' });
    // Turn n: 100 + (1100 + 500n) + 2000 = 3200 + 500n → 3700 … 8200. Nearest rank:
    // p50 = 5th of 10 = 5700, p95 = 10th = 8200.
    expect(r.turns.map((t) => t.latencyMs)).toEqual([3700, 4200, 4700, 5200, 5700, 6200, 6700, 7200, 7700, 8200]);
    expect([r.summary[0]!.latencyP50Ms, r.summary[0]!.latencyP95Ms]).toEqual([5700, 8200]);
  });
});

describe('upkeep calls', () => {
  it('are priced on their own model, with its latency and context window', () => {
    const m = new Meter(builtinPrices());
    // text-embedding-3-small: $0.02/M = 20,000 pico per token; 1000 tokens = 20,000,000 pico.
    // Latency: 50 + 1000/20000 s = 100 ms.
    expect(m.upkeep('text-embedding-3-small', 1000, 0)).toEqual({ cost: 20_000_000n, latencyMs: 100, overflow: false });
    // Its window is 8191 tokens.
    expect(m.upkeep('text-embedding-3-small', 8192, 0)).toEqual({ cost: 0n, latencyMs: 0, overflow: true });
    // gpt-4o-mini: 1000 × 150,000 + 200 × 600,000 = 270,000,000 pico.
    expect(m.upkeep('gpt-4o-mini', 1000, 200).cost).toBe(270_000_000n);
  });

  it('add their cost to the turn, and their latency when the user waits for them', () => {
    // A stand-in policy: sends [user] and runs a summary the user waits for and an embedding that runs after.
    const policy: Policy = {
      id: 'upkeep-probe',
      describe: 'test policy',
      params: {},
      start: () => ({
        prompt: (pending) => ({
          messages: [...pending],
          overBudget: false,
          stablePrefix: 0,
          upkeep: [{ kind: 'summary', model: 'gpt-4o-mini', inputTokens: 1000, outputTokens: 200, sync: true }],
        }),
        commit: () => [{ kind: 'embed', model: 'text-embedding-3-small', inputTokens: 1000, outputTokens: 0, sync: false }],
        forget: () => [],
        artifacts: () => [],
      }),
    };
    const ctx = replayContext({ seed: 1, model: 'cached-1k', tokenizer: 'chars4', prices: PRICES, latency: LATENCY });
    const [row] = replay(growing('up', 1), { name: 'upkeep-probe', policy, params: {} }, ctx).turns;
    // Chat call: 500 × 1e6 = 500,000,000; summary 270,000,000; embedding 20,000,000.
    expect(row!.costUpkeep).toBe(290_000_000n);
    expect(row!.cost).toBe(790_000_000n);
    expect([row!.auxInputTokens, row!.auxOutputTokens, row!.embedTokens]).toEqual([1000, 200, 1000]);
    // Chat: 100 + 500 + 2000 = 2600; summary (gpt-4o-mini: 300 + 1000/8000 s + 200/100 s = 300 + 125 + 2000) = 2425.
    expect(row!.latencyMs).toBe(5025);
  });
});
