import {readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { replay } from '../src/engine/replay.js';
import { replayContext, replayContexts, replayScenario, runStudy, type UnitContext } from '../src/engine/run.js';
import { runSpecOf } from '../src/engine/spec.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { textCounter } from '../src/tokens/encoding.js';
import { defaultPolicies } from '../src/study/study.js';
import { conversation } from './_policies.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

const FILES = ['turns.csv', 'probes.csv', 'summary.csv', 'policies.csv'];

async function runTo(dir: string, extra: string[] = []): Promise<Map<string, Buffer>> {
  const io = capture();
  expect(await runMain(['run', '--out', dir, '--quiet', ...extra], io)).toBe(0);
  return new Map(FILES.map((f) => [f, readFileSync(join(dir, f))]));
}

describe('determinism', () => {
  it('two runs of the default study write byte-identical files', async () => {
    const a = await runTo(tempDir('ctxsim-a-'));
    const b = await runTo(tempDir('ctxsim-b-'));
    for (const f of FILES) expect(b.get(f)!.equals(a.get(f)!), f).toBe(true);
    expect(a.get('turns.csv')!.toString().split('\n')[0]).toMatch(
      /^scenario,policy,turn,context_messages,input_tokens,cached_tokens,output_tokens,aux_input_tokens,aux_output_tokens,embed_tokens,cost_usd,cumulative_cost_usd,latency_ms,overflow,probes,retained,/,
    );
  });
});

describe('count once', () => {
  const turns = Array.from({ length: 200 }, (_, i) => ({
    user: `Question number ${i}: how do I configure option ${i * 7}?`,
    assistant: `Answer ${i}: set option ${i * 7} to ${i % 13} and restart the service.`,
    ...(i % 20 === 5 && { tools: [{ call: 'lookup', args: { n: i }, result: { ok: i } }] }),
  }));
  const conv = conversation({ id: 'long', system: 'You are a support bot.', turns });

  it('a 200-turn conversation under the window policies tokenizes each distinct message once', () => {
    const windows = defaultPolicies().filter((p) => ['full', 'window-turns', 'window-tokens', 'window'].includes(p.policy.id));
    const r = runStudy({ conversations: [conv], policies: windows, seed: 1, models: ['gpt-4o-mini'], tokenizer: 'o200k_base' });
    expect(r.turns).toHaveLength(200 * 4);
    // Distinct texts: 200 user + 200 assistant + 10 tool-call texts + 10 results + system
    // + the 4 role names (system, user, assistant, tool).
    expect(r.tokenizerCalls).toBe(200 + 200 + 10 + 10 + 1 + 4);
  });

  it('under every policy, upkeep included, no text goes through the tokenizer twice', () => {
    const seen = new Map<string, number>();
    const raw = textCounter('o200k_base');
    const tokens = new TokenCounter('o200k_base', undefined, (t) => {
      seen.set(t, (seen.get(t) ?? 0) + 1);
      return raw(t);
    });
    const ctx = { ...replayContext({ seed: 1, model: 'gpt-4o-mini', tokenizer: 'o200k_base' }), tokens };
    for (const v of defaultPolicies()) replay(conv, v, ctx);
    expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
    expect(tokens.tokenizerCalls).toBe(seen.size);
    expect(seen.size).toBeGreaterThan(425); // the conversation's own texts, plus summaries, fact sheets, templates
  });

  it('a second scenario with the same texts (new message objects) tokenizes nothing: per-scenario tables are dropped, text counts are not', () => {
    const [ctx] = replayContexts(runSpecOf({ seed: 1, models: ['gpt-4o-mini'], tokenizer: 'o200k_base' })) as [UnitContext];
    const policies = defaultPolicies();
    const first = replayScenario(conv, 0, policies, [ctx]);
    const calls = ctx.tokens.tokenizerCalls;
    const again = conversation({ id: 'long-2', system: 'You are a support bot.', turns });
    const second = replayScenario(again, 1, policies, [ctx]);
    expect(ctx.tokens.tokenizerCalls).toBe(calls);
    // Same texts, same policies: the same tokens, turn for turn.
    expect(second.turns.map((t) => t.inputTokens)).toEqual(first.turns.map((t) => t.inputTokens));
  });
});
