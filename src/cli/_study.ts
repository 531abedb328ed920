import { CACHE_BREAKPOINTS } from '../pricing/settings.js';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPLAY_DIR } from '../engine/replay-cache.js';
import { UsageError } from '../errors.js';
import { folderProblem } from '../process.js';
import { wholeNumberOption } from './_command.js';
import { policyHelpLines } from '../policies/docs.js';
import { COMMON_PARAMS } from '../policies/params.js';
import type { RunnableStudy } from '../study/pipeline.js';
import { loadPolicyModules, specModules } from '../study/policy-modules.js';
import { defaultStudy, flagModel, loadStudy, policiesFromFlags, type Study, type StudyOverrides } from '../study/study.js';
import { loadPrices } from '../pricing/load.js';
import { WORKER_OLD_MB } from '../engine/parallel.js';
import { DEFAULT_POLICY_TIMEOUT } from '../policies/module.js';
import { TOKENIZERS } from '../tokens/encoding.js';
import { checkAnswers, defaultUpkeep, NETWORK_MODES, UPKEEP_MODES, upkeepSchema, withUpkeepOverrides, type UpkeepMode, type UpkeepOverrides } from '../study/upkeep.js';

/** Flags every study-running command takes; they override the study file. */
export interface StudyFlags {
  study?: string;
  out?: string;
  seed?: number;
  policy?: string[];
  scenario?: string[];
  model?: string[];
  tokenizer?: string;
  prices?: string;
  cache?: string;
  cacheBreakpoint?: string;
  /** A folder, or false from `--no-token-cache`; both flags given: a list, the last wins. */
  tokenCache?: string | false | (string | false)[];
  /** Worker threads; omitted: `autoJobs` (every core for a large study, one for a small one). */
  jobs?: number;
  /** Where upkeep comes from: simulate, record, replay or live. */
  upkeep?: string;
  /** The upkeep cassette file. */
  cassette?: string;
  /** The OpenAI-compatible API upkeep requests go to (over the study's `upkeep.baseURL`). */
  baseUrl?: string;
  /** The environment variable the API key is read from (over the study's `upkeep.apiKeyEnv`). */
  apiKeyEnv?: string;
  /** Send each probe turn's first prompt to the chat model and score its answer. */
  answers?: boolean;
  /** The model that grades the answers a value as written is not in. */
  judge?: string;
  /** Seconds one call into a policy module may take. */
  policyTimeout?: number;
  /** MB of heap a worker thread that runs policy modules may use. */
  policyMemory?: number;
}

/** Where the token-count cache and the replay cache (in its `replay/`) live unless `--token-cache` says otherwise (relative to the working directory). */
export const DEFAULT_TOKEN_CACHE = '.ctxsim-cache';

/** The environment variable that names the cache folder when no flag does (CI jobs that keep one folder between runs). */
export const CACHE_DIR_ENV = 'CTXSIM_CACHE_DIR';

/** The limits of policy modules, for every command that runs them (docs/custom-policies.md). */
export const POLICY_LIMIT_OPTIONS = {
  'policy-timeout': wholeNumberOption('policy-timeout', {
    min: 1,
    describe: 'seconds one call into a policy module (its import, start, a session method) may take; past it the command stops naming the module, scenario and turn',
    defaultDescription: String(DEFAULT_POLICY_TIMEOUT),
  }),
  'policy-memory': wholeNumberOption('policy-memory', {
    min: 16,
    describe: 'MB of heap the worker thread that runs policy modules may use; past it the command stops naming the module',
    defaultDescription: String(WORKER_OLD_MB),
  }),
} as const;

/** The limits the flags set, as `RunOptions` take them. */
export function policyLimits(flags: Pick<StudyFlags, 'policyTimeout' | 'policyMemory'>): Pick<RunnableStudy, 'policyTimeout' | 'policyMemory'> {
  return { ...(flags.policyTimeout !== undefined && { policyTimeout: flags.policyTimeout }), ...(flags.policyMemory !== undefined && { policyMemory: flags.policyMemory }) };
}

export const STUDY_OPTIONS = {
  out: { type: 'string', describe: 'output folder (overrides the study)' },
  seed: wholeNumberOption('seed', { describe: 'random seed' }),
  policy: {
    type: 'string',
    array: true,
    describe: `policy spec, e.g. window-tokens:budget=2000 or a sweep budget=500|1000, or a policy module: ./policies/keep-edges.mjs:keep=1 (repeatable; replaces the study list). Policies and their parameters (defaults; every one also takes ${Object.keys(COMMON_PARAMS.shape).join(', ')}): ${policyHelpLines().join('; ')}`,
  },
  scenario: { type: 'string', array: true, describe: 'scenario file glob (repeatable; replaces the study list)' },
  model: { type: 'string', array: true, describe: 'chat model, e.g. gpt-4o-mini (repeatable: every policy runs on each model; replaces the study’s)' },
  tokenizer: { type: 'string', describe: `auto | ${TOKENIZERS.join(' | ')}` },
  prices: { type: 'string', describe: 'LiteLLM-format price table JSON' },
  cache: { type: 'string', choices: ['auto', 'off'], describe: 'prompt caching' },
  'cache-breakpoint': {
    type: 'string',
    choices: CACHE_BREAKPOINTS,
    describe: 'Claude-style explicit caches: call (default) puts a breakpoint at the end of every call’s prompt too, turn only after the policy’s stable prefix',
  },
  'token-cache': {
    type: 'string',
    describe: 'folder of the persistent caches: token counts, and the records of each scenario × model × policy replayed (--no-token-cache or --no-cache: none)',
    defaultDescription: `$${CACHE_DIR_ENV}, else ${DEFAULT_TOKEN_CACHE}`,
  },
  jobs: wholeNumberOption('jobs', {
    min: 1,
    describe: 'worker threads (output is the same for any number)',
    defaultDescription: 'cores; 1 below 4 MB of message text or for one scenario',
  }),
  ...POLICY_LIMIT_OPTIONS,
  upkeep: {
    type: 'string',
    describe: 'where summaries, extractions and embeddings come from: simulate, record (a real model, into the cassette), replay (the cassette only) or live; record and live open the network, which only this flag does (never a study file)',
    defaultDescription: 'the study’s, else simulate',
  },
  cassette: { type: 'string', describe: 'the upkeep cassette (JSON Lines) to record into or replay, anywhere (a study names one only in its folder)', defaultDescription: 'upkeep.cassette.jsonl beside the study' },
  'base-url': {
    type: 'string',
    describe: 'with --upkeep record or live: the OpenAI-compatible API upkeep requests go to (overrides the study’s upkeep.baseURL)',
    defaultDescription: 'the study’s, else https://api.openai.com/v1',
  },
  'api-key-env': {
    type: 'string',
    describe: 'with --upkeep record or live: the environment variable the API key is read from (overrides the study’s upkeep.apiKeyEnv)',
    defaultDescription: 'the study’s, else OPENAI_API_KEY',
  },
  answers: {
    type: 'boolean',
    describe: 'also send each probe turn’s first prompt to the chat model through the upkeep endpoint and score the probes on its answer (needs --upkeep record, replay or live)',
    defaultDescription: 'the study’s, else false',
  },
  judge: {
    type: 'string',
    describe: 'with --answers: a model that grades a reply that does not hold the probed value as written (its yes makes the probe answered), through the upkeep endpoint',
    defaultDescription: 'the study’s, else none',
  },
} as const;

/** `--no-cache`, the old name of `--no-token-cache` (before `--`), under its name: yargs would take it for a negated `--cache`. */
export function noCacheAlias(args: readonly string[]): readonly string[] {
  const end = args.indexOf('--');
  return args.map((a, i) => (a === '--no-cache' && (end < 0 || i < end) ? '--no-token-cache' : a));
}

/** The token-cache folder the flags name: a folder, false for none, else $CTXSIM_CACHE_DIR, else the default. */
export function tokenCacheFromFlags(flag: StudyFlags['tokenCache']): string | false {
  const last = Array.isArray(flag) ? flag[flag.length - 1] : flag;
  if (last === '') throw new UsageError('--token-cache: name a folder (or use --no-token-cache)');
  const fromEnv = last === undefined && process.env[CACHE_DIR_ENV] ? process.env[CACHE_DIR_ENV] : undefined;
  const dir = last ?? fromEnv ?? DEFAULT_TOKEN_CACHE;
  // Caught here rather than as a warning per cache file at the end of the run.
  if (dir === false) return dir;
  const named = last !== undefined ? '--token-cache' : fromEnv ? CACHE_DIR_ENV : 'the cache folder';
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UsageError(`${named} ${dir}: a file, not a folder`);
  const problem = folderProblem(dir);
  if (problem) throw new UsageError(`${named} ${dir}: the folder cannot be made (${problem})`);
  return dir;
}

/**
 * The study file (or the default study) with the command-line flags applied;
 * policy modules they name are loaded. The flags are what may open the
 * network (`--upkeep record|live`) and name paths outside the study's
 * folder (`--out`, `--cassette`, `--policy PATH`): `loadStudy` refuses both
 * to a study file.
 */
export async function studyFromFlags(flags: StudyFlags): Promise<RunnableStudy> {
  const overrides = studyOverrides(flags);
  const study = flags.study ? await loadStudy(flags.study, overrides) : defaultStudy();
  if (!flags.study && overrides.upkeep) study.upkeep = withUpkeepOverrides(defaultUpkeep(process.cwd()), overrides.upkeep);
  checkUpkeepFlags(study, flags);
  if (overrides.out !== undefined) study.out = overrides.out;
  if (flags.seed !== undefined) study.seed = flags.seed;
  if (overrides.prices !== undefined) study.prices = overrides.prices;
  if (flags.model?.some((m) => !m.trim())) throw new UsageError('--model: name a chat model, e.g. --model gpt-4o-mini');
  // The models the flags name are checked here, where an unknown one can be blamed on its flag.
  const prices = flags.model?.length || flags.policy?.length ? loadPrices(study.prices) : undefined;
  if (flags.model?.length) {
    const twice = flags.model.find((m, i) => flags.model!.indexOf(m) !== i);
    if (twice !== undefined) throw new UsageError(`--model: ${twice} given twice`);
    if (study.route && flags.model.length > 1) throw new UsageError('--model: route picks each turn’s model (light or strong): give one model with route');
    for (const m of flags.model) flagModel(prices!, m, '--model');
    study.models = flags.model;
  }
  if (flags.tokenizer !== undefined) study.tokenizer = flags.tokenizer;
  if (flags.cache !== undefined) study.promptCache = flags.cache as Study['promptCache'];
  if (flags.cacheBreakpoint !== undefined) study.cacheBreakpoint = flags.cacheBreakpoint as Study['cacheBreakpoint'];
  if (flags.policy?.some((spec) => !spec.trim())) throw new UsageError('--policy: name a policy, e.g. --policy window-tokens:budget=2000');
  if (flags.policy?.length) study.policies = policiesFromFlags(flags.policy, await loadPolicyModules(specModules(flags.policy), undefined, flags.policyTimeout), prices);
  if (flags.scenario?.length) study.scenarios = flags.scenario.map((pattern) => ({ kind: 'glob', pattern, base: process.cwd() }));
  if (flags.answers !== undefined) study.answers = flags.answers;
  if (flags.judge !== undefined) {
    if (!flags.judge.trim()) throw new UsageError('--judge: name the model that grades the answers, e.g. --judge gpt-4o');
    flagModel(prices ?? loadPrices(study.prices), flags.judge, '--judge');
    study.judge = flags.judge;
  } else if (flags.answers === false) delete study.judge; // --no-answers measures no answers, so nothing to judge
  checkAnswers(study, flags.answers ? '--answers' : 'answers', flags.judge !== undefined ? '--judge' : 'judge');
  const tokenCache = tokenCacheFromFlags(flags.tokenCache);
  return Object.assign(study, { tokenCache, replayCache: tokenCache && join(tokenCache, REPLAY_DIR), ...policyLimits(flags) }, flags.jobs !== undefined && { jobs: flags.jobs });
}

/** What the flags set over a study file, checked: the keys they replace, and the upkeep they choose. */
function studyOverrides(flags: StudyFlags): StudyOverrides {
  if (flags.upkeep !== undefined && !(UPKEEP_MODES as readonly string[]).includes(flags.upkeep)) {
    throw new UsageError(`--upkeep: expected one of ${UPKEEP_MODES.join('|')}, got ${flags.upkeep}`);
  }
  if (flags.cassette === '') throw new UsageError('--cassette: name a file');
  if (flags.baseUrl !== undefined && !upkeepSchema.shape.baseURL.safeParse(flags.baseUrl).success) {
    throw new UsageError(`--base-url: expected the URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1, got ${flags.baseUrl}`);
  }
  if (flags.apiKeyEnv !== undefined && !upkeepSchema.shape.apiKeyEnv.safeParse(flags.apiKeyEnv).success) {
    throw new UsageError(`--api-key-env: expected the name of an environment variable (letters, digits and _), got ${flags.apiKeyEnv}`);
  }
  const upkeep: UpkeepOverrides = {
    ...(flags.upkeep !== undefined && { mode: flags.upkeep as UpkeepMode }),
    ...(flags.cassette !== undefined && { cassette: resolve(flags.cassette) }),
    ...(flags.baseUrl !== undefined && { baseURL: flags.baseUrl }),
    ...(flags.apiKeyEnv !== undefined && { apiKeyEnv: flags.apiKeyEnv }),
  };
  return {
    ...(flags.prices !== undefined && { prices: resolve(flags.prices) }),
    ...(flags.out !== undefined && { out: resolve(flags.out) }),
    ...(flags.policy?.length && { policies: true }),
    ...(Object.keys(upkeep).length && { upkeep }),
    ...(flags.policyTimeout !== undefined && { policyTimeout: flags.policyTimeout }),
  };
}

/** Upkeep flags that would do nothing in the mode the run has: `--cassette` with simulate or live, `--base-url` and `--api-key-env` without record or live. */
function checkUpkeepFlags(study: Study, flags: StudyFlags): void {
  const mode = study.upkeep?.mode ?? 'simulate';
  if (flags.cassette !== undefined && (mode === 'simulate' || mode === 'live')) {
    throw new UsageError(`--cassette: upkeep is ${mode === 'simulate' ? 'simulated' : 'live'}, so no cassette is read or written; add --upkeep record or --upkeep replay`);
  }
  const endpoint = flags.baseUrl !== undefined ? '--base-url' : flags.apiKeyEnv !== undefined ? '--api-key-env' : undefined;
  if (endpoint && !NETWORK_MODES.includes(mode)) {
    throw new UsageError(`${endpoint}: upkeep is ${mode === 'simulate' ? 'simulated' : 'replayed'}, so nothing is sent; add --upkeep record or --upkeep live`);
  }
}
