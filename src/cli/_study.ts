import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { RunnableStudy } from '../study/pipeline.js';
import { loadPolicyModules, specModules } from '../study/policy-modules.js';
import { defaultStudy, flagModel, loadStudy, policiesFromFlags, type Study, type StudyOverrides } from '../study/study.js';
import { loadPrices } from '../pricing/load.js';
import { checkAnswers, defaultUpkeep, NETWORK_MODES, UPKEEP_MODES, upkeepSchema, withUpkeepOverrides, type UpkeepMode, type UpkeepOverrides } from '../study/upkeep.js';
import { tokenCacheFromFlags, type TokenCacheFlag } from './_cache-folder.js';

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
  tokenCache?: TokenCacheFlag;
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

/** The limits the flags set, as `RunOptions` take them. */
export function policyLimits(flags: Pick<StudyFlags, 'policyTimeout' | 'policyMemory'>): Pick<RunnableStudy, 'policyTimeout' | 'policyMemory'> {
  return { ...(flags.policyTimeout !== undefined && { policyTimeout: flags.policyTimeout }), ...(flags.policyMemory !== undefined && { policyMemory: flags.policyMemory }) };
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
  return Object.assign(study, { cacheFolder: tokenCacheFromFlags(flags.tokenCache), ...policyLimits(flags) }, flags.jobs !== undefined && { jobs: flags.jobs });
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
