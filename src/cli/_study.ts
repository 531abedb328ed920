import { UsageError } from '../errors.js';
import type { RunnableStudy } from '../study/pipeline.js';
import { loadPolicyModules, moduleLoading, specModules } from '../study/policy-modules.js';
import { defaultStudy, failAtStudyKey, flagModel, loadStudy, policiesFromFlags, type Study, type StudyOverrides } from '../study/study.js';
import type { StudyOwnSettings } from '../study/settings.js';
import { STUDY_LISTS } from '../records/info.js';
import { loadPrices } from '../pricing/load.js';
import { folderStudyFile } from '../study/confine.js';
import { answersProblem, checkAnswers, defaultUpkeep, NETWORK_MODES, withUpkeepOverrides, type UpkeepOverrides } from '../recording/upkeep.js';
import { cacheFolderOf } from './_cache-folder.js';
import type { IO } from './_io.js';
import { commandSettings, flagSettings, ownSettings, upkeepOverrides } from './_setting-flags.js';

/**
 * Flags every study-running command takes; they override the study file.
 * The settings' flags (`--seed`, `--model`, `--out`, `--jobs`, `--upkeep`,
 * …) are those their meta declares (study/settings.ts: `SETTINGS`), read
 * as the specs hold them by `flagSettings`, `ownSettings`,
 * `commandSettings` and `upkeepOverrides` (cli/_setting-flags.ts); the fields below are those
 * read as given too.
 */
export interface StudyFlags {
  [settingFlag: string]: unknown;
  study?: string;
  /** As given (`-`, or a path as typed, for messages); `ownSettings` reads it. */
  out?: string;
  policy?: string[];
  scenario?: string[];
  /** Repeatable: every policy runs on each model. */
  model?: string[];
}

/** The limits the flags set, as `RunOptions` take them. */
export function policyLimits(flags: object): Pick<RunnableStudy, 'policyTimeout' | 'policyMemory'> {
  const { policyTimeout, policyMemory } = commandSettings(flags);
  return { ...(policyTimeout !== undefined && { policyTimeout }), ...(policyMemory !== undefined && { policyMemory }) };
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
 * to a study file. The cache folder is the flags' (`cacheFolderOf`);
 * when the default one cannot be used, `io` is warned and the study runs
 * without a cache.
 */
export async function studyFromFlags(flags: StudyFlags, io?: Pick<IO, 'err'>): Promise<RunnableStudy> {
  const own = ownSettings(flags);
  const overrides = studyOverrides(flags, own);
  const study = flags.study ? await loadStudy(flags.study, overrides) : Object.assign(defaultStudy(), overrides.settings);
  if (!flags.study && overrides.upkeep) study.upkeepSource = withUpkeepOverrides(defaultUpkeep(process.cwd()), overrides.upkeep);
  checkUpkeepFlags(study, overrides.upkeep ?? {});
  if (overrides.out !== undefined) study.out = overrides.out;
  // The models the flags name are checked here, where an unknown one can be blamed on its flag.
  const prices = flags.model?.length || flags.policy?.length ? loadPrices(study.prices) : undefined;
  if (flags.model?.length) {
    if (study.route && flags.model.length > 1) throw new UsageError('--model: route picks each turn’s model (light or strong): give one model with route');
    for (const m of flags.model) flagModel(prices!, m, '--model');
  }
  if (flags.policy?.some((spec) => !spec.trim())) throw new UsageError('--policy: name a policy, e.g. --policy window-tokens:budget=2000');
  if (flags.policy?.length) study.policies = policiesFromFlags(flags.policy, await loadPolicyModules(specModules(flags.policy), undefined, moduleLoading(policyLimits(flags))), prices);
  if (flags.scenario?.length) study.scenarios = flags.scenario.map((pattern) => ({ kind: 'glob', pattern, base: process.cwd() }));
  // So that the reports say what ran, not the study's (or the default study's) lists.
  const replaced = STUDY_LISTS.filter((list) => ({ scenarios: flags.scenario, policies: flags.policy, models: flags.model })[list]?.length);
  if (replaced.length) study.fromCommandLine = replaced;
  if (own.records !== undefined) study.records = own.records;
  if (own.answers !== undefined) study.answers = own.answers;
  if (own.judge !== undefined) {
    flagModel(prices ?? loadPrices(study.prices), own.judge, '--judge');
    study.judge = own.judge;
  } else if (own.answers === false) delete study.judge; // --no-answers measures no answers, so nothing to judge
  // What the study file says is named at its key; what a flag says, at the flag.
  const answers = answersProblem(study);
  const byFlag = answers && (answers.key === 'answers' ? own.answers !== undefined : own.judge !== undefined);
  if (answers && !byFlag && study.file) failAtStudyKey(study.file, [answers.key])(answers.message);
  checkAnswers(study, own.answers ? '--answers' : 'answers', own.judge !== undefined ? '--judge' : 'judge');
  const { jobs, tokenCache } = commandSettings(flags);
  const cache = cacheFolderOf(tokenCache);
  if (cache.warning) io?.err(`ctxsim: warning: ${cache.warning}\n`);
  return Object.assign(study, { cacheFolder: cache.dir, ...policyLimits(flags) }, jobs !== undefined && { jobs });
}

/** What the flags set over a study file, checked: the keys they replace, and the upkeep they choose. */
function studyOverrides(flags: StudyFlags, { out }: Partial<StudyOwnSettings>): StudyOverrides {
  const upkeep = upkeepOverrides(flags);
  const settings = flagSettings(flags);
  return {
    ...(Object.keys(settings).length && { settings }),
    ...(out !== undefined && { out }),
    ...(flags.policy?.length && { policies: true }),
    ...(Object.keys(upkeep).length && { upkeep }),
    ...policyLimits(flags),
  };
}

/** Upkeep flags that would do nothing in the mode the run has: `--cassette` with simulate or live, `--base-url` and `--api-key-env` without record or live. */
function checkUpkeepFlags(study: Study, { cassette, baseURL, apiKeyEnv }: UpkeepOverrides): void {
  const mode = study.upkeepSource?.mode ?? 'simulate';
  if (cassette !== undefined && (mode === 'simulate' || mode === 'live')) {
    throw new UsageError(`--cassette: upkeep is ${mode === 'simulate' ? 'simulated' : 'live'}, so no cassette is read or written; add --upkeep record or --upkeep replay`);
  }
  const endpoint = baseURL !== undefined ? '--base-url' : apiKeyEnv !== undefined ? '--api-key-env' : undefined;
  if (endpoint && !NETWORK_MODES.includes(mode)) {
    throw new UsageError(`${endpoint}: upkeep is ${mode === 'simulate' ? 'simulated' : 'replayed'}, so nothing is sent; add --upkeep record or --upkeep live`);
  }
}
