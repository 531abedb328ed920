import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { POLICIES } from '../src/policies/index.js';
import type { PromptPlan } from '../src/policies/types.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message, Turn } from '../src/types.js';
import { trace, variant } from './_policies.js';

/** Words that make messages overlap (so retrieval finds things) and carry fact values. */
const VOCAB = [
  'order', 'number', 'SE-10423', 'email', 'kavya@new.example', 'socks', 'cart', 'delivery', 'refund', 'plumber', 'task', 'T-481',
  'memo', 'tomorrow', 'nine', 'please', 'the', 'my', 'is', 'what', 'was', 'can', 'you', 'repeat', 'that', 'Kavya', 'arrived', 'late',
  'size', 'blue', 'running', 'DryFit', '249', 'Rs', 'again', 'thanks', 'code', 'function', 'Rust', '<|endoftext|>',
];

const text = (max: number) => fc.array(fc.constantFrom(...VOCAB), { minLength: 1, maxLength: max }).map((w) => w.join(' '));

const turnArb = fc.record({
  user: text(40),
  assistant: fc.option(text(60), { nil: undefined }),
  tools: fc.array(fc.record({ name: fc.constantFrom('create_task', 'update_task', 'lookup_order'), args: text(8), result: text(20) }), { maxLength: 2 }),
  fact: fc.option(fc.constantFrom('SE-10423', 'T-481', 'kavya@new.example', 'blue'), { nil: undefined }),
  gap: fc.integer({ min: 0, max: 4000 }),
});

const conversationArb = fc
  .record({ system: fc.option(text(30), { nil: undefined }), turns: fc.array(turnArb, { minLength: 1, maxLength: 24 }) })
  .map(({ system, turns }): Conversation => ({
    id: 'generated',
    ...(system !== undefined && { system: { role: 'system', content: system } }),
    userId: 'user',
    forgets: [],
    source: 'generated',
    turns: turns.map((t, i): Turn => {
      const index = i + 1;
      const calls = t.tools.map((c, j) => ({ id: `call_${index}_${j + 1}`, name: c.name, arguments: JSON.stringify({ q: c.args }) }));
      const tools: Message[] = calls.length
        ? [
            { role: 'assistant', content: '', toolCalls: calls, turn: index },
            ...t.tools.map((c, j): Message => ({ role: 'tool', content: c.result, toolCallId: calls[j]!.id, turn: index })),
          ]
        : [];
      return {
        index,
        user: { role: 'user', content: t.fact ? `${t.user} ${t.fact}` : t.user, turn: index },
        tools,
        ...(t.assistant !== undefined && { assistant: { role: 'assistant', content: t.assistant, turn: index } }),
        facts: t.fact ? { [`fact_${index % 3}`]: t.fact } : {},
        probe: [],
        gapSeconds: t.gap,
        injection: false,
      };
    }),
  }));

/** Variants with small budgets and windows so that trimming, folding and retrieval all happen. */
const SPECS = [
  'full',
  'full:sessionCap=3',
  'window-turns:turns=3',
  'window-tokens:budget=60',
  'window-tokens:budget=300',
  'window:turns=4,budget=150',
  'summary:threshold=100,summaryTokens=40',
  'summary:threshold=60,summaryTokens=30,keep=0.5,sessionCap=5',
  'summary-buffer:budget=150,keepRecent=2,summaryTokens=30',
  'summary-buffer:budget=400,keepRecent=1,batch=3,summaryTokens=60,keep=0.7',
  'summary-buffer:budget=40,keepRecent=3',
  'priority:budget=120,keepRecent=2',
  'priority:budget=400,keepRecent=0,sessionCap=4',
  'retrieval:recent=3,topK=3,minScore=0.1',
  'retrieval:recent=0,topK=4,minScore=0,fallbackRecent=2,maxItems=5,maxAge=30m',
  'retrieval:sessionCap=2,recent=1',
  'facts:recent=2,recall=0.5',
  'facts:recent=0,sessionCap=3',
];

const counters = { chars4: new TokenCounter('chars4'), o200k_base: new TokenCounter('o200k_base') };

/** Checks one prompt against the rules every policy keeps; returns what is wrong, or undefined. */
function violation(plan: PromptPlan, conversation: Conversation, pending: readonly Message[], budget: number | undefined, tokens: TokenCounter): string | undefined {
  const m = plan.messages;
  const head = conversation.system ? [conversation.system] : [];
  if (head.length && m[0] !== head[0]) return 'system prompt is not at index 0';
  let i = head.length;
  while (i < m.length && m[i]!.role === 'system' && m[i]!.origin) i++;
  const rest = m.slice(i);
  if (rest.some((x) => x.role === 'system')) return 'a system message after the conversation started';
  if (rest.length && rest[0]!.role !== 'user') return `first non-system message is ${rest[0]!.role}`;
  const tail = m.slice(m.length - pending.length);
  if (tail.length !== pending.length || tail.some((x, j) => x !== pending[j])) return 'pending messages are not sent last, in full';
  if (new Set(m).size !== m.length) return 'a message is sent twice';
  for (let j = 0; j < rest.length; j++) {
    const x = rest[j]!;
    if (x.role === 'assistant' && x.toolCalls?.length) {
      const ids = rest.slice(j + 1, j + 1 + x.toolCalls.length).map((r) => (r.role === 'tool' ? r.toolCallId : undefined));
      if (ids.join() !== x.toolCalls.map((c) => c.id).join()) return `tool call at turn ${x.turn} without all its results`;
      j += x.toolCalls.length;
    } else if (x.role === 'tool') return `tool result at turn ${x.turn} without its call`;
  }
  for (let j = 1; j < rest.length; j++) if (rest[j]!.turn! < rest[j - 1]!.turn!) return 'verbatim messages out of order';
  // Earlier turns are sent whole or not at all, so the prompt reads as the conversation did (and alternates).
  const current = pending[0]!.turn;
  for (const turn of new Set(rest.map((x) => x.turn!))) {
    if (turn === current) continue;
    const t = conversation.turns[turn - 1]!;
    const whole = [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])];
    const sent = rest.filter((x) => x.turn === turn);
    if (sent.length !== whole.length || sent.some((x, j) => x !== whole[j])) return `turn ${turn} sent in part`;
  }
  // Retrieved memories: a tool call comes with all its results and a result with its call, in the conversation's order.
  const memories = m.filter((x) => x.origin === 'retrieved');
  for (let j = 1; j < memories.length; j++) if (memories[j]!.turn! < memories[j - 1]!.turn!) return 'retrieved memories out of order';
  for (const turn of new Set(memories.map((x) => x.turn!))) {
    const kinds = memories.filter((x) => x.turn === turn).map((x) => /^Earlier \(turn \d+, ([^)]+)\)/.exec(x.content)![1]);
    const calls = kinds.filter((k) => k === 'tool call').length;
    const results = kinds.filter((k) => k === 'tool result').length;
    const expected = conversation.turns[turn - 1]!.tools.length - 1;
    if ((calls || results) && (calls !== 1 || results !== expected)) return `retrieved tool pair of turn ${turn} split: ${calls} call, ${results} results`;
  }
  const fixed = tokens.prompt([...head, ...pending]);
  if (budget !== undefined) {
    if (plan.overBudget !== fixed > budget) return `overBudget=${plan.overBudget} but system + pending = ${fixed} for budget ${budget}`;
    if (plan.overBudget && m.length !== head.length + pending.length) return 'over budget but more than system + pending sent';
    if (!plan.overBudget && tokens.prompt(m) > budget) return `prompt ${tokens.prompt(m)} over budget ${budget}`;
  } else if (plan.overBudget) return 'overBudget without a budget';
  if (plan.stablePrefix < head.length || plan.stablePrefix > m.length - pending.length) return `stablePrefix ${plan.stablePrefix} outside the history`;
  for (const u of plan.upkeep) if (!Number.isInteger(u.inputTokens) || u.inputTokens < 0 || !Number.isInteger(u.outputTokens) || u.outputTokens < 0) return 'bad upkeep tokens';
  return undefined;
}

describe('every policy keeps the prompt rules on random conversations', () => {
  it('covers every registered policy', () => {
    expect(new Set(SPECS.map((s) => s.split(':')[0]))).toEqual(new Set(POLICIES.map((p) => p.id)));
  });

  for (const spec of SPECS) {
    it(spec, () => {
      const v = variant(spec);
      const budget = v.params.budget as number | undefined;
      fc.assert(
        fc.property(conversationArb, fc.constantFrom('chars4', 'o200k_base') as fc.Arbitrary<keyof typeof counters>, (conversation, enc) => {
          const tokens = counters[enc];
          const turns = trace(conversation, spec, tokens);
          for (const t of turns) {
            const turn = conversation.turns[t.turn - 1]!;
            const pendings = [[turn.user], [turn.user, ...turn.tools]];
            t.calls.forEach((plan, k) => {
              const problem = violation(plan, conversation, pendings[k]!, budget, tokens);
              if (problem) throw new Error(`turn ${t.turn} call ${k + 1}: ${problem}`);
              for (const x of plan.messages) if (!x.origin && x.turn !== undefined && x.turn > t.turn) throw new Error('a future message was sent');
            });
            // Upkeep is decided once per turn, on its first call.
            if (t.calls[1]?.upkeep.length) throw new Error(`turn ${t.turn}: upkeep on the call after tool results`);
          }
          // Same inputs, same prompts and upkeep.
          expect(trace(conversation, spec, tokens)).toEqual(turns);
        }),
        { seed: 42, numRuns: 60 },
      );
    });
  }
});
