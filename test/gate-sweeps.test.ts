import { describe, expect, it } from 'vitest';
import { markPareto } from '../src/engine/summary.js';
import { studyDifferences } from '../src/gate/compare.js';
import {writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStudy, policyFromString } from '../src/study/study.js';
import { tempDir } from './_tmp.js';

const names = (spec: string) => {
  const r = policyFromString(spec);
  if (typeof r === 'string') throw new Error(r);
  return r.map((v) => v.name);
};

describe('sweeps', () => {
  it('a list expands into one variant per value, named canonically', () => {
    expect(names('window-tokens:budget=500|1000|2000')).toEqual([
      'window-tokens:budget=500',
      'window-tokens:budget=1000',
      'window-tokens:budget=2000',
    ]);
  });

  it('several lists expand into every combination, in the order given', () => {
    expect(names('window:turns=2|4,budget=100|200')).toEqual([
      'window:turns=2,budget=100',
      'window:turns=2,budget=200',
      'window:turns=4,budget=100',
      'window:turns=4,budget=200',
    ]);
  });

  it('a list in a study file sweeps too', async () => {
    const f = join(tempDir('ctxsim-sweep-'), 'study.yaml');
    writeFileSync(f, 'policies:\n  - full\n  - window-tokens: {budget: [500, 1000]}\n  - window: {turns: [2, 4], budget: 300}\n');
    expect((await loadStudy(f)).policies.map((p) => p.name)).toEqual([
      'full',
      'window-tokens:budget=500',
      'window-tokens:budget=1000',
      'window:turns=2,budget=300',
      'window:turns=4,budget=300',
    ]);
  });

  it('defaults fill parameters that were not given; names show only what was given', () => {
    const r = policyFromString('window:turns=3');
    if (typeof r === 'string') throw new Error(r);
    expect(r[0]!.params).toEqual({ turns: 3, budget: 2000, sessionCap: undefined, forget: 'cascade', moderation: 'none' });
    expect(r[0]!.name).toBe('window:turns=3');
  });
});

describe('Pareto frontier', () => {
  it('marks the rows no other row beats on both cost and retention', () => {
    const rows = [
      { name: 'a', totalCost: 100n, retention: 0.5 }, // beaten by b (cheaper, retains more)
      { name: 'b', totalCost: 90n, retention: 0.6 },
      { name: 'c', totalCost: 200n, retention: 1 },
      { name: 'd', totalCost: 50n, retention: 0.2 },
      { name: 'e', totalCost: 200n, retention: 0.9 }, // beaten by c (same cost, more retention)
      { name: 'f', totalCost: 90n, retention: 0.6 }, // tie with b: neither beats the other
      { name: 'g', totalCost: 10n, retention: null }, // no probes: counts as 0 retention, cheapest
    ];
    expect(markPareto(rows).filter((r) => r.pareto).map((r) => r.name)).toEqual(['b', 'c', 'd', 'f', 'g']);
  });
});

describe('study differences', () => {
  it('name every setting that changed, the provider rule set included', () => {
    const a = { model: 'gpt-4o-mini', tokenizer: 'o200k_base', prices: 'builtin 2026-03-11', cache: 'auto ttl=300s', rules: 'openai', seed: 42, policies: ['full'], scenarios: { a: '1', b: '2' } };
    const b = { ...a, model: 'claude-haiku-4-5', rules: 'anthropic', policies: ['full', 'facts'], scenarios: { a: '1', b: '3', c: '4' } };
    expect(studyDifferences(a, b)).toEqual([
      'model: gpt-4o-mini → claude-haiku-4-5',
      'rules: openai → anthropic',
      'policies added: facts',
      'scenario changed: b',
      'scenario added: c',
    ]);
  });
});
