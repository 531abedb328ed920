import { UsageError } from '../errors.js';
import type { RunnableStudy } from '../study/pipeline.js';
import { loadPolicyModules, moduleLoading, specModules } from '../study/policy-modules.js';
import { readSetting, SETTINGS, type CommandSettings, type StudyOwnSettings, type StudySettings } from '../study/settings.js';
import { defaultStudy, flagModel, loadStudy, policiesFromFlags, type Study, type StudyOverrides } from '../study/study.js';
import { loadPrices } from '../pricing/load.js';
import { folderStudyFile } from '../study/confine.js';
import { checkAnswers, defaultUpkeep, NETWORK_MODES, withUpkeepOverrides, type UpkeepOverrides } from '../recording/upkeep.js';
import { cacheFolderOf } from './_cache-folder.js';
import type { IO } from './_io.js';
import { BUDGET_TABLE_OPTIONS, COMMAND_OPTIONS, OWN_OPTIONS, REPORT_OPTIONS, SETTING_OPTIONS } from './_study-options.js';

/**
 * Flags every study-running command takes; they override the study file.
 * The settings' flags (`--seed`, `--model`, `--out`, `--jobs`, `--upkeep`,
 * …) are those their meta declares (study/settings.ts: `SETTINGS`), read
 * as the specs hold them by `flagSettings`, `ownSettings` and
 * `commandSettings`; the fields below are those read as given too.
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
  /** As given, for `--judge ''`'s message; `ownSettings` reads it. */
  judge?: string;
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
  if (flags.judge !== undefined && !flags.judge.trim()) throw new UsageError('--judge: name the model that grades the answers, e.g. --judge gpt-4o');
  const own = ownSettings(flags);
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
  if (flags.policy?.length) study.policies = policiesFromFlags(flags.policy, await loadPolicyModules(specModules(flags.policy), undefined, moduleLoading(policyLimits(flags))), prices);
  if (flags.scenario?.length) study.scenarios = flags.scenario.map((pattern) => ({ kind: 'glob', pattern, base: process.cwd() }));
  if (own.records !== undefined) study.records = own.records;
  if (own.answers !== undefined) study.answers = own.answers;
  if (own.judge !== undefined) {
    flagModel(prices ?? loadPrices(study.prices), own.judge, '--judge');
    study.judge = own.judge;
  } else if (own.answers === false) delete study.judge; // --no-answers measures no answers, so nothing to judge
  checkAnswers(study, own.answers ? '--answers' : 'answers', own.judge !== undefined ? '--judge' : 'judge');
  const { jobs, tokenCache } = commandSettings(flags);
  const cache = cacheFolderOf(tokenCache);
  if (cache.warning) io?.err(`ctxsim: warning: ${cache.warning}\n`);
  return Object.assign(study, { cacheFolder: cache.dir, ...policyLimits(flags) }, jobs !== undefined && { jobs });
}

/**
 * The values of the flags of `options` that are settings' (each made from
 * its setting's entry: cli/_study-options.ts), as the specs hold them (a
 * path from the working folder); a value a setting does not take is a
 * usage error naming its flag. A command reads the flags it declares: a
 * flag of the same name that another command declares (`run`'s `--sort`)
 * is not read as this one.
 */
function flagValues(given: object, options: object): Record<string, unknown> {
  const flags = given as Readonly<Record<string, unknown>>;
  const names = new Set(Object.keys(options));
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    // A setting read apart (`--policy`, `--scenario`: studyFromFlags) is not read here.
    if (!s.meta.flag || s.meta.apart || !names.has(s.meta.flag.name)) continue;
    const raw = flags[camelCase(s.meta.flag.name)];
    if (raw === undefined || (Array.isArray(raw) && !raw.length)) continue;
    const r = readSetting(s, raw, process.cwd(), s.meta.flag.written ?? s.meta.written);
    if ('problems' in r) throw new UsageError(`--${s.meta.flag.name}: ${r.problems[0]!.message}`);
    out[s.name] = r.value;
  }
  return out;
}

/** The run settings the flags set, and the report settings of `run`'s flags (`--min-retention`, `--min-saving`), as the spec holds them. */
export function flagSettings(flags: StudyFlags): Partial<StudySettings> {
  return flagValues(flags, { ...SETTING_OPTIONS, ...REPORT_OPTIONS }) as Partial<StudySettings>;
}

/** The report settings of `ctxsim table`'s flags (`--columns`, `--sort`: `budgetColumns`, `budgetSort`), as the spec holds them. */
export function budgetTableSettings(flags: object): Partial<Pick<StudySettings, 'budgetColumns' | 'budgetSort'>> {
  return flagValues(flags, BUDGET_TABLE_OPTIONS) as Partial<Pick<StudySettings, 'budgetColumns' | 'budgetSort'>>;
}

/** The study's own settings the flags set (`STUDY_SPEC`: `--out`, a path from the working folder or `-`; `--records`, `--answers`, `--judge`), as the spec holds them. */
export function ownSettings(flags: object): Partial<StudyOwnSettings> {
  return flagValues(flags, OWN_OPTIONS) as Partial<StudyOwnSettings>;
}

/** What only the command line sets (`COMMAND_SPEC`: the cache folder, worker threads, the limits of policy modules, the upkeep's mode, cassette and endpoint), read from its flags. */
export function commandSettings(flags: object): Partial<CommandSettings> {
  return flagValues(flags, COMMAND_OPTIONS) as Partial<CommandSettings>;
}

/**
 * The one value of a list setting whose flag a command takes once
 * (`explain`'s and `calibrate`'s `--model`: `settingOption(…, { one: true })`),
 * read as the repeatable flag reads a list of one; none given: undefined.
 */
export function oneSetting(flags: object, name: 'models'): string | undefined {
  const s = SETTINGS.find((x) => x.name === name)!;
  const flag = s.meta.flag!;
  const raw = (flags as Readonly<Record<string, unknown>>)[camelCase(flag.name)];
  if (raw === undefined) return undefined;
  const r = readSetting(s, [raw], process.cwd(), flag.written ?? s.meta.written);
  if ('problems' in r) throw new UsageError(`--${flag.name}: ${r.problems[0]!.message}`);
  return (r.value as readonly string[])[0];
}

/**
 * The flags of the settings that decide records, as given, as words of a
 * command line (`--model a --model b --cache off --cold-start --upkeep
 * replay`): what `ctxsim check`'s command that accepts a change repeats,
 * so that the accepting run computes the same.
 */
export function settingArgs(flags: StudyFlags): string[] {
  return SETTINGS.flatMap((s) => {
    const flag = s.decidesRecords ? s.meta.flag : undefined;
    const raw = flag && flags[camelCase(flag.name)];
    if (!flag || raw === undefined) return [];
    // On or off: the flag alone, or its `--no-` form.
    if (typeof raw === 'boolean') return [`--${raw ? '' : 'no-'}${flag.name}`];
    return (Array.isArray(raw) ? raw : [raw]).flatMap((v) => [`--${flag.name}`, String(v)]);
  });
}

/** A flag's name as yargs gives it in the parsed flags (`cache-ttl` → `cacheTtl`). */
function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** What the flags set over a study file, checked: the keys they replace, and the upkeep they choose. */
function studyOverrides(flags: StudyFlags): StudyOverrides {
  const given = commandSettings(flags);
  const upkeep: UpkeepOverrides = {
    ...(given.upkeepMode !== undefined && { mode: given.upkeepMode }),
    ...(given.cassette !== undefined && { cassette: given.cassette }),
    ...(given.baseURL !== undefined && { baseURL: given.baseURL }),
    ...(given.apiKeyEnv !== undefined && { apiKeyEnv: given.apiKeyEnv }),
  };
  const settings = flagSettings(flags);
  const { out } = ownSettings(flags);
  return {
    ...(Object.keys(settings).length && { settings }),
    ...(out !== undefined && { out }),
    ...(flags.policy?.length && { policies: true }),
    ...(Object.keys(upkeep).length && { upkeep }),
    ...policyLimits(flags),
  };
}

/** Upkeep flags that would do nothing in the mode the run has: `--cassette` with simulate or live, `--base-url` and `--api-key-env` without record or live. */
function checkUpkeepFlags(study: Study, flags: StudyFlags): void {
  const mode = study.upkeepSource?.mode ?? 'simulate';
  if (commandSettings(flags).cassette !== undefined && (mode === 'simulate' || mode === 'live')) {
    throw new UsageError(`--cassette: upkeep is ${mode === 'simulate' ? 'simulated' : 'live'}, so no cassette is read or written; add --upkeep record or --upkeep replay`);
  }
  const { baseURL, apiKeyEnv } = commandSettings(flags);
  const endpoint = baseURL !== undefined ? '--base-url' : apiKeyEnv !== undefined ? '--api-key-env' : undefined;
  if (endpoint && !NETWORK_MODES.includes(mode)) {
    throw new UsageError(`${endpoint}: upkeep is ${mode === 'simulate' ? 'simulated' : 'replayed'}, so nothing is sent; add --upkeep record or --upkeep live`);
  }
}
