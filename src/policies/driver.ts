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
 * A turn is driven in steps — `begin`, `prompt`, `commit` — so a caller can
 * inspect the prompts before the turn changes memory; `forgetAfter` carries
 * out the forget events that follow a turn (0: before the first).
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
