import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { replayContext, runStudy } from '../src/engine/run.js';
import { contractVariants } from '../src/policies/contract/checker.js';
import { definePolicy } from '../src/policies/define.js';
import { CHAT_POLICIES, POLICIES, REGISTRY } from '../src/policies/index.js';
import { param } from '../src/policies/param.js';
import { resolveSpec, type PolicyVariant } from '../src/policies/spec.js';
import { lookup } from '../src/pricing/prices.js';
import type { Policy } from '../src/policies/types.js';
import { defaultPolicies, policyFromString } from '../src/study/study.js';
import { shipped, variant } from './_policies.js';

describe('policy registry', () => {
  it('holds each policy once, by its id, in report order; the default study runs them all with their defaults', () => {
    expect([...REGISTRY.keys()]).toEqual(POLICIES.map((p) => p.id));
    expect(new Set(POLICIES.map((p) => p.id)).size).toBe(POLICIES.length);
    expect(defaultPolicies().map((v) => v.name)).toEqual(CHAT_POLICIES.map((p) => p.id));
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

  it('reads command-line text and study values to the same parameters, and names a sweep’s variants', () => {
    const names = (r: PolicyVariant[] | string) => (typeof r === 'string' ? r : r.map((v) => v.name));
    expect(names(policyFromString('window-tokens:budget=500|1000'))).toEqual(['window-tokens:budget=500', 'window-tokens:budget=1000']);
    expect(names(resolveSpec(REGISTRY, 'window-tokens', [['budget', [500, 1000]]]))).toEqual(['window-tokens:budget=500', 'window-tokens:budget=1000']);
    expect((resolveSpec(REGISTRY, 'window-turns', [['naive', true], ['turns', 3]]) as PolicyVariant[])[0]!.params).toEqual(variant('window-turns:naive=true,turns=3').params);
    expect(variant('retrieval:maxAge=90').params.maxAge).toBe('90');
    expect((resolveSpec(REGISTRY, 'retrieval', [['maxAge', 90]]) as PolicyVariant[])[0]!.params.maxAge).toBe('90');
  });

  it('rejects bad values with a message naming the policy, parameter and value', () => {
    expect(policyFromString('window-turns:turns=-1')).toBe('policy window-turns: parameter turns: expected a number ≥ 0, got "-1"');
    expect(policyFromString('window-turns:foo=1')).toBe('policy window-turns: unknown parameter "foo" (expected one of turns, naive, sessionCap, forget, moderation)');
    expect(policyFromString('window-turns:turns=2.5')).toBe('policy window-turns: parameter turns: expected a whole number, got "2.5"');
    expect(policyFromString('window-turns:naive=yes')).toBe('policy window-turns: parameter naive: expected true or false, got "yes"');
    expect(policyFromString('full:forget=all')).toBe('policy full: parameter forget: expected one of cascade|naive, got "all"');
    expect(resolveSpec(REGISTRY, 'full', [['forget', 3]])).toBe('policy full: parameter forget: expected a string, got 3');
    expect(resolveSpec(REGISTRY, 'facts', [['extractModel', '']])).toBe('policy facts: parameter extractModel: expected a string, got ""');
    // A string is part of the policy's name in every table, chart and log: no control or invisible format characters.
    expect(resolveSpec(REGISTRY, 'facts', [['extractModel', 'gpt\x1b[2J']])).toBe('policy facts: parameter extractModel: expected a string without control or invisible format characters, got "gpt\\u001b[2J"');
    expect(resolveSpec(REGISTRY, 'facts', [['extractModel', 'gpt\n::error::x']])).toBe('policy facts: parameter extractModel: expected a string without control or invisible format characters, got "gpt\\n::error::x"');
    expect(resolveSpec(REGISTRY, 'facts', [['extractModel', 'gpt\u202e']])).toBe('policy facts: parameter extractModel: expected a string without control or invisible format characters, got "gpt\u202e"'); // escaped when printed, as every error is
    expect(resolveSpec(REGISTRY, 'retrieval', [['minScore', 'x']])).toBe('policy retrieval: parameter minScore: expected a number, got "x"');
    expect(resolveSpec(REGISTRY, 'window', [['budget', []]])).toBe('policy window: parameter budget: empty list');
    expect(policyFromString('nope')).toBe(`unknown policy "nope" (expected one of ${[...REGISTRY.keys()].join(', ')})`);
    expect(resolveSpec(REGISTRY, 'summary', [['keep', '2']])).toBe('policy summary: parameter keep: expected a number from 0 to 1, got "2"');
    expect(resolveSpec(REGISTRY, 'retrieval', [['maxAge', 'soon']])).toBe('policy retrieval: parameter maxAge: expected a duration such as 30s, 5m, 24h, got "soon"');
    expect(resolveSpec(REGISTRY, 'facts', [['recal', 1]])).toMatch(/^policy facts: unknown parameter "recal"/);
  });
});

describe('a policy whose parameters are a table of the first documented shape', () => {
  const tabled: Policy = {
    id: 'tabled',
    describe: 'the window-turns parameters, as a table',
    params: { turns: { default: 10, kind: 'int', min: 0 }, naive: { default: false, kind: 'boolean' }, maxAge: { default: undefined, kind: 'duration' }, mode: { default: 'a', kind: 'string', oneOf: ['a', 'b'] } },
    start: (c, params, deps) => REGISTRY.get('full')!.start(c, params, deps),
  };
  const registry = new Map([['tabled', tabled]]);

  it('is read as the same parameters would be if declared with the builders, with the same messages', () => {
    expect(resolveSpec(registry, 'tabled', [['turns', '-1']])).toBe('policy tabled: parameter turns: expected a number ≥ 0, got "-1"');
    expect(resolveSpec(registry, 'tabled', [['foo', 1]])).toBe('policy tabled: unknown parameter "foo" (expected one of turns, naive, maxAge, mode, sessionCap, forget, moderation)');
    expect(resolveSpec(registry, 'tabled', [['mode', 'c']])).toBe('policy tabled: parameter mode: expected one of a|b, got "c"');
    expect(resolveSpec(registry, 'tabled', [['maxAge', 'soon']])).toBe('policy tabled: parameter maxAge: expected a duration such as 30s, 5m, 24h, got "soon"');
    const variants = resolveSpec(registry, 'tabled', [['turns', ['2', 3]], ['naive', 'true']]) as PolicyVariant[];
    expect(variants.map((v) => v.name)).toEqual(['tabled:turns=2,naive=true', 'tabled:turns=3,naive=true']);
    expect(variants[0]!.params).toEqual({ turns: 2, naive: true, maxAge: undefined, mode: 'a', sessionCap: undefined, forget: 'cascade', moderation: 'none' });
  });
});

describe('a rule between a policy’s parameters (a check on its parameter object)', () => {
  const edges = definePolicy({
    id: 'edges',
    describe: 'the first `head` and the last `tail` exchanges',
    params: z
      .object({ head: param.int({ default: 1, min: 0, describe: 'first exchanges' }), tail: param.int({ default: 2, min: 0, describe: 'last exchanges' }) })
      .refine((p) => p.head <= p.tail, { error: 'head must not exceed tail' }),
    start: (c, params, deps) => REGISTRY.get('full')!.start(c, params, deps),
  });
  const registry = new Map<string, Policy>([['edges', edges]]);

  it('is checked for each variant, defaults included: one that breaks it is refused by its name, with the rule’s message', () => {
    expect(resolveSpec(registry, 'edges', [['head', 3]])).toBe('policy edges:head=3: head must not exceed tail');
    expect(resolveSpec(registry, 'edges', [['head', [1, 2, 3]], ['tail', 2]])).toBe('policy edges:head=3,tail=2: head must not exceed tail');
    expect((resolveSpec(registry, 'edges', [['head', [1, 2]]]) as PolicyVariant[]).map((v) => v.name)).toEqual(['edges:head=1', 'edges:head=2']);
    // A bad value is still that parameter's error, before any rule.
    expect(resolveSpec(registry, 'edges', [['head', -1]])).toBe('policy edges: parameter head: expected a number ≥ 0, got -1');
  });

  it('leaves out of the contract’s parameter sets a scaled one that breaks it', () => {
    const strict = definePolicy({ ...edges, params: z.object({ head: param.int({ default: 3, min: 0, describe: 'first' }), tail: param.int({ default: 4, min: 0, describe: 'last' }) }).refine((p) => p.head < p.tail) });
    // A quarter of 3 and 4 is 1 and 1: refused; a tenth (0 and 0) too.
    expect(contractVariants(strict)).toEqual([{}]);
    expect(contractVariants(edges)).toEqual([{}, { head: 0, tail: 1 }, { head: 0, tail: 1, moderation: 'drop' }, { head: 0, tail: 0, sessionCap: 3 }, { head: 0, tail: 0, sessionCap: 3, forget: 'naive' }]);
  });
});

describe('the default policies on the shipped voice-assistant scenario', () => {
  const results = runStudy({ conversations: [shipped('voice-assistant-tasks.yaml')], policies: defaultPolicies(), seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto' });
  const row = (policy: string) => results.summary.find((s) => s.policy === policy)!;

  it('windows lose the early task id that summary-buffer, retrieval, facts and priority keep', () => {
    expect(row('window-turns').firstLostTurn).toBe(13);
    expect(row('window').firstLostTurn).toBe(13);
    for (const p of ['full', 'summary-buffer', 'priority', 'retrieval', 'facts']) expect(row(p).retention).toBe(1);
    // Where each policy found it at turn 13.
    const SOURCES = [
      ['full', 'window'],
      ['window-turns', 'none'],
      ['window-tokens', 'window'],
      ['window', 'none'],
      ['summary', 'window'],
      ['summary-buffer', 'summary'],
      ['priority', 'window'],
      ['retrieval', 'retrieved'],
      ['facts', 'facts'],
    ];
    const named = new Set(SOURCES.map(([p]) => p));
    expect(results.probes.filter((p) => p.turn === 13 && named.has(p.policy)).map((p) => [p.policy, p.source])).toEqual(SOURCES);
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
    const r = runStudy({ conversations: [shipped('voice-assistant-tasks.yaml')], policies: [variant('summary-buffer:summaryModel=gpt-4o')], seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto' });
    const folds = r.turns.filter((t) => t.auxInputTokens > 0);
    expect(folds.map((t) => t.turn)).toEqual([9, 13]);
    for (const t of folds) expect(t.costUpkeep).toBe(BigInt(t.auxInputTokens) * big.input + BigInt(t.auxOutputTokens) * big.output);
  });
});
