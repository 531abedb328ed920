import type { z } from 'zod';
import type { TokenCounter } from '../tokens/counter.js';
import type { ArtifactKind, Conversation, Message, Turn, UpkeepCall } from '../types.js';

/** A parameter value after parsing: numbers, strings and booleans. */
export type ParamValue = number | string | boolean;

/**
 * One parameter in the table shape policies were first written with
 * (`{ turns: { default: 10, kind: 'int', min: 0 } }`); `paramsFromTable`
 * turns such a table into the zod object policies declare now.
 */
export interface ParamSpec {
  default: ParamValue | undefined;
  kind: 'int' | 'number' | 'string' | 'boolean' | 'duration' | 'probability';
  /** Smallest allowed value for numbers. */
  min?: number;
  /** Allowed values for strings. */
  oneOf?: readonly string[];
}

/** A policy's parameters in the table shape: name → `ParamSpec`. */
export type ParamTable = Readonly<Record<string, ParamSpec>>;

/** What a policy session may use: counts, the seeded stream, the models in play. */
export interface PolicyDeps {
  tokens: TokenCounter;
  /** Seeded uniform [0,1) stream for this (seed, scenario, policy). */
  random: () => number;
  /** The chat model. */
  model: string;
}

/** The turn a prompt is built for. */
export interface TurnInfo {
  turn: Turn;
  /** Simulated seconds since the conversation started. */
  time: number;
}

/** What a policy sends for one model call. */
export interface PromptPlan {
  /** The prompt, in order: an array of its own, not changed after it is returned (the meter keeps it to compare the next call's with). */
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

/** Resolved parameters (defaults filled in), as a run carries them: plain values, so they cross threads. */
export type Params = Readonly<Record<string, ParamValue | undefined>>;

/**
 * A memory policy: an id, its parameters, and a session per conversation.
 * `params` declares the policy's own parameters (every policy also takes
 * the common ones, `sessionCap`, `forget` and `moderation`): a zod object
 * made with the parameter builders (see `definePolicy`), or a table of the
 * first documented shape, read through `paramsFromTable`. `start` gets them
 * resolved, defaults filled in.
 */
export interface Policy<P extends object = Params> {
  id: string;
  /** One line for `--help` and the docs. */
  describe: string;
  params: z.ZodObject | ParamTable;
  start(conversation: Conversation, params: P, deps: PolicyDeps): PolicySession;
}
