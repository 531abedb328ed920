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

/** How many leading messages two prompts share. */
export function commonPrefix(a: readonly Message[], b: readonly Message[], limit = Math.min(a.length, b.length)): number {
  let i = 0;
  while (i < limit && sameMessage(a[i]!, b[i]!)) i++;
  return i;
}

function tokensOf(messages: readonly Message[], n: number, count: MessageTokens, from = 0): number {
  let t = 0;
  for (let i = from; i < n; i++) t += count(messages[i]!);
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
   * template, and the tokens of its first `counted` messages (without reply
   * priming). The rest is summed only when a later prompt starts with the
   * whole of it: a sliding window's prompt is not summed at all.
   */
  private previous?: { messages: readonly Message[]; time: number; sequence: PromptSequence | undefined; counted: number; tokens: number };

  constructor(
    private readonly rule: { minTokens: number; step: number },
    private readonly ttl: number,
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
      shared = prev ? commonPrefix(messages, prev.messages) : 0;
      p = prev && shared === prev.messages.length && !prev.sequence ? prev.tokens + tokensOf(prev.messages, shared, count, prev.counted) : tokensOf(messages, shared, count);
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

interface Entry {
  messages: readonly Message[];
  tokens: number;
  expires: number;
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
 * written as a new entry. An entry dies when more than `ttl` simulated seconds
 * pass without a hit.
 */
export class BreakpointCache {
  private entries: Entry[] = [];

  constructor(
    private readonly minTokens: number,
    private readonly ttl: number,
  ) {}

  call(messages: readonly Message[], stablePrefix: number, time: number, count: MessageTokens): CacheUse {
    this.entries = this.entries.filter((e) => time <= e.expires);
    const k = Math.min(stablePrefix, messages.length);
    const total = tokensOf(messages, k, count);
    if (k === 0 || total < this.minTokens) return { read: 0, written: 0 };
    // Longest live entry that is a prefix of the messages up to the breakpoint.
    let hit: Entry | undefined;
    for (const e of this.entries) {
      if (e.messages.length > k || (hit && e.messages.length <= hit.messages.length)) continue;
      if (commonPrefix(messages, e.messages, e.messages.length) === e.messages.length) hit = e;
    }
    const read = hit?.tokens ?? 0;
    if (hit) hit.expires = time + this.ttl;
    if (hit?.messages.length !== k) this.entries.push({ messages: messages.slice(0, k), tokens: total, expires: time + this.ttl });
    return { read, written: total - read };
  }
}
