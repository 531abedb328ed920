/** Helpers for the policy tests: build conversations, drive a policy session turn by turn. */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { z } from 'zod';
import { streamFor } from '../src/engine/replay.js';
import { blocks } from '../src/policies/blocks.js';
import { SessionDriver } from '../src/policies/driver.js';
import { definePolicy } from '../src/policies/define.js';
import { BUDGET, int } from '../src/policies/params.js';
import type { PolicyVariant } from '../src/policies/spec.js';
import type { Policy, PolicySession, PromptPlan } from '../src/policies/types.js';
import { scenarioFromFile, scenarioFromText } from '../src/scenario/load.js';
import { policyFromString } from '../src/study/study.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message, Turn, UpkeepCall } from '../src/types.js';

/** A scenario from YAML text. */
export function scenario(yaml: string, file = 'test.yaml'): Conversation {
  return scenarioFromText(file, yaml);
}

/** A conversation built through the real loader from a scenario document. */
export function conversation(doc: Record<string, unknown>): Conversation {
  return scenarioFromText('test.json', JSON.stringify(doc));
}

/** One policy variant from a spec string such as `summary:threshold=40`. */
export function variant(spec: string): PolicyVariant {
  const r = policyFromString(spec);
  if (typeof r === 'string' || r.length !== 1) throw new Error(`bad spec ${spec}: ${String(r)}`);
  return r[0]!;
}

/** What a policy did in one turn: each model call's plan, then the upkeep after the turn. */
export interface TurnTrace {
  turn: number;
  calls: PromptPlan[];
  after: UpkeepCall[];
}

/** Drives a session the way the replay engine does (its driver): one call after the user message, one more after each round of tool results. */
export function trace(conversation: Conversation, spec: string, tokens = new TokenCounter('chars4'), seed = 42): TurnTrace[] {
  const v = variant(spec);
  const deps = { tokens, random: streamFor(seed, conversation.id, v.name), model: 'gpt-4o-mini', blocks };
  const driver = new SessionDriver(conversation, (start) => v.policy.start(start, v.params, deps));
  return conversation.turns.map((turn) => {
    const info = driver.begin(turn);
    const calls = driver.prompt(turn, info).map((c) => c.plan);
    const after = driver.commit(turn, info);
    return { turn: turn.index, calls, after };
  });
}

/** A prompt as short labels: `system`, `summary`, `facts`, `u1`, `a1`, `call3`, `tool3`, and `r:u1`, `r:tool3` for retrieved memories. */
export function labels(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    if (m.origin === 'retrieved') {
      const [, turn, what] = /^Earlier \(turn (\d+), ([^)]+)\)/.exec(m.content)!;
      return `r:${KIND[what!]}${turn}`;
    }
    if (m.origin) return m.origin;
    if (m.role === 'system') return 'system';
    const kind = m.role === 'user' ? 'u' : m.role === 'tool' ? 'tool' : m.toolCalls?.length ? 'call' : 'a';
    return `${kind}${m.turn}`;
  });
}

const KIND: Record<string, string> = { user: 'u', assistant: 'a', 'tool call': 'call', 'tool result': 'tool' };

/** A scenario file under test/fixtures. */
export function fixture(name: string): Conversation {
  return scenarioFromFile(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), `test/fixtures/${name}`);
}

/** A shipped scenario under scenarios/. */
export function shipped(name: string): Conversation {
  return scenarioFromFile(fileURLToPath(new URL(`../scenarios/${name}`, import.meta.url)), `scenarios/${name}`);
}

/** Every shipped scenario, in file order. */
export function allShipped(): Conversation[] {
  return readdirSync(fileURLToPath(new URL('../scenarios', import.meta.url)))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map(shipped);
}

/** Words that make messages overlap (so retrieval finds things) and carry fact values. */
const VOCAB = [
  'order', 'number', 'SE-10423', 'email', 'kavya@new.example', 'socks', 'cart', 'delivery', 'refund', 'plumber', 'task', 'T-481',
  'memo', 'tomorrow', 'nine', 'please', 'the', 'my', 'is', 'what', 'was', 'can', 'you', 'repeat', 'that', 'Kavya', 'arrived', 'late',
  'size', 'blue', 'running', 'DryFit', '249', 'Rs', 'again', 'thanks', 'code', 'function', 'Rust', '<|endoftext|>',
];

const words = (max: number) => fc.array(fc.constantFrom(...VOCAB), { minLength: 1, maxLength: max }).map((w) => w.join(' '));

const turnArb = fc.record({
  user: words(40),
  assistant: fc.option(words(60), { nil: undefined }),
  rounds: fc.array(
    fc.record({
      say: fc.option(words(10), { nil: undefined }),
      calls: fc.array(fc.record({ name: fc.constantFrom('create_task', 'update_task', 'lookup_order'), args: words(8), result: words(20) }), { minLength: 1, maxLength: 2 }),
    }),
    { maxLength: 3 },
  ),
  fact: fc.option(fc.constantFrom('SE-10423', 'T-481', 'kavya@new.example', 'blue'), { nil: undefined }),
  gap: fc.integer({ min: 0, max: 4000 }),
});

/**
 * Random conversations of overlapping words: up to 24 turns, some without a
 * reply, some with up to three rounds of one or two tool calls (an agent's
 * loop), some stating a fact.
 */
export const randomConversation: fc.Arbitrary<Conversation> = fc
  .record({ system: fc.option(words(30), { nil: undefined }), turns: fc.array(turnArb, { minLength: 1, maxLength: 24 }) })
  .map(({ system, turns }) =>
    generated('generated', system, turns, (t, index): Turn => {
      let n = 0;
      const tools: Message[] = t.rounds.flatMap((round) => {
        const calls = round.calls.map((c) => ({ id: `call_${index}_${++n}`, name: c.name, arguments: JSON.stringify({ q: c.args }) }));
        return [
          { role: 'assistant', content: round.say ?? '', toolCalls: calls, turn: index } satisfies Message,
          ...round.calls.map((c, j): Message => ({ role: 'tool', content: c.result, toolCallId: calls[j]!.id, turn: index })),
        ];
      });
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
  );

/** A generated conversation: its id, optional system prompt, and each drawn turn made a Turn (numbered from 1). */
function generated<T>(id: string, system: string | undefined, turns: readonly T[], turn: (t: T, index: number) => Turn): Conversation {
  return {
    id,
    system: system === undefined ? [] : [{ role: 'system', content: system }],
    userId: 'user',
    forgets: [],
    source: 'generated',
    turns: turns.map((t, i) => turn(t, i + 1)),
  };
}

/** The conversation with one forget event (of up to two facts stated so far) and, given `injectAt`, one injection turn, placed by the draws. */
export function withSafetyEvents(c: Conversation, forgetAt: number, injectAt?: number): Conversation {
  const after = 1 + (forgetAt % c.turns.length);
  const stated = [...new Set(c.turns.slice(0, after).flatMap((t) => Object.keys(t.facts)))];
  const forgets = stated.length ? [{ afterTurn: after, facts: stated.slice(0, 2) }] : [];
  const flagged = injectAt === undefined ? -1 : injectAt % c.turns.length;
  return { ...c, forgets, turns: c.turns.map((t, i) => (i === flagged ? { ...t, injection: true } : t)) };
}

/** Words for long fact values: each value is a run of them, so values are long and share words. */
const LONG_WORDS = ['maple', 'harbor', 'violet', 'seven', 'lantern', 'copper', 'meadow', 'Oslo', 'quartz', '42', 'river', 'saffron', 'tundra', 'ember', 'K-77'];

const longTurn = fc.record({
  filler: words(30),
  /** Facts the turn states: up to 3, of 8 names (so facts are stated again), each value 1–90 words. */
  facts: fc.array(fc.record({ name: fc.integer({ min: 0, max: 7 }), value: fc.array(fc.constantFrom(...LONG_WORDS), { minLength: 1, maxLength: 90 }).map((w) => w.join(' ')) }), { maxLength: 3 }),
  /** Now and then a reply or tool result of up to 400 words: an exchange that alone may break a budget. */
  big: fc.option(fc.array(fc.constantFrom(...VOCAB), { minLength: 50, maxLength: 400 }).map((w) => w.join(' ')), { nil: undefined, freq: 6 }),
  reply: fc.option(words(40), { nil: undefined }),
});

/**
 * Random conversations with long and many facts: up to 30 turns, each
 * stating up to 3 facts of up to 90 words (8 fact names, so facts come back
 * with new values), some turns with a very long reply.
 */
export const longFactConversation: fc.Arbitrary<Conversation> = fc
  .record({ system: fc.option(words(20), { nil: undefined }), turns: fc.array(longTurn, { minLength: 1, maxLength: 30 }) })
  .map(({ system, turns }) =>
    generated('long-facts', system, turns, (t, index): Turn => {
      const facts = Object.fromEntries(t.facts.map((f) => [`fact_${f.name}`, f.value]));
      const stated = Object.entries(facts).map(([k, v]) => `My ${k} is ${v}.`);
      const reply = t.big ?? t.reply;
      return {
        index,
        user: { role: 'user', content: [t.filler, ...stated].join(' '), turn: index },
        tools: [],
        ...(reply !== undefined && { assistant: { role: 'assistant', content: reply, turn: index } }),
        facts,
        probe: [],
        gapSeconds: 30,
        injection: false,
      };
    }),
  );

/**
 * A policy to break: sends the whole transcript (like `full`, but it stores
 * every turn whatever `moderation` says, and erases forgotten values in
 * place), under a budget it may be told to keep, with some of its session
 * changed by `change`.
 */
export function brokenPolicy(id: string, change: (s: { conversation: Conversation; stored: Message[][]; session: PolicySession }) => Partial<PolicySession>): Policy {
  return definePolicy({
    id,
    describe: 'broken on purpose',
    params: z.object({ budget: int({ default: 100_000, min: 1, describe: BUDGET }) }),
    start(conversation) {
      const stored: Message[][] = [];
      const head = [...conversation.system];
      const session: PolicySession = {
        prompt: (pending) => ({ messages: [...head, ...stored.flat(), ...pending], overBudget: false, upkeep: [], stablePrefix: head.length }),
        commit: (exchange) => (stored.push([...exchange]), []),
        forget: (facts) => {
          const values = facts.flatMap((f) => f.values);
          const erase = (m: Message) => (values.some((v) => m.content.toLowerCase().includes(v)) ? { ...m, content: '[forgotten]' } : m);
          stored.splice(0, stored.length, ...stored.map((e) => e.map(erase)));
          return [];
        },
        artifacts: () => [{ kind: 'transcript', texts: stored.flat().map((m) => m.content), bytes: 0 }],
      };
      return { ...session, ...change({ conversation, stored, session }) };
    },
  });
}
