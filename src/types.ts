/**
 * The data that flows through ctxsim, from scenario sources to reports.
 * Tokens are integers; money is integer pico-dollars (`bigint`, 1e-12 USD)
 * so sums stay exact; formatting happens only in reporters. The records a
 * run makes (turns, probes, summaries, policies, violations) are declared
 * as lists of columns in records/registry.ts, their types derived there.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** Where a policy-made system message comes from. */
export type Origin = 'summary' | 'retrieved' | 'facts';

/** What a policy stores between turns: raw messages, a running summary, vector store entries, a fact sheet. */
export type ArtifactKind = 'transcript' | 'summary' | 'vectors' | 'facts';

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as a model would write it. */
  arguments: string;
}

export interface Message {
  role: Role;
  content: string;
  /** The participant's name (OpenAI's `name` field), counted in the prompt. */
  name?: string;
  toolCalls?: readonly ToolCall[];
  /** On a `tool` message: the id of the call it answers. */
  toolCallId?: string;
  /** On a policy-made `system` message: what made it. */
  origin?: Origin;
  /** On a retrieved memory: its similarity to the query (shown by `explain`). */
  score?: number;
  /** Scenario turn the message belongs to (a retrieved memory keeps its source's; other policy-made messages have none). */
  turn?: number;
  /** On a scenario's assistant message: what the provider billed for the call that wrote it, as a transcript recorded it. */
  billed?: BilledCall;
  /** On a round's assistant message: seconds between the previous call's reply and the call that wrote it, as a transcript recorded them (the round's `gap:`). */
  delay?: number;
}

/** What a provider billed for one model call (prompt tokens include cached ones). */
export interface BilledCall {
  input: number;
  cached?: number;
  /** Of `input`, written to an explicit cache; `written1h` of them with the 1-hour TTL. */
  written?: number;
  written1h?: number;
  output?: number;
  /** `output` is what the log wrote before the reply ended, less than was billed (Claude Code's logs): the cost compares without it. */
  outputPartial?: true;
}

/** What a provider billed for a whole conversation, as a transcript that keeps only totals recorded it (SWE-agent's `model_stats`). */
export interface BilledTotal {
  /** The model calls the bill covers. */
  calls: number;
  /** Prompt tokens billed over all of them. */
  input: number;
  /** Output tokens billed over all of them. */
  output?: number;
}

export interface Turn {
  /** 1-based turn number, as in every output. */
  index: number;
  user: Message;
  /** The rounds of tool calls, in order: each an assistant message with its `tool_calls` (and any text), then its `tool` results; empty without tools. */
  tools: readonly Message[];
  assistant?: Message;
  /** Facts stated in this turn: name → value. */
  facts: Readonly<Record<string, string>>;
  /** Facts this turn needs, scored for retention. */
  probe: readonly string[];
  /** Simulated seconds since the previous turn. */
  gapSeconds: number;
  injection: boolean;
}

/** A `forget` event: erase these facts after turn `afterTurn` (0 = before the first turn). */
export interface ForgetEvent {
  afterTurn: number;
  facts: readonly string[];
}

/** A tool the model is offered, as in the `function` of an OpenAI `tools` entry: its definition is part of every call's prompt. */
export interface ToolDef {
  name: string;
  description?: string;
  /** JSON Schema of the arguments (`{type: object, properties: {…}, required: […]}`). */
  parameters?: { properties?: Readonly<Record<string, unknown>>; [key: string]: unknown };
}

export interface Conversation {
  id: string;
  title?: string;
  /** The pinned system messages, in order (empty: none): every policy sends them first, on every call. */
  system: readonly Message[];
  userId: string;
  /** What it counts for in the per-policy means, in real conversations: a positive number, fractions allowed; absent means 1. */
  weight?: number;
  turns: readonly Turn[];
  forgets: readonly ForgetEvent[];
  /** The tools the model is offered in every call of the conversation (`tool_defs:`); absent: none. */
  toolDefs?: readonly ToolDef[];
  /** Tokens of what a transcript's log leaves out of every prompt (`unlogged_prefix:`, estimated from its bill): sent first in every call, before the tool definitions. */
  unloggedTokens?: number;
  /**
   * Prompt tokens the provider already held in its cache when the first call
   * was made (`warm_start:`; a transcript's first billed call's cache reads,
   * written by an earlier session or call): that call reads them, and does
   * not write them, unless the run starts cold (`coldStart`).
   */
  warmStart?: number;
  /** The model the transcript was recorded on, as its log names it (an agent's alias resolved): the billed check replays on it when the price table knows it. */
  model?: string;
  /** What the provider billed for the whole conversation, when the transcript records totals only (`billed:`). */
  billed?: BilledTotal;
  /** When the transcript was recorded (its first call, ISO 8601), as its log says: decides the prompt format of a model name that served several (DeepSeek's). */
  recorded?: string;
  /** Where it came from, for error messages and explain. */
  source: string;
}

/** Pico-dollars: 1e-12 USD. */
export type Pico = bigint;

/**
 * What a probe found in the prompt of its turn's first call: the current value
 * (`retained`), only an older one (`stale`), none (`missing`); `overflow` when
 * that call was over the model's context window, so a real backend would have
 * rejected it and the model saw nothing.
 */
export type ProbeOutcome = 'retained' | 'stale' | 'missing' | 'overflow';
/** What a probe should find: the current value, or nothing when the fact was forgotten. */
export type ProbeExpectation = 'retained' | 'missing';
export type ProbeSource = 'window' | 'summary' | 'retrieved' | 'facts' | 'none';

/** What the chat model's reply to a probe turn held: the fact's current value, or not. */
export type ProbeAnswer = 'answered' | 'unanswered';

/**
 * Where a policy's memory comes from: `none` (it keeps no memory made by
 * upkeep: windows, priority, masking), `simulated` (summaries, fact sheets,
 * retrieval by simulated upkeep) or `recorded` (by a real model's responses,
 * from a cassette or a live endpoint).
 */
export type MemoryKind = 'none' | 'simulated' | 'recorded';

/** What memory upkeep did: a summarizer, extractor or embedder call. */
export interface UpkeepCall {
  kind: 'summary' | 'extract' | 'embed';
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** True when the user waits for it (it runs before the model call). */
  sync: boolean;
}
