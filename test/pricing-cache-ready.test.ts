/**
 * Cache readiness: DeepSeek's disk cache makes what a call wrote readable
 * only a while after it was written (cache-rules.ts: 1 s); a call the
 * transcript records as sent sooner (a round's `gap:`) reads an older,
 * shorter prefix. Timed on the cache's clock: each call's latency (here set
 * by the study's `latency:`) and the recorded gaps.
 */
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { cacheRuleFor, DEEPSEEK_READY_SECONDS } from '../src/pricing/cache-rules.js';
import type { Conversation } from '../src/types.js';
import { scenario, variant } from './_policies.js';
import { priceFile } from './_pricing.js';

const prices = priceFile({
  'deepseek-test': { litellm_provider: 'deepseek', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000001 },
  'openai-test': { litellm_provider: 'openai', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000001 },
});

/** An agent's turn of four rounds (chars4: the system prompt 400 tokens unless given, results 200), each round's call sent `gaps[k]` after the previous reply (none: not recorded). */
function agent(gaps: (string | undefined)[], system = 400): Conversation {
  const rounds = gaps.map((gap, k) => ({
    assistant: `Step ${k + 1}: ${'look '.repeat(40)}`,
    calls: [{ call: 'bash', args: { command: `ls ${k}` }, result: `${'file '.repeat(160)}${k}` }],
    ...(gap !== undefined && { gap }),
  }));
  return scenario(JSON.stringify({ id: 'agent', system: 'S'.repeat(system * 4), turns: [{ user: 'Fix the bug.', tools: rounds, assistant: 'Done.' }] }));
}

/** Each call of `full`: its prompt tokens, output tokens and cached tokens, every call taking `latency` seconds. */
function calls(c: Conversation, model: string, latency: number): { prompt: number; output: number; cached: number }[] {
  const ctx = replayContext({ seed: 42, model, tokenizer: 'chars4', prices, latency: { default: { ttftMs: latency * 1000, prefillTps: 1e12, decodeTps: 1e12 } } });
  const out: { prompt: number; output: number; cached: number }[] = [];
  replay(c, variant('full'), ctx, (_, call, cost) => out.push({ prompt: call.promptTokens, output: cost.outputTokens, cached: cost.cachedTokens }));
  return out;
}

const units = (n: number) => (n < 64 ? 0 : Math.floor(n / 64) * 64);

describe('cache readiness', () => {
  it('DeepSeek’s rule makes what a call wrote readable 1 s later; OpenAI’s and Anthropic’s at once', () => {
    expect(DEEPSEEK_READY_SECONDS).toBe(1);
    expect(cacheRuleFor('deepseek-chat', 'deepseek', true, false)).toEqual({ kind: 'automatic', minTokens: 64, step: 64, output: true, ready: 1 });
    expect(cacheRuleFor('gpt-4o', 'openai', true, false)).toEqual({ kind: 'automatic', minTokens: 1024, step: 128 });
    expect(cacheRuleFor('claude-sonnet-4-5', 'anthropic', true, true)).toEqual({ kind: 'explicit', minTokens: 1024 });
  });

  it('calls sent 2 s after the reply, or with no gap recorded, read the previous prompt and its output', () => {
    const slow = calls(agent([undefined, '2s', '2s', '2s']), 'deepseek-test', 0.1);
    const untimed = calls(agent([undefined, undefined, undefined, undefined]), 'deepseek-test', 0.1);
    expect(slow).toEqual(untimed);
    for (let k = 1; k < slow.length; k++) expect(slow[k]!.cached, `call ${k + 1}`).toBe(units(slow[k - 1]!.prompt + slow[k - 1]!.output));
  });

  it('a call sent 0.5 s after a reply that took 0.1 s reads nothing of it: the call before’s prompt and output, readable by then', () => {
    const fast = calls(agent([undefined, '0.5s', '0.5s', '0.5s']), 'deepseek-test', 0.1);
    // Clock: call 1 sent at 0, ends 0.1; call 2 sent 0.6 (call 1's units readable from 1.0 and 1.1: none); call 3 sent 1.2, call 4 1.8, call 5 2.4.
    expect(fast[1]!.cached).toBe(0);
    expect(fast[2]!.cached).toBe(units(fast[0]!.prompt + fast[0]!.output));
    expect(fast[3]!.cached).toBe(units(fast[1]!.prompt + fast[1]!.output));
    // The turn's reply (no gap recorded) comes late enough.
    expect(fast[4]!.cached).toBe(units(fast[3]!.prompt + fast[3]!.output));
  });

  it('after a reply that took 0.6 s, a call sent 0.5 s later reads that call’s prompt, not yet its output', () => {
    const c = calls(agent([undefined, '0.5s', '0.5s', '0.5s']), 'deepseek-test', 0.6);
    for (let k = 1; k < 4; k++) expect(c[k]!.cached, `call ${k + 1}`).toBe(units(c[k - 1]!.prompt));
    expect(c[1]!.cached).toBeLessThan(units(c[0]!.prompt + c[0]!.output));
  });

  it('OpenAI’s cache is read at once, whatever the gap', () => {
    const fast = calls(agent([undefined, '0.1s', '0.1s', '0.1s'], 1500), 'openai-test', 0.1);
    expect(fast).toEqual(calls(agent([undefined, undefined, undefined, undefined], 1500), 'openai-test', 0.1));
    expect(fast.filter((k) => k.cached > 0).length).toBeGreaterThan(1);
  });
});
