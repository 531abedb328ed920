import type { PromptSequence } from '../tokens/templated.js';
import type { Message, ToolCall } from '../types.js';

/** Tokens of one message in a prompt, chat overhead included. */
export type MessageTokens = (m: Message) => number;

/** Same message for a cache: the same object, or the same role, text, name, tool fields and origin. */
export function sameMessage(a: Message, b: Message): boolean {
  if (a === b) return true;
  return (
    a.role === b.role &&
    a.content === b.content &&
    a.name === b.name &&
    a.toolCallId === b.toolCallId &&
    a.origin === b.origin &&
    sameCalls(a.toolCalls, b.toolCalls)
  );
}

function sameCalls(a: readonly ToolCall[] | undefined, b: readonly ToolCall[] | undefined): boolean {
  if (!a?.length || !b?.length) return !a?.length && !b?.length;
  return a.length === b.length && a.every((c, i) => c.id === b[i]!.id && c.name === b[i]!.name && c.arguments === b[i]!.arguments);
}

/** How many leading messages two prompts share, up to `limit`, when their first `from` are known to be shared. */
function sharedFrom(a: readonly Message[], b: readonly Message[], from: number, limit: number): number {
  // Prompts of one conversation mostly hold the same objects: those are told apart without a call.
  for (let i = from; i < limit; i++) {
    const m = a[i]!;
    const o = b[i]!;
    if (m !== o && !sameMessage(m, o)) return i;
  }
  return limit;
}

/** Tokens of messages `from` to `to` (not included) of a prompt. */
function tokensOf(messages: readonly Message[], to: number, count: MessageTokens, from = 0): number {
  let t = 0;
  for (let i = from; i < to; i++) t += count(messages[i]!);
  return t;
}

/**
 * OpenAI-style automatic prefix caching for one conversation on one model
 * (SPEC §5): P = tokens of the longest run of leading messages identical to
 * the previous call's; cached = 0 if P < minTokens, else P rounded down to a
 * multiple of `step`; nothing is cached once more than `ttl` simulated
 * seconds passed since the previous call. The tool definitions offered with
 * every call (`head`, their tokens) are sent first, so they start every
 * shared prefix.
 */
export class PrefixCache {
  /**
   * The previous call: its messages, when, its pieces when rendered by a
   * template, and the tokens of the head and its first `counted` messages
   * (without reply priming). The rest is summed only when a later prompt
   * starts with the whole of it: a sliding window's prompt is not summed at
   * all.
   */
  private previous?: { messages: readonly Message[]; time: number; sequence: PromptSequence | undefined; counted: number; tokens: number };

  constructor(
    private readonly rule: { minTokens: number; step: number },
    private readonly ttl: number,
    /** Tokens of the tool definitions sent before every prompt (0: none). */
    private readonly head = 0,
  ) {}

  /**
   * Cached tokens of this call; the call becomes the previous one. When the
   * whole previous prompt is the shared prefix (a growing transcript), the
   * tokens of its part shared with the call before are known: only the
   * messages it added are summed.
   */
  call(messages: readonly Message[], time: number, count: MessageTokens, sequence?: PromptSequence): number {
    const prev = this.previous;
    let p: number;
    let shared = 0;
    if (sequence) {
      // Rendered by a chat template: the tokens of the leading pieces both prompts share (a piece the next prompt changes is not cached).
      p = prev?.sequence ? sequence.sums[sharedPieces(sequence.ids, prev.sequence.ids)]! : 0;
    } else {
      const before = prev?.messages ?? [];
      shared = sharedFrom(messages, before, 0, Math.min(messages.length, before.length));
      p = prev && shared === before.length && !prev.sequence ? prev.tokens + tokensOf(before, shared, count, prev.counted) : this.head + tokensOf(messages, shared, count);
    }
    // Prompts are not changed once sent: the previous one is kept as it is.
    this.previous = { messages, time, sequence, counted: shared, tokens: sequence ? 0 : p };
    if (!prev || time - prev.time > this.ttl) return 0;
    return p < this.rule.minTokens ? 0 : Math.floor(p / this.rule.step) * this.rule.step;
  }
}

/** How many leading pieces two rendered prompts share. */
function sharedPieces(a: Int32Array, b: Int32Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** A live entry of an explicit cache: the head and the first `length` messages of a prompt. */
interface Entry {
  /** The prompt the entry was written from (prompts are not changed once sent, so it is kept, not copied). */
  messages: readonly Message[];
  length: number;
  tokens: number;
  expires: number;
  /** How many of the entry's messages the latest prompt starts with. */
  shared: number;
}

/** Tokens read from and written to an explicit cache by one call. */
export interface CacheUse {
  read: number;
  written: number;
}

/**
 * Anthropic-style explicit caching for one conversation on one model. The
 * breakpoint goes after the policy's stable prefix. A prefix shorter than
 * `minTokens` is not cached at all. Otherwise the longest live cached prefix
 * of it is read (and its TTL refreshed), and the rest up to the breakpoint is
 * written as a new entry. An entry dies when more than `ttl` simulated
 * seconds pass without a hit.
 *
 * A call costs what its prompt changed: the prompt is compared once with the
 * latest one, and each entry's agreement with the new prompt follows from its
 * agreement with the latest one (an entry is compared message by message
 * only past the point where the two prompts part); the prefix's tokens are
 * running sums of the latest prompt, extended by the messages new to it.
 * The tool definitions offered with every call (`head`, their tokens) are
 * sent first, always inside the cached prefix.
 */
export class BreakpointCache {
  private readonly entries: Entry[] = [];
  /** The latest prompt. */
  private latest: readonly Message[] = [];
  /** sums[i] = tokens of the head and the latest prompt's first i messages, for i ≤ counted (later entries are stale). */
  private readonly sums: number[];
  private counted = 0;

  constructor(
    private readonly minTokens: number,
    private readonly ttl: number,
    /** Tokens of the tool definitions sent before every prompt (0: none). */
    head = 0,
  ) {
    this.sums = [head];
  }

  /** What one call reads and writes. `stablePrefix` counts leading messages of `messages`, after the head. */
  call(messages: readonly Message[], stablePrefix: number, time: number, count: MessageTokens): CacheUse {
    const entries = this.entries;
    const k = Math.min(stablePrefix, messages.length);
    // Past the breakpoint and the longest live entry, what the prompt shares with the latest one matters to no entry.
    let reach = k;
    let live = 0;
    for (const e of entries) {
      if (time > e.expires) continue;
      entries[live++] = e;
      if (e.length > reach) reach = e.length;
    }
    entries.length = live;
    // The first s messages are the latest prompt's: an entry sharing fewer with it shares exactly as many with this prompt,
    // and one sharing at least s shares those s and is compared from there.
    const s = sharedFrom(messages, this.latest, 0, Math.min(messages.length, this.latest.length, reach));
    for (const e of entries) if (e.shared >= s) e.shared = sharedFrom(messages, e.messages, s, Math.min(e.length, messages.length));
    this.latest = messages;
    const sums = this.sums;
    let c = Math.min(this.counted, s);
    for (; c < k; c++) sums[c + 1] = sums[c]! + count(messages[c]!);
    this.counted = c;
    const total = sums[k]!;
    // A prefix of no tokens caches nothing (no breakpoint, no tool definitions).
    if (total === 0 || total < this.minTokens) return { read: 0, written: 0 };
    // Longest live entry that is a prefix of the messages up to the breakpoint (the first of them, as entries were written).
    let hit: Entry | undefined;
    for (const e of entries) {
      if (e.length > k || (hit && e.length <= hit.length)) continue;
      if (e.shared === e.length) hit = e;
    }
    const read = hit?.tokens ?? 0;
    if (hit) hit.expires = time + this.ttl;
    if (hit?.length !== k) entries.push({ messages, length: k, tokens: total, expires: time + this.ttl, shared: k });
    return { read, written: total - read };
  }
}
