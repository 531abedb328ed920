import type { TokenCounter } from '../tokens/counter.js';
import type { Conversation, Message } from '../types.js';
import { moderated, redactMessage, valuesOf } from './_forget.js';
import type { CommonParams } from './params.js';
import type { Exchange, PolicySession } from './types.js';

/**
 * The raw history a policy keeps, exchange by exchange. With `sessionCap` the
 * conversation restarts after that many exchanges: the history is cleared.
 */
export class Transcript {
  readonly exchanges: Exchange[] = [];
  /** Every stored message in order, and where each exchange starts in it: prompts slice it, never re-flatten. */
  private readonly all: Message[] = [];
  private readonly starts: number[] = [];
  private sinceRestart = 0;

  constructor(private readonly sessionCap?: number) {}

  /** Adds a finished exchange; returns true when this restarted the session. */
  add(exchange: Exchange): boolean {
    this.exchanges.push(exchange);
    this.starts.push(this.all.length);
    for (const m of exchange) this.all.push(m);
    this.sinceRestart++;
    if (this.sessionCap !== undefined && this.sinceRestart >= this.sessionCap) {
      this.exchanges.length = 0;
      this.starts.length = 0;
      this.all.length = 0;
      this.sinceRestart = 0;
      return true;
    }
    return false;
  }

  /** The messages of the exchanges from index `from` up to (not including) `to`, in order. */
  messages(from = 0, to = this.exchanges.length): Message[] {
    return this.all.slice(this.starts[from] ?? this.all.length, this.starts[to] ?? this.all.length);
  }

  /** Every stored message, in order (read-only view; no copy). */
  get flat(): readonly Message[] {
    return this.all;
  }

  /** Replaces each stored message that holds one of the (normalized) values by a redacted copy. */
  redact(values: readonly string[]): void {
    if (!values.length) return;
    this.exchanges.forEach((e, i) => {
      const r = e.map((m) => redactMessage(m, values));
      if (r.some((m, j) => m !== e[j])) {
        this.exchanges[i] = r;
        r.forEach((m, j) => (this.all[this.starts[i]! + j] = m));
      }
    });
  }
}

/** The pinned part of every prompt: the scenario's system messages, in order (none: empty). */
export function pinned(conversation: Conversation): Message[] {
  return [...conversation.system];
}

/** Tokens of messages in a prompt (without reply priming). */
export function sum(tokens: TokenCounter, messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) n += tokens.message(m);
  return n;
}

/** The newest messages whose tokens fit in `room`, walking back from the newest; stops at the first that does not fit. */
export function newestThatFit(tokens: TokenCounter, messages: readonly Message[], room: number): Message[] {
  return messages.slice(messages.length - fitFromNewest(messages.length, (i) => tokens.message(messages[i]!), room));
}

/** How many of the last of `count` items fit in `room` tokens (at most `max`), walking back from item count − 1 with their tokens `size(i)`; stops at the first that does not fit. */
export function fitFromNewest(count: number, size: (i: number) => number, room: number, max = Infinity): number {
  let n = 0;
  while (n < count && n < max) {
    const tokens = size(count - 1 - n);
    if (tokens > room) break;
    room -= tokens;
    n++;
  }
  return n;
}

/** Drops leading messages until the first user message, so no reply or tool result is sent without its cause. */
export function fromFirstUser(messages: readonly Message[]): Message[] {
  const i = messages.findIndex((m) => m.role === 'user');
  return i < 0 ? [] : messages.slice(i);
}

/**
 * Tokens of a whole prompt of these messages as the provider counts it: the
 * messages, reply priming, and what every call of the conversation sends
 * besides them (`tokens.carried`: the tool definitions offered, a log's
 * unlogged prefix). What every budget and threshold counts.
 */
export function promptTokens(tokens: Pick<TokenCounter, 'prompt'> & { readonly carried?: number }, messages: readonly Message[]): number {
  return (tokens.carried ?? 0) + tokens.prompt(messages);
}

/** Tokens of the fixed part of a prompt (the pinned messages, the pending turn), as `promptTokens` counts a prompt: `budget − fixedTokens(…)` is the room left for memory. */
export function fixedTokens(tokens: TokenCounter, fixed: readonly Message[]): number {
  return tokens.carried + tokens.overhead.replyPriming + sum(tokens, fixed);
}

/**
 * `commit` and `forget` of a policy whose only memory is its raw transcript:
 * store each exchange (unless moderated), redact forgotten values. Cascade and
 * naive erase the same there.
 */
export function transcriptMemory(history: Transcript, params: Pick<CommonParams, 'moderation'>): Pick<PolicySession, 'commit' | 'forget'> {
  return {
    commit(exchange, info) {
      if (!moderated(params, info)) history.add(exchange);
      return [];
    },
    forget(facts) {
      history.redact(valuesOf(facts));
      return [];
    },
  };
}
