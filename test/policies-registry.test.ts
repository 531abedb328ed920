import { describe, expect, it } from 'vitest';
import { replayContext, runStudy } from '../src/engine/run.js';
import { POLICIES, REGISTRY } from '../src/policies/index.js';
import { resolveSpec, type PolicyVariant } from '../src/policies/spec.js';
import { lookup } from '../src/pricing/prices.js';
import { allPolicies } from '../src/study/study.js';
import { shipped, variant } from './_policies.js';

const ORDER = ['full', 'window-turns', 'window-tokens', 'window', 'summary', 'summary-buffer', 'priority', 'retrieval', 'facts'];

describe('policy registry', () => {
  it('lists the nine policies in report order, and the default study runs them all', () => {
    expect(POLICIES.map((p) => p.id)).toEqual(ORDER);
    expect(allPolicies().map((v) => v.name)).toEqual(ORDER);
  });

  it('resolves the new parameters with their defaults and names variants by what was given', () => {
    const [v] = resolveSpec(REGISTRY, 'summary-buffer', [['keepRecent', 2]]) as PolicyVariant[];
    expect(v!.name).toBe('summary-buffer:keepRecent=2');
    expect(v!.params).toEqual({ budget: 2000, keepRecent: 2, batch: undefined, summaryModel: undefined, summaryTokens: 200, keep: 1, sessionCap: undefined, forget: 'cascade', moderation: 'none' });
    expect(variant('retrieval').params).toMatchObject({ topK: 5, recent: 3, minScore: 0.2, fallbackRecent: 10, maxItems: 10000, embedModel: 'text-embedding-3-small' });
    expect(variant('facts').params).toMatchObject({ recent: 4, recall: 1 });
    expect(variant('priority').params).toMatchObject({ budget: 2000, keepRecent: 2 });
    expect(variant('summary').params).toMatchObject({ threshold: 3000, summaryTokens: 200, keep: 1 });
  });

  it('rejects bad values with a message naming the policy, parameter and value', () => {
    expect(resolveSpec(REGISTRY, 'summary', [['keep', '2']])).toBe('policy summary: parameter keep: expected a number from 0 to 1, got "2"');
    expect(resolveSpec(REGISTRY, 'retrieval', [['maxAge', 'soon']])).toBe('policy retrieval: parameter maxAge: expected a duration such as 30s, 5m, 24h, got "soon"');
    expect(resolveSpec(REGISTRY, 'facts', [['recal', 1]])).toMatch(/^policy facts: unknown parameter "recal"/);
  });
});

describe('the default policies on the shipped voice-assistant scenario', () => {
  const results = runStudy({ conversations: [shipped('voice-assistant-tasks.yaml')], policies: allPolicies(), seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' });
  const row = (policy: string) => results.summary.find((s) => s.policy === policy)!;

  it('windows lose the early task id that summary-buffer, retrieval, facts and priority keep', () => {
    expect(row('window-turns').firstLostTurn).toBe(13);
    expect(row('window').firstLostTurn).toBe(13);
    for (const p of ['full', 'summary-buffer', 'priority', 'retrieval', 'facts']) expect(row(p).retention).toBe(1);
    const sources = results.probes.filter((p) => p.turn === 13).map((p) => [p.policy, p.source]);
    expect(sources).toEqual([
      ['full', 'window'],
      ['window-turns', 'none'],
      ['window-tokens', 'window'],
      ['window', 'none'],
      ['summary', 'window'],
      ['summary-buffer', 'summary'],
      ['priority', 'window'],
      ['retrieval', 'retrieved'],
      ['facts', 'facts'],
    ]);
  });

  it('prices upkeep on its own model and reports it per turn', () => {
    const prices = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' }).prices;
    const mini = lookup(prices, 'gpt-4o-mini');
    const embed = lookup(prices, 'text-embedding-3-small');
    for (const t of results.turns) {
      expect(t.costUpkeep).toBe(BigInt(t.auxInputTokens) * mini.input + BigInt(t.auxOutputTokens) * mini.output + BigInt(t.embedTokens) * embed.input);
    }
    const upkeep = (policy: string) => results.turns.filter((t) => t.policy === policy);
    expect(upkeep('facts').every((t) => t.auxInputTokens > 0 && t.auxOutputTokens > 0)).toBe(true);
    expect(upkeep('retrieval').every((t) => t.embedTokens > 0 && t.auxInputTokens === 0)).toBe(true);
    // summary-buffer (keepRecent 4, batch 4) folds at turns 9 and 13 only.
    expect(upkeep('summary-buffer').filter((t) => t.auxInputTokens > 0).map((t) => t.turn)).toEqual([9, 13]);
    for (const p of ['full', 'window-turns', 'window-tokens', 'window', 'summary', 'priority']) expect(row(p).auxTokens).toBe(0);
  });

  it('prices the summarizer on summaryModel when one is given', () => {
    const big = lookup(replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' }).prices, 'gpt-4o');
    const r = runStudy({ conversations: [shipped('voice-assistant-tasks.yaml')], policies: [variant('summary-buffer:summaryModel=gpt-4o')], seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' });
    const folds = r.turns.filter((t) => t.auxInputTokens > 0);
    expect(folds.map((t) => t.turn)).toEqual([9, 13]);
    for (const t of folds) expect(t.costUpkeep).toBe(BigInt(t.auxInputTokens) * big.input + BigInt(t.auxOutputTokens) * big.output);
  });
});
