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

/**
 * A prompt as a cache compares it: `head`, when there is one, is a message
 * sent before `messages` (the tool definitions offered with a call), so that a
 * call need not copy its whole prompt to put the head first.
 */
interface Prompt {
  head: Message | undefined;
  messages: readonly Message[];
}

/** How many messages a prompt has, its head included. */
function lengthOf(p: Prompt): number {
  return p.messages.length + (p.head ? 1 : 0);
}

/** Message `i` of a prompt, its head being message 0 when there is one. */
function nth(p: Prompt, i: number): Message {
  return p.head ? (i === 0 ? p.head : p.messages[i - 1]!) : p.messages[i]!;
}

/** How many leading messages two prompts share, up to `limit`, when their first `from` are known to be shared. */
function sharedFrom(a: Prompt, b: Prompt, from: number, limit: number): number {
  let i = from;
  if ((a.head === undefined) !== (b.head === undefined)) {
    // Only one has a head: its messages are one place further on than the other's.
    while (i < limit && sameMessage(nth(a, i), nth(b, i))) i++;
    return i;
  }
  const off = a.head ? 1 : 0;
  if (i < off && i < limit) {
    if (!sameMessage(a.head!, b.head!)) return 0;
    i = off;
  }
  const x = a.messages;
  const y = b.messages;
  // Prompts of one conversation mostly hold the same objects: those are told apart without a call.
  for (let j = i - off, n = limit - off; j < n; j++) {
    const m = x[j]!;
    const o = y[j]!;
    if (m !== o && !sameMessage(m, o)) return j + off;
  }
  return limit;
}

/** Tokens of messages `from` to `to` (not included) of a prompt. */
function tokensOf(p: Prompt, to: number, count: MessageTokens, from = 0): number {
  let t = 0;
  let i = from;
  const off = p.head ? 1 : 0;
  if (i < off && i < to) {
    t += count(p.head!);
    i = off;
  }
  const m = p.messages;
  for (; i < to; i++) t += count(m[i - off]!);
  return t;
}

/**
 * OpenAI-style automatic prefix caching for one conversation on one model
 * (SPEC §5): P = tokens of the longest run of leading messages identical to
 * the previous call's; cached = 0 if P < minTokens, else P rounded down to a
 * multiple of `step`; nothing is cached once more than `ttl` simulated
 * seconds passed since the previous call.
 */
export class PrefixCache {
  /**
   * The previous call: its prompt, when, its pieces when rendered by a
   * template, its length (head included) and the tokens of its first
   * `counted` messages (without reply priming). The rest is summed only when
   * a later prompt starts with the whole of it: a sliding window's prompt is
   * not summed at all.
   */
  private previous?: { prompt: Prompt; length: number; time: number; sequence: PromptSequence | undefined; counted: number; tokens: number };

  constructor(
    private readonly rule: { minTokens: number; step: number },
    private readonly ttl: number,
  ) {}

  /**
   * Cached tokens of this call; the call becomes the previous one. When the
   * whole previous prompt is the shared prefix (a growing transcript), the
   * tokens of its part shared with the call before are known: only the
   * messages it added are summed. `head`, when given, is a message sent
   * before `messages` (see Prompt).
   */
  call(messages: readonly Message[], time: number, count: MessageTokens, sequence?: PromptSequence, head?: Message): number {
    const prev = this.previous;
    const prompt: Prompt = { head, messages };
    const length = lengthOf(prompt);
    let p: number;
    let shared = 0;
    if (sequence) {
      // Rendered by a chat template: the tokens of the leading pieces both prompts share (a piece the next prompt changes is not cached).
      p = prev?.sequence ? sequence.sums[sharedPieces(sequence.ids, prev.sequence.ids)]! : 0;
    } else {
      shared = prev ? sharedFrom(prompt, prev.prompt, 0, Math.min(length, prev.length)) : 0;
      p = prev && shared === prev.length && !prev.sequence ? prev.tokens + tokensOf(prev.prompt, shared, count, prev.counted) : tokensOf(prompt, shared, count);
    }
    // Prompts are not changed once sent: the previous one is kept as it is.
    this.previous = { prompt, length, time, sequence, counted: shared, tokens: sequence ? 0 : p };
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

/** A live entry of an explicit cache: the first `length` messages of a prompt. */
interface Entry {
  /** The prompt the entry was written from (prompts are not changed once sent, so it is kept, not copied). */
  prompt: Prompt;
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
 */
export class BreakpointCache {
  private readonly entries: Entry[] = [];
  /** The latest prompt and its length (head included). */
  private latest: Prompt | undefined;
  private latestLength = 0;
  /** sums[i] = tokens of the latest prompt's first i messages, for i ≤ counted (later entries are stale). */
  private readonly sums: number[] = [0];
  private counted = 0;

  constructor(
    private readonly minTokens: number,
    private readonly ttl: number,
  ) {}

  /**
   * What one call reads and writes. `stablePrefix` counts leading messages of
   * `messages`; `head`, when given, is a message sent before them, always
   * inside the cached prefix (see Prompt).
   */
  call(messages: readonly Message[], stablePrefix: number, time: number, count: MessageTokens, head?: Message): CacheUse {
    const entries = this.entries;
    const k = (head ? 1 : 0) + Math.min(stablePrefix, messages.length);
    // Past the breakpoint and the longest live entry, what the prompt shares with the latest one matters to no entry.
    let reach = k;
    let live = 0;
    for (const e of entries) {
      if (time > e.expires) continue;
      entries[live++] = e;
      if (e.length > reach) reach = e.length;
    }
    entries.length = live;
    const prompt: Prompt = { head, messages };
    const length = lengthOf(prompt);
    // The first s messages are the latest prompt's: an entry sharing fewer with it shares exactly as many with this prompt,
    // and one sharing at least s shares those s and is compared from there.
    const s = this.latest ? sharedFrom(prompt, this.latest, 0, Math.min(length, this.latestLength, reach)) : 0;
    for (const e of entries) if (e.shared >= s) e.shared = sharedFrom(prompt, e.prompt, s, Math.min(e.length, length));
    this.latest = prompt;
    this.latestLength = length;
    const sums = this.sums;
    let c = Math.min(this.counted, s);
    for (; c < k; c++) sums[c + 1] = sums[c]! + count(nth(prompt, c));
    this.counted = c;
    const total = sums[k]!;
    if (k === 0 || total < this.minTokens) return { read: 0, written: 0 };
    // Longest live entry that is a prefix of the messages up to the breakpoint (the first of them, as entries were written).
    let hit: Entry | undefined;
    for (const e of entries) {
      if (e.length > k || (hit && e.length <= hit.length)) continue;
      if (e.shared === e.length) hit = e;
    }
    const read = hit?.tokens ?? 0;
    if (hit) hit.expires = time + this.ttl;
    if (hit?.length !== k) entries.push({ prompt, length: k, tokens: total, expires: time + this.ttl, shared: k });
    return { read, written: total - read };
  }
}
