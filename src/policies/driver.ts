import { normalize } from '../text/normalize.js';
import { freezeConversation } from '../scenario/freeze.js';
import { turnCalls } from '../scenario/rounds.js';
import type { Conversation, Message, Turn, UpkeepCall } from '../types.js';
import type { Artifact, ForgetFact, PolicySession, PromptPlan, SessionStart, TurnInfo } from './types.js';

/** One model call of a turn as the driver made it: what the policy was given, what it planned, and what the model answers. */
export interface DrivenCall {
  pending: readonly Message[];
  plan: PromptPlan;
  /** The next round's assistant message, or the turn's reply; none when the turn has no reply. */
  output: Message | undefined;
}

/** A forget event as the driver carried it out: the facts with every value they had, and the upkeep it took. */
export interface DrivenForget {
  facts: ForgetFact[];
  upkeep: UpkeepCall[];
}

/**
 * What a caller of the turn loop (`SessionDriver.turns`) observes, in order:
 * the forget events before the first turn (`forgot`, after turn 0); then, for
 * each turn, its start (`begin`, before the session plans a call), its calls
 * as planned (`prompted`, before the turn changes memory), the exchange
 * stored (`committed`), the forget events that follow it (`forgot`), and its
 * end (`end`, whose value the loop yields for the turn).
 */
export interface TurnObserver<T> {
  /** A turn starts: what the session is told of it. */
  begin?(turn: Turn, info: TurnInfo): void;
  /** The turn's model calls as the session planned them. */
  prompted?(turn: Turn, calls: DrivenCall[]): void;
  /** The finished exchange stored: the upkeep it took. */
  committed?(turn: Turn, upkeep: UpkeepCall[]): void;
  /** A forget event carried out after turn `afterTurn` (0: before the first), once every event after that turn is. */
  forgot?(afterTurn: number, event: DrivenForget): void;
  /** The turn is over, its forget events too: what the loop yields for it. */
  end(turn: Turn): T;
}

/**
 * What a session is started with: the conversation's id, user, pinned
 * system messages and tools, frozen. A new object, so nothing else of the
 * conversation (its turns, its annotations) can be reached from it.
 */
export function sessionStart(conversation: Conversation): SessionStart {
  const start: SessionStart = { id: conversation.id, userId: conversation.userId, system: conversation.system };
  if (conversation.toolDefs) start.toolDefs = conversation.toolDefs;
  return Object.freeze(start);
}

/**
 * Feeds a policy's session its conversation, the one place that does: the
 * engine's replay and the contract check both drive sessions through it and
 * observe what they return. A session sees what a backend would: at the
 * start the conversation's id, user, pinned system messages and tools
 * (`sessionStart`); then, turn by turn, the turn's number and moderation flag
 * (`TurnStart`), the turn's messages as far as each call has got (the user
 * message, then each round of tool calls and results), the finished
 * exchange, and the forget events the user asks for. It never sees the
 * scenario's annotations (`facts:`, `probe:`: the answer key the scoring
 * reads) nor a turn before it happens.
 *
 * The one turn loop is `turns`: the replay engine and the contract check
 * both iterate it, a turn per step (several may run interleaved), and
 * observe its events (`TurnObserver`). Its steps — `begin`, `prompt`,
 * `commit`, and `forgetAfter`, which carries out the forget events that
 * follow a turn (0: before the first) — may also be taken one by one.
 */
export class SessionDriver {
  private seconds = 0;
  private readonly session: PolicySession;

  /** `start` starts the policy's session (guarded or not) from what a session may see. */
  constructor(
    private readonly conversation: Conversation,
    start: (conversation: SessionStart) => PolicySession,
  ) {
    // A policy that changes a message it is given throws, instead of changing what every later replay sends.
    freezeConversation(conversation);
    this.session = start(sessionStart(conversation));
  }

  /** Simulated seconds since the conversation started, at the turn under way. */
  get time(): number {
    return this.seconds;
  }

  /** Starts `turn`: the time moves on by the gap before it; returns what the session is told of it. */
  begin(turn: Turn): TurnInfo {
    if (turn.index > 1) this.seconds += turn.gapSeconds;
    return Object.freeze({ turn: Object.freeze({ index: turn.index, injection: turn.injection }), time: this.seconds });
  }

  /** The turn's model calls: the plan after the user message, and after each round of tool calls. */
  prompt(turn: Turn, info: TurnInfo): DrivenCall[] {
    return turnCalls(turn).map(({ pending, output }) => ({ pending, plan: this.session.prompt(pending, info), output }));
  }

  /** The finished exchange (user message, tool rounds, reply) stored; returns the upkeep after the turn. */
  commit(turn: Turn, info: TurnInfo): UpkeepCall[] {
    const exchange: Message[] = [turn.user, ...turn.tools];
    if (turn.assistant) exchange.push(turn.assistant);
    return this.session.commit(exchange, info);
  }

  /** Carries out the forget events after turn `afterTurn`, in order; each fact with every value it had up to then. */
  forgetAfter(afterTurn: number): DrivenForget[] {
    const out: DrivenForget[] = [];
    for (const event of this.conversation.forgets) {
      if (event.afterTurn !== afterTurn) continue;
      const facts = event.facts.map((name) => ({ name, values: valuesUpTo(this.conversation, name, afterTurn) }));
      out.push({ facts, upkeep: this.session.forget(facts, { afterTurn, time: this.time }) });
    }
    return out;
  }

  /** What the session stores now. */
  artifacts(): Artifact[] {
    return this.session.artifacts();
  }

  /**
   * Drives the whole conversation, a turn per step: the forget events before
   * the first turn, then each turn begun, prompted, committed and followed
   * by its forget events, as `observer` hears; yields what it makes of each
   * turn, and returns what the session stores at the end.
   */
  *turns<T>(observer: TurnObserver<T>): Generator<T, Artifact[], void> {
    for (const event of this.forgetAfter(0)) observer.forgot?.(0, event);
    for (const turn of this.conversation.turns) {
      const info = this.begin(turn);
      observer.begin?.(turn, info);
      const calls = this.prompt(turn, info);
      observer.prompted?.(turn, calls);
      const upkeep = this.commit(turn, info);
      observer.committed?.(turn, upkeep);
      for (const event of this.forgetAfter(turn.index)) observer.forgot?.(turn.index, event);
      yield observer.end(turn);
    }
    return this.artifacts();
  }
}

/** Runs a turn loop (`SessionDriver.turns`, or a replay made of one) to its end; returns what it returns. */
export function drain<R>(steps: Generator<unknown, R, void>): R {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Every value a fact had in turns 1 … `turn`, normalized, once each: what a forget event after that turn erases. */
export function valuesUpTo(conversation: Conversation, fact: string, turn: number): string[] {
  const values: string[] = [];
  for (const t of conversation.turns) {
    if (t.index > turn) break;
    const v = t.facts[fact];
    if (v !== undefined && !values.includes(normalize(v))) values.push(normalize(v));
  }
  return values;
}
