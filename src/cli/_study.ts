import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { RunnableStudy } from '../study/pipeline.js';
import { loadPolicyModules, moduleLoading, specModules } from '../study/policy-modules.js';
import { readSetting, WRITTEN_SETTINGS, type StudySettings } from '../study/settings.js';
import { defaultStudy, flagModel, loadStudy, policiesFromFlags, type Study, type StudyOverrides } from '../study/study.js';
import { loadPrices } from '../pricing/load.js';
import { folderStudyFile } from '../study/confine.js';
import { checkAnswers, defaultUpkeep, NETWORK_MODES, UPKEEP_MODES, upkeepSchema, withUpkeepOverrides, type UpkeepMode, type UpkeepOverrides } from '../recording/upkeep.js';
import { tokenCacheFromFlags, type TokenCacheFlag } from './_cache-folder.js';
import type { IO } from './_io.js';

/**
 * Flags every study-running command takes; they override the study file.
 * The run settings' flags (`--seed`, `--model`, `--prices`, …) are those
 * their meta declares (`SETTING_OPTIONS`), read by `flagSettings`.
 */
export interface StudyFlags {
  [settingFlag: string]: unknown;
  study?: string;
  out?: string;
  policy?: string[];
  scenario?: string[];
  /** Repeatable: every policy runs on each model. */
  model?: string[];
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
 * The flags with the study in the working folder (`./ctxsim.yaml`, else
 * `./study.yaml`) when they name none, said in one line on `io`; as they
 * are when they name one, or when the folder has neither (the built-in
 * default study runs).
 */
export function withFolderStudy<F extends { study?: string }>(flags: F, io: Pick<IO, 'err'>): F {
  if (flags.study !== undefined) return flags;
  const found = folderStudyFile();
  if (found === undefined) return flags;
  io.err(`ctxsim: note: using ${found}, the study in the working folder (no study file named)\n`);
  return { ...flags, study: found };
}

/**
 * The study file (or the default study) with the command-line flags applied;
 * policy modules they name are loaded. The flags are what may open the
 * network (`--upkeep record|live`) and name paths outside the study's
 * folder (`--out`, `--cassette`, `--policy PATH`): `loadStudy` refuses both
 * to a study file. The cache folder is the flags' (`tokenCacheFromFlags`);
 * when the default one cannot be used, `io` is warned and the study runs
 * without a cache.
 */
export async function studyFromFlags(flags: StudyFlags, io?: Pick<IO, 'err'>): Promise<RunnableStudy> {
  if (flags.model?.some((m) => !m.trim())) throw new UsageError('--model: name a chat model, e.g. --model gpt-4o-mini');
  const twice = flags.model?.find((m, i) => flags.model!.indexOf(m) !== i);
  if (twice !== undefined) throw new UsageError(`--model: ${twice} given twice`);
  const overrides = studyOverrides(flags);
  const study = flags.study ? await loadStudy(flags.study, overrides) : Object.assign(defaultStudy(), overrides.settings);
  if (!flags.study && overrides.upkeep) study.upkeepSource = withUpkeepOverrides(defaultUpkeep(process.cwd()), overrides.upkeep);
  checkUpkeepFlags(study, flags);
  if (overrides.out !== undefined) study.out = overrides.out;
  // The models the flags name are checked here, where an unknown one can be blamed on its flag.
  const prices = flags.model?.length || flags.policy?.length ? loadPrices(study.prices) : undefined;
  if (flags.model?.length) {
    if (study.route && flags.model.length > 1) throw new UsageError('--model: route picks each turn’s model (light or strong): give one model with route');
    for (const m of flags.model) flagModel(prices!, m, '--model');
  }
  if (flags.policy?.some((spec) => !spec.trim())) throw new UsageError('--policy: name a policy, e.g. --policy window-tokens:budget=2000');
  if (flags.policy?.length) study.policies = policiesFromFlags(flags.policy, await loadPolicyModules(specModules(flags.policy), undefined, moduleLoading(flags)), prices);
  if (flags.scenario?.length) study.scenarios = flags.scenario.map((pattern) => ({ kind: 'glob', pattern, base: process.cwd() }));
  if (flags.answers !== undefined) study.answers = flags.answers;
  if (flags.judge !== undefined) {
    if (!flags.judge.trim()) throw new UsageError('--judge: name the model that grades the answers, e.g. --judge gpt-4o');
    flagModel(prices ?? loadPrices(study.prices), flags.judge, '--judge');
    study.judge = flags.judge;
  } else if (flags.answers === false) delete study.judge; // --no-answers measures no answers, so nothing to judge
  checkAnswers(study, flags.answers ? '--answers' : 'answers', flags.judge !== undefined ? '--judge' : 'judge');
  const cache = tokenCacheFromFlags(flags.tokenCache);
  if (cache.warning) io?.err(`ctxsim: warning: ${cache.warning}\n`);
  return Object.assign(study, { cacheFolder: cache.dir, ...policyLimits(flags) }, flags.jobs !== undefined && { jobs: flags.jobs });
}

/**
 * The run settings the flags set (those with a flag: `SettingMeta.flag`),
 * as the spec holds them (a path from the working folder); a value the
 * setting does not take is a usage error naming its flag.
 */
export function flagSettings(flags: StudyFlags): Partial<StudySettings> {
  const out: Record<string, unknown> = {};
  for (const s of WRITTEN_SETTINGS) {
    if (!s.meta.flag) continue;
    const raw = flags[camelCase(s.meta.flag.name)];
    if (raw === undefined || (Array.isArray(raw) && !raw.length)) continue;
    const r = readSetting(s, raw, process.cwd());
    if ('problems' in r) throw new UsageError(`--${s.meta.flag.name}: ${r.problems[0]!.message}`);
    out[s.name] = r.value;
  }
  return out as Partial<StudySettings>;
}

/** The run settings' flags as given, as words of a command line (`--model a --model b --cache off --cold-start`). */
export function settingArgs(flags: StudyFlags): string[] {
  return WRITTEN_SETTINGS.flatMap((s) => {
    const raw = s.meta.flag && flags[camelCase(s.meta.flag.name)];
    if (raw === undefined) return [];
    // On or off: the flag alone, or its `--no-` form.
    if (typeof raw === 'boolean') return [`--${raw ? '' : 'no-'}${s.meta.flag!.name}`];
    return (Array.isArray(raw) ? raw : [raw]).flatMap((v) => [`--${s.meta.flag!.name}`, String(v)]);
  });
}

/** A flag's name as yargs gives it in the parsed flags (`cache-ttl` → `cacheTtl`). */
function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
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
  const settings = flagSettings(flags);
  return {
    ...(Object.keys(settings).length && { settings }),
    ...(flags.out !== undefined && { out: resolve(flags.out) }),
    ...(flags.policy?.length && { policies: true }),
    ...(Object.keys(upkeep).length && { upkeep }),
    ...(flags.policyTimeout !== undefined && { policyTimeout: flags.policyTimeout }),
    ...(flags.policyMemory !== undefined && { policyMemory: flags.policyMemory }),
  };
}

/** Upkeep flags that would do nothing in the mode the run has: `--cassette` with simulate or live, `--base-url` and `--api-key-env` without record or live. */
function checkUpkeepFlags(study: Study, flags: StudyFlags): void {
  const mode = study.upkeepSource?.mode ?? 'simulate';
  if (flags.cassette !== undefined && (mode === 'simulate' || mode === 'live')) {
    throw new UsageError(`--cassette: upkeep is ${mode === 'simulate' ? 'simulated' : 'live'}, so no cassette is read or written; add --upkeep record or --upkeep replay`);
  }
  const endpoint = flags.baseUrl !== undefined ? '--base-url' : flags.apiKeyEnv !== undefined ? '--api-key-env' : undefined;
  if (endpoint && !NETWORK_MODES.includes(mode)) {
    throw new UsageError(`${endpoint}: upkeep is ${mode === 'simulate' ? 'simulated' : 'replayed'}, so nothing is sent; add --upkeep record or --upkeep live`);
  }
}
