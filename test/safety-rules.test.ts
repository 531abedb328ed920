import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError } from '../src/errors.js';
import { replayContext, runStudy } from '../src/engine/run.js';
import { policyViolations } from '../src/message-rules/blame.js';
import { checkPrompt, ruleSetFor, RULE_SETS, type Rule, type RuleSet } from '../src/message-rules/provider.js';
import { loadStudy, policiesFromFlags } from '../src/study/study.js';
import type { Message } from '../src/types.js';
import { conversation, shipped } from './_policies.js';

const sys: Message = { role: 'system', content: 'Be brief.' };
const memo: Message = { role: 'system', content: 'Known facts: name: Bo', origin: 'facts' };
const u = (content: string, turn?: number): Message => ({ role: 'user', content, ...(turn !== undefined && { turn }) });
const a = (content: string, turn?: number): Message => ({ role: 'assistant', content, ...(turn !== undefined && { turn }) });
const call: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'create_task', arguments: '{"title":"milk"}' }] };
const result: Message = { role: 'tool', content: '{"task_id":"T-1"}', toolCallId: 'c1' };

describe('each provider rule: triggered by a hand-made prompt, not by a valid one', () => {
  const valid = [sys, memo, u('add milk'), call, result, a('Added.'), u('thanks')];
  // rule → a prompt that breaks it, and the rule sets that reject it.
  const CASES: [Rule, Message[], RuleSet[]][] = [
    ['orphan-tool-result', [sys, u('hi'), result, a('Added.')], ['openai', 'anthropic', 'gemini']],
    ['unanswered-tool-call', [sys, u('add milk'), call, a('Added.')], ['openai', 'anthropic', 'gemini']],
    ['first-not-user', [sys, a('Hello!'), u('hi')], ['anthropic', 'gemini']],
    ['same-role-twice', [sys, u('one'), u('two')], ['anthropic', 'gemini']],
    ['system-not-first', [sys, u('hi'), memo, a('hello')], ['anthropic', 'gemini']],
    ['empty-message', [sys, u('hi'), a(' ')], ['openai', 'anthropic', 'gemini']],
    ['invalid-name', [sys, { ...u('hi'), name: 'José María' }, a('hello')], ['openai']],
  ];

  it.each(RULE_SETS)('the valid prompt breaks no %s rule', (set) => {
    expect(checkPrompt(valid, set)).toEqual([]);
  });

  for (const [rule, prompt, sets] of CASES) {
    it(rule, () => {
      for (const set of RULE_SETS) {
        const found = checkPrompt(prompt, set).filter((v) => v.rule === rule);
        expect(found.length > 0, `${rule} under ${set}`).toBe(sets.includes(set));
      }
    });
  }
});

describe('a violation the scenario writes in is not the policy’s', () => {
  const c = conversation({
    id: 'no-reply',
    turns: [{ user: 'first question' }, { user: 'second question', assistant: 'answer' }, { user: 'third' }],
  });
  const [t1, t2, t3] = c.turns;

  it('two user turns in a row because turn 1 has no reply: reported by checkPrompt, not counted against the policy', () => {
    const prompt = [sys, t1!.user, t2!.user];
    expect(checkPrompt(prompt, 'gemini').map((v) => v.rule)).toEqual(['same-role-twice']);
    expect(policyViolations(prompt, 'gemini', c)).toEqual([]);
  });

  it('two user turns the policy put together (turn 2’s reply left out) are counted', () => {
    // u2 and u3 were not neighbours in the scenario: turn 2 has a reply.
    const prompt = [sys, t2!.user, t3!.user];
    expect(policyViolations(prompt, 'gemini', c).map((v) => v.rule)).toEqual(['same-role-twice']);
  });

  it('a name the scenario wrote is data (it is checked where the data comes in); a name on a message the policy made is not', () => {
    const named = conversation({ id: 'named', turns: [{ user: 'Hola.', names: { user: 'José María' }, assistant: 'Hello!' }] });
    const user = named.turns[0]!.user;
    expect(checkPrompt([sys, user], 'openai').map((v) => v.rule)).toEqual(['invalid-name']);
    expect(policyViolations([sys, user], 'openai', named)).toEqual([]);
    const pinned = conversation({ id: 'pinned', system: [{ content: 'Be brief.', name: 'Support Bot' }], turns: [{ user: 'Hi.' }] });
    expect(policyViolations([...pinned.system, pinned.turns[0]!.user], 'openai', pinned)).toEqual([]);
    expect(policyViolations([sys, { role: 'system', content: 'Notes.', origin: 'summary', name: 'note taker' }, user], 'openai', named).map((v) => v.rule)).toEqual(['invalid-name']);
  });

  it('an empty message the scenario wrote is data; an empty one the policy made is not', () => {
    const blank = conversation({ id: 'blank', turns: [{ user: '', assistant: 'Hello?' }] });
    expect(policyViolations([sys, blank.turns[0]!.user], 'openai', blank)).toEqual([]);
    expect(policyViolations([sys, { role: 'system', content: '', origin: 'summary' }, u('hi', 1)], 'openai', blank).map((v) => v.rule)).toEqual(['empty-message']);
  });
});

describe('the naive window breaks tool pairs', () => {
  const voice = shipped('voice-assistant-tasks.yaml');
  const run = (spec: string) => runStudy({ conversations: [voice], policies: policiesFromFlags([spec]), seed: 42, models: ['gpt-4o-mini'], tokenizer: 'chars4' });

  it('window-turns:turns=2,naive=true orphans tool results on voice-assistant-tasks (hand-traced)', () => {
    // The last 4 messages start with the tool result of a 4-message tool turn whenever a 2-message turn follows it:
    // turn 5 sends [result 3, reply 3, u4, a4] (both of its calls), turn 7 [result 5, …], turn 11 [result 9, …].
    const r = run('window-turns:turns=2,naive=true');
    expect(r.violations.map((v) => `${v.turn}.${v.call} ${v.rule}: ${v.detail}`)).toEqual([
      '5.1 orphan-tool-result: tool result call_3_1 at 1 has no tool call before it',
      '5.2 orphan-tool-result: tool result call_3_1 at 1 has no tool call before it',
      '7.1 orphan-tool-result: tool result call_5_1 at 1 has no tool call before it',
      '11.1 orphan-tool-result: tool result call_9_1 at 1 has no tool call before it',
    ]);
    expect(r.turns.map((t) => t.violations)).toEqual([0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    expect(r.summary[0]!.violations).toBe(4);
  });

  it('at its default (turns=10) too, while the repaired window never does', () => {
    expect(run('window-turns:naive=true').violations.map((v) => `${v.turn} ${v.rule}`)).toEqual(['8 orphan-tool-result', '11 orphan-tool-result']);
    expect(run('window-turns').violations).toEqual([]);
    expect(run('window-turns:turns=2').violations).toEqual([]);
  });
});

describe('which rule set a run checks', () => {
  it('defaults from the chat model’s provider in the price table', () => {
    const rules = (model: string) => replayContext({ seed: 1, model, tokenizer: 'chars4' }).messageRules;
    expect(rules('gpt-4o-mini')).toBe('openai');
    expect(rules('claude-3-5-sonnet-20241022')).toBe('anthropic');
    expect(rules('anthropic.claude-3-5-sonnet-20240620-v1:0')).toBe('anthropic'); // bedrock
    expect(rules('meta.llama3-70b-instruct-v1:0')).toBe('anthropic'); // bedrock's Converse API shape
    expect(rules('vertex_ai/claude-3-5-sonnet')).toBe('anthropic');
    expect(rules('gemini/gemini-2.0-flash')).toBe('gemini');
    expect(rules('gemini-2.0-flash')).toBe('gemini'); // vertex_ai-language-models
    expect(rules('mistral/mistral-large-latest')).toBe('openai');
    expect(ruleSetFor('vertex_ai-language-models', 'text-bison')).toBe('openai');
  });

  describe('the study key `rules`', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxsim-rules-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('sets it, and a run uses it', async () => {
      const file = join(dir, 'study.yaml');
      writeFileSync(file, 'model: gpt-4o-mini\nrules: gemini\nscenarios: [x.yaml]\n');
      expect((await loadStudy(file)).messageRules).toBe('gemini');
      // gpt-4o-mini would default to openai, which accepts a first assistant turn; gemini does not.
      const c = conversation({ id: 'x', turns: [{ user: 'a', tools: [{ call: 'f', result: 'r' }], assistant: 'b' }, { user: 'c' }] });
      const naive = policiesFromFlags(['window-turns:turns=1,naive=true']);
      const rules = (set?: RuleSet) => runStudy({ conversations: [c], policies: naive, seed: 1, models: ['gpt-4o-mini'], tokenizer: 'chars4', ...(set && { messageRules: set }) }).violations.map((v) => v.rule);
      // Turn 2 sends the last 2 messages of turn 1: [tool result, reply].
      expect(rules()).toEqual(['orphan-tool-result']);
      expect(rules('gemini')).toEqual(['first-not-user', 'orphan-tool-result']);
    });

    it('rejects an unknown rule set with its place', async () => {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, 'rules: azure\n');
      await expect(loadStudy(file)).rejects.toThrow(ScenarioError);
      await expect(loadStudy(file)).rejects.toThrow(/bad\.yaml:1:8 rules: /);
    });
  });
});
