/**
 * The options of the commands that run a study or policy modules. Their
 * descriptions list what the library holds (the policies and their
 * parameters, the tokenizers), so a command's builder imports this module
 * when yargs builds that command, not when the command line starts.
 *
 * Every option of a setting is made here from its entry (`SettingMeta.flag`):
 * a command takes it whole (`STUDY_OPTIONS`, …), or says it in its own
 * words (`settingOption`); test/cli-flags-declared.test.ts fails on a
 * command that declares a setting's flag by hand.
 * @module
 */
import { z } from 'zod';
import type { SettingFlag } from '../engine/spec.js';
import { EVERY_SETTING, GATE_SETTINGS, SETTINGS, UPKEEP_SETTINGS, type Setting } from '../study/settings.js';
import { wholeNumberOption } from './_command.js';

/** Every option made from a setting's entry, and that setting: what test/cli-flags-declared.test.ts tells a setting's flag from one declared by hand with. */
const MADE = new WeakMap<object, Setting>();

/** The setting an option was made from (`settingOption`, or a map of options here), if it was. */
export function settingOfOption(option: object): Setting | undefined {
  return MADE.get(option);
}

/** `option`, noted as made from `s`. */
function made<O extends object>(s: Setting, option: O): O {
  MADE.set(option, s);
  return option;
}

/** The flag's value that counts when it is given more than once (`SettingFlag.lastWins`): the last. */
const lastGiven = (raw: unknown): unknown => (Array.isArray(raw) ? raw[raw.length - 1] : raw);

/**
 * The flag of a setting that has one (`SettingMeta.flag`): on or off, a
 * whole number (within the schema's bounds), a choice, a repeatable list or
 * text, as its written schema is (the flag's own, `SettingFlag.written`, or
 * the study key's). `one`: the flag takes one of the list the setting holds
 * (`explain`'s `--model`).
 */
function flagOption(s: Setting, flag: SettingFlag, one = false) {
  const written = flag.written?.schema ?? s.schema;
  const schema = one ? (listElement(written) ?? written) : written;
  const told = {
    describe: flag.describe,
    ...(flag.defaultDescription !== undefined && { defaultDescription: flag.defaultDescription }),
    ...(flag.lastWins && { coerce: lastGiven }),
    ...(flag.nextWord && { nargs: 1 }),
  };
  if (schema instanceof z.ZodBoolean) return { type: 'boolean', ...told } as const;
  if (schema instanceof z.ZodNumber) {
    // A whole number's bounds, when the schema sets them (`int()` alone bounds it to the safe integers).
    const min = schema.minValue !== null && schema.minValue > Number.MIN_SAFE_INTEGER ? schema.minValue : undefined;
    const max = schema.maxValue !== null && schema.maxValue < Number.MAX_SAFE_INTEGER ? schema.maxValue : undefined;
    return schema.isInt ? wholeNumberOption(flag.name, { ...told, ...(min !== undefined && { min }), ...(max !== undefined && { max }) }) : ({ type: 'number', ...told } as const);
  }
  if (schema instanceof z.ZodEnum) {
    // A few choices are yargs' (shown after the help), unless the help names them itself; a longer list reads better in it. Either is checked as the study key is.
    const values = schema.options.map(String);
    if (flag.valuesInHelp) return { type: 'string', ...told } as const;
    return values.length <= 4 ? ({ type: 'string', choices: values, ...told } as const) : ({ type: 'string', ...told, describe: `${flag.describe}: ${values.join(' | ')}` } as const);
  }
  return { type: 'string', ...(listElement(schema) !== undefined && { array: true }), ...told } as const;
}

/** The element of a list schema (through its `readonly` wrapper), or none. */
function listElement(schema: z.ZodType): z.ZodType | undefined {
  const inner = schema instanceof z.ZodReadonly ? (schema.unwrap() as z.ZodType) : schema;
  return inner instanceof z.ZodArray ? (inner.element as z.ZodType) : undefined;
}

/** The flags of `settings` (default: those of a kind, in `SETTINGS` order), by flag name. */
function settingOptions(of: Setting['of'], settings: readonly Setting[] = SETTINGS.filter((s) => s.of === of)) {
  return Object.fromEntries(settings.flatMap((s) => (s.meta.flag ? [[s.meta.flag.name, made(s, flagOption(s, s.meta.flag))]] : [])));
}

/**
 * The flags of the settings inside a setting, or of an entry's fields
 * (`fields`: the study's `gate:`, a `generate:` source), in their order, by
 * flag name: what `ctxsim check` and `ctxsim generate` take.
 */
export function fieldOptions(fields: readonly Setting[]) {
  return settingOptions('study', fields);
}

/** The gate's flags (`GATE_SPEC`: `--baseline` and the limits), which `ctxsim check` takes over the study's `gate:`. */
export const GATE_OPTIONS = fieldOptions(GATE_SETTINGS);

const { upkeep, cassette, 'base-url': baseUrl, 'api-key-env': apiKeyEnv } = fieldOptions(UPKEEP_SETTINGS);

/** The upkeep's flags (`UPKEEP_SPEC`: `--upkeep`, `--cassette`, `--base-url`, `--api-key-env`), over the study's `upkeep:`: every study-running command takes them, `upkeepOverrides` reads them. */
export const UPKEEP_OPTIONS = { upkeep: upkeep!, cassette: cassette!, 'base-url': baseUrl!, 'api-key-env': apiKeyEnv! };

/** The run settings' flags, in `RUN_SPEC` order: options of every command that runs a study. */
export const SETTING_OPTIONS = settingOptions('run');

const { columns, sort, ...reportOptions } = settingOptions('report');

/** The report settings' flags that `ctxsim run` takes (`--min-retention`, `--min-saving`): the verdict's thresholds. */
export const REPORT_OPTIONS = reportOptions;

/** The report settings' flags that `ctxsim table` takes (`--columns`, `--sort`): the budget table's layout (`run`'s and `merge`'s `--sort` orders the table they print, `TABLE_OPTIONS`). */
export const BUDGET_TABLE_OPTIONS = { columns: columns!, sort: sort! };

/** The flags only the command line has (`COMMAND_SPEC`): the cache folder, worker threads, the limits of policy modules. */
export const COMMAND_OPTIONS = settingOptions('command');

/** The limits of policy modules, for every command that runs them (docs/custom-policies.md). */
export const POLICY_LIMIT_OPTIONS = { 'policy-timeout': COMMAND_OPTIONS['policy-timeout']!, 'policy-memory': COMMAND_OPTIONS['policy-memory']! };

/** The flags of the study's own settings (`STUDY_SPEC`: `--scenario`, `--policy`, `--out`, `--records`, then `--answers`, `--judge`), each as every command takes it: what `ownSettings` reads. */
export const OWN_OPTIONS = settingOptions('study');
const { scenario, policy, out, records, ...STUDY_OWN_OPTIONS } = OWN_OPTIONS;

/** `--records`, of the commands that write a run's record files (`run`, `merge`). */
export const RECORDS_OPTION = records!;

/** The flags every study-running command takes (`StudyFlags`): what it runs, then every setting's flag but the report settings' and `--records`. */
export const STUDY_OPTIONS = {
  // Where a command's output goes (a command may say it in its own words): it takes the next word whatever it is, so that `--out -` is stdout.
  out: out!,
  policy: policy!,
  scenario: scenario!,
  ...SETTING_OPTIONS,
  ...COMMAND_OPTIONS,
  ...UPKEEP_OPTIONS,
  ...STUDY_OWN_OPTIONS,
} as const;

/** The setting whose flag is `--name`, among `settings` (default: every setting's, those inside one too). */
function flaggedSetting(name: string, settings: readonly Setting[] = EVERY_SETTING): Setting {
  const s = settings.find((x) => x.meta.flag?.name === name);
  if (!s) throw new Error(`no setting has the flag --${name}`);
  return s;
}

/** What a command says of a setting's flag in its own words (`settingOption`). */
interface Told {
  describe?: string | ((own: string) => string);
  defaultDescription?: string;
  default?: unknown;
  demandOption?: boolean;
  one?: true;
}

/**
 * The option of the setting whose flag is `--name`, in a command's own
 * words (`told`: its help, or a function of the help every command gives
 * it; its default; whether it is needed), read as every command reads it.
 * `one`: the command takes one value of the list the setting holds
 * (`explain`'s and `calibrate`'s `--model`), read by `oneSetting`.
 * `among`: the settings it is one of, when not a study's (those inside
 * one too: `explain`'s `--upkeep`) or a command line's
 * (`GENERATE_SETTINGS`, a generate source's fields: `ctxsim generate`'s
 * flags).
 */
export function settingOption(name: string, told: Told = {}, among: readonly Setting[] = EVERY_SETTING) {
  const s = flaggedSetting(name, among);
  const { describe, one, ...rest } = told;
  const base = flagOption(s, s.meta.flag!, one);
  const own = typeof describe === 'function' ? describe(base.describe) : describe;
  return made(s, { ...base, ...rest, ...(own !== undefined && { describe: own }) });
}
