import { describe, expect, it } from 'vitest';
import { checkPrompt, type RuleSet } from '../src/message-rules/provider.js';
import type { Message } from '../src/types.js';

const sys: Message = { role: 'system', content: 'Be helpful.' };
const summary: Message = { role: 'system', content: 'Summary: the user is Kavya.', origin: 'summary' };
const u = (content: string): Message => ({ role: 'user', content });
const a = (content: string): Message => ({ role: 'assistant', content });
const call: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'create_task', arguments: '{"title":"milk"}' }] };
const result: Message = { role: 'tool', content: '{"task_id":"T-1"}', toolCallId: 'c1' };

const rules = (msgs: Message[], set: RuleSet) => checkPrompt(msgs, set).map((v) => `${v.rule}@${v.index}`);

describe('provider message rules', () => {
  const valid = [sys, summary, u('add milk'), call, result, a('Added.'), u('thanks')];

  it.each(['openai', 'anthropic', 'gemini'] as const)('a well-formed prompt breaks no %s rule', (set) => {
    expect(rules(valid, set)).toEqual([]);
  });

  it('a tool result whose call was cut is an orphan everywhere', () => {
    const p = [sys, result, a('Added.'), u('thanks')];
    expect(rules(p, 'openai')).toEqual(['orphan-tool-result@1']);
    expect(rules(p, 'anthropic')).toEqual(['first-not-user@1', 'orphan-tool-result@1']);
  });

  it('a tool call without its result', () => {
    expect(rules([sys, u('add milk'), call, u('thanks')], 'openai')).toEqual(['unanswered-tool-call@2']);
  });

  it('a first turn from the assistant breaks anthropic and gemini, not openai', () => {
    const p = [sys, a('Hello!'), u('hi')];
    expect(rules(p, 'openai')).toEqual([]);
    expect(rules(p, 'anthropic')).toEqual(['first-not-user@1']);
    expect(rules(p, 'gemini')).toEqual(['first-not-user@1']);
  });

  it('two user turns in a row break alternation where it is required', () => {
    const p = [sys, u('one'), u('two')];
    expect(rules(p, 'openai')).toEqual([]);
    expect(rules(p, 'anthropic')).toEqual(['same-role-twice@2']);
    expect(rules(p, 'gemini')).toEqual(['same-role-twice@2']);
  });

  it('anthropic sends tool results as user turns: a result followed by a user message is two user turns', () => {
    const p = [u('add milk'), call, result, u('and eggs')];
    expect(rules(p, 'anthropic')).toEqual(['same-role-twice@3']);
    expect(rules(p, 'gemini')).toEqual([]);
  });

  it('a system message after the turns started breaks anthropic and gemini', () => {
    const p = [sys, u('hi'), summary, a('hello')];
    expect(rules(p, 'openai')).toEqual([]);
    expect(rules(p, 'anthropic')).toEqual(['system-not-first@2']);
  });

  it('an empty message', () => {
    expect(rules([sys, u('  '), a('ok')], 'openai')).toEqual(['empty-message@1']);
  });

  it("a name OpenAI's API rejects (not letters, digits, _ and -) breaks openai; the others send no names", () => {
    const named = (name: string): Message => ({ role: 'user', content: 'Hi, I am new here.', name });
    const p = [sys, named('José María'), a('Welcome!'), named('Jose_Maria-2'), { ...a('ok'), name: 'bot.v2' }];
    expect(rules(p, 'openai')).toEqual(['invalid-name@1', 'invalid-name@4']);
    expect(checkPrompt(p, 'openai')[0]!.detail).toBe('user message at 1 has name "José María" (OpenAI takes only letters, digits, _ and -)');
    expect(rules(p, 'anthropic')).toEqual([]);
    expect(rules(p, 'gemini')).toEqual([]);
  });
});
