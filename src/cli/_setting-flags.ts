/**
 * The typed reading of the settings' flags: each command reads the flags
 * it declares, made from the settings' entries (cli/_study-options.ts), as
 * their specs hold them. Apart from the study's loading (cli/_study.ts),
 * so that a command that runs no study (`cache`) reads its flags without
 * loading it.
 * @module
 */
import { UsageError } from '../errors.js';
import type { UpkeepOverrides } from '../recording/upkeep.js';
import { GATE_SETTINGS, readSetting, SETTINGS, UPKEEP_SETTINGS, type CommandSettings, type GateSettings, type Setting, type StudyOwnSettings, type StudySettings } from '../study/settings.js';
import { BUDGET_TABLE_OPTIONS, COMMAND_OPTIONS, GATE_OPTIONS, OWN_OPTIONS, REPORT_OPTIONS, SETTING_OPTIONS, settingOfOption, STUDY_OPTIONS, UPKEEP_OPTIONS } from './_study-options.js';

/**
 * The values of the flags of `options` that are settings' (each made from
 * its setting's entry: cli/_study-options.ts), as the specs hold them (a
 * path from the working folder); a value a setting does not take is a
 * usage error naming its flag. A command reads the flags it declares: a
 * flag of the same name that another command declares (`run`'s `--sort`)
 * is not read as this one.
 */
function flagValues(given: object, options: object, settings: readonly Setting[] = SETTINGS): Record<string, unknown> {
  const flags = given as Readonly<Record<string, unknown>>;
  const names = new Set(Object.keys(options));
  const out: Record<string, unknown> = {};
  for (const s of settings) {
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
export function flagSettings(flags: object): Partial<StudySettings> {
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

/** What only the command line sets (`COMMAND_SPEC`: the cache folder, worker threads, the limits of policy modules), read from its flags. */
export function commandSettings(flags: object): Partial<CommandSettings> {
  return flagValues(flags, COMMAND_OPTIONS) as Partial<CommandSettings>;
}

/** The upkeep settings the flags set over the study's `upkeep:` (`UPKEEP_SPEC`: `--upkeep`, which alone may be `record` or `live`; `--cassette`, a path from the working folder; `--base-url`, `--api-key-env`), as the upkeep holds them. */
export function upkeepOverrides(flags: object): UpkeepOverrides {
  return flagValues(flags, UPKEEP_OPTIONS, UPKEEP_SETTINGS) as UpkeepOverrides;
}

/** The gate's settings `ctxsim check`'s flags set (`GATE_SPEC`: `--baseline`, a path from the working folder, and the limits), as the gate holds them: over the study's `gate:`. */
export function gateSettings(flags: object): Partial<GateSettings> {
  return flagValues(flags, GATE_OPTIONS, GATE_SETTINGS) as Partial<GateSettings>;
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
export function settingArgs(given: object): string[] {
  const flags = given as Readonly<Record<string, unknown>>;
  // In the order every study-running command takes them (`STUDY_OPTIONS`, its help's): the upkeep's flags after the command line's.
  return Object.values(STUDY_OPTIONS).flatMap((option) => {
    const s = settingOfOption(option);
    const flag = s?.decidesRecords ? s.meta.flag : undefined;
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
