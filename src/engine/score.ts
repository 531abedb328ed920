import type { Conversation, Message, ProbeOutcome, ProbeSource } from '../types.js';
import { normalize, occursIn } from '../text/normalize.js';
import { searchText } from '../upkeep/mentions.js';


interface Stated {
  value: string;
  turn: number;
}

/**
 * Every value each fact took, in order, and when the user asked to forget
 * it: the history probes are scored against. It does not change once made.
 */
export class FactLedger {
  /** The conversation's ledger, made once for all the replays of the conversation. */
  static of(conversation: Conversation): FactLedger {
    let ledger = LEDGERS.get(conversation);
    if (!ledger) LEDGERS.set(conversation, (ledger = new FactLedger(conversation)));
    return ledger;
  }

  private readonly values = new Map<string, Stated[]>();
  /** fact → the turns its forget events follow. */
  private readonly forgets = new Map<string, number[]>();

  constructor(conversation: Conversation) {
    for (const t of conversation.turns) {
      for (const [fact, value] of Object.entries(t.facts)) {
        const list = this.values.get(fact) ?? [];
        list.push({ value: normalize(value), turn: t.index });
        this.values.set(fact, list);
      }
    }
    for (const f of conversation.forgets) for (const fact of f.facts) this.forgets.set(fact, [...(this.forgets.get(fact) ?? []), f.afterTurn]);
  }

  /**
   * The current value at `turn` and the older values that differ from it.
   * `forgotten`: a forget event came after the current value was stated and
   * before `turn`, so there is no current value any more — `current` is then
   * the last value the fact had, which a probe expects not to find.
   */
  at(fact: string, turn: number): { current: Stated; older: string[]; forgotten: boolean } | undefined {
    const list = (this.values.get(fact) ?? []).filter((s) => s.turn <= turn);
    const current = list[list.length - 1];
    if (!current) return undefined;
    const older = [...new Set(list.map((s) => s.value))].filter((v) => v !== current.value);
    const forgotten = (this.forgets.get(fact) ?? []).some((after) => after >= current.turn && after < turn);
    return { current, older, forgotten };
  }
}

const LEDGERS = new WeakMap<Conversation, FactLedger>();

const SOURCE_ORDER: readonly ProbeSource[] = ['window', 'summary', 'retrieved', 'facts'];

/** Where a value occurs in a prompt, by source order (a value the window holds is found there first); `none` if nowhere. */
export function findIn(messages: readonly Message[], value: string): ProbeSource {
  let best: ProbeSource = 'none';
  for (const m of messages) {
    if (!occursIn(searchText(m), value)) continue;
    const source: ProbeSource = m.origin ?? 'window';
    if (best === 'none' || SOURCE_ORDER.indexOf(source) < SOURCE_ORDER.indexOf(best)) best = source;
    if (best === 'window') break;
  }
  return best;
}

/** Scores one probe: retained (current value sent), stale (only an older one), missing; `value` is the (normalized) value found. */
export function scoreProbe(messages: readonly Message[], current: string, older: readonly string[]): { outcome: ProbeOutcome; source: ProbeSource; value?: string } {
  const here = findIn(messages, current);
  if (here !== 'none') return { outcome: 'retained', source: here, value: current };
  for (const v of older) {
    const there = findIn(messages, v);
    if (there !== 'none') return { outcome: 'stale', source: there, value: v };
  }
  return { outcome: 'missing', source: 'none' };
}

/** Whether a chat model's reply holds a fact's (normalized) current value: compared as probes are scored, lower case, whitespace collapsed. */
export function answeredIn(reply: string, value: string): boolean {
  return occursIn(normalize(reply), value);
}
