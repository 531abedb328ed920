import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { CtxsimError } from '../src/errors.js';
import { contractVariants } from '../src/policies/contract/checker.js';
import { guardPolicy } from '../src/policies/guard.js';
import { POLICIES } from '../src/policies/index.js';
import { resolvePolicy, type PolicyVariant } from '../src/policies/spec.js';
import type { Policy, PolicySession, PromptPlan } from '../src/policies/types.js';
import type { Conversation, Message } from '../src/types.js';
import { allShipped, conversation, brokenPolicy } from './_policies.js';
import { blocks } from '../src/policies/blocks.js';

/**
 * The guard every run wraps around a policy's sessions: the built-in
 * policies replay the shipped scenarios through it untouched; a policy that
 * breaks a per-call rule of the contract, returns a plan of the wrong
 * shape, or throws, stops the run with one line naming the policy, the turn
 * and the scenario (exit 2), what it threw kept as the cause.
 */

const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'chars4' });

/** The variants of a policy for the parameters given, each guarded under its canonical name. */
function guarded(policy: Policy, given: readonly (readonly [string, unknown])[] = []): PolicyVariant[] {
  const variants = resolvePolicy(policy, given);
  if (typeof variants === 'string') throw new Error(variants);
  return variants.map((v) => ({ ...v, policy: guardPolicy(v.policy, v.name) }));
}

describe('the built-in policies pass the guard', () => {
  const shipped = allShipped();
  const o200k = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'o200k_base' });

  it.each(POLICIES.map((p) => [p.id, p] as const))('%s, under the parameter sets the contract test derives', (_, policy) => {
    for (const given of contractVariants(policy)) {
      for (const v of guarded(policy, Object.entries(given))) {
        for (const c of shipped) expect(() => replay(c, v, o200k)).not.toThrow();
      }
    }
  });

  it('a module written in the documented shape too', async () => {
    // The module's default export, imported here: a run replays it on a thread of its own (test/policy-module-isolation.test.ts).
    const { default: policy } = (await import(new URL('./fixtures/policies/keep-edges.mjs', import.meta.url).href)) as { default: Policy };
    for (const v of guarded(policy, [['keep', [0, 1, 3]]])) {
      for (const c of shipped) expect(() => replay(c, v, o200k)).not.toThrow();
    }
  });
});

// Three turns, the second with a tool call (call_2_1), and a forget event after the first.
const tiny = conversation({
  id: 'tiny',
  user: 'ana',
  system: 'You are brief.',
  turns: [
    { user: 'Hi, my order is SE-1.', facts: { order_id: 'SE-1' }, assistant: 'Found SE-1.' },
    { forget: ['order_id'] },
    { user: 'Cancel my order.', tools: [{ call: 'cancel_order', args: { order_id: 'SE-1' }, result: { ok: true } }], assistant: 'Cancelled.' },
    { user: 'Thanks.', assistant: 'Bye.' },
  ],
});


/** A broken policy's prompt: its plan with some fields changed. */
const plan = (change: (plan: PromptPlan, pending: readonly Message[]) => Partial<PromptPlan> | Record<string, unknown>) =>
  brokenPolicy('broken', ({ session }) => ({ prompt: (pending, info) => ({ ...session.prompt(pending, info), ...change(session.prompt(pending, info), pending) }) as PromptPlan }));

/** The error a guarded replay of `tiny` stops with. */
function stops(policy: Policy, given: readonly (readonly [string, unknown])[] = []): CtxsimError {
  try {
    replay(tiny, guarded(policy, given)[0]!, ctx);
  } catch (e) {
    if (e instanceof CtxsimError) return e;
    throw e;
  }
  throw new Error('the replay did not stop');
}

const summary = { kind: 'summary', model: 'gpt-4o-mini', inputTokens: 10, outputTokens: 5, sync: true } as const;

describe('a broken rule stops the run: one line naming the policy, the turn and the scenario', () => {
  it.each<[string, Policy, (readonly [string, unknown])[], string]>([
    ['system-pinned', brokenPolicy('broken', ({ stored }) => ({ prompt: (pending) => ({ messages: [...stored.flat(), ...pending], overBudget: false, upkeep: [], stablePrefix: 0 }) })), [], 'broken: turn 1 of tiny: system-pinned: message 0 is not the system prompt'],
    [
      'system-pinned (late)',
      plan((p, pending) => ({ messages: [...p.messages.slice(0, -pending.length), { role: 'system', content: 'memo', origin: 'summary' }, ...pending] })),
      [],
      'broken: turn 2 of tiny: system-pinned: system message at 3 after the conversation started',
    ],
    [
      'first-user',
      brokenPolicy('broken', ({ conversation, stored }) => ({ prompt: (pending) => ({ messages: [...conversation.system, ...stored.flat().slice(1), ...pending], overBudget: false, upkeep: [], stablePrefix: 1 }) })),
      [],
      'broken: turn 2 of tiny: first-user: the first message after the system messages is an assistant message',
    ],
    [
      'current-turn-last',
      brokenPolicy('broken', ({ conversation, stored }) => ({ prompt: (pending) => ({ messages: [...conversation.system, ...pending, ...stored.flat()], overBudget: false, upkeep: [], stablePrefix: 1 }) })),
      [],
      'broken: turn 2 of tiny: current-turn-last: the current turn is not sent last, its newest round in full: 2 message(s) after it',
    ],
    ['current-turn-last (in part)', plan((p, pending) => ({ messages: p.messages.slice(0, p.messages.length - pending.length + 1) })), [], 'broken: turn 2 of tiny, call 2: current-turn-last: the current turn is not sent last, its newest round in full: round 1 is cut short'],
    [
      'tool-pairs',
      plan((p, pending) => ({ messages: [...p.messages.slice(0, -pending.length).filter((m) => !m.toolCalls), ...pending] })),
      [],
      'broken: turn 3 of tiny: tool-pairs: tool result call_2_1 at 4 without its call right before it',
    ],
    [
      'tool-pairs (call without its result)',
      plan((p, pending) => ({ messages: [...p.messages.slice(0, -pending.length).filter((m) => m.role !== 'tool'), ...pending] })),
      [],
      'broken: turn 3 of tiny: tool-pairs: tool call call_2_1 at 4 without all its results right after it',
    ],
    ['whole-turns (the current turn twice)', plan((p, pending) => ({ messages: [...p.messages.slice(0, -pending.length), ...pending, ...pending] })), [], 'broken: turn 1 of tiny: whole-turns: turn 1, the current one, sent before its own messages (at 1)'],
    [
      'whole-turns (the current turn stored by prompt, not commit)',
      brokenPolicy('broken', ({ conversation, stored }) => ({ prompt: (pending) => (stored.push([...pending]), { messages: [...conversation.system, ...stored.flat(), ...pending], overBudget: false, upkeep: [], stablePrefix: 1 }) })),
      [],
      'broken: turn 1 of tiny: whole-turns: turn 1, the current one, sent before its own messages (at 1)',
    ],
    // Call 2 of turn 2 sends 21 chars4 tokens: turn 1's user message, erased after turn 1 ([forgotten]), counts 2 instead of 5.
    ['budget', brokenPolicy('broken', () => ({})), [['budget', 20]], 'broken:budget=20: turn 2 of tiny, call 2: budget: 21 tokens sent, budget 20'],
    ['budget (overBudget when under it)', plan(() => ({ overBudget: true })), [], 'broken: turn 1 of tiny: budget: overBudget, but the system prompt and the current turn take 8 tokens of 100000'],
    ['plan: stablePrefix', plan(() => ({ stablePrefix: 99 })), [], 'broken: turn 1 of tiny: plan: stablePrefix 99 outside 1…1'],
    ['plan: upkeep counts', plan(() => ({ upkeep: [{ ...summary, inputTokens: 1.5 }] })), [], 'broken: turn 1 of tiny: plan: upkeep summary with 1.5 in, 5 out (expected whole numbers of tokens ≥ 0)'],
    ['plan: messages', plan(() => ({ messages: undefined })), [], 'broken: turn 1 of tiny: plan: messages is undefined, not an array'],
    [
      'plan: one array for every prompt',
      brokenPolicy('broken', ({ conversation, stored }) => {
        const messages: Message[] = [];
        return { prompt: (pending) => (messages.splice(0, messages.length, ...conversation.system, ...stored.flat(), ...pending), { messages, overBudget: false, upkeep: [], stablePrefix: 1 }) };
      }),
      [],
      "broken: turn 2 of tiny: plan: the messages are the previous call's array again (each prompt is an array of its own, not changed after it is returned)",
    ],
    [
      'plan: the previous prompt changed after it was returned',
      brokenPolicy('broken', ({ session }) => {
        let last: Message[] | undefined;
        return { prompt: (pending, info) => (last?.push({ role: 'user', content: 'late' }), (last = [...session.prompt(pending, info).messages]), { messages: last, overBudget: false, upkeep: [], stablePrefix: 1 }) };
      }),
      [],
      "broken: turn 2 of tiny: plan: the previous call's prompt was changed after it was returned (each prompt is an array of its own, not changed after it is returned)",
    ],
    ['plan: upkeep counts missing', plan(() => ({ upkeep: [{ ...summary, inputTokens: undefined }] })), [], 'broken: turn 1 of tiny: plan: upkeep summary with undefined in, 5 out (expected whole numbers of tokens ≥ 0)'],
    ['plan: upkeep kind', plan(() => ({ upkeep: [{ ...summary, kind: 'chat' }] })), [], 'broken: turn 1 of tiny: plan: upkeep of kind "chat" (expected summary, extract, embed)'],
    ['plan: upkeep model', plan(() => ({ upkeep: [{ ...summary, model: undefined }] })), [], "broken: turn 1 of tiny: plan: upkeep summary with model undefined (expected a model's name)"],
    // A string "false" is truthy: taken as is, the user would wait for the call.
    ['plan: upkeep sync', plan(() => ({ upkeep: [{ ...summary, sync: 'false' }] })), [], 'broken: turn 1 of tiny: plan: upkeep summary with sync "false" (expected true or false)'],
    ['commit: upkeep sync missing', brokenPolicy('broken', () => ({ commit: () => [{ ...summary, sync: undefined }] as unknown as [] })), [], 'broken: turn 1 of tiny: commit: upkeep summary with sync undefined (expected true or false)'],
    ['plan: a message', plan((p) => ({ messages: [p.messages[0], { role: 'user', text: 'hi' }, ...p.messages.slice(1)] })), [], 'broken: turn 1 of tiny: plan: message 1 has content undefined, not a string'],
    ['plan: a role', plan((p) => ({ messages: [p.messages[0], { role: 'human', content: 'hi' }, ...p.messages.slice(1)] })), [], 'broken: turn 1 of tiny: plan: message 1 has role "human" (expected system, user, assistant or tool)'],
    [
      'plan: an origin',
      plan((p) => ({ messages: [p.messages[0], { role: 'system', content: 'Notes: none yet.', origin: 'notes' }, ...p.messages.slice(1)] })),
      [],
      'broken: turn 1 of tiny: plan: message 1 has origin "notes" (expected summary, retrieved or facts)',
    ],
    ['plan: overBudget', plan(() => ({ overBudget: 'no' })), [], 'broken: turn 1 of tiny: plan: overBudget is "no", not true or false'],
    ['plan: upkeep', plan(() => ({ upkeep: undefined })), [], 'broken: turn 1 of tiny: plan: upkeep is undefined, not an array'],
    ['plan: a promise (an async prompt)', brokenPolicy('broken', ({ session }) => ({ prompt: async (...call: Parameters<PolicySession['prompt']>) => session.prompt(...call) }) as never), [], "broken: turn 1 of tiny: plan: the plan is a promise (a policy's methods are synchronous: not async), not an object {messages, overBudget, upkeep, stablePrefix}"],
    ['commit: a promise (an async commit)', brokenPolicy('broken', ({ session }) => ({ commit: async (...call: Parameters<PolicySession['commit']>) => session.commit(...call) }) as never), [], "broken: turn 1 of tiny: commit: upkeep is a promise (a policy's methods are synchronous: not async), not an array"],
    ['plan: not an object', brokenPolicy('broken', () => ({ prompt: () => undefined as unknown as PromptPlan })), [], 'broken: turn 1 of tiny: plan: the plan is undefined, not an object {messages, overBudget, upkeep, stablePrefix}'],
    ['commit: upkeep', brokenPolicy('broken', () => ({ commit: () => undefined as unknown as [] })), [], 'broken: turn 1 of tiny: commit: upkeep is undefined, not an array'],
    ['forget: upkeep', brokenPolicy('broken', () => ({ forget: () => [{ ...summary, outputTokens: -1 }] })), [], 'broken: after turn 1 of tiny: forget: upkeep summary with 10 in, -1 out (expected whole numbers of tokens ≥ 0)'],
    ['artifacts: texts', brokenPolicy('broken', () => ({ artifacts: () => [{ kind: 'summary', texts: 'all of it', bytes: 9 }] as unknown as [] })), [], 'broken: after turn 3 of tiny: artifacts: artifact summary with texts "all of it" (expected a list of strings)'],
    ['artifacts: two of a kind', brokenPolicy('broken', () => ({ artifacts: () => [{ kind: 'facts', texts: [], bytes: 0 }, { kind: 'facts', texts: [], bytes: 0 }] })), [], 'broken: after turn 3 of tiny: artifacts: two artifacts of kind facts (one per kind)'],
    ['artifacts: bytes', brokenPolicy('broken', () => ({ artifacts: () => [{ kind: 'vectors', texts: [], bytes: -1 }] })), [], 'broken: after turn 3 of tiny: artifacts: artifact vectors with bytes -1 (expected a whole number ≥ 0)'],
    ['start: no session', brokenPolicy('broken', () => ({ artifacts: 'none' as unknown as () => [] })), [], 'broken: tiny: start returned a session without artifacts (each a function)'],
  ])('%s', (_, policy, given, message) => {
    const e = stops(policy, given);
    expect([e.message, e.code, e.exitCode]).toEqual([message, 'policy', 2]);
  });
});

describe('a run guards every policy it replays', () => {
  it('unguarded, the budget is checked with the counter the run prices prompts with: the same count', () => {
    const [v] = resolvePolicy(brokenPolicy('broken', () => ({})), [['budget', 20]]) as PolicyVariant[];
    expect(() => replay(tiny, v!, ctx)).toThrow('broken:budget=20: turn 2 of tiny, call 2: budget: 21 tokens sent, budget 20');
  });
});

describe('what a policy throws stops the run: one line, the thrown error its cause', () => {
  const boom = (where: string) => () => {
    throw new Error(`no memory left ${where}\n    at somewhere`);
  };

  it.each<[string, Partial<PolicySession>, string]>([
    ['prompt at turn 3', { prompt: (pending, info) => (info.turn.index === 3 ? boom('in prompt')() : { messages: [...pending], overBudget: false, upkeep: [], stablePrefix: 0 }) }, 'broken: turn 3 of tiny: threw: no memory left in prompt'],
    ['commit', { commit: boom('in commit') }, 'broken: turn 1 of tiny: commit threw: no memory left in commit'],
    ['forget', { forget: boom('in forget') }, 'broken: after turn 1 of tiny: forget threw: no memory left in forget'],
    ['artifacts', { artifacts: boom('in artifacts') }, 'broken: after turn 3 of tiny: artifacts threw: no memory left in artifacts'],
  ])('%s', (_, change, message) => {
    const policy = brokenPolicy('broken', ({ session }) => ({
      // The other turns' prompts keep the rules.
      ...(change.prompt && { prompt: (pending, info) => (info.turn.index === 3 ? change.prompt!(pending, info) : session.prompt(pending, info)) }),
      ...(change.commit && { commit: change.commit }),
      ...(change.forget && { forget: change.forget }),
      ...(change.artifacts && { artifacts: change.artifacts }),
    }));
    const e = stops(policy);
    expect([e.message, e.code, e.exitCode]).toEqual([message, 'policy', 2]);
    expect(e.cause).toBeInstanceOf(Error);
    expect((e.cause as Error).message).toMatch(/^no memory left/);
  });

  it('a message it was given is frozen: changing one throws instead of changing what the other policies send', () => {
    const policy = brokenPolicy('broken', ({ session }) => ({
      prompt: (pending, info) => {
        (pending[0] as { content: string }).content = 'changed';
        return session.prompt(pending, info);
      },
    }));
    const e = stops(policy);
    expect([e.message.split(': ').slice(0, 3).join(': '), e.code, e.exitCode]).toEqual(['broken: turn 1 of tiny: threw', 'policy', 2]);
    expect(e.cause).toBeInstanceOf(TypeError);
    // The scenario is unchanged: what it was replayed with is what every policy gets.
    expect(tiny.turns[0]!.user.content).toBe('Hi, my order is SE-1.');
  });

  it('start: named with the scenario; a thrown non-error as text', () => {
    const policy: Policy = {
      ...brokenPolicy('broken', () => ({})),
      start: () => {
        throw 'no config';
      },
    };
    const e = stops(policy);
    expect([e.message, e.cause]).toEqual(['broken: tiny: start threw: no config', 'no config']);
  });

  it('a policy written as a class: its methods and parameters are read through the prototype', () => {
    class Counting {
      readonly id = 'counting';
      readonly describe = 'a class';
      get params() {
        return { turns: { default: 1, kind: 'int' as const } };
      }
      start(c: Conversation) {
        return brokenPolicy('broken', () => ({})).start(c, { budget: 100_000 }, { tokens: ctx.tokens, random: () => 0, model: 'm', blocks });
      }
    }
    const [v] = guarded(new Counting());
    expect(v!.params.turns).toBe(1);
    expect(replay(tiny, v!, ctx).turns).toHaveLength(3);
  });

  it('start: not a session', () => {
    const policy: Policy = { ...brokenPolicy('broken', () => ({})), start: () => undefined as unknown as PolicySession };
    expect(stops(policy).message).toBe('broken: tiny: start returned undefined, not a session {prompt, commit, forget, artifacts}');
  });
});
