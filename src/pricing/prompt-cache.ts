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
 *
 * With `ready` (DeepSeek's: see cache-rules.ts), what a call wrote is
 * readable only that many seconds after it was written: its prompt after
 * the call was sent, its prompt and output after the reply ended. A call
 * sent sooner than that (when the transcript recorded the gap before it: a
 * round's `gap:`) reads the newest of the earlier calls' units that is
 * readable by then. The cache's clock runs on each call's latency (as the
 * meter estimates it) and the recorded gaps; a call whose gap is not
 * recorded is taken to come late enough.
 */
export class PrefixCache {
  /**
   * The calls the cache holds, newest last: the previous one, and the ones
   * before it still needed while its units are not readable. Each with its
   * messages, its turn's time, its pieces when rendered by a template, the
   * tokens of the head and its first `counted` messages (without reply
   * priming; the rest is summed only when a later prompt starts with the
   * whole of it: a sliding window's prompt is not summed at all), what it
   * wrote, and when it was sent and its reply ended on the cache's clock.
   */
  private readonly calls: Held[] = [];
  /** When the last call's reply ended, on the cache's clock (seconds). */
  private clock = 0;

  constructor(
    private readonly rule: { minTokens: number; step: number; ready?: number },
    private readonly ttl: number,
    /** Tokens of the tool definitions sent before every prompt (0: none). */
    private readonly head = 0,
    /** Tokens sent before the tool definitions in every prompt, rendered by a template or not (0: none). */
    private readonly pinned = 0,
    /** Tokens of the first prompt already cached when it is sent (a warm start: written before the conversation, not by it). */
    private readonly warm = 0,
  ) {}

  /**
   * Cached tokens of this call; the call becomes the previous one. When the
   * whole previous prompt is the shared prefix (a growing transcript), the
   * tokens of its part shared with the call before are known: only the
   * messages it added are summed. With `output` (a provider that caches what
   * the model wrote: DeepSeek), a prompt that holds the whole previous one and
   * then that call's output reads the output's tokens from the cache too. The
   * first call reads the warm start (`warm`), up to its whole prompt.
   * `gap`: seconds since the previous call's reply, when the transcript
   * recorded it (see `ready`); `took` then says how long this call took.
   */
  call(messages: readonly Message[], time: number, count: MessageTokens, sequence?: PromptSequence, output?: Written, gap?: number): number {
    const calls = this.calls;
    const prev = calls[calls.length - 1];
    const start = prev ? Math.max(time, this.clock + (gap ?? 0)) : time;
    // The call whose units this one reads: the previous one, or (sent too soon after it) the newest readable by then.
    let from = prev;
    let withOutput = true;
    const ready = this.rule.ready ?? 0;
    if (prev && gap !== undefined && ready > 0) {
      from = undefined;
      for (let i = calls.length - 1; i >= 0; i--) {
        const e = calls[i]!;
        if (start >= e.end + ready || start >= e.start + ready) {
          from = e;
          withOutput = start >= e.end + ready;
          // Units older than one whose whole is readable are never read again (later calls come later still).
          if (withOutput) calls.splice(0, i);
          break;
        }
      }
    }
    const base = from ?? prev;
    let p: number;
    let shared = 0;
    if (sequence) {
      // Rendered by a chat template: the tokens of the leading pieces both prompts share (a piece the next prompt changes is not cached).
      const pieces = base?.sequence ? sharedPieces(sequence.ids, base.sequence.ids) : 0;
      p = base?.sequence ? this.pinned + sequence.sums[pieces]! : 0;
    } else {
      const before = base?.messages ?? [];
      shared = sharedFrom(messages, before, 0, Math.min(messages.length, before.length));
      p = base && shared === before.length && !base.sequence ? base.tokens + tokensOf(before, shared, count, base.counted) : this.pinned + this.head + tokensOf(messages, shared, count);
    }
    // Prompts are not changed once sent: the call is kept as it is.
    calls.push({ messages, time, sequence, counted: shared, tokens: sequence ? 0 : p, output, start, end: start });
    if (calls.length > MAX_HELD) calls.shift();
    this.clock = start;
    // The first call reads a warm start, up to its whole prompt.
    if (!prev) return this.warm && this.rounded(Math.min(this.warm, this.pinned + (sequence ? sequence.sums[sequence.ids.length]! : this.head + tokensOf(messages, messages.length, count))));
    if (!from || time - from.time > this.ttl) return 0;
    // That call's prompt and output, when this prompt holds both whole: read back as the provider cached them.
    const out = withOutput ? from.output : undefined;
    const n = from.messages.length;
    // (Without a template the prompts were compared above: `shared` says whether this one holds the whole of that one.)
    const holds = () => (sequence ? sharedFrom(messages, from.messages, 0, n) : shared) === n;
    if (out && messages.length > n && sameMessage(messages[n]!, out.message) && holds()) p = Math.max(p, out.promptTokens + out.tokens);
    return this.rounded(p);
  }

  /** A shared prefix of `p` tokens as the provider caches it: nothing under the minimum, else whole steps. */
  private rounded(p: number): number {
    return p < this.rule.minTokens ? 0 : Math.floor(p / this.rule.step) * this.rule.step;
  }

  /** The last call took `seconds` (its latency): its reply ended then, on the cache's clock. */
  took(seconds: number): void {
    const last = this.calls[this.calls.length - 1];
    if (!last) return;
    last.end = last.start + seconds;
    this.clock = last.end;
  }
}

/** Calls a prefix cache holds at most (the previous one, and those before it whose units are not readable yet). */
const MAX_HELD = 16;

/** A call as the prefix cache holds it (see `PrefixCache.calls`). */
interface Held {
  messages: readonly Message[];
  time: number;
  sequence: PromptSequence | undefined;
  counted: number;
  tokens: number;
  output: Written | undefined;
  start: number;
  end: number;
}

/** A call as a cache that keeps outputs holds it: its prompt's tokens, the message later prompts hold, and the tokens the model wrote. */
export interface Written {
  promptTokens: number;
  message: Message;
  tokens: number;
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
 * Anthropic-style explicit caching for one conversation on one model. A call
 * marks one or more breakpoints (after the policy's stable prefix; also at the
 * end of the prompt when each call is cached, as Claude Code and Anthropic's
 * automatic caching do). The longest live cached prefix of the prompt up to
 * the last breakpoint is read (and its TTL refreshed); the rest up to the last
 * breakpoint is written, leaving an entry at each breakpoint (one already live
 * is refreshed instead). A breakpoint whose prefix is shorter than
 * `minTokens` caches nothing. An entry dies when more than `ttl` simulated
 * seconds pass without a hit.
 *
 * A call costs what its prompt changed: the prompt is compared once with the
 * latest one, and each entry's agreement with the new prompt follows from its
 * agreement with the latest one (an entry is compared message by message
 * only past the point where the two prompts part); the prefix's tokens are
 * running sums of the latest prompt, extended by the messages new to it.
 * The tool definitions offered with every call (`head`, their tokens) are
 * sent first, always inside the cached prefix. A warm start is an entry
 * the first call finds live: its first `warm` tokens (up to the last
 * breakpoint), over the messages they reach into.
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
    /** Tokens of the first prompt already cached when it is sent (a warm start: written before the conversation, not by it). */
    private warm = 0,
  ) {
    this.sums = [head];
  }

  /** What one call reads and writes. Each breakpoint counts leading messages of `messages`, after the head (in any order; past the prompt: at its end). */
  call(messages: readonly Message[], breakpoints: readonly number[], time: number, count: MessageTokens): CacheUse {
    const entries = this.entries;
    const marks = breakpoints.map((b) => Math.min(b, messages.length));
    const k = Math.max(0, ...marks);
    // Past the last breakpoint and the longest live entry, what the prompt shares with the latest one matters to no entry.
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
    if (this.warm) {
      // Written before the first call: its first tokens, matched by every message they reach into.
      const tokens = Math.min(this.warm, sums[k]!);
      let length = 0;
      while (sums[length]! < tokens) length++;
      if (tokens) entries.push({ messages, length, tokens, expires: time + this.ttl, shared: length });
      this.warm = 0;
    }
    // A prefix of no tokens caches nothing (no breakpoint, no tool definitions); nor does one under the minimum.
    const cacheable = marks.filter((b) => sums[b]! > 0 && sums[b]! >= this.minTokens);
    if (!cacheable.length) return { read: 0, written: 0 };
    // Longest live entry that is a prefix of the messages up to the last breakpoint (the first of them, as entries were written).
    let hit: Entry | undefined;
    for (const e of entries) {
      // Of two entries over as many messages, a warm start's may hold fewer tokens (it ends inside a message or the head).
      if (e.length > k || (hit && (e.length < hit.length || (e.length === hit.length && e.tokens <= hit.tokens)))) continue;
      if (e.shared === e.length) hit = e;
    }
    const read = hit?.tokens ?? 0;
    const expires = time + this.ttl;
    if (hit) hit.expires = expires;
    for (const b of new Set(cacheable)) {
      const same = entries.find((e) => e.length === b && e.shared === b && e.tokens === sums[b]);
      if (same) same.expires = expires;
      else entries.push({ messages, length: b, tokens: sums[b]!, expires, shared: b });
    }
    // The last breakpoint is cacheable when any is (sums grow): everything past the hit up to it is written.
    return { read, written: sums[k]! - read };
  }
}
