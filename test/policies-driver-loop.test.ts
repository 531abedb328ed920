import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { replay, streamFor } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { blocks } from '../src/policies/blocks.js';
import { checkPolicyContract } from '../src/policies/contract/checker.js';
import { definePolicy } from '../src/policies/define.js';
import { drain, SessionDriver, type TurnObserver } from '../src/policies/driver.js';
import { resolvePolicy } from '../src/policies/spec.js';
import type { Policy } from '../src/policies/types.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation } from '../src/types.js';
import { conversation } from './_policies.js';

/**
 * The session driver owns the one turn loop (`SessionDriver.turns`): what
 * it asks of a session and what its observer hears, in order; and the
 * replay engine and the contract check, which both iterate it, ask a
 * session the same things in the same order.
 */

/**
 * Two turns, the second with a round of tool calls, a forget event after
 * each, and one before the first turn (which a scenario file cannot write,
 * its fact stated nowhere before it; a conversation built otherwise can).
 */
const LOOP: Conversation = (() => {
  const c = conversation({
    id: 'loop',
    system: 'Be brief.',
    turns: [
      { user: 'My email is ada@mail.example.', facts: { email: 'ada@mail.example' }, assistant: 'Noted.' },
      { forget: ['email'] },
      { user: 'Where is my order?', tools: [{ call: 'find_order', args: { id: 7 }, result: { status: 'sent' } }], assistant: 'It was sent.' },
      { forget: ['email'] },
    ],
  });
  return { ...c, forgets: [{ afterTurn: 0, facts: ['email'] }, ...c.forgets] };
})();

/** A policy that sends everything and writes down, one log per session, each thing asked of its session. */
function logging(sessions: string[][]): Policy {
  return definePolicy({
    id: 'logging',
    describe: 'sends everything, and says what it was asked',
    params: z.object({}),
    start(conversation) {
      const log: string[] = [];
      sessions.push(log);
      const stored = [...conversation.system];
      return {
        prompt(pending, info) {
          log.push(`prompt: turn ${info.turn.index}, ${pending.length} of its messages`);
          return { messages: [...stored, ...pending], overBudget: false, upkeep: [], stablePrefix: conversation.system.length };
        },
        commit(exchange, info) {
          log.push(`commit: turn ${info.turn.index}, ${exchange.length} messages`);
          stored.push(...exchange);
          return [];
        },
        forget(facts, info) {
          log.push(`forget: ${facts.map((f) => f.name).join(', ')} after turn ${info.afterTurn}`);
          return [];
        },
        artifacts() {
          log.push('artifacts');
          return [{ kind: 'transcript', texts: stored.map((m) => m.content), bytes: 0 }];
        },
      };
    },
  });
}

/** What a session of `LOOP` is asked, in order, by whatever iterates the driver's loop. */
const ASKED = [
  'forget: email after turn 0',
  'prompt: turn 1, 1 of its messages',
  'commit: turn 1, 2 messages',
  'forget: email after turn 1',
  'prompt: turn 2, 1 of its messages',
  'prompt: turn 2, 3 of its messages',
  'commit: turn 2, 4 messages',
  'forget: email after turn 2',
  'artifacts',
];

describe('the session driver’s turn loop', () => {
  it('asks the session and tells its observer each step in order, yields each turn’s end, and returns what the session stores', () => {
    const sessions: string[][] = [];
    const policy = logging(sessions);
    const deps = { tokens: new TokenCounter('chars4'), random: streamFor(42, LOOP.id, policy.id), model: 'gpt-4o-mini', blocks };
    const driver = new SessionDriver(LOOP, (start) => policy.start(start, {}, deps));
    const heard = sessions[0]!;
    const observer: TurnObserver<string> = {
      begin: (turn, info) => heard.push(`heard begin: turn ${turn.index} at ${info.time} s`),
      prompted: (turn, calls) => heard.push(`heard prompted: turn ${turn.index}, ${calls.length} calls`),
      committed: (turn, upkeep) => heard.push(`heard committed: turn ${turn.index}, ${upkeep.length} upkeep`),
      forgot: (afterTurn, event) => heard.push(`heard forgot: ${event.facts.map((f) => `${f.name}=${f.values.join('|')}`).join(', ')} after turn ${afterTurn}`),
      end: (turn) => {
        heard.push(`heard end: turn ${turn.index}`);
        return `turn ${turn.index}`;
      },
    };
    const steps = driver.turns(observer);
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) {
        heard.push(`returned ${step.value.length} artifact`);
        break;
      }
      heard.push(`yielded ${step.value}`);
    }
    expect(heard).toEqual([
      'forget: email after turn 0',
      'heard forgot: email= after turn 0',
      'heard begin: turn 1 at 0 s',
      'prompt: turn 1, 1 of its messages',
      'heard prompted: turn 1, 1 calls',
      'commit: turn 1, 2 messages',
      'heard committed: turn 1, 0 upkeep',
      'forget: email after turn 1',
      'heard forgot: email=ada@mail.example after turn 1',
      'heard end: turn 1',
      'yielded turn 1',
      'heard begin: turn 2 at 30 s',
      'prompt: turn 2, 1 of its messages',
      'prompt: turn 2, 3 of its messages',
      'heard prompted: turn 2, 2 calls',
      'commit: turn 2, 4 messages',
      'heard committed: turn 2, 0 upkeep',
      'forget: email after turn 2',
      'heard forgot: email=ada@mail.example after turn 2',
      'heard end: turn 2',
      'yielded turn 2',
      'artifacts',
      'returned 1 artifact',
    ]);
  });

  it('drained, asks the session what a replay and a contract check ask', () => {
    const sessions: string[][] = [];
    const policy = logging(sessions);
    const deps = { tokens: new TokenCounter('chars4'), random: streamFor(42, LOOP.id, policy.id), model: 'gpt-4o-mini', blocks };
    const artifacts = drain(new SessionDriver(LOOP, (start) => policy.start(start, {}, deps)).turns({ end: () => undefined }));
    expect(artifacts.map((a) => a.texts.length)).toEqual([7]);
    expect(sessions).toEqual([ASKED]);
  });

  it('is what the replay engine and the contract check both iterate: each asks a session the same things in the same order', () => {
    // forget: naive, so that the contract check reads no artifacts of its own after a forget event (forget-cascade's check).
    const naive = [['forget', 'naive']] as const;
    const engine: string[][] = [];
    const variants = resolvePolicy(logging(engine), naive);
    if (typeof variants === 'string') throw new Error(variants);
    const r = replay(LOOP, variants[0]!, replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'chars4' }));
    expect(r.turns.map((t) => t.calls)).toEqual([1, 2]);
    expect(engine).toEqual([ASKED]);

    const contract: string[][] = [];
    expect(checkPolicyContract(logging(contract), [LOOP], { variants: [Object.fromEntries(naive)] })).toEqual([]);
    // Alone, then interleaved with itself (isolation): three sessions, each asked the same.
    expect(contract).toEqual([ASKED, ASKED, ASKED]);
  });
});
