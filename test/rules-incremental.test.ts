import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPrompt, PromptRules, RULE_SETS, type RuleSet, type Violation } from '../src/message-rules/provider.js';
import { PlanChecks, planProblems } from '../src/policies/contract.js';
import type { PromptPlan } from '../src/policies/types.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';

/**
 * The per-call checks of a run read only what a prompt adds when it starts
 * with the previous prompt (the same message objects): on any sequence of
 * prompts, growing, cut, replaced or sent again, they find what the
 * whole-prompt checks find, at the same place, with the same text.
 */

const system: Message = { role: 'system', content: 'Be brief.' };
const call = (ids: string[]): Message => ({ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'lookup', arguments: '{}' })) });
const result = (id: string): Message => ({ role: 'tool', content: `{"ok":"${id}"}`, toolCallId: id });

/** Messages prompts are made of: the same objects again and again, as a transcript sends them, and a few that break rules. */
const POOL: Message[] = [
  system,
  { role: 'system', content: 'Summary: the order is SE-1.', origin: 'summary' },
  { role: 'user', content: 'Where is my order?' },
  { role: 'user', content: 'Thanks.' },
  { role: 'user', content: 'Where is my order?' },
  { role: 'user', content: '  ' },
  { role: 'assistant', content: 'It ships today.' },
  { role: 'assistant', content: 'Bye.' },
  call(['c1']),
  call(['c2', 'c3']),
  call(['c1']),
  result('c1'),
  result('c2'),
  result('c3'),
  result('c9'),
  { role: 'tool', content: '[cleared]', toolCallId: 'c2' },
  { role: 'human', content: 'hi' } as unknown as Message,
];

/** How the next prompt is made from the last one. */
const step = fc.record({
  kind: fc.constantFrom('extend', 'extend', 'extend', 'fresh', 'cut', 'same', 'swap'),
  picks: fc.array(fc.nat(POOL.length - 1), { maxLength: 6 }),
  at: fc.nat(20),
  pending: fc.integer({ min: 1, max: 4 }),
  overBudget: fc.boolean(),
  stablePrefix: fc.nat(12),
});

type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

/** The prompts of a sequence of steps (a `same` step sends the previous array again). */
function prompts(steps: readonly Step[]): { messages: Message[]; s: Step }[] {
  let last: Message[] = [system];
  return steps.map((s) => {
    const picked = s.picks.map((i) => POOL[i]!);
    if (s.kind === 'extend') last = [...last, ...picked];
    else if (s.kind === 'fresh') last = [system, ...picked];
    else if (s.kind === 'cut') last = last.slice(0, s.at % (last.length + 1));
    else if (s.kind === 'swap' && last.length) last = last.map((m, i) => (i === s.at % last.length ? (picked[0] ?? POOL[2]!) : m));
    return { messages: last, s };
  });
}

/** The provider rules read over a whole prompt at once, as the rule list in provider.ts states them: the reference the checks are held to. */
function providerRules(messages: readonly Message[], set: RuleSet): Violation[] {
  const apart = set !== 'openai';
  const toolRole = { openai: 'tool', anthropic: 'user', gemini: 'function' }[set];
  const out: Violation[] = [];
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  const turns = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.role !== 'system');
  messages.forEach((m, i) => {
    if (!m.content.trim() && !m.toolCalls?.length) out.push({ rule: 'empty-message', index: i, detail: `${m.role} message at ${i} is empty` });
    if (apart && m.role === 'system' && turns.some((t) => t.i < i)) out.push({ rule: 'system-not-first', index: i, detail: `system message at ${i} after the conversation started` });
  });
  turns.forEach(({ m, i }, k) => {
    if (k === 0 && apart && m.role !== 'user') out.push({ rule: 'first-not-user', index: i, detail: `first turn is ${m.role}` });
    for (const c of m.toolCalls ?? []) calls.set(c.id, i);
    if (m.role === 'tool') {
      if (!calls.has(m.toolCallId ?? '')) out.push({ rule: 'orphan-tool-result', index: i, detail: `tool result ${m.toolCallId} at ${i} has no tool call before it` });
      answered.add(m.toolCallId ?? '');
    }
    const role = (x: Message) => (x.role === 'tool' ? toolRole : x.role);
    const prev = turns[k - 1]?.m;
    if (apart && prev && role(prev) === role(m) && !(m.role === 'tool' && messages[i - 1]?.role === 'tool')) {
      out.push({ rule: 'same-role-twice', index: i, detail: `two ${role(m)} turns in a row at ${i - 1} and ${i}` });
    }
  });
  for (const [id, i] of calls) if (!answered.has(id)) out.push({ rule: 'unanswered-tool-call', index: i, detail: `tool call ${id} at ${i} has no result` });
  return out.sort((a, b) => a.index - b.index || (a.rule < b.rule ? -1 : 1));
}

describe('checks that read only what a prompt adds', () => {
  it('PromptRules finds what the rules say, under every rule set, as checkPrompt does', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        for (const set of RULE_SETS) {
          const rules = new PromptRules(set);
          for (const { messages } of prompts(steps)) {
            const expected = providerRules(messages, set);
            expect(rules.check(messages)).toEqual(expected);
            expect(checkPrompt(messages, set)).toEqual(expected);
          }
        }
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it('PlanChecks finds what planProblems finds, with and without a budget', () => {
    const counter = new TokenCounter('chars4');
    const tokens = { prompt: (m: readonly Message[]) => counter.prompt(m) };
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), fc.option(fc.integer({ min: 5, max: 80 }), { nil: undefined }), (steps, budget) => {
        const checks = new PlanChecks({ system: [system], budget, tokens });
        for (const { messages, s } of prompts(steps)) {
          const pending = messages.length ? messages.slice(-Math.min(s.pending, messages.length)) : [POOL[2]!];
          const plan: PromptPlan = { messages, overBudget: s.overBudget, upkeep: [], stablePrefix: s.stablePrefix };
          expect(checks.check(plan, pending)).toEqual(planProblems(plan, { system: [system], pending, budget, tokens }));
        }
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it('a tool call the last prompt cut short is read again when its results follow', () => {
    const checks = new PlanChecks({ system: [system], budget: undefined, tokens: { prompt: () => 0 } });
    const user = POOL[2]!;
    const c = call(['c2', 'c3']);
    const [c2, c3] = [result('c2'), result('c3')];
    const plan = (messages: Message[]): PromptPlan => ({ messages, overBudget: false, upkeep: [], stablePrefix: 1 });
    expect(checks.check(plan([system, user, c, c2]), [user, c, c2])).toEqual([
      { rule: 'tool-pairs', detail: 'tool call c2, c3 at 2 without all its results right after it' },
      { rule: 'tool-pairs', detail: 'tool result c2 at 3 without its call right before it' },
    ]);
    expect(checks.check(plan([system, user, c, c2, c3]), [user, c, c2, c3])).toEqual([]);
  });
});
