import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPrompt, PromptRules, RULE_SETS, type RuleSet, type Violation } from '../src/message-rules/provider.js';
import { PlanChecks, planProblems, type PlanCall, type PlanProblem } from '../src/policies/contract/plan-checks.js';
import type { PromptPlan } from '../src/policies/types.js';
import { messageText, TokenCounter } from '../src/tokens/counter.js';
import type { Message, UpkeepCall } from '../src/types.js';

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
  { role: 'system', content: 'Notes: the order is SE-1.', origin: 'notes' } as unknown as Message,
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

/**
 * A conversation as a transcript sends it: turns of a user message, rounds of
 * tool calls (an assistant message with its calls, then their results) and a
 * reply, each message an object of its own, sent again and again.
 */
const TRANSCRIPT: Message[] = [[], [1], [2], [1, 1], [], [3], [2, 1], [1], []].flatMap((rounds, t) => [
  { role: 'user', content: `Question ${t + 1}?`, turn: t + 1 },
  ...rounds.flatMap((n, r) => {
    const ids = Array.from({ length: n }, (_, c) => `t${t + 1}r${r + 1}c${c + 1}`);
    return [{ ...call(ids), turn: t + 1 }, ...ids.map((id) => ({ ...result(id), turn: t + 1 }))];
  }),
  { role: 'assistant', content: `Answer ${t + 1}.`, turn: t + 1 },
]);

/** The scenario's pinned system messages a session may be checked with. */
const PINNED: Message[][] = [[system], [], [system, { role: 'system', content: 'Use tools.' }]];

/** Messages of the wrong shape, a plan's messages may hold one (a policy written in JavaScript is not type-checked). */
const BAD: Message[] = [
  null,
  'hi',
  { role: 'human', content: 'hi' },
  { role: 'user', content: 7 },
  { role: 'assistant', content: '', toolCalls: [{ name: 'lookup' }] },
  { role: 'assistant', content: '', toolCalls: 'c1' },
] as unknown as Message[];

/** Odd messages of the right shape: a call with an empty id, a result without one, a placeholder of a transcript result. */
const ODD: Message[] = [call(['']), { role: 'tool', content: 'orphan' }, { role: 'tool', content: '[cleared]', toolCallId: 't3r1c2' }, { ...result('t3r1c2') }];

/** Plans of the wrong shape, made from a well formed one. */
const SPOIL: ((p: PromptPlan) => unknown)[] = [
  () => null,
  () => 'plan',
  () => [],
  (p) => ({ ...p, messages: { 0: system } }),
  (p) => ({ ...p, overBudget: 'yes' }),
  (p) => ({ ...p, overBudget: undefined }),
  (p) => ({ ...p, stablePrefix: '1' }),
  (p) => ({ ...p, stablePrefix: Number.NaN }),
  (p) => ({ ...p, stablePrefix: 1.5 }),
  (p) => ({ ...p, stablePrefix: -1 }),
  (p) => ({ ...p, upkeep: {} }),
  (p) => ({ ...p, upkeep: [null] }),
  (p) => ({ ...p, upkeep: [{ kind: 'summary', model: 'm', inputTokens: -1, outputTokens: 3, sync: true }] }),
  (p) => ({ ...p, upkeep: [{ kind: 'embed', model: 'm', inputTokens: 4, outputTokens: 2.5, sync: false }] }),
  (p) => ({ ...p, upkeep: [{ kind: 'summary', model: 'm', inputTokens: 40, outputTokens: 12, sync: true }] }),
];

/** How a session's next call is made from its last one. */
const callStep = fc.record({
  // grow: the next messages of the transcript (cutting a round anywhere); pool: any messages; slide: drop the oldest after the system prompt;
  // cut: drop the newest; memory: a summary after the system prompt; swap: one message replaced; clear: a tool result replaced by a
  // placeholder; reorder: one call's results in reverse order; omit: a run of messages left out; same: the previous array again;
  // fresh: a prompt of its own; odd, bad: one more.
  kind: fc.constantFrom('grow', 'grow', 'grow', 'grow', 'pool', 'pool', 'slide', 'cut', 'memory', 'swap', 'clear', 'reorder', 'omit', 'same', 'fresh', 'odd', 'bad'),
  n: fc.integer({ min: 1, max: 7 }),
  at: fc.nat(40),
  picks: fc.array(fc.nat(POOL.length - 1), { maxLength: 5 }),
  // The current turn: from the prompt's last user message (to its end, one short, one longer), the transcript's turn so far, or the prompt's last messages.
  pending: fc.constantFrom('tail', 'tail', 'short', 'long', 'turn', 'turn', 'last'),
  overBudget: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  // -1: right after the system prompt (most plans), else that number.
  stablePrefix: fc.oneof({ weight: 3, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(12) }),
  spoil: fc.oneof({ weight: 12, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.nat(SPOIL.length - 1) }),
});

type Call = typeof callStep extends fc.Arbitrary<infer T> ? T : never;

const summary = POOL[1]!;

/** The plans of a session's calls (with the scenario's pinned system messages), and the current turn of each. */
function calls(pinned: readonly Message[], steps: readonly Call[]): { plan: PromptPlan; pending: Message[] }[] {
  const head = pinned.length;
  let last: Message[] = [...pinned];
  let next = 0;
  return steps.map((s) => {
    const picked = s.picks.map((i) => POOL[i]!);
    if (s.kind === 'grow') {
      last = [...last, ...TRANSCRIPT.slice(next, next + s.n)];
      next = Math.min(TRANSCRIPT.length, next + s.n);
    } else if (s.kind === 'pool') last = [...last, ...picked];
    else if (s.kind === 'slide') last = [...last.slice(0, head), ...last.slice(head + s.n)];
    else if (s.kind === 'cut') last = last.slice(0, Math.max(0, last.length - s.n));
    else if (s.kind === 'memory') last = [...last.slice(0, head), summary, ...last.slice(head)];
    else if (s.kind === 'swap' && last.length) last = last.map((m, i) => (i === s.at % last.length ? (picked[0] ?? ODD[s.at % ODD.length]!) : m));
    else if (s.kind === 'clear') {
      const results = last.flatMap((m, i) => (m?.role === 'tool' ? [i] : []));
      const i = results[s.at % Math.max(1, results.length)];
      if (i !== undefined) last = last.map((m, j) => (j === i ? { role: 'tool', content: '[cleared]', toolCallId: m.toolCallId } : m));
    } else if (s.kind === 'reorder') {
      const callsAt = last.flatMap((m, i) => (Array.isArray(m?.toolCalls) && m.toolCalls.length > 1 ? [i] : []));
      const i = callsAt[s.at % Math.max(1, callsAt.length)];
      if (i !== undefined) {
        const end = i + 1 + last[i]!.toolCalls!.length;
        last = [...last.slice(0, i + 1), ...last.slice(i + 1, end).reverse(), ...last.slice(end)];
      }
    } else if (s.kind === 'omit') last = [...last.slice(0, s.at % (last.length + 1)), ...last.slice((s.at % (last.length + 1)) + s.n)];
    else if (s.kind === 'fresh') last = [...pinned, ...picked];
    else if (s.kind === 'odd') last = [...last, ODD[s.at % ODD.length]!];
    else if (s.kind === 'bad') last = [...last, BAD[s.at % BAD.length]!];
    const user = lastIndex(last, (m) => m?.role === 'user');
    const tail = user < 0 ? [] : last.slice(user);
    const opened = lastIndex(TRANSCRIPT.slice(0, next), (m) => m.role === 'user');
    const pending = {
      tail,
      short: tail.slice(0, -1),
      long: next < TRANSCRIPT.length ? [...tail, TRANSCRIPT[next]!] : tail,
      turn: opened < 0 ? [] : TRANSCRIPT.slice(opened, next),
      last: last.slice(-s.n),
    }[s.pending].filter((m) => typeof m === 'object' && m !== null);
    const plan: PromptPlan = { messages: last, overBudget: s.overBudget, upkeep: [], stablePrefix: s.stablePrefix < 0 ? head : s.stablePrefix };
    return { plan: s.spoil < 0 ? plan : (SPOIL[s.spoil]!(plan) as PromptPlan), pending: pending.length ? pending : [POOL[2]!] };
  });
}

/**
 * The per-call rules of the policy contract read over one whole plan, as
 * docs/custom-policies.md and contract/rules.ts's doc comments state them: the
 * reference PlanChecks is held to. A plan of the wrong shape is that one
 * problem; otherwise the problems in the order of the rules, those of the
 * message pass (a late system message, tool pairs) by the place they are at.
 */
function planRules(plan: PromptPlan, call: PlanCall): PlanProblem[] {
  const shape = shapeRule(plan);
  if (shape) return [{ rule: 'plan', detail: shape }];
  const { system, pending, budget, tokens } = call;
  const m = plan.messages;
  const head = system.length;
  const out: PlanProblem[] = [];

  // system-pinned: the scenario's system messages are the first messages, in order (the first out of place named).
  const pinned = (s: Message, x: Message | undefined) => x?.role === 'system' && x.content === s.content && x.name === s.name && !x.origin;
  const moved = system.findIndex((s, i) => !pinned(s, m[i]));
  if (moved >= 0) out.push({ rule: 'system-pinned', detail: head === 1 ? 'message 0 is not the system prompt' : `message ${moved} is not the scenario's system message ${moved + 1} of ${head}` });

  // first-user: the first message that is not a system message is a user message.
  const opening = m.findIndex((x) => x.role !== 'system');
  const begun = opening < 0 ? m.length : opening;
  if (opening >= 0 && m[opening]!.role !== 'user') out.push({ rule: 'first-user', detail: `the first message after the system messages is ${kind(m[opening]!)}` });

  // current-turn-last: the current turn starts where its user message is last sent.
  const at = lastIndex(m, (x) => alike(x, pending[0]!));
  const last = at < 0 ? 'its user message is not sent' : turnSentLast(m.slice(at + 1), pending);
  if (last) out.push({ rule: 'current-turn-last', detail: `the current turn is not sent last, its newest round in full: ${last}` });

  // whole-turns, as one call tells it: no message of the conversation (not made by the policy) from the current turn or a
  // later one before the current turn; the first named.
  const current = pending[0]!.turn;
  const early = current === undefined ? -1 : m.findIndex((x, i) => i < at && x.turn !== undefined && x.turn >= current && !x.origin && x.role !== 'system');
  if (early >= 0) {
    const t = m[early]!.turn!;
    out.push({ rule: 'whole-turns', detail: t === current ? `turn ${t}, the current one, sent before its own messages (at ${early})` : `turn ${t}, a later one, sent (at ${early})` });
  }

  // system-pinned (no system message once the conversation started: the first one named) and tool-pairs, by place.
  const placed: { at: number; problem: PlanProblem }[] = [];
  const late = m.findIndex((x, i) => i >= begun && x.role === 'system');
  if (late >= 0) placed.push({ at: late, problem: { rule: 'system-pinned', detail: `system message at ${late} after the conversation started` } });
  // A tool call (a message with calls, not itself a result) is answered when the messages right after it are its results, one per
  // call, in any order: their ids, sorted, are the calls' ids, sorted.
  const answered = new Set<number>();
  m.forEach((x, i) => {
    if (i < begun || x.role === 'tool' || !x.toolCalls?.length) return;
    const ids = x.toolCalls.map((c) => c.id);
    const after = m.slice(i + 1, i + 1 + ids.length);
    const got = after.map((r) => (r.role === 'tool' ? r.toolCallId : undefined));
    const want = [...ids].sort();
    if (after.length === ids.length && got.every((id) => id !== undefined) && [...got].sort().every((id, j) => id === want[j])) after.forEach((_, j) => answered.add(i + 1 + j));
    else placed.push({ at: i, problem: { rule: 'tool-pairs', detail: `tool call ${ids.join(', ')} at ${i} without all its results right after it` } });
  });
  m.forEach((x, i) => {
    if (i >= begun && x.role === 'tool' && !answered.has(i)) placed.push({ at: i, problem: { rule: 'tool-pairs', detail: `tool result ${x.toolCallId} at ${i} without its call right before it` } });
  });
  // At one place a late system message comes before its tool pair (sort is stable).
  out.push(...placed.sort((a, b) => a.at - b.at).map((p) => p.problem));

  // budget: kept, unless the system prompt and the current turn alone exceed it, and then only those sent.
  if (budget === undefined) {
    if (plan.overBudget) out.push({ rule: 'budget', detail: 'overBudget without a budget' });
  } else if (plan.overBudget) {
    const fixed = tokens.prompt([...system, ...pending]);
    if (fixed <= budget) out.push({ rule: 'budget', detail: `overBudget, but the system prompt and the current turn take ${fixed} tokens of ${budget}` });
    // Nothing before the current turn's user message but the system prompt; after it, current-turn-last says what may come.
    if (at !== head) out.push({ rule: 'budget', detail: 'over budget, but more than the system prompt and the current turn sent' });
  } else {
    const total = tokens.prompt(m);
    if (total > budget) out.push({ rule: 'budget', detail: `${total} tokens sent, budget ${budget}` });
  }

  // plan: the stable prefix lies between the system prompt and the current turn (upkeep's counts are part of the shape).
  const sp = plan.stablePrefix;
  if (!(Number.isInteger(sp) && head <= sp && sp <= at)) out.push({ rule: 'plan', detail: `stablePrefix ${sp} outside ${head}…${at}` });
  return out;
}

/** Where the last item that passes the test is (-1: none). */
function lastIndex<T>(list: readonly T[], test: (x: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i]!)) return i;
  return -1;
}

/** The same message: the object itself, or the same role, call ids (each) and text. */
function alike(a: Message, b: Message): boolean {
  const ids = (x: Message) => (x.toolCalls ?? []).map((c) => c.id);
  return a === b || (a.role === b.role && a.toolCallId === b.toolCallId && messageText(a) === messageText(b) && ids(a).length === ids(b).length && ids(a).every((id, i) => id === ids(b)[i]));
}

/**
 * What is wrong with what is sent after the current turn's user message, or
 * undefined: the turn's rounds (an assistant message with calls, then the
 * results after it), in order; an earlier one left out whole (its call not
 * sent where it would come) or sent with results, each verbatim or a
 * placeholder with its call id; the newest verbatim; nothing after them.
 */
function turnSentLast(sent: readonly Message[], pending: readonly Message[]): string | undefined {
  const rounds: Message[][] = [];
  for (const x of pending.slice(1)) {
    if (x.role === 'assistant' && x.toolCalls?.length) rounds.push([x]);
    else if (x.role === 'tool' && rounds.length) rounds.at(-1)!.push(x);
  }
  let read = 0;
  for (let k = 0; k < rounds.length; k++) {
    const round = rounds[k]!;
    const newest = k === rounds.length - 1;
    if (!newest && !(sent[read] && alike(sent[read]!, round[0]!))) continue;
    for (let j = 0; j < round.length; j++) {
      const x = sent[read + j];
      if (x === undefined) return `round ${k + 1} is cut short`;
      const placeholder = !newest && j > 0 && x.role === 'tool' && x.toolCallId === round[j]!.toolCallId;
      if (!alike(x, round[j]!) && !placeholder) return `round ${k + 1} differs at its message ${j + 1}`;
    }
    read += round.length;
  }
  return read < sent.length ? `${sent.length - read} message(s) after it` : undefined;
}

/** A message as first-user names it. */
function kind(x: Message): string {
  if (x.role !== 'assistant') return `a ${x.role} message`;
  return x.toolCalls?.length ? 'an assistant tool call' : 'an assistant message';
}

/** What is wrong with a plan's shape, the first thing found, or undefined (PromptPlan, field by field; upkeep counts whole and not negative). */
function shapeRule(plan: unknown): string | undefined {
  const named = (v: unknown) =>
    v === undefined || v === null ? String(v) : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v === 'function' ? 'a function' : JSON.stringify(v);
  if (typeof plan !== 'object' || plan === null) return `the plan is ${named(plan)}, not an object {messages, overBudget, upkeep, stablePrefix}`;
  const { messages, overBudget, stablePrefix, upkeep } = plan as Record<string, unknown>;
  if (!Array.isArray(messages)) return `messages is ${named(messages)}, not an array`;
  for (const [i, x] of (messages as unknown[]).entries()) {
    if (typeof x !== 'object' || x === null) return `message ${i} is ${named(x)}, not a message {role, content}`;
    const { role, content, toolCalls } = x as Record<string, unknown>;
    if (!['system', 'user', 'assistant', 'tool'].includes(role as string)) return `message ${i} has role ${named(role)} (expected system, user, assistant or tool)`;
    if (typeof content !== 'string') return `message ${i} has content ${named(content)}, not a string`;
    const listed = toolCalls === undefined || (Array.isArray(toolCalls) && toolCalls.every((c) => typeof (c as { id?: unknown } | null)?.id === 'string'));
    if (!listed) return `message ${i} has toolCalls that are not a list of calls {id, name, arguments}`;
    const { origin } = x as Record<string, unknown>;
    if (origin !== undefined && !['summary', 'retrieved', 'facts'].includes(origin as string)) return `message ${i} has origin ${named(origin)} (expected summary, retrieved or facts)`;
  }
  if (typeof overBudget !== 'boolean') return `overBudget is ${named(overBudget)}, not true or false`;
  if (typeof stablePrefix !== 'number') return `stablePrefix is ${named(stablePrefix)}, not a number`;
  if (!Array.isArray(upkeep)) return `upkeep is ${named(upkeep)}, not an array`;
  for (const u of upkeep as unknown[]) {
    if (typeof u !== 'object' || u === null) return `upkeep holds ${named(u)}, not a call {kind, model, inputTokens, outputTokens, sync}`;
    const { kind: k, inputTokens, outputTokens } = u as UpkeepCall;
    if (![inputTokens, outputTokens].every((n) => Number.isInteger(n) && n >= 0)) return `upkeep ${k} with ${named(inputTokens)} in, ${named(outputTokens)} out (expected whole numbers of tokens ≥ 0)`;
  }
  return undefined;
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

  it('PlanChecks, one instance over a sequence of prompts, finds what the per-call rules say, as planProblems does', () => {
    const counter = new TokenCounter('chars4');
    const tokens = { prompt: (m: readonly Message[]) => counter.prompt(m) };
    fc.assert(
      fc.property(fc.constantFrom(...PINNED), fc.option(fc.integer({ min: 5, max: 120 }), { nil: undefined }), fc.array(callStep, { maxLength: 30 }), (pinned, budget, steps) => {
        const checks = new PlanChecks({ system: pinned, budget, tokens });
        for (const { plan, pending } of calls(pinned, steps)) {
          const expected = planRules(plan, { system: pinned, pending, budget, tokens });
          expect(checks.check(plan, pending)).toEqual(expected);
          expect(planProblems(plan, { system: pinned, pending, budget, tokens })).toEqual(expected);
        }
      }),
      { seed: 42, numRuns: 1000 },
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

  it("a tool call with the id '' is answered by its result only, not by the end of the prompt or another message", () => {
    const user = POOL[2]!;
    const pending = [user];
    const plan = (messages: Message[]): PromptPlan => ({ messages, overBudget: false, upkeep: [], stablePrefix: 1 });
    const pairs = (messages: Message[]) =>
      planProblems(plan(messages), { system: [system], pending, budget: undefined, tokens: { prompt: () => 0 } }).filter((p) => p.rule === 'tool-pairs');
    expect(pairs([system, user, call([''])])).toEqual([{ rule: 'tool-pairs', detail: 'tool call  at 2 without all its results right after it' }]);
    expect(pairs([system, user, call(['']), call(['c1']), result('c1')])).toEqual([{ rule: 'tool-pairs', detail: 'tool call  at 2 without all its results right after it' }]);
    expect(pairs([system, user, call(['']), result('')])).toEqual([]);
  });

  it("a call's results may come in any order, each once, right after it (providers match them by id)", () => {
    const user = POOL[2]!;
    const c = call(['c1', 'c2', 'c3']);
    const [r1, r2, r3] = [result('c1'), result('c2'), result('c3')];
    const plan = (messages: Message[]): PromptPlan => ({ messages, overBudget: false, upkeep: [], stablePrefix: 1 });
    const pairs = (messages: Message[]) =>
      planProblems(plan(messages), { system: [system], pending: [user], budget: undefined, tokens: { prompt: () => 0 } }).filter((p) => p.rule === 'tool-pairs');
    expect(pairs([system, user, c, r3, r1, r2, user])).toEqual([]);
    expect(pairs([system, user, c, r2, r2, r3, user])).toEqual([
      { rule: 'tool-pairs', detail: 'tool call c1, c2, c3 at 2 without all its results right after it' },
      { rule: 'tool-pairs', detail: 'tool result c2 at 3 without its call right before it' },
      { rule: 'tool-pairs', detail: 'tool result c2 at 4 without its call right before it' },
      { rule: 'tool-pairs', detail: 'tool result c3 at 5 without its call right before it' },
    ]);
  });

  it('an over-budget plan sends the system prompt and the current turn only, no memory in place of a round left out', () => {
    const user = POOL[2]!;
    const [c1, r1, c2, r2] = [call(['c1']), result('c1'), call(['c2']), result('c2')];
    const summary = POOL[1]!;
    const problems = (messages: Message[]) =>
      planProblems({ messages, overBudget: true, upkeep: [], stablePrefix: 1 }, { system: [system], pending: [user, c1, r1, c2, r2], budget: 10, tokens: { prompt: () => 100 } });
    expect(problems([system, user, c1, r1, c2, r2])).toEqual([]);
    expect(problems([system, summary, summary, user, c2, r2])).toEqual([{ rule: 'budget', detail: 'over budget, but more than the system prompt and the current turn sent' }]);
    // Less of the current turn is still only those: an earlier round left out, or its result a placeholder.
    expect(problems([system, user, c2, r2])).toEqual([]);
    expect(problems([system, user, c1, { ...r1, content: '[cleared]' }, c2, r2])).toEqual([]);
  });
});
