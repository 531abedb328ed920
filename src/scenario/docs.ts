import { ScenarioError, type Problem } from '../errors.js';
import type { BilledTotal, Conversation, ToolDef } from '../types.js';
import { scenarioFromValue } from './load.js';

/**
 * Scenario documents built in memory: the shape a scenario file has once
 * parsed. Generators and importers build these, never `Conversation`s, so
 * everything they make passes the one validation that YAML files pass.
 */
export interface ToolOut {
  call: string;
  args?: Record<string, unknown>;
  result?: unknown;
}

/** One round of an agent's loop: its text and its calls (with their results). */
export interface RoundOut {
  assistant?: string;
  calls: ToolOut[];
  /** What the provider billed for the call that wrote this round. */
  usage?: UsageOut;
  /** Time between the previous call's reply and the call that wrote this round (a duration such as `1.8s`), as the transcript recorded it. */
  gap?: string;
}

/** Billed usage of one call, as a transcript recorded it. */
export interface UsageOut {
  input: number;
  cached?: number;
  /** Of the input, written to an explicit cache; `written1h` of them with the 1-hour TTL. */
  written?: number;
  written1h?: number;
  output?: number;
  /** `output` was logged before the reply ended (less than was billed). */
  output_partial?: true;
}

export interface TurnOut {
  user: string;
  /** A duration such as `3d` (default 30s when absent). */
  gap?: string;
  facts?: Record<string, string>;
  probe?: string[];
  /** The calls of one round, or the rounds. */
  tools?: ToolOut[] | RoundOut[];
  assistant?: string;
  /** What the provider billed for the call that wrote the reply. */
  usage?: UsageOut;
  injection?: boolean;
  /** Names on the user message and the reply (OpenAI's `name`). */
  names?: { user?: string; assistant?: string };
}

/** One pinned system message of a list, with its name (OpenAI's `name`). */
export interface SystemOut {
  content: string;
  name?: string;
}

export interface ForgetOut {
  forget: string[];
}

export interface ScenarioOut {
  id: string;
  title?: string;
  /** One system message's text, or several (in order, each with its name). */
  system?: string | SystemOut[];
  user?: string;
  /** The model the transcript was recorded on, as its log names it (an alias resolved). */
  model?: string;
  /** What the provider billed for the whole conversation, when the transcript records totals only. */
  billed?: BilledTotal;
  /** When the transcript was recorded (its first call, ISO 8601 UTC). */
  recorded?: string;
  tool_defs?: ToolDef[];
  /** A pinned stand-in for what the log leaves out of every prompt, sized from the bill. */
  unlogged_prefix?: { tokens: number; from: 'billed' };
  /** The prompt tokens already cached when the first call was made (its cache reads on the bill). */
  warm_start?: { cached: number };
  turns: (TurnOut | ForgetOut)[];
}

/**
 * Validates every document; throws one ScenarioError listing every problem
 * of every document, so a bad source never yields a partial set.
 */
export function validateDocs(docs: readonly ScenarioOut[], label: (doc: ScenarioOut) => string): Conversation[] {
  const out: Conversation[] = [];
  const problems: Problem[] = [];
  for (const doc of docs) {
    try {
      out.push(scenarioFromValue(label(doc), doc));
    } catch (e) {
      if (!(e instanceof ScenarioError)) throw e;
      problems.push(...e.problems);
    }
  }
  if (problems.length) throw new ScenarioError(problems);
  return out;
}

const UNITS: readonly [string, number][] = [
  ['d', 86400],
  ['h', 3600],
  ['m', 60],
];

/** Writes whole seconds as the largest exact unit: `3d`, `90m`, `45s` (parsed back by parseDuration). */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  for (const [unit, size] of UNITS) if (s >= size && s % size === 0) return `${s / size}${unit}`;
  return `${s}s`;
}

/** Lower case, whitespace collapsed: how SPEC compares a fact value with the text sent. */
export function normalizeText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}
