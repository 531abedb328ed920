/**
 * The data that flows through ctxsim, from scenario sources to reports.
 * Tokens are integers; money is integer pico-dollars (`bigint`, 1e-12 USD)
 * so sums stay exact; formatting happens only in reporters.
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
}

/** What a provider billed for one model call (prompt tokens include cached ones). */
export interface BilledCall {
  input: number;
  cached?: number;
  /** Of `input`, written to an explicit cache; `written1h` of them with the 1-hour TTL. */
  written?: number;
  written1h?: number;
  output?: number;
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
  /** How many real conversations it stands for in the per-policy means; absent means 1. */
  weight?: number;
  turns: readonly Turn[];
  forgets: readonly ForgetEvent[];
  /** The tools the model is offered in every call of the conversation (`tool_defs:`); absent: none. */
  toolDefs?: readonly ToolDef[];
  /** Tokens of what a transcript's log leaves out of every prompt (`unlogged_prefix:`, estimated from its bill): sent first in every call, before the tool definitions. */
  unloggedTokens?: number;
  /** The model the transcript was recorded on, as its log names it (an agent's alias resolved): the billed check replays on it when the price table knows it. */
  model?: string;
  /** What the provider billed for the whole conversation, when the transcript records totals only (`billed:`). */
  billed?: BilledTotal;
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

export interface ProbeRecord {
  scenario: string;
  policy: string;
  /** The run's chat model (a study may run several). */
  model: string;
  turn: number;
  fact: string;
  outcome: ProbeOutcome;
  /** Turns since the fact's current value was stated. */
  ageTurns: number;
  source: ProbeSource;
  /** `missing` for a fact the user asked to forget (and did not state again): then finding it is a violation. */
  expected: ProbeExpectation;
  /** The probe found a value of a forgotten fact (never on an `overflow`: the call was rejected). */
  violation: boolean;
  /**
   * Whether the chat model's reply to the turn's first prompt held the fact's
   * current value (a study with `answers`); absent when answers were not
   * measured or the fact was forgotten. An `overflow` probe is `unanswered`.
   */
  answer?: ProbeAnswer;
  /**
   * With a judge (a study's `judge`): true when the reply did not hold the
   * value as written and the judge model's yes made the probe `answered`;
   * false otherwise. Absent without a judge, or without an `answer`.
   */
  judged?: boolean;
}

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

export interface TurnRecord {
  scenario: string;
  policy: string;
  turn: number;
  contextMessages: number;
  /** The chat model the turn's calls went to: the run's model, or the one \`route\` chose. */
  model: string;
  /** A call of the turn failed and was retried on the fallback model. */
  fallback: boolean;
  /** Prompt tokens over the turn's model calls; includes `cachedTokens` and `cacheWriteTokens`. */
  inputTokens: number;
  /** Prompt tokens read from the provider's cache. */
  cachedTokens: number;
  /** Prompt tokens written to an explicit (Anthropic-style) cache. */
  cacheWriteTokens: number;
  outputTokens: number;
  auxInputTokens: number;
  auxOutputTokens: number;
  embedTokens: number;
  cost: Pico;
  cumulativeCost: Pico;
  latencyMs: number;
  overflow: boolean;
  overBudget: boolean;
  /** Retention probes (a probe of a forgotten fact is not one: see ProbeRecord.expected). */
  probes: number;
  retained: number;
  /** Provider message rules broken by the turn's prompts (every call). */
  violations: number;
  /** A prompt of the turn still held a value the user asked to forget. */
  zombiePrompt: boolean;
  /** The turn's first prompt still held an earlier injection turn (verbatim, quoted in a summary, retrieved or in the fact sheet). */
  injectionExposed: boolean;
  /** Cost split for charts: uncached input, cached input, output, upkeep. */
  costInput: Pico;
  costCached: Pico;
  costOutput: Pico;
  costUpkeep: Pico;
  /** True when the turn's counts are estimates: the model's tokenizer is a stand-in (not published), a text was too long to count exactly or holds a code point the runtime's Unicode tables class otherwise, or a chat template could only be given the prompt adapted. */
  estimatedTokens: boolean;
  /** Model calls the turn made: one after the user message, and one after each round of tool calls. */
  calls: number;
}

export interface SummaryRecord {
  scenario: string;
  policy: string;
  /** The run's chat model (a study may run several). */
  model: string;
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  auxTokens: number;
  totalCost: Pico;
  costPerTurn: Pico;
  peakInputTokens: number;
  overflowTurns: number;
  overBudgetTurns: number;
  probes: number;
  retained: number;
  stale: number;
  missing: number;
  /** Probes scored on a call over the context window: not retained, counted apart. */
  overflowProbes: number;
  /** retained / probes, or null without probes. */
  retention: number | null;
  /** First probe turn at which a fact was not retained. */
  firstLostTurn: number | null;
  latencyP50Ms: number;
  latencyP95Ms: number;
  /** How many kinds of artifact still hold a forgotten value at the end of the conversation. */
  zombieArtifacts: number;
  /** Which ones, in the order transcript, summary, vectors, facts. */
  zombies: ArtifactKind[];
  /** Turns whose prompt held a forgotten value. */
  zombiePromptTurns: number;
  /** Probes of a forgotten fact that found a value. */
  zombieProbes: number;
  /** Turns whose first prompt still held an earlier injection turn. */
  injectionExposureTurns: number;
  /** Provider message rules broken, over every call. */
  violations: number;
  /** UTF-8 bytes the policy stores at the end of the conversation (embeddings at dimensions × 4). */
  storedBytes: number;
  /** How many real conversations the scenario stands for in the per-policy means (1 by default). */
  weight: number;
  /** Probes whose fact the chat model's reply held; null when answers were not measured. */
  answered: number | null;
  /** answered / probes; null when answers were not measured, or without probes. */
  answerRetention: number | null;
  /** Where the policy's memory comes from. */
  memory: MemoryKind;
}

export interface PolicyRecord {
  policy: string;
  /** The run's chat model: a row per policy × model. */
  model: string;
  scenarios: number;
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  auxTokens: number;
  totalCost: Pico;
  /** Mean cost of a conversation, weighted by the scenarios' weights, rounded down. */
  costPerConversation: Pico;
  /** Weighted mean cost of 1,000 conversations, rounded to nearest; only when a scenario's weight is not 1. */
  costPer1000?: Pico;
  costPerTurn: Pico;
  overflowTurns: number;
  probes: number;
  retained: number;
  stale: number;
  missing: number;
  /** Probes scored on a call over the context window: not retained, counted apart. */
  overflowProbes: number;
  /** Weighted: sum(weight × retained) / sum(weight × probes); null without probes. */
  retention: number | null;
  /** On the Pareto frontier: no other policy is both cheaper and retains more. */
  pareto: boolean;
  /** Stored bytes at the end of a conversation: mean (rounded) and nearest-rank 95th percentile over the scenarios. */
  storedBytesMean: number;
  storedBytesP95: number;
  /** Nearest-rank 95th percentile, over the scenarios, of each conversation's 95th-percentile turn latency. */
  latencyP95Ms: number;
  zombieArtifacts: number;
  zombiePromptTurns: number;
  zombieProbes: number;
  injectionExposureTurns: number;
  violations: number;
  /** Probes whose fact the chat model's reply held; null when answers were not measured. */
  answered: number | null;
  /** Weighted as `retention`: sum(weight × answered) / sum(weight × probes); null when answers were not measured, or without probes. */
  answerRetention: number | null;
  /** Where the policy's memory comes from (`simulated` or `recorded` when any of its rows says so). */
  memory: MemoryKind;
}

/** One provider message rule broken by one model call's prompt. */
export interface ViolationRecord {
  scenario: string;
  policy: string;
  /** The run's chat model. */
  model: string;
  turn: number;
  /** 1 for the call after the user message, 2 for the call after tool results. */
  call: number;
  rule: string;
  detail: string;
}

export interface Results {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  summary: SummaryRecord[];
  policies: PolicyRecord[];
  violations: ViolationRecord[];
}
