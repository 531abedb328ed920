import { describe, expect, it } from 'vitest';
import { summaryCsv, turnsCsv } from '../src/records/csv.js';
import { usd } from '../src/records/format.js';
import { Meter } from '../src/pricing/meter.js';
import type { Message } from '../src/types.js';
import { growing, priceFile, study } from './_pricing.js';

// $0.001 per 1K input tokens = 1e-6 USD = 1,000,000 pico-dollars per token.
const FLAT = priceFile({
  'flat-1k': { litellm_provider: 'custom', mode: 'chat', input_cost_per_token: 0.000001, output_cost_per_token: 0 },
  // Same input price, OpenAI-style caching with reads at half price ($0.0005/1K).
  'cached-1k': { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000005 },
});

describe('a 10-exchange conversation growing by 500 tokens per call', () => {
  const r = study([growing('grow', 10)], ['full'], { model: 'flat-1k', prices: FLAT });

  it('sends 500, 1000, … 5000 input tokens', () => {
    expect(r.turns.map((t) => t.inputTokens)).toEqual([500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000]);
  });

  it('costs $0.0005 on exchange 1, $0.005 on exchange 10 and $0.0275 in total', () => {
    // 500 × $0.000001 = $0.0005; 5000 × $0.000001 = $0.005;
    // (500 + 1000 + … + 5000) = 500 × 55 = 27,500 tokens × $0.000001 = $0.0275.
    expect(r.turns[0]!.cost).toBe(500_000_000n);
    expect(r.turns[9]!.cost).toBe(5_000_000_000n);
    expect(r.summary[0]!.totalCost).toBe(27_500_000_000n);
    expect(usd(r.turns[0]!.cost, 6)).toBe('0.000500');
    expect(usd(r.turns[9]!.cost, 6)).toBe('0.005000');
    expect(usd(r.summary[0]!.totalCost, 6)).toBe('0.027500');
  });

  it('writes the same figures to turns.csv and summary.csv', () => {
    const turns = turnsCsv(r).split('\n');
    expect(turns[1]).toMatch(/^grow,full,1,1,500,0,100,0,0,0,0\.00050000,0\.00050000,/);
    expect(turns[10]).toMatch(/^grow,full,10,19,5000,0,100,0,0,0,0\.00500000,0\.02750000,/);
    expect(summaryCsv(r).split('\n')[1]).toMatch(/^grow,full,10,27500,0,1000,0,0\.02750000,0\.00275000,5000,0,/);
  });
});

describe('the same conversation under OpenAI caching with a 1,100-token system prompt', () => {
  const conv = growing('grow-sys', 10, { system: 1100 });
  const on = study([conv], ['full'], { model: 'cached-1k', prices: FLAT });
  const off = study([conv], ['full'], { model: 'cached-1k', prices: FLAT, promptCache: 'off' });

  it('caches the previous call’s prompt, rounded down to 128-token steps', () => {
    // Call n sends 1100 + 500n tokens. Its leading messages identical to call n−1 are all of
    // call n−1's messages: P = 1100 + 500(n−1). Cached = floor(P/128) × 128 (P ≥ 1024):
    //   n=1: no previous call → 0
    //   n=2: P=1600 → 12×128 = 1536     n=3: P=2100 → 16×128 = 2048
    //   n=4: P=2600 → 20×128 = 2560     n=5: P=3100 → 24×128 = 3072
    //   n=6: P=3600 → 28×128 = 3584     n=7: P=4100 → 32×128 = 4096
    //   n=8: P=4600 → 35×128 = 4480     n=9: P=5100 → 39×128 = 4992
    //   n=10: P=5600 → 43×128 = 5504
    expect(on.turns.map((t) => t.inputTokens)).toEqual([1600, 2100, 2600, 3100, 3600, 4100, 4600, 5100, 5600, 6100]);
    expect(on.turns.map((t) => t.cachedTokens)).toEqual([0, 1536, 2048, 2560, 3072, 3584, 4096, 4480, 4992, 5504]);
  });

  it('bills cached tokens at the cache-read price', () => {
    // cost(n) = (input − cached) × $0.000001 + cached × $0.0000005
    //   n=1: 1600 × 1e-6 = $0.0016
    //   n=10: 596 × 1e-6 + 5504 × 5e-7 = $0.000596 + $0.002752 = $0.003348
    // total: 38,500 input tokens (11,000 system + 27,500), 31,872 of them cached:
    //   38,500 × 1e-6 − 31,872 × 5e-7 = $0.0385 − $0.015936 = $0.022564
    expect(usd(on.turns[0]!.cost, 6)).toBe('0.001600');
    expect(usd(on.turns[9]!.cost, 6)).toBe('0.003348');
    expect(on.summary[0]!.cachedTokens).toBe(31_872);
    expect(on.summary[0]!.totalCost).toBe(22_564_000_000n);
    expect(on.turns[9]!.costCached).toBe(2_752_000_000n);
    // Caching off: everything at the input price, 38,500 × 1e-6 = $0.0385.
    expect(off.turns.every((t) => t.cachedTokens === 0)).toBe(true);
    expect(usd(off.summary[0]!.totalCost, 6)).toBe('0.038500');
  });

  it('counts cached tokens inside input_tokens in turns.csv', () => {
    expect(turnsCsv(on).split('\n')[10]).toMatch(/^grow-sys,full,10,20,6100,5504,/);
  });
});

describe('Anthropic-style explicit caching', () => {
  // $1/M input, writes $1.25/M, reads $0.10/M, output $2/M; not a haiku → minimum 1024 tokens.
  const file = priceFile({
    'test-claude': {
      litellm_provider: 'anthropic',
      mode: 'chat',
      input_cost_per_token: 0.000001,
      output_cost_per_token: 0.000002,
      cache_creation_input_token_cost: 0.00000125,
      cache_read_input_token_cost: 0.0000001,
    },
  });
  const r = study([growing('claude', 4, { system: 1100 })], ['full'], { model: 'test-claude', prices: file, cacheBreakpoint: 'turn' });

  it('per turn: writes the stable prefix once and reads it on later turns', () => {
    // `full` puts the breakpoint after everything before the current user message.
    //   t1: prefix [system] = 1100 → write 1100; 500 uncached
    //   t2: prefix [system,u1,a1] = 1700 → read [system] 1100, write 600; 400 uncached
    //   t3: prefix 2200 → read 1700, write 500; 400 uncached
    //   t4: prefix 2700 → read 2200, write 500; 400 uncached
    expect(r.turns.map((t) => t.cacheWriteTokens)).toEqual([1100, 600, 500, 500]);
    expect(r.turns.map((t) => t.cachedTokens)).toEqual([0, 1100, 1700, 2200]);
    expect(r.turns.map((t) => t.inputTokens)).toEqual([1600, 2100, 2600, 3100]);
  });

  it('per turn: prices writes, reads, uncached input and output', () => {
    // in pico-dollars (uncached × 1e6 + written × 1.25e6 + read × 1e5 + 100 output × 2e6):
    //   t1: 500e6 + 1100×1.25e6 + 0 + 200e6 = 500e6 + 1375e6 + 200e6 = 2,075,000,000
    //   t2: 400e6 + 600×1.25e6 + 1100×1e5 + 200e6 = 400e6 + 750e6 + 110e6 + 200e6 = 1,460,000,000
    //   t3: 400e6 + 625e6 + 170e6 + 200e6 = 1,395,000,000
    //   t4: 400e6 + 625e6 + 220e6 + 200e6 = 1,445,000,000
    //   total $0.006375
    expect(r.turns.map((t) => t.cost)).toEqual([2_075_000_000n, 1_460_000_000n, 1_395_000_000n, 1_445_000_000n]);
    expect(usd(r.summary[0]!.totalCost, 6)).toBe('0.006375');
    expect(r.turns[0]!.costInput).toBe(1_875_000_000n);
    expect(r.turns[1]!.costCached).toBe(110_000_000n);
  });

  it('prices a 1-hour TTL at the 1-hour write price (2× input when the table has none)', () => {
    const long = study([growing('claude', 1, { system: 1100 })], ['full'], { model: 'test-claude', prices: file, promptCacheTtl: 3600, cacheBreakpoint: 'turn' });
    // 500 uncached × 1e6 + 1100 written × 2e6 + 100 output × 2e6 = 500e6 + 2200e6 + 200e6
    expect(long.turns[0]!.cost).toBe(2_900_000_000n);
  });

  it('per call (the default): a breakpoint at the end of each prompt too, so each call reads the whole previous prompt', () => {
    const call = study([growing('claude', 4, { system: 1100 })], ['full'], { model: 'test-claude', prices: file });
    // Breakpoints after the stable prefix and at the end of the prompt; both ≥ 1024 tokens from turn 1 on.
    //   t1: [system, u1] = 1600 → nothing to read, write 1600 (entries of 1100 and 1600 tokens)
    //   t2: [system, u1, a1, u2] = 2100 → read 1600 (t1's whole prompt), write 500
    //   t3: 2600 → read 2100, write 500;  t4: 3100 → read 2600, write 500
    expect(call.turns.map((t) => t.cachedTokens)).toEqual([0, 1600, 2100, 2600]);
    expect(call.turns.map((t) => t.cacheWriteTokens)).toEqual([1600, 500, 500, 500]);
    // pico-dollars: t1 1600 × 1.25e6 + 100 output × 2e6 = 2000e6 + 200e6;
    //   t2 500 × 1.25e6 + 1600 × 1e5 + 200e6 = 625e6 + 160e6 + 200e6; t3 625e6 + 210e6 + 200e6; t4 625e6 + 260e6 + 200e6
    expect(call.turns.map((t) => t.cost)).toEqual([2_200_000_000n, 985_000_000n, 1_035_000_000n, 1_085_000_000n]);
    expect(usd(call.summary[0]!.totalCost, 6)).toBe('0.005305');
  });

  it('per call, the calls of one agent turn read what the earlier ones wrote; per turn they do not', () => {
    const p = { model: 'c', provider: 'anthropic', mode: 'chat' as const, input: 1_000_000n, output: 0n, cacheRead: 100_000n, cacheWrite: 1_250_000n, cacheWrite1h: 2_000_000n, cacheRule: { kind: 'explicit' as const, minTokens: 1024 } };
    const table = { date: 'test', source: 'test', models: new Map([['c', p]]) };
    // One turn of three calls: [system 1100, user 200], then a tool round of 300 tokens added per call; the stable prefix is the system prompt.
    const msg = (content: string): Message => ({ role: 'user', content });
    const sizes = new Map<string, number>([['s', 1100], ['u', 200], ['r1', 300], ['r2', 300]]);
    const prompts = [['s', 'u'], ['s', 'u', 'r1'], ['s', 'u', 'r1', 'r2']].map((names) => names.map(msg));
    const use = (cacheBreakpoint: 'call' | 'turn') => {
      const meter = new Meter(table, { settings: { promptCache: 'auto', cacheBreakpoint }, count: (m) => sizes.get(m.content)! });
      // Each call extends the previous one's messages (the same objects), 10 s apart.
      let prev: Message[] = [];
      return prompts.map((names, i) => {
        const messages = [...prev, ...names.slice(prev.length)];
        prev = messages;
        const c = meter.call({ model: 'c', messages, promptTokens: messages.reduce((t, m) => t + sizes.get(m.content)!, 0), stablePrefix: 1, outputTokens: 0, time: i * 10 });
        return [c.cachedTokens, c.cacheWriteTokens];
      });
    };
    // Per call: 1300 written; then read 1300, write 300; read 1600, write 300.
    expect(use('call')).toEqual([[0, 1300], [1300, 300], [1600, 300]]);
    // Per turn: only the system prompt is ever cached; the growing tail is paid in full each call.
    expect(use('turn')).toEqual([[0, 1100], [1100, 0], [1100, 0]]);
  });
});

describe('TTL expiry', () => {
  it('OpenAI: nothing is cached when the gap exceeds cacheTtl', () => {
    const at = (gap: number) =>
      study([growing(`gap-${gap}`, 3, { system: 1100, gaps: { 3: gap } })], ['full'], { model: 'cached-1k', prices: FLAT }).turns.map((t) => t.cachedTokens);
    // Turn 3 follows turn 2 after `gap` seconds; the default cacheTtl is 300 s.
    expect(at(300)).toEqual([0, 1536, 2048]);
    expect(at(301)).toEqual([0, 1536, 0]);
  });

  it('OpenAI: cacheTtl is configurable', () => {
    const r = study([growing('ttl', 3, { system: 1100 })], ['full'], { model: 'cached-1k', prices: FLAT, promptCacheTtl: 20 });
    // Default 30 s gaps are longer than a 20 s TTL: no call finds a live cache.
    expect(r.turns.map((t) => t.cachedTokens)).toEqual([0, 0, 0]);
  });

  it('Anthropic: each hit refreshes the 5-minute TTL; a longer silence expires it', () => {
    const file = priceFile({ 'test-claude': { litellm_provider: 'anthropic', input_cost_per_token: 0.000001, output_cost_per_token: 0 } });
    // window-turns:turns=0 sends [system, user]: the breakpoint is after the 1100-token system prompt.
    // Calls at t = 0, 200, 400, 600 (each ≤ 300 s after the last hit), then 901 (301 s later).
    const conv = growing('refresh', 5, { system: 1100, gaps: { 2: 200, 3: 200, 4: 200, 5: 301 } });
    const r = study([conv], ['window-turns:turns=0'], { model: 'test-claude', prices: file, cacheBreakpoint: 'turn' });
    expect(r.turns.map((t) => t.cachedTokens)).toEqual([0, 1100, 1100, 1100, 0]);
    expect(r.turns.map((t) => t.cacheWriteTokens)).toEqual([1100, 0, 0, 0, 1100]);
    // Default prices: write 1.25 × 1e6 = 1,250,000, read 0.1 × 1e6 = 100,000 pico per token.
    //   t1: 1100 written × 1.25e6 + user 1's 500 tokens × 1e6 = 1,375,000,000 + 500,000,000 = 1,875,000,000
    //   t2: 1100 read × 1e5 + user 2's 400 tokens × 1e6 = 110,000,000 + 400,000,000 = 510,000,000
    expect(r.turns[0]!.cost).toBe(1_875_000_000n);
    expect(r.turns[1]!.cost).toBe(510_000_000n);
  });
});

describe('a window that saturates loses the cache hits that full keeps', () => {
  // Reads at 0.1× input, as on newer OpenAI models; 200-token system prompt.
  const file = priceFile({
    'cached-tenth': { litellm_provider: 'openai', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000001 },
  });
  const conv = growing('saturate', 10, { system: 200 });
  const on = study([conv], ['full', 'window-turns:turns=2'], { model: 'cached-tenth', prices: file });
  const off = study([conv], ['full', 'window-turns:turns=2'], { model: 'cached-tenth', prices: file, promptCache: 'off' });
  const cached = (policy: string) => on.turns.filter((t) => t.policy === policy).map((t) => t.cachedTokens);

  it('full reuses the previous prompt every turn; the window only until it starts sliding', () => {
    // full: P(n) = 200 + 500(n−1): 700 (<1024), 1200→1152, 1700→1664, 2200→2176, 2700→2688,
    //       3200→3200, 3700→3584, 4200→4096, 4700→4608.
    expect(cached('full')).toEqual([0, 0, 1152, 1664, 2176, 2688, 3200, 3584, 4096, 4608]);
    // window-turns:turns=2: turn 3 still extends turn 2's prompt (P = 1200 → 1152); from turn 4
    // the oldest exchange is dropped, so only the 200-token system prompt is shared (< 1024).
    expect(cached('window-turns:turns=2')).toEqual([0, 0, 1152, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('caching flips which policy is cheaper', () => {
    // Off: full sends 200×10 + 27,500 = 29,500 tokens → $0.0295; the window sends
    //   700 + 1200 + 1700 + 7 × 1600 = 14,800 → $0.0148.
    expect(off.summary.map((s) => usd(s.totalCost, 7))).toEqual(['0.0295000', '0.0148000']);
    // On: full = (29,500 − 23,168) × 1e-6 + 23,168 × 1e-7 = $0.006332 + $0.0023168 = $0.0086488;
    //   window = (14,800 − 1,152) × 1e-6 + 1,152 × 1e-7 = $0.013648 + $0.0001152 = $0.0137632.
    expect(on.summary.map((s) => usd(s.totalCost, 7))).toEqual(['0.0086488', '0.0137632']);
  });
});
