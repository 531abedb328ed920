import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runStudy } from '../src/engine/run.js';
import { scenarioFromFile } from '../src/scenario/load.js';
import { policiesFromFlags } from '../src/study/study.js';
import { TokenCounter } from '../src/tokens/counter.js';

const conv = scenarioFromFile(fileURLToPath(new URL('fixtures/pricing/invoice-session.yaml', import.meta.url)));
const POLICIES = policiesFromFlags(['full', 'window-turns', 'window-turns:turns=4', 'window-tokens:budget=3000']);
const run = (cache: 'auto' | 'off', cacheBreakpoint?: 'turn') =>
  runStudy({ conversations: [conv], policies: POLICIES, seed: 42, models: ['claude-sonnet-4-5'], tokenizer: 'chars4', prices: 'builtin', promptCache: cache, ...(cacheBreakpoint && { cacheBreakpoint }) });

describe('why caching changes the answer (a long coding session on claude-sonnet-4-5)', () => {
  const on = run('auto');
  const off = run('off');
  const cost = (r: typeof on) => Object.fromEntries(r.policies.map((p) => [p.policy, p.totalCost]));

  it('full history is the dearest policy without caching and the cheapest with it', () => {
    const o = cost(off);
    const c = cost(on);
    for (const p of ['window-turns', 'window-turns:turns=4', 'window-tokens:budget=3000']) {
      expect(o.full!).toBeGreaterThan(o[p]!);
      expect(c.full!).toBeLessThan(c[p]!);
    }
  });

  it('with breakpoints per turn, a sliding window only ever reads the system prompt from the cache', () => {
    // window-turns puts the breakpoint after the system prompt; it is read on every call but the
    // first, except after the 20-minute pause before turn 20 (TTL 5 min), where it is written again.
    const system = new TokenCounter('chars4').message(conv.system[0]!);
    const rows = run('auto', 'turn').turns.filter((t) => t.policy === 'window-turns');
    const calls = (i: number) => 1 + (conv.turns[i]!.tools.length ? 1 : 0);
    expect(rows.map((t) => t.cachedTokens)).toEqual(rows.map((_, i) => (i === 0 || i === 19 ? 0 : calls(i) * system)));
    expect(rows.map((t) => t.cacheWriteTokens)).toEqual(rows.map((_, i) => (i === 0 || i === 19 ? system : 0)));
  });
});
