import { normalize } from '../text/normalize.js';
import { messageText } from '../tokens/counter.js';
import type { Message } from '../types.js';
import type { Mentions } from './types.js';

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
 * The order in which a bounded memory (a summary, a fact sheet) that is too
 * long drops entries: the least salient first (`Mentions.tier`, a statement's salience), then the
 * entry mentioned in the fewest turns, then the one last mentioned longest
 * ago, then the one listed first. An entry mentioned again is fresh again:
 * its count grows and its last turn moves on.
 */
export function dropOrder(entries: ReadonlyMap<string, string>, mentions: ReadonlyMap<string, Mentions>): string[] {
  const listed = [...entries.keys()];
  const at = new Map(listed.map((name, i) => [name, i]));
  const of = (name: string) => mentions.get(name) ?? { count: 1, lastTurn: 0 };
  const tier = (name: string) => of(name).tier ?? Infinity;
  return listed.sort((a, b) => tier(a) - tier(b) || of(a).count - of(b).count || of(a).lastTurn - of(b).lastTurn || at.get(a)! - at.get(b)!);
}
