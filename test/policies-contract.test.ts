import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkPolicyContract, contractVariants } from '../src/policies/contract/checker.js';
import { CONTRACT_RULES, formatContractViolation, type ContractRule } from '../src/policies/contract/rules.js';
import { POLICIES, REGISTRY } from '../src/policies/index.js';
import type { Policy } from '../src/policies/types.js';
import { generateConversations, PROFILES } from '../src/scenario/generate/index.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message } from '../src/types.js';
import { allShipped, conversation, fixture, randomConversation, shipped, withSafetyEvents, brokenPolicy } from './_policies.js';

/**
 * Every registered policy keeps the policy contract (src/policies/contract/rules.ts)
 * under the parameter sets derived from its schema, on: the shipped
 * scenarios; the hand-made fixtures (forget and injection events, a turn
 * without a reply); two users whose conversations read alike, replayed
 * interleaved; generated conversations of every profile, each with a forget
 * event and an injection turn; and random conversations of overlapping
 * words. And each rule can fail: a policy broken on purpose breaks it.
 */

// Mira's conversation reads like Ravi's (the forget-and-inject fixture), so a shared store or summary would surely leak across.
const mira = conversation({
  id: 'mira',
  user: 'mira',
  system: 'You are a support agent for an online store. Be brief.',
  turns: [
    { user: "Hi, I'm Mira. My email is mira.s@post.example and my order is SE-55120.", facts: { name: 'Mira', email: 'mira.s@post.example', order_id: 'SE-55120' }, assistant: 'Thanks Mira, I found order SE-55120.' },
    { user: 'The kettle arrived with a cracked lid.', assistant: 'Sorry! A replacement lid or a refund?' },
    { user: 'A refund please.', tools: [{ call: 'start_refund', args: { order_id: 'SE-55120' }, result: { refund_id: 'RF-1204' } }], facts: { refund_id: 'RF-1204' }, assistant: 'Refund RF-1204 is on its way.' },
    { forget: ['email'] },
    { user: 'Which order do you have for me?', probe: ['order_id'], assistant: 'Order SE-55120.' },
    { user: 'And my phone? It is 91234 56789.', facts: { phone: '91234 56789' }, injection: true, assistant: 'Noted.' },
    { user: 'When will the refund arrive?', probe: ['refund_id'], assistant: 'RF-1204: in 3 to 5 days.' },
  ],
});

// An agent's turn: rounds of tool calls, each a model call, the fact first seen in a tool result.
const agent = conversation({
  id: 'agent-rounds',
  user: 'dev',
  system: 'You fix bugs in the repository.',
  turns: [
    {
      user: 'The date parser crashes on leap days; fix it.',
      tools: [
        { assistant: 'Searching for the parser.', calls: [{ call: 'search', args: { query: 'parse_date' }, result: 'src/dates.py:14' }] },
        { calls: [{ call: 'read_file', args: { path: 'src/dates.py' }, result: 'def parse_date(text): ...' }, { call: 'run_tests', result: 'FAILED test_leap_day' }] },
        { calls: [{ call: 'edit_file', args: { path: 'src/dates.py' }, result: 'edited' }] },
      ],
      facts: { failing_test: 'test_leap_day' },
      assistant: 'Fixed the leap-day bug.',
    },
    { user: 'Run the tests again.', tools: [{ calls: [{ call: 'run_tests', result: 'all passed' }] }, { assistant: 'One more check.', calls: [{ call: 'lint', result: 'clean' }] }] },
    { user: 'Which test was failing before?', probe: ['failing_test'], assistant: 'test_leap_day.' },
  ],
});

// Companion chats run 50–300 turns by default, coding sessions 10–60 with large code blocks and agent sessions 20–200 rounds of long tool results: shorter ones keep this fast.
const LENGTHS: Record<string, Record<string, unknown> | undefined> = { companion: { turns: [8, 30] }, coding: { turns: [6, 20] }, agent: { turns: [2, 4], steps: [2, 8], observationTokens: 150 } };
const generated = [...PROFILES.keys()].flatMap((profile) =>
  Array.from({ length: 10 }, (_, k) => {
    const params = LENGTHS[profile];
    const [c] = generateConversations({ profile, count: 1, seed: 100 + k, prefix: `${profile}-contract`, ...(params && { params }) });
    return withSafetyEvents(c!, 3 * k + 2, 5 * k + 1);
  }),
);
const random = fc.sample(randomConversation, { seed: 42, numRuns: 30 }).map((c, k) => withSafetyEvents({ ...c, id: `random-${k + 1}` }, k, 2 * k + 1));

const CONVERSATIONS: Conversation[] = [
  ...allShipped(),
  fixture('safety/forget-and-inject.yaml'),
  mira,
  fixture('spec-example.yaml'),
  fixture('late-order-tools.yaml'),
  agent,
  ...generated,
];

const o200k = new TokenCounter('o200k_base');
const chars4 = new TokenCounter('chars4');

// A pipeline's parameter is its stages: checked with stages that rewrite, trim, fold and compact, under each mode.
const PIPELINES = [
  { stages: 'mask-observations:keep=2 > summary-buffer:budget=500,keepRecent=1,summaryTokens=50' },
  { stages: 'mask-observations:keep=1,batch=2 > clear-tool-results:trigger=200,keep=1 > window-tokens:budget=300' },
  { stages: 'clear-tool-results:trigger=150,keep=1 > compact:window=600,keepRecent=1,summaryTokens=60,moderation=drop' },
  { stages: 'mask-observations:keep=1 > retrieval:topK=2,recent=1,sessionCap=3' },
  { stages: 'mask-observations:keep=1 > summary:threshold=300,summaryTokens=40,forget=naive' },
];

describe('every registered policy keeps the contract', () => {
  it.each(POLICIES.map((p) => [p.id, p] as const))('%s', (_, policy) => {
    const variants = policy.id === 'pipeline' ? { variants: PIPELINES } : {};
    const broken = [
      ...checkPolicyContract(policy, CONVERSATIONS, { tokens: o200k, ...variants }),
      ...checkPolicyContract(policy, random, { tokens: chars4, ...variants }),
    ];
    expect(broken.map(formatContractViolation)).toEqual([]);
  });

  it('under the parameter sets derived from its schema: defaults, smaller numbers, optional ones set, each mode', () => {
    expect(contractVariants(REGISTRY.get('full')!)).toEqual([{}, { moderation: 'drop' }, { sessionCap: 3 }, { sessionCap: 3, forget: 'naive' }]);
    expect(contractVariants(REGISTRY.get('summary-buffer')!)).toEqual([
      {},
      { budget: 500, keepRecent: 1, summaryTokens: 50, keep: 0.5 },
      { budget: 500, keepRecent: 1, summaryTokens: 50, keep: 0.5, moderation: 'drop' },
      { budget: 200, keepRecent: 0, batch: 3, summaryTokens: 20, keep: 0.5, sessionCap: 3 },
      { budget: 200, keepRecent: 0, batch: 3, summaryTokens: 20, keep: 0.5, sessionCap: 3, forget: 'naive' },
    ]);
    expect(contractVariants(REGISTRY.get('retrieval')!)[3]).toMatchObject({ maxAge: '30m', sessionCap: 3 });
  });
});

let starts = 0;
let shared: Message[][] = [];

/** Each rule, and a policy that breaks it. */
const BROKEN: [ContractRule, Policy][] = [
  ['system-pinned', brokenPolicy('no-system', ({ stored }) => ({ prompt: (pending) => ({ messages: [...stored.flat(), ...pending], overBudget: false, upkeep: [], stablePrefix: 0 }) }))],
  [
    'first-user',
    brokenPolicy('reply-first', ({ conversation, stored }) => ({
      prompt: (pending) => ({ messages: [...conversation.system, ...stored.flat().slice(1), ...pending], overBudget: false, upkeep: [], stablePrefix: 1 }),
    })),
  ],
  ['current-turn-last', brokenPolicy('turn-first', ({ stored }) => ({ prompt: (pending) => ({ messages: [...pending, ...stored.flat()], overBudget: false, upkeep: [], stablePrefix: 0 }) }))],
  ['tool-pairs', REGISTRY.get('window-turns')!],
  [
    'whole-turns',
    brokenPolicy('users-only', ({ conversation, stored }) => ({
      prompt: (pending) => ({ messages: [...conversation.system, ...stored.flat().filter((m) => m.role === 'user'), ...pending], overBudget: false, upkeep: [], stablePrefix: 1 }),
    })),
  ],
  ['budget', brokenPolicy('over-budget', () => ({}))],
  ['plan', brokenPolicy('half-token', ({ session }) => ({ prompt: (pending, info) => ({ ...session.prompt(pending, info), upkeep: [{ kind: 'summary', model: 'm', inputTokens: 1.5, outputTokens: 1, sync: true }] }) }))],
  [
    'provider-rules',
    brokenPolicy('empty-memo', ({ conversation, session }) => ({
      prompt: (pending, info) => {
        const plan = session.prompt(pending, info);
        const at = conversation.system.length;
        return { ...plan, messages: [...plan.messages.slice(0, at), { role: 'system', content: ' ', origin: 'summary' }, ...plan.messages.slice(at)], stablePrefix: at + 1 };
      },
    })),
  ],
  [
    'determinism',
    brokenPolicy('counter', ({ session }) => {
      const n = starts++;
      return { commit: (exchange, info) => [...session.commit(exchange, info), { kind: 'summary', model: 'm', inputTokens: n, outputTokens: 0, sync: false }] };
    }),
  ],
  [
    'isolation',
    brokenPolicy('shared', ({ conversation, session }) => {
      shared = [];
      const head = [...conversation.system];
      return {
        prompt: (pending) => ({ messages: [...head, ...shared.flat(), ...pending], overBudget: false, upkeep: [], stablePrefix: head.length }),
        commit: (exchange, info) => (shared.push([...exchange]), session.commit(exchange, info)),
      };
    }),
  ],
  [
    'forget-cascade',
    brokenPolicy('summary-keeps-all', ({ session, stored }) => {
      const kept: string[] = [];
      return {
        commit: (exchange, info) => (kept.push(...exchange.map((m) => m.content)), session.commit(exchange, info)),
        artifacts: () => [{ kind: 'summary', texts: [...kept], bytes: 0 }, { kind: 'transcript', texts: stored.flat().map((m) => m.content), bytes: 0 }],
      };
    }),
  ],
  ['moderation', brokenPolicy('stores-everything', () => ({}))],
];

/** The parameters each broken policy is checked with. */
const GIVEN: Partial<Record<ContractRule, Record<string, unknown>[]>> = {
  'tool-pairs': [{ turns: 2, naive: true }],
  budget: [{ budget: 300 }],
  moderation: [{ moderation: 'drop' }],
};

describe('each rule can fail', () => {
  it('a broken policy for every rule', () => {
    expect(BROKEN.map(([rule]) => rule)).toEqual(CONTRACT_RULES);
  });

  it.each(BROKEN)('%s', (rule, policy) => {
    const found = checkPolicyContract(policy, [shipped('voice-assistant-tasks.yaml'), fixture('safety/forget-and-inject.yaml'), mira], { tokens: chars4, variants: GIVEN[rule] ?? [{}] });
    expect(found.map((v) => v.rule)).toContain(rule);
    const first = found.find((v) => v.rule === rule)!;
    expect(first.policy.startsWith(policy.id)).toBe(true);
    expect(formatContractViolation(first)).toMatch(new RegExp(`^${policy.id}[^ ]*: ${rule}: [a-z-]+ turn \\d+: .+`));
  });

  it('checks determinism and isolation on a single conversation too', () => {
    const rules = (policy: Policy) => checkPolicyContract(policy, [fixture('safety/forget-and-inject.yaml')]).map((v) => v.rule);
    expect(rules(BROKEN.find(([r]) => r === 'determinism')![1])).toContain('determinism');
    expect(rules(BROKEN.find(([r]) => r === 'isolation')![1])).toContain('isolation');
  });

  it('names the policy, rule, scenario and turn', () => {
    const found = checkPolicyContract(REGISTRY.get('window-turns')!, [shipped('voice-assistant-tasks.yaml')], { variants: [{ turns: 2, naive: true }] });
    expect(formatContractViolation(found.find((v) => v.rule === 'tool-pairs')!)).toBe('window-turns:turns=2,naive=true: tool-pairs: voice-assistant-tasks turn 5: call 1: tool result call_3_1 at 1 without its call right before it');
  });
});

describe('a policy written with a parameter table (the first documented shape)', () => {
  const table: Policy = {
    id: 'table-window',
    describe: 'the last N exchanges',
    params: { turns: { default: 4, kind: 'int', min: 0 } },
    start(c, params) {
      const stored: Message[][] = [];
      const head = [...c.system];
      const turns = typeof params.turns === 'number' ? params.turns : 0;
      return {
        prompt: (pending) => ({ messages: [...head, ...stored.slice(Math.max(0, stored.length - turns)).flat(), ...pending], overBudget: false, upkeep: [], stablePrefix: head.length }),
        commit: (exchange) => (stored.push([...exchange]), []),
        forget: (facts) => {
          const values = facts.flatMap((f) => f.values);
          stored.splice(0, stored.length, ...stored.map((e) => e.map((m) => (values.some((v) => m.content.toLowerCase().includes(v)) ? { ...m, content: '[forgotten]' } : m))));
          return [];
        },
        artifacts: () => [{ kind: 'transcript', texts: stored.flat().map((m) => m.content), bytes: 0 }],
      };
    },
  };

  it('is checked the same way, its variants derived from the table', () => {
    expect(contractVariants(table)).toEqual([{}, { turns: 1 }, { turns: 1, moderation: 'drop' }, { turns: 0, sessionCap: 3 }, { turns: 0, sessionCap: 3, forget: 'naive' }]);
    // It ignores sessionCap and moderation: the contract says which of its promises it breaks.
    const rules = new Set(checkPolicyContract(table, [fixture('safety/forget-and-inject.yaml')]).map((v) => `${v.policy} ${v.rule}`));
    expect([...rules]).toEqual(['table-window:turns=1,moderation=drop moderation']);
  });
});

describe('a policy that calls the run’s upkeep itself (deps.upkeep)', () => {
  // As docs/custom-policies.md advises: the embedding it stores is the run's, simulated here as in a run.
  const recall: Policy = {
    id: 'recall-users',
    describe: 'every exchange, and an embedding of each user message',
    params: {},
    start(c, params, deps) {
      const history = deps.blocks.transcript(params as never);
      return {
        prompt: (pending) => ({ messages: [...c.system, ...history.flat, ...pending], overBudget: false, upkeep: [], stablePrefix: c.system.length }),
        commit: (exchange, info) => {
          const stored = history.commit(exchange, info);
          if (deps.blocks.moderated(params as never, info)) return stored;
          const { inputTokens } = deps.upkeep!.embed(exchange[0]!.content, 'text-embedding-3-small');
          return [...stored, { kind: 'embed', model: 'text-embedding-3-small', inputTokens, outputTokens: 0, sync: false }];
        },
        forget: history.forget,
        artifacts: () => [history.artifact()],
      };
    },
  };

  it('is given it by the contract check, as a run gives it', () => {
    expect(checkPolicyContract(recall, [fixture('safety/forget-and-inject.yaml')])).toEqual([]);
  });
});
