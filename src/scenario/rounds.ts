import type { Message, Turn } from '../types.js';

/** One model call of a turn: the turn's messages sent so far (the user message and the rounds before), and what the model answers. */
export interface TurnCall {
  pending: Message[];
  /** The next round's assistant message (with its tool calls), or the turn's reply; none when the turn has no reply. */
  output: Message | undefined;
}

/**
 * The model calls of a turn, in order: one after the user message, then one
 * after each round of tool calls (an assistant message with its calls, then
 * their results) — an agent's loop. A turn without tools is one call, a turn
 * with one round and a reply two. A turn that ends on a round, with no
 * reply, ends with that round's call: no model call was made after it (an
 * agent's run that stopped there, as a transcript records it).
 */
export function turnCalls(turn: Pick<Turn, 'user' | 'tools' | 'assistant'>): TurnCall[] {
  const all = [turn.user, ...turn.tools];
  const calls: TurnCall[] = [];
  // A call is made before each assistant message of the rounds (it answers with it), and one after the last round when it answers with the reply.
  for (let i = 1; i < all.length; i++) if (all[i]!.role === 'assistant') calls.push({ pending: all.slice(0, i), output: all[i] });
  if (turn.assistant || !calls.length) calls.push({ pending: all, output: turn.assistant });
  return calls;
}

/** The rounds of tool calls of a turn's messages after its user message: each an assistant message, then its results. */
export function roundsOf(messages: readonly Message[]): Message[][] {
  const rounds: Message[][] = [];
  for (const m of messages) {
    if (m.role === 'assistant' && m.toolCalls?.length) rounds.push([m]);
    else if (rounds.length && m.role === 'tool') rounds[rounds.length - 1]!.push(m);
  }
  return rounds;
}
