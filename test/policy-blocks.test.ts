import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runStudy } from '../src/engine/run.js';
import { blocks } from '../src/policies/blocks.js';
import { checkPolicyContract } from '../src/policies/contract/checker.js';
import { formatContractViolation } from '../src/policies/contract/rules.js';
import { definePolicy } from '../src/policies/define.js';
import { REGISTRY } from '../src/policies/index.js';
import { param } from '../src/policies/param.js';
import { BUDGET } from '../src/policies/params.js';
import { resolvePolicy, type PolicyVariant } from '../src/policies/spec.js';
import type { Blocks, Policy } from '../src/policies/types.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message, UpkeepCall } from '../src/types.js';
import type { SummaryRecord } from '../src/records/registry.js';
import { allShipped, fixture, trace } from './_policies.js';

/**
 * The building blocks (src/policies/blocks.ts): a policy composed of them,
 * reached through `deps.blocks` as a module that imports nothing would,
 * keeps the policy contract, and its memory — declared in `artifacts()` — is
 * scored for zombies and injection exposure exactly as a built-in policy
 * with the same memory is.
 */

/**
 * A running summary of old exchanges plus the newest exchanges that fit the
 * budget: summary-buffer's behaviour (with `batch` = `keepRecent`), composed
 * of blocks instead of its private pieces.
 */
const summaryWindow = definePolicy({
  id: 'summary-window',
  describe: 'a running summary of old exchanges + the newest exchanges that fit the budget',
  params: z.object({
    budget: param.int({ default: 2000, min: 1, describe: BUDGET }),
    keepRecent: param.int({ default: 4, min: 0, describe: 'exchanges kept verbatim after a fold' }),
    summaryModel: param.model({ describe: 'model the summarizer runs on (default: the chat model)' }),
    summaryTokens: param.int({ default: 200, min: 1, describe: 'size of the running summary, in tokens' }),
    keep: param.probability({ default: 1, describe: 'chance that each fold keeps each fact it read' }),
  }),
  start(conversation, params, deps) {
    const { tokens, blocks: b } = deps;
    const memory = b.runningSummary(conversation, params, deps);
    const head = b.pinned(conversation);
    const gate = b.turnGate();
    const { budget, keepRecent, summaryTokens } = params;
    const batch = Math.max(1, keepRecent);
    return {
      prompt(pending, info) {
        const upkeep: UpkeepCall[] = [];
        const fixed = b.fixedTokens(tokens, [...head, ...pending]);
        let open = memory.open();
        // Once a turn: fold all but the newest `keepRecent` exchanges (those that fit next to a full-size summary).
        if (gate.first(info) && open.length > keepRecent) {
          const current = fixed + b.sumTokens(tokens, memory.message()) + b.sumTokens(tokens, open.flat());
          if (open.length >= keepRecent + batch || current > budget) {
            const room = budget - fixed - b.systemMessageTokens(tokens, summaryTokens);
            upkeep.push(memory.fold(open.length - b.newestExchangesThatFit(tokens, open, room, keepRecent)));
            open = memory.open();
          }
        }
        let room = budget - fixed;
        if (room < 0) return { messages: [...head, ...pending], overBudget: true, upkeep, stablePrefix: head.length };
        const summary = memory.message().filter((m) => tokens.message(m) <= room);
        if (summary.length) room -= tokens.message(summary[0]!);
        const n = b.newestExchangesThatFit(tokens, open, room);
        return { messages: [...head, ...summary, ...open.slice(open.length - n).flat(), ...pending], overBudget: false, upkeep, stablePrefix: head.length + summary.length };
      },
      commit: memory.commit,
      forget: memory.forget,
      artifacts: memory.artifacts,
    };
  },
});

/** A fact sheet pinned after the system prompt, then the newest messages that fit the budget: facts' memory, a token window's prompt. */
const factsWindow = definePolicy({
  id: 'facts-window',
  describe: 'a fact sheet + the newest messages that fit the budget',
  params: z.object({
    budget: param.int({ default: 2000, min: 1, describe: BUDGET }),
    extractModel: param.model({ describe: 'model the extraction call runs on (default: the chat model)' }),
    recall: param.probability({ default: 1, describe: 'chance that the extractor finds each fact a turn states' }),
  }),
  start(conversation, params, deps) {
    const { tokens, blocks: b } = deps;
    const head = b.pinned(conversation);
    const history = b.transcript(params);
    const sheet = b.factSheet(params, deps);
    // What the window could send next to the pinned messages alone: all it needs to keep of the raw messages.
    const kept = (fixed: readonly Message[]) => b.newestThatFit(tokens, history.flat, params.budget - b.fixedTokens(tokens, fixed));
    return {
      prompt(pending) {
        let room = params.budget - b.fixedTokens(tokens, [...head, ...pending]);
        if (room < 0) return { messages: [...head, ...pending], overBudget: true, upkeep: [], stablePrefix: head.length };
        // The sheet first, when it fits; then the newest messages that fit what is left.
        const pinned = [...head, ...sheet.messages().filter((m) => tokens.message(m) <= room)];
        room -= b.sumTokens(tokens, pinned.slice(head.length));
        const recent = room > 0 ? b.fromFirstUser(b.newestThatFit(tokens, history.flat, room)) : [];
        return { messages: [...pinned, ...recent, ...pending], overBudget: false, upkeep: [], stablePrefix: pinned.length };
      },
      commit(exchange, info) {
        if (b.moderated(params, info)) return [];
        const call = sheet.read(exchange, info);
        history.add(exchange);
        return [call];
      },
      forget(facts, info) {
        history.forget(facts, info);
        if (b.cascades(params)) sheet.erase(facts);
        return [];
      },
      artifacts: () => [b.transcriptArtifact(kept(head)), sheet.artifact()],
    };
  },
});

const safety = fixture('safety/forget-and-inject.yaml');

/** The variants of a spec given as [key, value] pairs. */
function variants(policy: Policy, given: [string, unknown][]): PolicyVariant[] {
  const r = resolvePolicy(policy, given);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

/** The summary rows of a run of these variants on one conversation, by variant name. */
function rows(conversation: Conversation, policies: PolicyVariant[]): Map<string, SummaryRecord> {
  const r = runStudy({ conversations: [conversation], policies, seed: 42, models: ['gpt-4o-mini'], tokenizer: 'chars4' });
  return new Map(r.summary.map((s) => [s.policy, s]));
}

/** The safety columns of a summary row. */
const safetyOf = (s: SummaryRecord) => ({
  zombieArtifacts: s.zombieArtifacts,
  zombies: s.zombies,
  zombiePromptTurns: s.zombiePromptTurns,
  zombieProbes: s.zombieProbes,
  injectionExposureTurns: s.injectionExposureTurns,
});

describe('the building blocks', () => {
  it('are one frozen object: the deps of every session (run, contract check, tests) hold the exported one', () => {
    expect(Object.isFrozen(blocks)).toBe(true);
    const seen = new Set<Blocks>();
    const spy: Policy = {
      ...REGISTRY.get('full')!,
      id: 'spy',
      start(conversation, params, deps) {
        seen.add(deps.blocks);
        return REGISTRY.get('full')!.start(conversation, params, deps);
      },
    };
    rows(safety, variants(spy, []));
    expect(checkPolicyContract(spy, [safety], { variants: [{}] })).toEqual([]);
    trace(safety, 'full');
    expect([...seen]).toEqual([blocks]);
  });

  it('a transcript stores whole exchanges, skips moderated turns, restarts after sessionCap and redacts', () => {
    const t = blocks.transcript({ sessionCap: 3, moderation: 'drop' });
    const [t1, t2, t3, t4] = safety.turns;
    const ex = (turn: typeof t1) => [turn!.user, ...turn!.tools, ...(turn!.assistant ? [turn!.assistant] : [])];
    expect(t.commit(ex(t1), { turn: t1!, time: 0 })).toEqual([]);
    expect(t.commit(ex(t2), { turn: { ...t2!, injection: true }, time: 0 })).toEqual([]);
    t.commit(ex(t3), { turn: t3!, time: 0 });
    expect(t.exchanges).toHaveLength(2);
    expect(t.flat.map((m) => m.turn)).toEqual([1, 1, 3, 3, 3, 3]);
    expect(t.messages(1).map((m) => m.turn)).toEqual([3, 3, 3, 3]);
    t.forget([{ name: 'email', values: ['ravi.k@mail.example'] }], { afterTurn: 3, time: 0 });
    expect(t.flat[0]!.content).toBe("Hi, I'm Ravi. My email is [forgotten] and my order is SE-20931.");
    expect(t.artifact(1)).toEqual(blocks.transcriptArtifact(t.messages(1)));
    expect(t.add(ex(t4))).toBe(true);
    expect(t.exchanges).toEqual([]);
    expect(t.artifact()).toEqual({ kind: 'transcript', texts: [], bytes: 0 });
  });

  it('newest that fit, tokens and budgets: the helpers the windows use', () => {
    const tokens = new TokenCounter('chars4');
    const messages = safety.turns.slice(0, 2).flatMap((t) => [t.user, t.assistant!]);
    const sizes = messages.map((m) => tokens.message(m));
    expect(blocks.sumTokens(tokens, messages)).toBe(sizes.reduce((a, b) => a + b, 0));
    expect(blocks.fixedTokens(tokens, messages)).toBe(tokens.prompt(messages));
    expect(blocks.newestThatFit(tokens, messages, sizes[3]! + sizes[2]!)).toEqual(messages.slice(2));
    expect(blocks.newestThatFit(tokens, messages, sizes[3]! + sizes[2]! - 1)).toEqual(messages.slice(3));
    expect(blocks.fromFirstUser(messages.slice(3))).toEqual([]);
    expect(blocks.newestExchangesThatFit(tokens, [messages.slice(0, 2), messages.slice(2)], sizes[2]! + sizes[3]!)).toBe(1);
    expect(blocks.systemMessageTokens(tokens, 10)).toBe(10);
  });

  it('a duration parameter in seconds, for a module that cannot import the package (.cjs) or imports nothing', () => {
    expect([blocks.parseDuration('30m'), blocks.parseDuration('90'), blocks.parseDuration(45), blocks.parseDuration('soon')]).toEqual([1800, 90, 45, undefined]);
  });

  it('the vector store and the embedder find the stored message that shares words with the query', () => {
    const store = blocks.vectorStore<string>();
    for (const [i, text] of ['My email is ravi.k@mail.example', 'The blender arrived cracked', 'Refund RF-7781 is on its way'].entries()) store.add(text, blocks.embed(text), i);
    const [hit] = store.best(blocks.embed('Which email did I give?'), 1);
    expect(hit!.entry.value).toBe('My email is ravi.k@mail.example');
    expect(hit!.score).toBeCloseTo(blocks.cosine(blocks.embed('Which email did I give?'), hit!.entry.vector), 12);
    expect(store.remove((t) => blocks.holds(t, ['ravi.k@mail.example']))).toBe(1);
    expect(blocks.vectorsArtifact(store.all.map((e) => e.value)).bytes).toBe(27 + 28 + 2 * 1536 * 4);
  });

  it('redaction: normalized values, found and replaced in any case and spacing', () => {
    const values = blocks.valuesOf([{ name: 'phone', values: [blocks.normalize('  98450   12345 ')] }, { name: 'other', values: ['98450 12345', ''] }]);
    expect(values).toEqual(['98450 12345']);
    expect(blocks.holds('My phone is 98450\n12345.', values)).toBe(true);
    expect(blocks.redactText('My phone is 98450\n12345.', values)).toBe('My phone is [forgotten].');
    const m: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'call', arguments: '{"to":"98450 12345"}' }] };
    expect(blocks.messageText(blocks.redactMessage(m, values))).toBe('call({"to":"[forgotten]"})');
    const clean: Message = { role: 'user', content: 'hello' };
    expect(blocks.redactMessage(clean, values)).toBe(clean);
  });
});

describe('a policy composed of blocks', () => {
  const conversations = [...allShipped(), safety];

  it.each([summaryWindow, factsWindow])('$id keeps the policy contract on the shipped scenarios and the safety fixture', (policy) => {
    expect(checkPolicyContract(policy, conversations).map(formatContractViolation)).toEqual([]);
  });

  it('summary-window is summary-buffer rebuilt: the same rows, zombies and injection exposure, under forget cascade and naive', () => {
    for (const forget of ['cascade', 'naive']) {
      const given: [string, unknown][] = [
        ['budget', 400],
        ['keepRecent', 1],
        ['forget', forget],
      ];
      const got = rows(safety, [...variants(summaryWindow, given), ...variants(REGISTRY.get('summary-buffer')!, given)]);
      const mine = got.get(`summary-window:budget=400,keepRecent=1,forget=${forget}`)!;
      const builtin = got.get(`summary-buffer:budget=400,keepRecent=1,forget=${forget}`)!;
      expect({ ...mine, policy: '' }).toEqual({ ...builtin, policy: '' });
      // The email is forgotten after turn 4 and probed at turn 7; turn 5 is an injection.
      expect(safetyOf(mine)).toEqual(
        forget === 'naive'
          ? { zombieArtifacts: 1, zombies: ['summary'], zombiePromptTurns: 4, zombieProbes: 1, injectionExposureTurns: 3 }
          : { zombieArtifacts: 0, zombies: [], zombiePromptTurns: 0, zombieProbes: 0, injectionExposureTurns: 3 },
      );
    }
  });

  it('facts-window is scored as facts is: its fact sheet a zombie under naive forget, the injection stored as an instruction', () => {
    for (const forget of ['cascade', 'naive']) {
      const got = rows(safety, [...variants(factsWindow, [['forget', forget]]), ...variants(REGISTRY.get('facts')!, [['forget', forget]])]);
      const mine = got.get(`facts-window:forget=${forget}`)!;
      const builtin = got.get(`facts:forget=${forget}`)!;
      expect(safetyOf(mine)).toEqual(safetyOf(builtin));
      expect(safetyOf(mine)).toEqual(
        forget === 'naive'
          ? { zombieArtifacts: 1, zombies: ['facts'], zombiePromptTurns: 4, zombieProbes: 1, injectionExposureTurns: 3 }
          : { zombieArtifacts: 0, zombies: [], zombiePromptTurns: 0, zombieProbes: 0, injectionExposureTurns: 3 },
      );
    }
  });
});
