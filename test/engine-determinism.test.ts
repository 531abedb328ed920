import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { runStudy } from '../src/engine/run.js';
import { allPolicies } from '../src/scenario/study.js';
import { conversation } from './_conv.js';
import { capture } from './_io.js';

const FILES = ['turns.csv', 'probes.csv', 'summary.csv', 'policies.csv'];

async function runTo(dir: string, extra: string[] = []): Promise<Map<string, Buffer>> {
  const io = capture();
  expect(await runMain(['run', '--out', dir, '--quiet', ...extra], io)).toBe(0);
  return new Map(FILES.map((f) => [f, readFileSync(join(dir, f))]));
}

describe('determinism', () => {
  it('two runs of the default study write byte-identical files', async () => {
    const a = await runTo(mkdtempSync(join(tmpdir(), 'ctxsim-a-')));
    const b = await runTo(mkdtempSync(join(tmpdir(), 'ctxsim-b-')));
    for (const f of FILES) expect(b.get(f)!.equals(a.get(f)!), f).toBe(true);
    expect(a.get('turns.csv')!.toString().split('\n')[0]).toBe(
      'scenario,policy,turn,context_messages,input_tokens,cached_tokens,output_tokens,aux_input_tokens,aux_output_tokens,embed_tokens,cost_usd,cumulative_cost_usd,latency_ms,overflow,probes,retained,over_budget,estimated_tokens',
    );
  });
});

describe('count once', () => {
  it('a 200-turn conversation under every policy tokenizes each distinct text once', () => {
    const turns = Array.from({ length: 200 }, (_, i) => ({
      user: `Question number ${i}: how do I configure option ${i * 7}?`,
      assistant: `Answer ${i}: set option ${i * 7} to ${i % 13} and restart the service.`,
      ...(i % 20 === 5 && { tools: [{ call: 'lookup', args: { n: i }, result: { ok: i } }] }),
    }));
    const conv = conversation({ id: 'long', system: 'You are a support bot.', turns });
    const r = runStudy({ conversations: [conv], policies: allPolicies(), seed: 1, model: 'gpt-4o-mini', tokenizer: 'o200k_base' });
    expect(r.turns).toHaveLength(200 * allPolicies().length);
    // Distinct texts: 200 user + 200 assistant + 10 tool-call texts + 10 results + system
    // + the 4 role names (system, user, assistant, tool).
    const distinct = 200 + 200 + 10 + 10 + 1 + 4;
    expect(r.tokenizerCalls).toBe(distinct);
  });
});
