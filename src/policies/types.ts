import type { z } from 'zod';
import type { TokenCounter } from '../tokens/counter.js';
import type { ArtifactKind, Message, ToolDef, UpkeepCall } from '../types.js';
import type { Vector } from '../upkeep/embedder.js';
import type { ForgetSummaryRequest, SummarizeRequest, Summary } from '../upkeep/summarizer.js';
import type { VectorStore } from '../upkeep/store.js';
import type { Upkeep } from '../upkeep/upkeep.js';

/**
 * What an agent policy does to a prompt: which tool results it replaces, and
 * by what. `messages` is the prompt as it would go whole (the pinned prompt,
 * the conversation so far, the current turn last); the round being read
 * starts at `newest` and is never replaced.
 */
export interface ToolView {
  replace(messages: readonly Message[], newest: number): ReadonlyMap<Message, Message>;
}

/** A parameter value after parsing: numbers, strings and booleans. */
export type ParamValue = number | string | boolean;

/**
 * One parameter in the table shape policies were first written with
 * (`{ turns: { default: 10, kind: 'int', min: 0 } }`); `paramsFromTable`
 * turns such a table into the zod object policies declare now.
 *
 * @deprecated Declare a parameter with a `param` builder
 * (`param.int({ default: 10, min: 0, describe: '…' })`) in the `z.object`
 * given to `definePolicy`.
 */
export interface ParamSpec {
  default: ParamValue | undefined;
  kind: 'int' | 'number' | 'string' | 'boolean' | 'duration' | 'probability';
  /** Smallest allowed value for numbers. */
  min?: number;
  /** Allowed values for strings. */
  oneOf?: readonly string[];
}

/**
 * A policy's parameters in the table shape: name → `ParamSpec`.
 *
 * @deprecated Declare a policy's parameters as a `z.object` of the `param`
 * builders (`param.int({ default: 2, min: 0, describe: '…' })`), with
 * `definePolicy`, which types what `start` gets. A table given as a
 * policy's `params` (what a module that imports nothing writes) is still
 * read; only this name is on its way out.
 */
export type ParamTable = Readonly<Record<string, ParamSpec>>;

/** What a policy session may use: counts, the seeded stream, the models in play, the building blocks. */
export interface PolicyDeps {
  tokens: TokenCounter;
  /** Seeded uniform [0,1) stream for this (seed, scenario, policy). */
  random: () => number;
  /** The chat model. */
  model: string;
  /** The chat model's context window in tokens, when the price table knows it. */
  contextWindow?: number;
  /** The pieces the built-in policies are made of (the package's `blocks`, the same object), for a policy module that imports nothing. */
  blocks: Blocks;
  /**
   * The run's summarizer, extractor and embedding: simulated, or a real
   * model's responses recorded in a cassette (`upkeep:` in a study). The
   * blocks use it; absent (a session started by hand), upkeep is simulated.
   */
  upkeep?: Upkeep;
}

/** The messages of one finished turn: the user message first, then tool messages and the reply. */
export type Exchange = readonly Message[];

/** The common parameters as the blocks read them (a session's `params` has them, defaults filled in). */
export interface SessionParams {
  /** After this many stored exchanges the session restarts: the history is cleared. */
  sessionCap?: number | undefined;
  forget: 'cascade' | 'naive';
  moderation: 'none' | 'drop';
}

/** The summarizer's parameters (the summary policies' `summaryModel`, `summaryTokens`, `keep`). */
export interface SummaryParams {
  /** Model the summarizer is priced on (default: the chat model). */
  summaryModel?: string | undefined;
  /** Size of the running summary, in tokens. */
  summaryTokens: number;
  /** Chance that each fold keeps each entry it read (a statement of the text). */
  keep: number;
}

/** The fact extractor's parameters (the `facts` policy's `extractModel`, `recall`, `sheetTokens`). */
export interface FactSheetParams {
  /** Model the extraction is priced on (default: the chat model). */
  extractModel?: string | undefined;
  /** Chance that the simulated extractor finds each statement of the messages it reads. */
  recall: number;
  /** Most tokens the sheet may have (default 500); entries that do not fit are dropped, the least salient, then the fewest-found and longest-unseen first. */
  sheetTokens?: number | undefined;
}

/** Raw history, exchange by exchange, restarted (cleared) after `sessionCap` exchanges. */
export interface History {
  /** The stored exchanges since the last restart, oldest first (read them; store through `add`). */
  readonly exchanges: readonly Exchange[];
  /** Every stored message in order (a view, no copy). */
  readonly flat: readonly Message[];
  /** The messages of the exchanges from index `from` on (a new array). */
  messages(from?: number): Message[];
  /** Stores a finished exchange; returns true when it restarted the session (`sessionCap` reached: history cleared). */
  add(exchange: Exchange): boolean;
  /** Replaces each stored message that holds one of the normalized values by a redacted copy. */
  redact(values: readonly string[]): void;
}

/** A transcript a session can hand its `commit` and `forget` to: moderation, `sessionCap` and redaction done. */
export interface TranscriptBlock extends History {
  /** Stores the exchange, unless `moderation: drop` keeps the turn out; no upkeep. */
  commit: PolicySession['commit'];
  /** Redacts every value of the facts from the stored messages (cascade and naive alike: it is raw memory); no upkeep. */
  forget: PolicySession['forget'];
  /** The stored messages of the exchanges from index `from` on, as a `transcript` artifact. */
  artifact(from?: number): Artifact;
}

/** The running summary of the summary policies: a transcript, how much of it is folded, the summary; its `commit`, `forget` and `artifacts` are a session's. */
export interface RunningSummaryBlock extends Pick<PolicySession, 'commit' | 'forget' | 'artifacts'> {
  /** The raw transcript (the summary and the fold point reset when it restarts). */
  readonly history: History;
  /** Exchanges of `history` already folded into the summary. */
  readonly folded: number;
  /** The summary, once a fold made one. */
  readonly summary: Summary | undefined;
  /** The exchanges not folded yet, oldest first. */
  open(): Exchange[];
  /** The summary as a message to send (`system`, origin `summary`), or none. */
  message(): Message[];
  /** Folds the oldest `count` open exchanges into the summary, of at most `summaryTokens` tokens (default: the policy's `summaryTokens`): one summarizer call, returned to be priced. */
  fold(count: number, summaryTokens?: number): UpkeepCall;
}

/** The fact sheet of the `facts` policy: name → latest value, sent as one `system` message (origin `facts`). */
export interface FactSheetBlock {
  /** One extraction call after a turn, reading `exchange`: the facts it finds there update the sheet (a later value of a named fact replaces an earlier one; the sheet stays within `sheetTokens`). */
  read(exchange: Exchange, info: TurnInfo): UpkeepCall;
  /** Removes the facts by name, and their values from every other entry (a store edit, not a model call). */
  erase(facts: readonly ForgetFact[]): void;
  /** The sheet as a message to send (the same object until it changes), or none while empty. */
  messages(): Message[];
  /** The sheet as a `facts` artifact. */
  artifact(): Artifact;
}

/**
 * The pieces the built-in policies are made of, documented in
 * docs/custom-policies.md (Building blocks). A policy gets them as
 * `deps.blocks`; the package exports the same object as `blocks`.
 */
export interface Blocks {
  // Messages, tokens and budgets
  /** The pinned part of every prompt: the conversation's system prompt, if any. */
  pinned(conversation: SessionStart): Message[];
  /** The text of a message that is counted and searched: content, then each tool call's `name(arguments)`. */
  messageText(message: Message): string;
  /** Tokens of messages in a prompt, chat overhead included, reply priming not. */
  sumTokens(tokens: TokenCounter, messages: readonly Message[]): number;
  /** Tokens of a whole prompt of these messages as the provider counts it: with reply priming and what every call carries besides its messages (`tokens.carried`: tool definitions, an unlogged prefix). What a budget or threshold compares. */
  promptTokens(tokens: TokenCounter, messages: readonly Message[]): number;
  /** Tokens of the fixed part of a prompt (pinned messages, the pending turn), counted as `promptTokens` counts a prompt: `budget - fixedTokens(…)` is the room left for memory. */
  fixedTokens(tokens: TokenCounter, fixed: readonly Message[]): number;
  /** Tokens a policy-made `system` message of `contentTokens` tokens costs in a prompt. */
  systemMessageTokens(tokens: TokenCounter, contentTokens: number): number;
  /** The newest messages whose tokens fit in `room`, walking back from the newest; stops at the first that does not fit. */
  newestThatFit(tokens: TokenCounter, messages: readonly Message[], room: number): Message[];
  /** How many of the newest exchanges fit in `room` tokens (at most `max`), walking back; stops at the first that does not fit. */
  newestExchangesThatFit(tokens: TokenCounter, exchanges: readonly Exchange[], room: number, max?: number): number;
  /** Drops leading messages until the first user message, so no reply or tool result is sent without its cause. */
  fromFirstUser(messages: readonly Message[]): Message[];
  /** Upkeep is decided once per turn: `first(info)` is true on a turn's first model call only. */
  turnGate(): { first(info: TurnInfo): boolean };
  /** A `duration` parameter (its text as written, `30m`, or a number of seconds) in seconds, to compare with `info.time`; undefined if malformed. The package's `parseDuration`, for a module that imports nothing (or, a `.cjs` one, cannot import the package). */
  parseDuration(value: unknown): number | undefined;

  // Memory
  /** The raw history a policy keeps, honouring `sessionCap`, `moderation` and forget events. */
  transcript(params: Pick<SessionParams, 'sessionCap' | 'moderation'>): TranscriptBlock;
  /** The memory of `summary` and `summary-buffer`: a transcript and the running summary its old exchanges are folded into. */
  runningSummary(conversation: SessionStart, params: SummaryParams & SessionParams, deps: PolicyDeps): RunningSummaryBlock;
  /** The simulated summarizer, one call: the old summary plus the folded messages. */
  summarize(request: SummarizeRequest): { summary: Summary; call: UpkeepCall };
  /** The simulated re-summarization that erases facts from a summary. */
  forgetInSummary(request: ForgetSummaryRequest): { summary: Summary; call: UpkeepCall };
  /** The memory of `facts`: a fact sheet kept up to date by the simulated extractor. */
  factSheet(params: FactSheetParams, deps: PolicyDeps): FactSheetBlock;
  /** The lexical embedding `retrieval` uses: hashed words and word pairs, L2-normalised; needs no model. */
  embed(text: string): Vector;
  /** Cosine similarity of two embeddings (0 when either is empty). */
  cosine(a: Vector, b: Vector): number;
  /** An empty vector store of the lexical embedding (the one `retrieval` keeps): add, best k, remove, keepNewest, dropBefore. */
  vectorStore<T>(): VectorStore<T>;

  // Forgetting, moderation, artifacts
  /** Lower case, whitespace collapsed: how fact values are compared with text. */
  normalize(text: string): string;
  /** True when the text holds one of the (normalized) values, by the rule probe scoring uses. */
  holds(text: string, values: readonly string[]): boolean;
  /** The text with every (normalized) value replaced by `[forgotten]`. */
  redactText(text: string, values: readonly string[]): string;
  /** A redacted copy of a message (content and tool-call arguments), or the message itself when it holds none of the values. */
  redactMessage(message: Message, values: readonly string[]): Message;
  /** Every value of the facts to forget, once each. */
  valuesOf(facts: readonly ForgetFact[]): string[];
  /** True under `forget: cascade` (the default): erase from every artifact; false under `naive`. */
  cascades(params: Pick<SessionParams, 'forget'>): boolean;
  /** True when this turn is kept out of memory: flagged `injection: true` under `moderation: drop`. */
  moderated(params: Pick<SessionParams, 'moderation'>, info: TurnInfo): boolean;
  /** An artifact of texts, its bytes their UTF-8 size plus `extraBytes`. */
  artifact(kind: ArtifactKind, texts: string[], extraBytes?: number): Artifact;
  /** Stored messages as a `transcript` artifact. */
  transcriptArtifact(messages: readonly Message[]): Artifact;
  /** Stored texts as a `vectors` artifact: their bytes plus an embedding each (1536 dimensions × 4 bytes). */
  vectorsArtifact(texts: string[]): Artifact;
}

/**
 * What a policy is told of a conversation when its session starts: its id,
 * its user, the pinned system messages and the tools offered. Never its
 * turns: they arrive one at a time, as they happen.
 */
export interface SessionStart {
  id: string;
  userId: string;
  /** The pinned system messages, in order (empty: none). */
  system: readonly Message[];
  /** The tools the model is offered in every call (absent: none). */
  toolDefs?: readonly ToolDef[];
}

/**
 * What a policy is told of the turn under way: its number, and whether the
 * moderation classifier flagged its user message as an injection (an input
 * a backend has, like the message itself). Never what the turn states or
 * needs (the scenario's `facts:` and `probe:` are the answer key, kept for
 * scoring), nor its tool rounds or reply before they happen.
 */
export interface TurnStart {
  /** 1-based turn number. */
  index: number;
  /** The (simulated) moderation classifier flagged the user message. */
  injection: boolean;
}

/** The turn a prompt is built for. */
export interface TurnInfo {
  turn: TurnStart;
  /** Simulated seconds since the conversation started. */
  time: number;
}

/** What a policy sends for one model call. */
export interface PromptPlan {
  /** The prompt, in order: an array of its own, neither it nor its messages changed after it is returned (the meter keeps it to compare the next call's with; the per-call checks read only what the next prompt adds). */
  messages: Message[];
  /** The budget could not be kept: the pinned system prompt and the current turn alone exceed it. */
  overBudget: boolean;
  /** Upkeep the user waits for before this call (e.g. a summarization). */
  upkeep: UpkeepCall[];
  /** How many leading messages form the stable prefix (a cache breakpoint goes after them). */
  stablePrefix: number;
}

/** A fact to erase: its name and every value it had (normalized: lower case, whitespace collapsed). */
export interface ForgetFact {
  name: string;
  values: readonly string[];
}

/** When a forget event happens: after turn `afterTurn` (0 = before the first), at simulated `time`. */
export interface ForgetInfo {
  afterTurn: number;
  time: number;
}

/** One kind of stored memory, as a backend would keep it: its texts and its size. */
export interface Artifact {
  kind: ArtifactKind;
  /** The stored texts (message texts, summary, vector entries' source texts, fact sheet). */
  texts: string[];
  /** UTF-8 bytes of the texts, plus the embeddings (dimensions × 4 bytes each) for vectors. */
  bytes: number;
}

/** One conversation's memory under a policy. */
export interface PolicySession {
  /**
   * The prompt for a model call. `pending` is the current turn so far (the user
   * message, then tool call and results): always sent, in full, last.
   */
  prompt(pending: readonly Message[], info: TurnInfo): PromptPlan;
  /** Records the finished exchange (user, tool messages, assistant reply); returns upkeep done after the turn. */
  commit(exchange: readonly Message[], info: TurnInfo): UpkeepCall[];
  /**
   * Erases facts the user asked to forget (`forget: cascade` from every
   * artifact, `naive` from the raw messages only); returns the upkeep it took
   * (e.g. a re-summarization).
   */
  forget(facts: readonly ForgetFact[], info: ForgetInfo): UpkeepCall[];
  /** What the session stores now: the messages it may still send and its memory, one entry per kind it keeps. */
  artifacts(): Artifact[];
}

/** A policy ready to run: its canonical name and resolved parameters (defaults filled in). */
export interface PolicyVariant {
  name: string;
  policy: Policy;
  params: Params;
  /** For a policy loaded from a module: its absolute path and the sha256 of its bytes (worker threads import it again by path), and of the files it imports (`PolicyModule.imports`), when any. */
  module?: { file: string; hash: string; imports?: string };
}

/** Resolved parameters (defaults filled in), as a run carries them: plain values, so they cross threads. */
export type Params = Readonly<Record<string, ParamValue | undefined>>;

/**
 * A memory policy: an id, its parameters, and a session per conversation.
 * `params` declares the policy's own parameters (every policy also takes
 * the common ones, `sessionCap`, `forget` and `moderation`): a zod object
 * made with the parameter builders (see `definePolicy`), or a table of the
 * first documented shape (`{ keep: { default: 2, kind: 'int', min: 0 } }`,
 * what a policy module that imports nothing writes), which ctxsim converts
 * to such an object. `start` gets them resolved, defaults filled in.
 */
export interface Policy<P extends object = Params> {
  id: string;
  /** One line for `--help` and the docs. */
  describe: string;
  params: z.ZodObject | ParamTable;
  start(conversation: SessionStart, params: P, deps: PolicyDeps): PolicySession;
  /**
   * For a policy whose parameter is itself made of policies (`pipeline`): its
   * variants for the parameters given (sweeps inside, canonical names), or an
   * error message. Others are resolved from `params`.
   */
  variants?(given: readonly (readonly [string, unknown])[]): PolicyVariant[] | string;
  /**
   * For a policy that rewrites tool results (`mask-observations`,
   * `clear-tool-results`): the rewriting alone, as a view of a prompt, so the
   * policy can be a stage of a pipeline before its last (the memory).
   * Without it a policy can only be a pipeline's last stage.
   */
  view?(params: P, tokens: TokenCounter): ToolView;
}
