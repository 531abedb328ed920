/**
 * The options of the commands that run a study or policy modules. Their
 * descriptions list what the library holds (the policies and their
 * parameters, the tokenizers), so a command's builder imports this module
 * when yargs builds that command, not when the command line starts.
 * @module
 */
import { z } from 'zod';
import type { SettingFlag } from '../engine/spec.js';
import { SETTINGS, type Setting } from '../study/settings.js';
import { CACHE_DIR_ENV, DEFAULT_CACHE_FOLDER } from './_cache-folder.js';
import { wholeNumberOption } from './_command.js';

/**
 * The flag of a setting that has one (`SettingMeta.flag`): on or off, a
 * whole number (within the schema's bounds), a choice, a repeatable list or
 * text, as its written schema is.
 */
function settingOption(s: Setting, flag: SettingFlag) {
  const { schema } = s;
  const told = { describe: flag.describe, ...(flag.defaultDescription !== undefined && { defaultDescription: flag.defaultDescription }) };
  if (schema instanceof z.ZodBoolean) return { type: 'boolean', ...told } as const;
  if (schema instanceof z.ZodNumber) {
    // A whole number's least value, when the schema sets one (`int()` alone bounds it to the safe integers).
    const min = schema.minValue !== null && schema.minValue > Number.MIN_SAFE_INTEGER ? schema.minValue : undefined;
    return schema.isInt ? wholeNumberOption(flag.name, { ...told, ...(min !== undefined && { min }) }) : ({ type: 'number', ...told } as const);
  }
  if (schema instanceof z.ZodEnum) {
    // A few choices are yargs' (shown after the help), unless the help names them itself; a longer list reads better in it. Either is checked as the study key is.
    const values = schema.options.map(String);
    if (flag.valuesInHelp) return { type: 'string', ...told } as const;
    return values.length <= 4 ? ({ type: 'string', choices: values, ...told } as const) : ({ type: 'string', ...told, describe: `${flag.describe}: ${values.join(' | ')}` } as const);
  }
  const list = schema instanceof z.ZodArray || (schema instanceof z.ZodReadonly && schema.unwrap() instanceof z.ZodArray);
  return { type: 'string', ...(list && { array: true }), ...told } as const;
}

/** The flags of the settings of a kind, in `SETTINGS` order, by flag name. */
function settingOptions(of: Setting['of']) {
  return Object.fromEntries(SETTINGS.flatMap((s) => (s.meta.flag && s.of === of ? [[s.meta.flag.name, settingOption(s, s.meta.flag)]] : [])));
}

/** The run settings' flags, in `RUN_SPEC` order: options of every command that runs a study. */
export const SETTING_OPTIONS = settingOptions('run');

/** The report settings' flags (`--min-retention`, `--min-saving`): options of the commands that write reports (`run`, `check`). */
export const REPORT_OPTIONS = settingOptions('report');

/** The flags only the command line has (`COMMAND_SPEC`): worker threads, the limits of policy modules, where upkeep comes from. */
export const COMMAND_OPTIONS = settingOptions('command');

/** The limits of policy modules, for every command that runs them (docs/custom-policies.md). */
export const POLICY_LIMIT_OPTIONS = { 'policy-timeout': COMMAND_OPTIONS['policy-timeout']!, 'policy-memory': COMMAND_OPTIONS['policy-memory']! };

/** The flags of the study's own settings (`STUDY_SPEC`): `--scenario`, `--policy`, `--out`, `--records`, then `--answers`, `--judge`. */
const { scenario, policy, out, records, ...STUDY_OWN_OPTIONS } = settingOptions('study');

/** `--out`, where a command's output goes (a command may say it in its own words): it takes the next word whatever it is, so that `--out -` is stdout. */
export const OUT_OPTION = { ...out!, nargs: 1 } as const;

/** `--records`, of the commands that write a run's record files (`run`, `merge`). */
export const RECORDS_OPTION = records!;

/** The flags every study-running command takes (`StudyFlags`): what it runs, then every setting's flag but the report settings' and `--records`. */
export const STUDY_OPTIONS = {
  out: OUT_OPTION,
  policy: policy!,
  scenario: scenario!,
  ...SETTING_OPTIONS,
  'token-cache': {
    type: 'string',
    describe: 'folder of the persistent caches: token counts, and the records of each scenario × model × policy replayed (--no-token-cache or --no-cache: none)',
    defaultDescription: `$${CACHE_DIR_ENV}, else ${DEFAULT_CACHE_FOLDER}`,
  },
  ...COMMAND_OPTIONS,
  ...STUDY_OWN_OPTIONS,
} as const;
