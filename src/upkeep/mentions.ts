import type { Mentions } from './types.js';

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
