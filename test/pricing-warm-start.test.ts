import { describe, expect, it } from 'vitest';
import { BreakpointCache, PrefixCache } from '../src/pricing/prompt-cache.js';
import { scenarioFromText } from '../src/scenario/load.js';
import type { Message } from '../src/types.js';
import { priceFile, study, text } from './_pricing.js';

/** Messages whose token count is their text's length over 4 (chars4, no overhead). */
const msg = (role: Message['role'], tokens: number, label: string = role): Message => ({ role, content: text(label, tokens) });
const size = (m: Message) => m.content.length / 4;

describe('a warm start: the first prompt already cached', () => {
  const system = msg('system', 2000);
  const user = msg('user', 500);
  const prompt = [system, user];

  it('an explicit cache: the first call reads the warm tokens and writes only the rest; cold, it writes it all', () => {
    // Tool definitions (head) of 1,000 tokens, then 2,000 of system prompt and 500 of user message: 3,500 to the breakpoint at the end.
    const warm = new BreakpointCache(1024, 300, 1000, 2600);
    expect(warm.call(prompt, [1, 2], 0, size)).toEqual({ read: 2600, written: 900 });
    expect(new BreakpointCache(1024, 300, 1000).call(prompt, [1, 2], 0, size)).toEqual({ read: 0, written: 3500 });
    // Never more than the prompt up to its last breakpoint.
    expect(new BreakpointCache(1024, 300, 1000, 9999).call(prompt, [1, 2], 0, size)).toEqual({ read: 3500, written: 0 });
  });

  it('the warm entry is a prefix of the messages it reaches into: a later prompt that changes one of them does not read it', () => {
    // 2,600 warm tokens reach into the system prompt (head 1,000 + 2,000): a prompt with another system prompt misses it.
    const cache = new BreakpointCache(1024, 300, 1000, 2600);
    expect(cache.call(prompt, [1], 0, size)).toEqual({ read: 2600, written: 400 });
    expect(cache.call([msg('system', 2000, 'other'), user], [1], 10, size)).toEqual({ read: 0, written: 3000 });
    // Within the head (tool definitions), it holds for any messages, as long as it lives.
    const inHead = new BreakpointCache(1024, 300, 3000, 2048);
    expect(inHead.call(prompt, [2], 0, size)).toEqual({ read: 2048, written: 3452 });
    expect(inHead.call([msg('user', 100)], [1], 200, size)).toEqual({ read: 2048, written: 1052 });
  });

  it('after the first call, the entries the call wrote are read as before (the warm entry counts only where it is longer)', () => {
    const cache = new BreakpointCache(1024, 300, 1000, 2600);
    cache.call(prompt, [1, 2], 0, size);
    // The next prompt holds the whole first one: it reads what the first call wrote at its last breakpoint (3,500).
    expect(cache.call([...prompt, msg('assistant', 100), msg('user', 200, 'u2')], [1, 4], 10, size)).toEqual({ read: 3500, written: 300 });
  });

  it('an automatic cache: the first call reads the warm tokens, rounded as the rule caches, up to its whole prompt', () => {
    const rule = { minTokens: 1024, step: 128 };
    expect(new PrefixCache(rule, 300, 0, 0, 2100).call(prompt, 0, size)).toBe(2048);
    expect(new PrefixCache(rule, 300, 0, 0).call(prompt, 0, size)).toBe(0);
    expect(new PrefixCache(rule, 300, 0, 0, 9999).call(prompt, 0, size)).toBe(2432);
    // Under the minimum: nothing.
    expect(new PrefixCache(rule, 300, 0, 0, 1000).call(prompt, 0, size)).toBe(0);
    // The second call compares with the first, as before.
    const c = new PrefixCache(rule, 300, 0, 0, 2100);
    c.call(prompt, 0, size);
    expect(c.call([...prompt, msg('assistant', 100)], 10, size)).toBe(2432);
  });
});

describe('warm_start in a scenario, replayed warm or cold', () => {
  // $1/M input, Anthropic-style defaults: 5-minute writes 1.25×, reads 0.1×; chars4: system 1,100 tokens, user 100.
  const file = priceFile({ 'test-claude': { litellm_provider: 'anthropic', input_cost_per_token: 0.000001, output_cost_per_token: 0 } });
  const scenario = (head: string) => scenarioFromText('w.yaml', `id: w\nsystem: ${'S'.repeat(4400)}\n${head}turns:\n  - user: ${'a'.repeat(400)}\n    assistant: ok\n`);

  it('the first call reads what the transcript’s first call found cached, and pays to write only the rest; coldStart writes it all', () => {
    const warm = scenario('warm_start: {cached: 1100}\n');
    expect(warm.warmStart).toBe(1100);
    const r = study([warm], ['full'], { model: 'test-claude', prices: file });
    expect([r.turns[0]!.cachedTokens, r.turns[0]!.cacheWriteTokens]).toEqual([1100, 100]);
    // 1,100 reads at 0.1 × 1e6 pico + 100 writes at 1.25 × 1e6 pico.
    expect(r.turns[0]!.cost).toBe(1100n * 100_000n + 100n * 1_250_000n);
    const cold = study([warm], ['full'], { model: 'test-claude', prices: file, coldStart: true });
    expect([cold.turns[0]!.cachedTokens, cold.turns[0]!.cacheWriteTokens]).toEqual([0, 1200]);
    // A scenario without it replays as before: cold.
    const plain = study([scenario('')], ['full'], { model: 'test-claude', prices: file });
    expect(plain.turns).toEqual(cold.turns.map((t) => ({ ...t, scenario: 'w' })));
  });

  it('is refused unless a whole number of tokens', () => {
    expect(() => scenario('warm_start: {cached: 0}\n')).toThrow(/warm_start\.cached/);
    expect(() => scenario('warm_start: {tokens: 10}\n')).toThrow(/warm_start/);
  });
});
