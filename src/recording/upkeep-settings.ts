import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_RESPONSE_BYTES } from '../upkeep/endpoint.js';
import { DEFAULT_PROMPTS, PROMPT_PLACEHOLDERS, type UpkeepPrompts } from '../upkeep/prompts.js';

/**
 * A study's upkeep settings as a study file and the flags give them: the
 * `upkeep:` key's schema, its defaults, and what the command line sets over
 * it. Apart from the recording (study/upkeep.ts), so that the study spec
 * (study/settings.ts), which the flags of every study command are built
 * from, does not load the run.
 * @module
 */

export const UPKEEP_MODES = ['simulate', 'record', 'replay', 'live'] as const;
export type UpkeepMode = (typeof UPKEEP_MODES)[number];

/** The modes that send requests over the network: only the caller (the command line's `--upkeep`) chooses them, never a study file. */
export const NETWORK_MODES: readonly UpkeepMode[] = ['record', 'live'];

/** A study's upkeep settings, defaults filled in, paths absolute. */
export interface UpkeepSettings {
  mode: UpkeepMode;
  /** The OpenAI-compatible API, e.g. `http://localhost:11434/v1` (default: OpenAI's). */
  baseURL: string;
  /** The environment variable holding the API key (never written anywhere). */
  apiKeyEnv: string;
  /** The cassette file. */
  cassette: string;
  /** Requests in flight at once while recording. */
  concurrency: number;
  /** Seconds a request may take. */
  timeout: number;
  /** Retries of a failed request (429, 5xx, timeout), honouring `Retry-After` up to `timeout` seconds. */
  retries: number;
  /** The most bytes an endpoint's answer may have. */
  maxResponseBytes: number;
  /** A recording that would cost more (USD) is not started, and one that does is stopped. */
  maxUpkeepCost?: number;
  prompts: UpkeepPrompts;
}

export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_CASSETTE = 'upkeep.cassette.jsonl';

/** A prompt's text: not empty, and only the placeholders it may hold (checked with the study's other keys, so every problem is listed at once). */
function promptText(name: keyof UpkeepPrompts) {
  return z
    .string()
    .min(1)
    .superRefine((text, ctx) => {
      const allowed = PROMPT_PLACEHOLDERS[name];
      for (const p of text.match(/\{[^{}\s]+\}/g) ?? []) {
        if (!allowed.includes(p)) ctx.addIssue({ code: 'custom', message: `unknown placeholder ${p} (${allowed.length ? `this prompt may use ${allowed.join(', ')}` : 'this prompt takes none'})` });
      }
    });
}

/** The study file's `upkeep:` key. */
export const upkeepSchema = z.strictObject({
  mode: z.enum(UPKEEP_MODES).optional().describe('simulate (default), replay, or record or live, which open the network and so also need --upkeep record or live on the command line'),
  baseURL: z.url().optional().describe(`the OpenAI-compatible API (default ${DEFAULT_BASE_URL}), e.g. http://localhost:11434/v1 for Ollama`),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe('the environment variable holding the API key (default OPENAI_API_KEY; none needed for a local server)'),
  cassette: z.string().min(1).optional().describe(`the cassette file, relative to the study file, in its folder or below the working folder (default ${DEFAULT_CASSETTE}; --cassette names one elsewhere)`),
  concurrency: z.number().int().min(1).max(64).optional().describe('requests in flight at once while recording (default 4)'),
  timeout: z.number().positive().optional().describe('seconds a request may take (default 60)'),
  retries: z.number().int().min(0).max(10).optional().describe('retries of a request on 429, 5xx or a timeout, honouring Retry-After up to timeout seconds (default 3)'),
  maxResponseBytes: z
    .number()
    .int()
    .min(1000)
    .max(MAX_RESPONSE_BYTES)
    .optional()
    .describe(`the most bytes an endpoint's answer may have; a longer one stops the recording (default ${DEFAULT_MAX_RESPONSE_BYTES})`),
  maxUpkeepCost: z.number().positive().optional().describe('USD: a recording that would cost more is not started, one that reaches it is stopped'),
  prompts: z
    .strictObject({
      summary: promptText('summary').optional().describe('the summarizer’s instruction; {summaryTokens} is the summary’s size'),
      forget: promptText('forget').optional().describe('the instruction that erases facts from a summary; {facts} is their names'),
      extract: promptText('extract').optional().describe('the fact extractor’s instruction'),
      judge: promptText('judge')
        .optional()
        .describe('the judge’s instruction (with a study’s judge); {question} is the probe turn’s user message, {value} the fact’s value, {reply} the chat model’s reply'),
    })
    .optional()
    .describe('the upkeep prompts (defaults in the docs)'),
});

/** The settings of a study without an `upkeep:` key (the cassette beside the study file, or in `dir`). */
export function defaultUpkeep(dir: string): UpkeepSettings {
  return { mode: 'simulate', baseURL: DEFAULT_BASE_URL, apiKeyEnv: 'OPENAI_API_KEY', cassette: resolve(dir, DEFAULT_CASSETTE), concurrency: 4, timeout: 60, retries: 3, maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES, prompts: DEFAULT_PROMPTS };
}

/** The settings of an `upkeep:` key, checked; `dir` is the study file's folder. */
export function upkeepSettings(doc: z.infer<typeof upkeepSchema>, dir: string): UpkeepSettings {
  const base = defaultUpkeep(dir);
  return {
    mode: doc.mode ?? base.mode,
    baseURL: doc.baseURL ?? base.baseURL,
    apiKeyEnv: doc.apiKeyEnv ?? base.apiKeyEnv,
    cassette: doc.cassette === undefined ? base.cassette : resolve(dir, doc.cassette),
    concurrency: doc.concurrency ?? base.concurrency,
    timeout: doc.timeout ?? base.timeout,
    retries: doc.retries ?? base.retries,
    maxResponseBytes: doc.maxResponseBytes ?? base.maxResponseBytes,
    ...(doc.maxUpkeepCost !== undefined && { maxUpkeepCost: doc.maxUpkeepCost }),
    prompts: { ...DEFAULT_PROMPTS, ...doc.prompts },
  };
}

/** What the caller sets over a study's upkeep (the command line's `--upkeep`, `--cassette`, `--base-url`, `--api-key-env`); paths absolute. */
export interface UpkeepOverrides {
  /** The mode; only here may it be `record` or `live`. */
  mode?: UpkeepMode;
  cassette?: string;
  baseURL?: string;
  apiKeyEnv?: string;
}

/** Upkeep settings with what the caller sets over them. */
export function withUpkeepOverrides(u: UpkeepSettings, o: UpkeepOverrides): UpkeepSettings {
  return {
    ...u,
    ...(o.mode !== undefined && { mode: o.mode }),
    ...(o.cassette !== undefined && { cassette: o.cassette }),
    ...(o.baseURL !== undefined && { baseURL: o.baseURL }),
    ...(o.apiKeyEnv !== undefined && { apiKeyEnv: o.apiKeyEnv }),
  };
}
