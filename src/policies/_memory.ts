import type { TokenCounter } from '../tokens/counter.js';
import type { Conversation } from '../types.js';
import type { Fact } from '../upkeep/types.js';
import { sum, type Exchange } from './_transcript.js';
import type { TurnInfo } from './types.js';

/**
 * What the simulated upkeep knows: the facts each turn states (from the
 * scenario's `facts:`), which a real summarizer or extractor would read
 * from the text.
 */
export function statedFacts(conversation: Conversation, exchanges: readonly Exchange[]): Fact[] {
  const out: Fact[] = [];
  for (const e of exchanges) {
    const index = e[0]?.turn;
    const turn = index === undefined ? undefined : conversation.turns[index - 1];
    if (turn) out.push(...Object.entries(turn.facts));
  }
  return out;
}

/** Every value any fact of the conversation takes. */
export function factValues(conversation: Conversation): string[] {
  return [...new Set(conversation.turns.flatMap((t) => Object.values(t.facts)))];
}

/**
 * Upkeep happens once per turn, on the turn's first model call; the call
 * after tool results reuses what it decided.
 */
export class TurnGate {
  private last: number | undefined;

  /** True on the first call of a turn. */
  first(info: TurnInfo): boolean {
    if (this.last === info.turn.index) return false;
    this.last = info.turn.index;
    return true;
  }
}

/** How many of the newest exchanges fit in `room` tokens (at most `max`), walking back; stops at the first that does not fit. */
export function newestExchangesThatFit(tokens: TokenCounter, exchanges: readonly Exchange[], room: number, max = Infinity): number {
  let n = 0;
  while (n < exchanges.length && n < max) {
    const size = sum(tokens, exchanges[exchanges.length - 1 - n]!);
    if (size > room) break;
    room -= size;
    n++;
  }
  return n;
}

/** Tokens a policy-made `system` message of `contentTokens` tokens costs in a prompt. */
export function systemMessageTokens(tokens: TokenCounter, contentTokens: number): number {
  return contentTokens + (tokens.overhead.perMessage ? tokens.overhead.perMessage + tokens.text('system') : 0);
}
