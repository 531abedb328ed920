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
  // Each entry's keys looked up once, then sorted as numbers.
  const keyed: { name: string; tier: number; count: number; lastTurn: number; at: number }[] = [];
  for (const name of entries.keys()) {
    const m = mentions.get(name);
    keyed.push({ name, tier: m?.tier ?? Infinity, count: m?.count ?? 1, lastTurn: m?.lastTurn ?? 0, at: keyed.length });
  }
  keyed.sort(dropsBefore);
  return keyed.map((k) => k.name);
}

/** What `dropOrder` weighs of an entry: its salience (Infinity for one kept before any statement), its mentions, and its place in the listing. */
export interface Ranked {
  readonly tier: number;
  readonly count: number;
  readonly lastTurn: number;
  readonly at: number;
}

/** `dropOrder`'s rule for two entries: below 0 when `a` is dropped first. */
export function dropsBefore(a: Ranked, b: Ranked): number {
  return a.tier - b.tier || a.count - b.count || a.lastTurn - b.lastTurn || a.at - b.at;
}
