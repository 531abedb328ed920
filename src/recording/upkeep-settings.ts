import { resolve } from 'node:path';
import { z } from 'zod';
import { metaOf, setting, written } from '../engine/spec.js';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_RESPONSE_BYTES } from '../upkeep/endpoint.js';
import { DEFAULT_PROMPTS, PROMPT_PLACEHOLDERS, type UpkeepPrompts } from '../upkeep/prompts.js';

/**
 * A study's upkeep settings as a study file and the flags give them: each
 * key of the `upkeep:` key an entry (`UPKEEP_SPEC`), with its default, and
 * for those the command line sets over it, its flag. Apart from the
 * recording (recording/upkeep.ts), so that the study spec
 * (study/settings.ts), which the flags of every study command are built
 * from, does not load the run.
 * @module
 */

export const UPKEEP_MODES = ['simulate', 'record', 'replay', 'live'] as const;
export type UpkeepMode = (typeof UPKEEP_MODES)[number];

/** The modes that send requests over the network: only the caller (the command line's `--upkeep`) chooses them, never a study file. */
export const NETWORK_MODES: readonly UpkeepMode[] = ['record', 'live'];

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

/** The upkeep prompts as a study's `upkeep.prompts` writes them: each one it gives replaces the default. */
export const PROMPTS_SCHEMA = z.strictObject({
  summary: promptText('summary').optional().describe('the summarizer’s instruction; {summaryTokens} is the summary’s size'),
  forget: promptText('forget').optional().describe('the instruction that erases facts from a summary; {facts} is their names'),
  extract: promptText('extract').optional().describe('the fact extractor’s instruction'),
  judge: promptText('judge')
    .optional()
    .describe('the judge’s instruction (with a study’s judge); {question} is the probe turn’s user message, {value} the fact’s value, {reply} the chat model’s reply'),
});

// Each with its message: zod's own ("Invalid URL", "must match pattern /…/") would be a study key's.
const BASE_URL = z.url({ protocol: /^https?$/, error: 'expected the http(s) URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1' });
const ENV_NAME = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable (letters, digits and _)');

/**
 * A study's upkeep settings, each a setting inside the study's `upkeep:`
 * (its key there), with its default (`SettingMeta.default`, as written: the
 * cassette beside the study file); those with a flag are set over the
 * study's by the command line (`withUpkeepOverrides`), which alone may
 * choose a mode that opens the network.
 */
export const UPKEEP_SPEC = z.strictObject({
  mode: setting(z.enum(UPKEEP_MODES).describe('where upkeep comes from; only the caller may make it `record` or `live`'), {
    about: 'simulate (default), replay, or record or live, which open the network and so also need --upkeep record or live on the command line',
    default: 'simulate',
    flag: {
      name: 'upkeep',
      describe: 'where summaries, extractions and embeddings come from: simulate, record (a real model, into the cassette), replay (the cassette only) or live; record and live open the network, which only this flag does (never a study file)',
      defaultDescription: 'the study’s, else simulate',
      // Text, not a choice: the help lists the modes in its words, and a wrong one is told as a study key's is.
      written: written(z.string(), undefined, (v) => ((UPKEEP_MODES as readonly string[]).includes(v) ? undefined : `expected one of ${UPKEEP_MODES.join('|')}, got ${v}`)),
    },
    decidesRecords: true,
  }),
  baseURL: setting(BASE_URL.describe('the OpenAI-compatible API, e.g. `http://localhost:11434/v1`'), {
    about: `the OpenAI-compatible API (default ${DEFAULT_BASE_URL}), e.g. http://localhost:11434/v1 for Ollama`,
    default: DEFAULT_BASE_URL,
    flag: {
      name: 'base-url',
      describe: 'with --upkeep record or live: the OpenAI-compatible API upkeep requests go to (overrides the study’s upkeep.baseURL)',
      defaultDescription: 'the study’s, else https://api.openai.com/v1',
      written: written(z.string(), undefined, (v) => (BASE_URL.safeParse(v).success ? undefined : `expected the http(s) URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1, got ${v}`)),
    },
    decidesRecords: true,
  }),
  apiKeyEnv: setting(ENV_NAME.describe('the environment variable holding the API key (never written anywhere)'), {
    about: 'the environment variable holding the API key (default OPENAI_API_KEY; none needed for a local server)',
    default: 'OPENAI_API_KEY',
    flag: {
      name: 'api-key-env',
      describe: 'with --upkeep record or live: the environment variable the API key is read from (overrides the study’s upkeep.apiKeyEnv)',
      defaultDescription: 'the study’s, else OPENAI_API_KEY',
      written: written(z.string(), undefined, (v) => (ENV_NAME.safeParse(v).success ? undefined : `expected the name of an environment variable (letters, digits and _), got ${v}`)),
    },
    decidesRecords: true,
  }),
  cassette: setting(z.string().min(1).describe('the cassette file, absolute'), {
    about: `the cassette file, relative to the study file, in its folder or below the working folder (default ${DEFAULT_CASSETTE}; --cassette names one elsewhere)`,
    written: written(z.string().min(1), (v, folder) => resolve(folder, v)),
    default: DEFAULT_CASSETTE,
    flag: {
      name: 'cassette',
      describe: 'the upkeep cassette (JSON Lines) to record into or replay, anywhere (a study names one only in its folder)',
      defaultDescription: 'upkeep.cassette.jsonl beside the study',
      // A path from the working folder, anywhere (a study's lies in its folder or below the working folder: loadStudy checks it).
      written: written(z.string(), (v, folder) => resolve(folder, v), (v) => (v === '' ? 'name a file' : undefined)),
    },
    decidesRecords: true,
  }),
  concurrency: setting(z.number().int().min(1).max(64).describe('requests in flight at once while recording'), {
    about: 'requests in flight at once while recording (default 4)',
    default: 4,
  }),
  timeout: setting(z.number().positive().describe('seconds a request may take'), {
    about: 'seconds a request may take (default 60)',
    default: 60,
  }),
  retries: setting(z.number().int().min(0).max(10).describe('retries of a failed request (429, 5xx, timeout), honouring `Retry-After` up to `timeout` seconds'), {
    about: 'retries of a request on 429, 5xx or a timeout, honouring Retry-After up to timeout seconds (default 3)',
    default: 3,
  }),
  maxResponseBytes: setting(z.number().int().min(1000).max(MAX_RESPONSE_BYTES).describe('the most bytes an endpoint’s answer may have'), {
    about: `the most bytes an endpoint's answer may have; a longer one stops the recording (default ${DEFAULT_MAX_RESPONSE_BYTES})`,
    default: DEFAULT_MAX_RESPONSE_BYTES,
  }),
  maxUpkeepCost: setting(z.number().positive().optional().describe('USD: a recording that would cost more is not started, and one that does is stopped'), {
    about: 'USD: a recording that would cost more is not started, one that reaches it is stopped',
  }),
  prompts: setting(z.custom<UpkeepPrompts>().describe('the upkeep prompts, each the study’s or the default'), {
    about: 'the upkeep prompts (defaults in the docs)',
    written: written(PROMPTS_SCHEMA, (v) => ({ ...DEFAULT_PROMPTS, ...v })),
    default: {},
    decidesRecords: true,
  }),
});

/** A study's upkeep settings, defaults filled in, paths absolute. */
export type UpkeepSettings = z.output<typeof UPKEEP_SPEC>;

/** What the caller sets over a study's upkeep (the command line's flags of `UPKEEP_SPEC`: `--upkeep`, `--cassette`, `--base-url`, `--api-key-env`); paths absolute. Only here may the mode be `record` or `live`. */
export type UpkeepOverrides = Partial<UpkeepSettings>;

/** The settings of a study without an `upkeep:` key: each entry's default (the cassette beside the study file, or in `dir`). */
export function defaultUpkeep(dir: string): UpkeepSettings {
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(UPKEEP_SPEC.shape)) {
    const meta = metaOf(entry);
    if (meta.default !== undefined) out[name] = meta.written ? meta.written.read(meta.default, dir) : meta.default;
  }
  return out as UpkeepSettings;
}

/** Upkeep settings with what the caller sets over them (each setting it gives). */
export function withUpkeepOverrides(u: UpkeepSettings, o: UpkeepOverrides): UpkeepSettings {
  return { ...u, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) };
}
