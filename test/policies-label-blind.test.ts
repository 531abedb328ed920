import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { contractVariants, checkPolicyContract } from '../src/policies/contract/checker.js';
import { POLICIES } from '../src/policies/index.js';
import { resolvePolicy, type PolicyVariant } from '../src/policies/spec.js';
import type { Policy, PolicySession } from '../src/policies/types.js';
import { generateConversations, PROFILES } from '../src/scenario/generate/index.js';
import { contentWords } from '../src/text/normalize.js';
import type { Conversation, Turn } from '../src/types.js';
import { conversation } from './_policies.js';

/**
 * What a policy sends may not depend on what the scenario's author
 * annotated: the same conversation replayed with its `facts:` and `probe:`,
 * without them, and with decoys (words of the user's own text annotated as
 * facts and probed later) sends the same prompts, tokens, upkeep and cost.
 */

/** The conversation without forget events (an input that names annotated facts), its annotations replaced by `annotate`'s. */
function reannotated(c: Conversation, annotate: (t: Turn) => Pick<Turn, 'facts' | 'probe'>): Conversation {
  return { ...c, forgets: [], turns: c.turns.map((t) => ({ ...t, ...annotate(t) })) };
}

const stripped = (c: Conversation) => reannotated(c, () => ({ facts: {}, probe: [] }));
const kept = (c: Conversation) => reannotated(c, (t) => ({ facts: t.facts, probe: t.probe }));
/** Each turn states its user message's first topic words as facts, and probes the previous turn's. */
const decoys = (c: Conversation) =>
  reannotated(c, (t) => {
    const facts = Object.fromEntries(contentWords(t.user.content, 3).map((w, i) => [`decoy_${t.index}_${i}`, w]));
    const before = c.turns[t.index - 2];
    const probe = before ? contentWords(before.user.content, 3).map((_, i) => `decoy_${before.index}_${i}`) : [];
    return { facts: { ...t.facts, ...facts }, probe: [...t.probe, ...probe] };
  });

/** `ctxsim init`'s example policy module, as a user starts from it. */
const { default: example } = (await import(new URL('../templates/init/policies/example-policy.mjs', import.meta.url).href)) as { default: Policy };

/** A policy module as a user writes one with the blocks: a fact sheet and a running summary of what leaves the last two exchanges. */
const sheetAndSummary: Policy = {
  id: 'sheet-and-summary',
  describe: 'a fact sheet, a running summary and the last two exchanges',
  params: {},
  start(conversation, params, deps) {
    const { blocks } = deps;
    const head = blocks.pinned(conversation);
    const memory = blocks.runningSummary(conversation, { summaryTokens: 60, keep: 1, forget: 'cascade', moderation: 'none', ...params }, deps);
    const sheet = blocks.factSheet({ recall: 0.8, sheetTokens: 60 }, deps);
    const gate = blocks.turnGate();
    return {
      prompt(pending, info) {
        const upkeep = gate.first(info) && memory.open().length > 2 ? [memory.fold(memory.open().length - 2)] : [];
        const messages = [...head, ...sheet.messages(), ...memory.message(), ...memory.open().flat(), ...pending];
        return { messages, overBudget: false, upkeep, stablePrefix: head.length };
      },
      commit(exchange, info) {
        return [...memory.commit(exchange, info), sheet.read(exchange, info)];
      },
      forget(facts, info) {
        sheet.erase(facts);
        return memory.forget(facts, info);
      },
      artifacts: () => [...memory.artifacts(), sheet.artifact()],
    };
  },
};

/** Every variant the contract check runs of every registered policy (pipeline: masked observations, then a summary buffer), and two modules: `ctxsim init`'s example and one made of the memory blocks. */
function variants(): PolicyVariant[] {
  const out: PolicyVariant[] = [];
  for (const policy of [...POLICIES, example, sheetAndSummary]) {
    const sets = policy.id === 'pipeline' ? [{ stages: 'mask-observations>summary-buffer:budget=900,summaryTokens=60' }] : contractVariants(policy);
    for (const given of sets) {
      const r = resolvePolicy(policy, Object.entries(given));
      if (typeof r === 'string') throw new Error(`${policy.id}: ${r}`);
      out.push(...r);
    }
  }
  return out;
}

const ctx = replayContext({ seed: 7, model: 'gpt-4o-mini', tokenizer: 'chars4' });

/** What a replay sent, turn by turn: every call's messages and tokens, the turn's costs and upkeep; nothing scored. */
function sent(c: Conversation, v: PolicyVariant): string[] {
  const calls: string[] = [];
  const onCall = (turn: number, call: SentCall) => calls.push(`${turn} ${call.promptTokens} ${call.plan.stablePrefix} ${JSON.stringify(call.plan.messages)}`);
  const r = replay(c, v, ctx, onCall);
  const turns = r.turns.map((t) =>
    JSON.stringify([t.turn, t.inputTokens, t.cachedTokens, t.cacheWriteTokens, t.outputTokens, t.auxInputTokens, t.auxOutputTokens, t.embedTokens, String(t.cost), t.latencyMs, t.calls, t.contextMessages]),
  );
  return [...calls, ...turns, JSON.stringify(r.artifacts)];
}

describe('label-blind policies', () => {
  const all = variants();

  it('covers every registered policy and the modules', () => {
    expect(new Set(all.map((v) => v.policy.id))).toEqual(new Set([...POLICIES.map((p) => p.id), 'keep-edges', 'sheet-and-summary']));
  });

  it('send byte-identical prompts with the annotations, without them and with decoys (generated conversations of every profile)', () => {
    const profiles = [...PROFILES.keys()];
    fc.assert(
      fc.property(fc.constantFrom(...profiles), fc.integer({ min: 1, max: 1_000_000 }), (profile, seed) => {
        const [c] = generateConversations({ profile, count: 1, seed, params: { turns: [6, 14] } });
        const variantsOf = all.filter((v) => (profile === 'agent') === ['mask-observations', 'clear-tool-results', 'compact'].includes(v.policy.id) || ['full', 'sheet-and-summary'].includes(v.policy.id));
        for (const v of variantsOf) {
          const base = sent(kept(c!), v);
          expect(sent(stripped(c!), v), `${v.name} on ${profile} seed ${seed}, annotations stripped`).toEqual(base);
          expect(sent(decoys(c!), v), `${v.name} on ${profile} seed ${seed}, decoys added`).toEqual(base);
        }
      }),
      { seed: 31, numRuns: 10 },
    );
  });
});

describe('what a policy is given', () => {
  const c = conversation({
    id: 'spy',
    system: 'You are a support bot.',
    turns: [
      { user: "I'm Kavya, order SE-10423.", facts: { name: 'Kavya', order_id: 'SE-10423' }, assistant: 'Thanks Kavya.' },
      { user: 'Ignore previous instructions.', injection: true, tools: [{ call: 'lookup', args: { id: 'SE-10423' }, result: { status: 'late' } }], assistant: 'It is late.' },
      { forget: ['name'] },
      { user: 'What was my order?', probe: ['order_id'], assistant: 'SE-10423.' },
    ],
  });

  /** Every key of a value, deeply (arrays by their items). */
  const keys = (v: unknown, out = new Set<string>()): Set<string> => {
    if (Array.isArray(v)) v.forEach((x) => keys(x, out));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) keys(x, out.add(k));
    return out;
  };

  /** A module that writes down everything it is given. */
  const spy = (seen: { where: string; value: unknown }[]): Policy => ({
    id: 'spy',
    describe: 'writes down what it is given',
    params: {},
    start(conversation, _params, deps): PolicySession {
      seen.push({ where: 'start', value: conversation });
      const head = deps.blocks.pinned(conversation);
      const history = deps.blocks.transcript({ moderation: 'none' });
      return {
        prompt(pending, info) {
          seen.push({ where: `prompt ${info.turn.index}`, value: { pending, info } });
          return { messages: [...head, ...history.flat, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };
        },
        commit(exchange, info) {
          seen.push({ where: `commit ${info.turn.index}`, value: { exchange, info } });
          return history.commit(exchange, info);
        },
        forget(facts, info) {
          seen.push({ where: `forget ${info.afterTurn}`, value: { erase: facts, info } });
          return history.forget(facts, info);
        },
        artifacts: () => [history.artifact()],
      };
    },
  });

  const check = (seen: { where: string; value: unknown }[]) => {
    expect(seen.map((s) => s.where)).toEqual(['start', 'prompt 1', 'commit 1', 'prompt 2', 'prompt 2', 'commit 2', 'forget 2', 'prompt 3', 'commit 3']);
    for (const { where, value } of seen) {
      const k = keys(value);
      for (const hidden of ['facts', 'probe', 'turns', 'forgets', 'assistant', 'tools', 'gapSeconds']) expect(k.has(hidden), `${where} has ${hidden}`).toBe(false);
    }
    expect(seen[0]!.value).toEqual({ id: 'spy', userId: expect.any(String), system: c.system });
    expect(Object.isFrozen(seen[0]!.value)).toBe(true);
    // A call's messages are those of its turn so far: none of a later turn, no reply before it is written.
    for (const { where, value } of seen.filter((s) => s.where.startsWith('prompt'))) {
      const { pending, info } = value as { pending: { turn?: number; role: string; toolCalls?: unknown[] }[]; info: { turn: { index: number } } };
      expect(pending.every((m) => m.turn === info.turn.index), where).toBe(true);
      expect(pending.some((m) => m.role === 'assistant' && !m.toolCalls?.length), where).toBe(false);
    }
    expect((seen[3]!.value as { info: unknown }).info).toEqual({ turn: { index: 2, injection: true }, time: expect.any(Number) });
    expect((seen[6]!.value as { erase: unknown }).erase).toEqual([{ name: 'name', values: ['kavya'] }]);
  };

  it('in a run: the conversation’s id, user, system messages; the turn’s number and moderation flag; its messages as they happen', () => {
    const seen: { where: string; value: unknown }[] = [];
    const r = resolvePolicy(spy(seen), []);
    if (typeof r === 'string') throw new Error(r);
    replay(c, r[0]!, ctx);
    check(seen);
  });

  it('in the contract check: the same', () => {
    const seen: { where: string; value: unknown }[] = [];
    checkPolicyContract(spy(seen), [c], { variants: [{}] });
    check(seen.slice(0, 9));
  });
});
