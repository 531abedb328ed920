import { normalize, occursIn } from '../text/normalize.js';
import { messageText } from '../tokens/counter.js';
import type { Message } from '../types.js';
import type { Mentions, StatedFact } from './types.js';

const searched = new WeakMap<Message, string>();

/**
 * A message's text as fact values are looked for in it (by probes, simulated
 * upkeep and the contract checks): its content and tool calls, lower case,
 * whitespace collapsed; made once per message object.
 */
export function searchText(m: Message): string {
  let t = searched.get(m);
  if (t === undefined) searched.set(m, (t = normalize(messageText(m))));
  return t;
}

/**
 * The stated facts whose value occurs in one of the messages, in order: what
 * simulated upkeep can read from the text it is given (compared as probes are
 * scored: lower case, whitespace collapsed, message by message).
 */
export function readable<F extends StatedFact>(messages: readonly Message[], stated: readonly F[]): F[] {
  if (!stated.length) return [];
  const texts = messages.map(searchText);
  return stated.filter(([, value]) => {
    const v = normalize(value);
    return texts.some((t) => occursIn(t, v));
  });
}

/**
 * The order in which a bounded memory (a summary, a fact sheet) that is too
 * long drops facts: the fact stated in the fewest turns first, then the one
 * last stated longest ago, then the one listed first. A fact stated again is
 * fresh again: its count grows and its last turn moves on.
 */
export function dropOrder(facts: ReadonlyMap<string, string>, mentions: ReadonlyMap<string, Mentions>): string[] {
  const listed = [...facts.keys()];
  const at = new Map(listed.map((name, i) => [name, i]));
  const of = (name: string) => mentions.get(name) ?? { count: 1, lastTurn: 0 };
  return listed.sort((a, b) => of(a).count - of(b).count || of(a).lastTurn - of(b).lastTurn || at.get(a)! - at.get(b)!);
}
