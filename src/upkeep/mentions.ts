import { normalize } from '../text/normalize.js';
import { messageText } from '../tokens/counter.js';
import type { Message } from '../types.js';
import { spansOf, type SpanKind } from './salience.js';
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

/** A salient span as simulated upkeep reads it from a message: how it is written, its kind, and the message's turn. */
export interface ReadSpan {
  /** The span normalized (lower case, whitespace collapsed): one entry per key in a summary or a sheet. */
  key: string;
  /** The span as the message writes it. */
  text: string;
  kind: SpanKind;
  turn: number | undefined;
}

const read = new WeakMap<Message, readonly ReadSpan[]>();

/** The salient spans of a message's text (content and tool calls), in order, each key once; made once per message object. */
function spansIn(m: Message): readonly ReadSpan[] {
  let out = read.get(m);
  if (!out) {
    const seen = new Set<string>();
    const list: ReadSpan[] = [];
    for (const s of spansOf(messageText(m), { user: m.role === 'user' })) {
      const key = normalize(s.text);
      if (!key || seen.has(key)) continue;
      seen.add(key);
      list.push({ key, text: s.text, kind: s.kind, turn: m.turn });
    }
    read.set(m, (out = list));
  }
  return out;
}

/**
 * What simulated upkeep can read from the messages it is given: the salient
 * spans of their text (names, numbers, codes and IDs, e-mails, URLs, dates,
 * times, amounts: `spansOf`), in order, each key once per turn. Nothing else:
 * not what the scenario annotates as a fact.
 */
export function salientIn(messages: readonly Message[]): ReadSpan[] {
  const out: ReadSpan[] = [];
  const seen = new Set<string>();
  for (const m of messages) {
    for (const s of spansIn(m)) {
      const once = `${s.turn ?? ''}\0${s.key}`;
      if (seen.has(once)) continue;
      seen.add(once);
      out.push(s);
    }
  }
  return out;
}

/**
 * How much a summarizer or an extractor values a span of each kind: it
 * drops the lowest tier first. Identifiers a user would have to repeat
 * (codes, e-mails, phone numbers) and names rank highest; dates, times,
 * amounts, addresses and what a user says of themselves next; bare numbers
 * last.
 */
export const KIND_TIER: Readonly<Record<SpanKind, number>> = { number: 0, date: 1, time: 1, money: 1, url: 1, detail: 1, name: 2, id: 2, email: 2, phone: 2 };


/**
 * The order in which a bounded memory (a summary, a fact sheet) that is too
 * long drops entries: the lowest tier of kind first (`KIND_TIER`), then the
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
