import { describe, expect, it } from 'vitest';
import { streamFor } from '../src/engine/replay.js';
import { turnsCsv } from '../src/records/csv.js';
import { csvRows } from './_io.js';
import { growing, priceFile, study } from './_pricing.js';

const PRICES = priceFile({
  primary: { litellm_provider: 'custom', input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 },
  backup: { litellm_provider: 'custom', input_cost_per_token: 0.000003, output_cost_per_token: 0.000004 },
});
// Round figures so latencies are easy to check by hand.
const LATENCY = { default: { ttftMs: 100, prefillTps: 1000, decodeTps: 50 } };

describe('fallback', () => {
  const conv = growing('fb', 10);
  const run = (seed: number, rate: number) =>
    study([conv], ['full'], { model: 'primary', prices: PRICES, seed, fallback: { model: 'backup', rate }, latency: LATENCY });

  it('fails a seeded share of calls, reproducibly', () => {
    // One draw per call from the stream of (seed, scenario, `${policy}:fallback`); a draw < 0.3 fails.
    // Seed 7 draws below 0.3 on calls 2, 6 and 8; seed 42 only on call 1.
    const flags = (seed: number) => run(seed, 0.3).turns.map((t) => t.fallback);
    expect(flags(7)).toEqual([false, true, false, false, false, true, false, true, false, false]);
    expect(flags(42)).toEqual([true, false, false, false, false, false, false, false, false, false]);
    expect(flags(7)).toEqual(flags(7));
    const draws = streamFor(7, 'fb', 'full:fallback');
    expect(flags(7)).toEqual(Array.from({ length: 10 }, () => draws() < 0.3));
  });

  it('rate 0 never fails, rate 1 always does', () => {
    expect(run(7, 0).turns.some((t) => t.fallback)).toBe(false);
    expect(run(7, 1).turns.every((t) => t.fallback)).toBe(true);
  });

  it('counts both attempts’ costs, tokens and latency', () => {
    const r = run(7, 0.3);
    const [t1, t2] = r.turns;
    // Turn 1 (no failure): 500 in × 1e6 + 100 out × 2e6 = 700,000,000 pico;
    //   latency 100 + 500/1000 s + 100/50 s = 100 + 500 + 2000 = 2600 ms.
    expect([t1!.cost, t1!.inputTokens, t1!.outputTokens, t1!.latencyMs]).toEqual([700_000_000n, 500, 100, 2600]);
    // Turn 2 fails on primary: billed 1000 in × 1e6 = 1,000,000,000, no output, 100 + 1000 = 1100 ms;
    //   retried on backup: 1000 × 3e6 + 100 × 4e6 = 3,400,000,000, 100 + 1000 + 2000 = 3100 ms.
    expect([t2!.cost, t2!.inputTokens, t2!.outputTokens, t2!.latencyMs]).toEqual([4_400_000_000n, 2000, 100, 4200]);
    const columns = ['model', 'fallback', 'cache_write_tokens', 'estimated_tokens', 'violations', 'zombie_prompt', 'injection_exposed', 'calls'];
    expect(Object.values(csvRows(turnsCsv(r), columns)[1]!)).toEqual(['primary', 'true', '0', 'false', '0', 'false', 'false', '1']);
  });

  it('leaves the policy’s own stream alone', () => {
    // Same seed with and without fallback: identical prompts (only the fallback stream is drawn).
    const plain = study([conv], ['full'], { model: 'primary', prices: PRICES, seed: 7 });
    expect(run(7, 0.3).turns.map((t) => t.contextMessages)).toEqual(plain.turns.map((t) => t.contextMessages));
  });
});

describe('routing', () => {
  it('prices each turn on the model chosen by the user message size', () => {
    const r = study([growing('route', 3)], ['full'], {
      model: 'primary',
      prices: PRICES,
      route: { light: 'primary', strong: 'backup', strongWhen: { userTokensOver: 450 } },
    });
    // User 1 has 500 tokens (> 450) → backup; users 2 and 3 have 400 → primary.
    expect(r.turns.map((t) => t.model)).toEqual(['backup', 'primary', 'primary']);
    // t1: 500 × 3e6 + 100 × 4e6 = 1,900,000,000; t2: 1000 × 1e6 + 100 × 2e6 = 1,200,000,000.
    expect(r.turns.map((t) => t.cost)).toEqual([1_900_000_000n, 1_200_000_000n, 1_700_000_000n]);
  });

  it('rejects an unknown routed model before running', () => {
    expect(() =>
      study([growing('route', 1)], ['full'], { model: 'primary', prices: PRICES, route: { light: 'primary', strong: 'gpt-4oo', strongWhen: { userTokensOver: 1 } } }),
    ).toThrow(/unknown model "gpt-4oo" \(closest: gpt-4o, /);
  });
});

describe('context windows', () => {
  // gpt-3.5-turbo accepts 16,385 input tokens. `full` sends 500 × n tokens at call n, so calls
  // 33–40 (16,500 … 20,000 tokens) overflow.
  const conv = growing('long', 40);
  const r = study([conv], ['full', 'window-turns:turns=10'], { model: 'gpt-3.5-turbo', prices: 'builtin' });
  const full = r.turns.filter((t) => t.policy === 'full');

  it('records an overflow without pricing it', () => {
    expect(full.map((t) => t.overflow).indexOf(true)).toBe(32);
    expect(full[31]!.inputTokens).toBe(16_000);
    // 16,000 × $0.0000005 + 100 × $0.0000015 = $0.008 + $0.00015
    expect(full[31]!.cost).toBe(8_150_000_000n);
    expect([full[32]!.inputTokens, full[32]!.outputTokens, full[32]!.cost, full[32]!.latencyMs]).toEqual([16_500, 0, 0n, 0]);
  });

  it('counts overflow turns in the summary', () => {
    expect(r.summary.map((s) => [s.policy, s.overflowTurns])).toEqual([
      ['full', 8],
      ['window-turns:turns=10', 0],
    ]);
    expect(r.policies.map((p) => p.overflowTurns)).toEqual([8, 0]);
  });
});
