/**
 * The options of the commands that run a study or policy modules. Their
 * descriptions list what the library holds (the policies and their
 * parameters, the tokenizers), so a command's builder imports this module
 * when yargs builds that command, not when the command line starts.
 * @module
 */
import { z } from 'zod';
import { policyHelpLines } from '../policies/docs.js';
import { DEFAULT_POLICY_MEMORY, DEFAULT_POLICY_TIMEOUT } from '../policies/module.js';
import { COMMON_PARAMS } from '../policies/params.js';
import { WRITTEN_SETTINGS, type WrittenSetting } from '../study/settings.js';
import { CACHE_DIR_ENV, DEFAULT_CACHE_FOLDER } from './_cache-folder.js';
import { wholeNumberOption } from './_command.js';

/** The limits of policy modules, for every command that runs them (docs/custom-policies.md). */
export const POLICY_LIMIT_OPTIONS = {
  'policy-timeout': wholeNumberOption('policy-timeout', {
    min: 1,
    describe: 'seconds one call into a policy module (its import, start, a session method) may take; past it the command stops naming the module, scenario and turn',
    defaultDescription: String(DEFAULT_POLICY_TIMEOUT),
  }),
  'policy-memory': wholeNumberOption('policy-memory', {
    min: 16,
    describe: 'MB of heap the thread that runs policy modules may use, and MB it may hold outside its heap; past either the command stops naming the module',
    defaultDescription: String(DEFAULT_POLICY_MEMORY),
  }),
} as const;

/**
 * The flag of a run setting that has one (`SettingMeta.flag`): on or off,
 * a whole number, a choice, a repeatable list or text, as its written schema is.
 */
function settingOption(s: WrittenSetting, flag: { name: string; describe: string }) {
  const { schema } = s;
  if (schema instanceof z.ZodBoolean) return { type: 'boolean', describe: flag.describe } as const;
  if (schema instanceof z.ZodNumber) return schema.isInt ? wholeNumberOption(flag.name, { describe: flag.describe }) : ({ type: 'number', describe: flag.describe } as const);
  if (schema instanceof z.ZodEnum) {
    // A few choices are yargs' (shown after the help); a longer list reads better in it, and is checked as the study key is.
    const values = schema.options.map(String);
    return values.length <= 4 ? ({ type: 'string', choices: values, describe: flag.describe } as const) : ({ type: 'string', describe: `${flag.describe}: ${values.join(' | ')}` } as const);
  }
  const list = schema instanceof z.ZodArray || (schema instanceof z.ZodReadonly && schema.unwrap() instanceof z.ZodArray);
  return { type: 'string', ...(list && { array: true }), describe: flag.describe } as const;
}

/** The flags of the settings `of` a kind (`run`: in `RUN_SPEC` order; `report`: in `REPORT_SPEC` order). */
function settingOptions(of: WrittenSetting['of']) {
  return Object.fromEntries(WRITTEN_SETTINGS.flatMap((s) => (s.meta.flag && s.of === of ? [[s.meta.flag.name, settingOption(s, s.meta.flag)]] : [])));
}

/** The run settings' flags, in `RUN_SPEC` order: options of every command that runs a study. */
export const SETTING_OPTIONS = settingOptions('run');

/** The report settings' flags (`--min-retention`, `--min-saving`): options of the commands that write reports (`run`, `check`). */
export const REPORT_OPTIONS = settingOptions('report');

/** The flags every study-running command takes (`StudyFlags`). */
export const STUDY_OPTIONS = {
  out: { type: 'string', describe: 'output folder (overrides the study)' },
  policy: {
    type: 'string',
    array: true,
    describe: `policy spec, e.g. window-tokens:budget=2000 or a sweep budget=500|1000, or a policy module: ./policies/keep-edges.mjs:keep=1 (repeatable; replaces the study list). Policies and their parameters (defaults; every one also takes ${Object.keys(COMMON_PARAMS.shape).join(', ')}): ${policyHelpLines().join('; ')}`,
  },
  scenario: { type: 'string', array: true, describe: 'scenario file glob (repeatable; replaces the study list)' },
  ...SETTING_OPTIONS,
  'token-cache': {
    type: 'string',
    describe: 'folder of the persistent caches: token counts, and the records of each scenario × model × policy replayed (--no-token-cache or --no-cache: none)',
    defaultDescription: `$${CACHE_DIR_ENV}, else ${DEFAULT_CACHE_FOLDER}`,
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
    describe: 'with --answers: a model that grades a reply that does not hold the probed value as written (its yes makes the probe answered when the prompt held the value; a yes on a value not sent is counted apart, judged_unsent), through the upkeep endpoint',
    defaultDescription: 'the study’s, else none',
  },
} as const;
