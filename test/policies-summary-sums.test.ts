import { describe, expect, it } from 'vitest';
import { streamFor } from '../src/engine/replay.js';
import { newestExchangesThatFit } from '../src/policies/_memory.js';
import { RunningSummary } from '../src/policies/_summary.js';
import { sum } from '../src/policies/_transcript.js';
import { blocks } from '../src/policies/blocks.js';
import type { CommonParams } from '../src/policies/params.js';
import type { PolicyDeps } from '../src/policies/types.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation } from '../src/types.js';
import { fixture } from './_policies.js';

/**
 * The running summary weighs its open exchanges by prefix sums kept across
 * turns: after every commit, fold, forget and session restart they must equal
 * the plain sums over `open()`.
 */

const tokens = new TokenCounter('chars4');

function memoryFor(conversation: Conversation, params: Partial<CommonParams> = {}): RunningSummary {
  const deps: PolicyDeps = { tokens, random: streamFor(1, conversation.id, 'sums'), model: 'gpt-4o-mini', blocks };
  return new RunningSummary({ summaryTokens: 60, keep: 1, forget: 'cascade', moderation: 'none', ...params }, deps);
}

/** Checks every running figure against the sums over `open()`. */
function expectSums(memory: RunningSummary): void {
  const open = memory.open();
  expect(memory.openCount()).toBe(open.length);
  expect(memory.openTokens()).toBe(sum(tokens, open.flat()));
  open.forEach((e, i) => expect(memory.openExchangeTokens(i)).toBe(sum(tokens, e)));
  for (const room of [0, 30, 120, 400, 5000]) {
    for (const max of [Infinity, 0, 1, 3]) expect(memory.newestOpenThatFit(room, max)).toBe(newestExchangesThatFit(tokens, open, room, max));
  }
}

/** Commits every turn; after turn `k` of `steps`, folds or forgets as it says. */
function replay(memory: RunningSummary, conversation: Conversation, steps: Record<number, 'fold-all' | 'fold-one' | 'forget'>): void {
  let time = 0;
  for (const turn of conversation.turns) {
    if (turn.index > 1) time += turn.gapSeconds;
    // What a session is told of the turn (TurnStart): its number and moderation flag, nothing of the answer key.
    const info = { turn: { index: turn.index, injection: turn.injection }, time };
    memory.commit([turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])], info);
    expectSums(memory);
    const step = steps[turn.index];
    if (step === 'fold-all' && memory.openCount()) memory.fold(memory.openCount());
    if (step === 'fold-one' && memory.openCount()) memory.fold(1);
    if (step === 'forget') {
      const facts = Object.entries(turn.facts).map(([name, value]) => ({ name, values: [value.toLowerCase()] }));
      memory.forget(facts.length ? facts : [{ name: 'x', values: [turn.user.content.split(' ')[0]!.toLowerCase()] }], { afterTurn: turn.index, time });
    }
    expectSums(memory);
  }
}

describe('running summary sums', () => {
  const conversation = fixture('email-correction.yaml');

  it('match the plain sums through folds and forgets', () => {
    replay(memoryFor(conversation), conversation, { 2: 'fold-one', 3: 'forget', 5: 'fold-all', 6: 'forget', 8: 'fold-one', 9: 'fold-one', 10: 'forget' });
  });

  it('match the plain sums across session restarts', () => {
    replay(memoryFor(conversation, { sessionCap: 3 }), conversation, { 2: 'fold-one', 4: 'forget', 5: 'fold-all', 7: 'fold-one', 8: 'forget' });
  });

  it('match the plain sums when injection turns are dropped', () => {
    const flagged: Conversation = { ...conversation, turns: conversation.turns.map((t) => ({ ...t, injection: t.index % 3 === 0 })) };
    replay(memoryFor(flagged, { moderation: 'drop' }), flagged, { 4: 'fold-one', 6: 'forget', 7: 'fold-all' });
  });
});
