import { resolve } from 'node:path';
import { z } from 'zod';
import { RUN_SPEC, RUN_SPEC_KEYS, setting, written, type CanonicalSpec, type ValueProblem } from '../engine/spec.js';
import { readSetting, settingOf, type Setting } from './_setting.js';
import { gateLimitProblem, parsePercent, parseRetentionLimit } from '../gate/limits.js';
import { policyHelpLines } from '../policies/docs.js';
import { COMMON_PARAMS } from '../policies/params.js';
import type { PolicyVariant } from '../policies/spec.js';
import { DEFAULT_POLICY_MEMORY, DEFAULT_POLICY_TIMEOUT } from '../policies/module.js';
import { RECORDS_MODES } from '../records/json.js';
import { CACHE_DIR_ENV, DEFAULT_CACHE_FOLDER } from '../process.js';
import type { ReportSettings } from '../records/info.js';
import { REPORT_SPEC, REPORT_SPEC_KEYS } from '../report/settings.js';
import type { GenerateSource, GlobSource, ImportSource } from './sources.js';
import { UPKEEP_SPEC } from '../recording/upkeep-settings.js';

/**
 * The run settings as a study file and the command line write them, all
 * derived from `RUN_SPEC` and each setting's meta (engine/spec.ts): a
 * setting declared there with a study key is a key of every study file,
 * described in its JSON Schema and read here; with a flag, a flag of every
 * command that runs a study (cli/_study-options.ts). The report settings
 * (`REPORT_SPEC`, report/settings.ts) are declared and written the same
 * way; their flags are those of the commands that write reports. So are
 * the study's own keys (`STUDY_SPEC`, below): what it runs, where its
 * outputs go, its gate, where its upkeep comes from.
 */

/** A study's `out: -`: the output goes to stdout, as with `--out -`. */
export const STDOUT = '-';

/** A scenario source of a study: a glob of scenario files, a generated set, an imported dataset. */
export type ScenarioSource = GlobSource | GenerateSource | ImportSource;

/** A gate limit as written: text (`5%`, `1`) or, to be refused with a reason, a number. */
const LIMIT = z.union([z.string(), z.number()]);

/** How far retention may drop, as the gate holds it (`RetentionLimit`): by probes, or by points of retention. */
const RETENTION_LIMIT = z.union([z.strictObject({ probes: z.number().int().min(0) }), z.strictObject({ points: z.number().min(0).max(1) })]);

/** A gate limit (`key`) written as `gate.<key>:` and its flag write it: refused as the gate says (`gateLimitProblem`), read as it reads. */
function limit(key: 'maxCostIncrease' | 'maxRetentionDrop' | 'maxAnswerDrop') {
  return written(
    LIMIT,
    (v) => (key === 'maxCostIncrease' ? parsePercent(key, v) : parseRetentionLimit(key, v)),
    (v) => gateLimitProblem(key, v),
  );
}

/**
 * The gate's settings, each a setting inside the study's `gate:` (its key
 * there) and a flag of `ctxsim check`, which overrides the study's: the
 * baseline and the allowed changes. Unset, a limit is the gate's default
 * (`DEFAULT_LIMITS`); none looser than the baseline's applies (`appliedLimits`).
 */
export const GATE_SPEC = z.strictObject({
  baseline: setting(z.string().min(1).optional().describe('the baseline file, absolute'), {
    about: 'the baseline JSON that ctxsim run --save-baseline wrote, relative to the study file (--baseline overrides)',
    written: written(z.string().min(1, 'name the baseline file (the JSON that ctxsim run --save-baseline writes)'), (v, folder) => resolve(folder, v)),
    flag: { name: 'baseline', describe: 'baseline JSON from `run --save-baseline` (or the study\'s gate.baseline)' },
  }),
  maxCostIncrease: setting(z.number().min(0).optional().describe('the largest relative cost rise of a scenario × policy (0.05: 5%; default `DEFAULT_LIMITS`)'), {
    about: 'the cost rise a scenario × policy may have, a percentage such as 10% (default 5%; none looser than the baseline was saved with applies; --max-cost-increase overrides)',
    written: limit('maxCostIncrease'),
    flag: { name: 'max-cost-increase', describe: 'allowed cost rise per scenario × policy, a percentage (default 5%)', nextWord: true },
  }),
  maxRetentionDrop: setting(RETENTION_LIMIT.optional().describe('how far retention may drop: probes, or points of retention (default 0 probes)'), {
    about: 'how far retention may drop: a number of probes (1) or points of retention (2%) (default 0; none looser than the baseline was saved with applies; --max-retention-drop overrides)',
    written: limit('maxRetentionDrop'),
    flag: { name: 'max-retention-drop', describe: 'allowed retention drop: probes (default 0) or points (2%)', nextWord: true },
  }),
  maxAnswerDrop: setting(RETENTION_LIMIT.optional().describe('with answers measured in both runs: how far answer retention may drop (default 0 probes)'), {
    about: 'with answers measured in both runs: how far answer retention may drop, probes (1) or points (2%) (default 0; none looser than the baseline was saved with applies; --max-answer-drop overrides)',
    written: limit('maxAnswerDrop'),
    flag: { name: 'max-answer-drop', describe: 'with answers measured in both runs: allowed answer retention drop, probes (default 0) or points (2%)', nextWord: true },
  }),
});

/** The gate's settings, as a study's `gate:` and `ctxsim check`'s flags give them (the baseline absolute). */
export type GateSettings = z.output<typeof GATE_SPEC>;

/**
 * The study's own settings: what it runs, where its outputs go, its gate,
 * how its upkeep is done and judged. Declared as the run settings are (a
 * `setting` each, its meta saying its key and flag), and written and read
 * with them; they are not in the `RunSpec` (the run's upkeep is made of
 * `upkeepSource`, `answers` and `judge`: `studyUpkeep`, study/upkeep.ts).
 */
export const STUDY_SPEC = z.strictObject({
  scenarios: setting(z.custom<ScenarioSource[]>().describe('what the study runs: scenario files, generated sets, imported datasets'), {
    about: 'scenario files (globs, relative to the study file), generated sets and imported datasets, each with an optional weight: what each of its conversations counts for in the per-policy means, a positive number, fractions allowed (0.5 counts half as much as 1)',
    written: written(z.array(z.unknown()).min(1)),
    flag: { name: 'scenario', describe: 'scenario file glob (repeatable; replaces the study list)' },
    apart: true,
  }),
  policies: setting(z.custom<PolicyVariant[]>().describe('the policy variants the study runs, checked'), {
    about: 'the memory policies to run, each a policy id, a spec or {id: {parameter: value}}; a list of values makes a sweep; a policy module’s path lies in the study’s folder or below the working folder (--policy PATH loads one from anywhere)',
    written: written(z.array(z.unknown()).min(1)),
    flag: {
      name: 'policy',
      describe: `policy spec, e.g. window-tokens:budget=2000 or a sweep budget=500|1000, or a policy module: ./policies/keep-edges.mjs:keep=1 (repeatable; replaces the study list). Policies and their parameters (defaults; every one also takes ${Object.keys(COMMON_PARAMS.shape).join(', ')}): ${policyHelpLines().join('; ')}`,
    },
    apart: true,
  }),
  out: setting(z.string().describe('the output folder, absolute; `-` (STDOUT) for stdout'), {
    about: 'the output folder, relative to the study file, in its folder or below the working folder (default reports/; --out writes anywhere); - for stdout',
    // `-` is stdout, as `--out -` is: not a folder named `-`.
    written: written(z.string().min(1), (v, folder) => (v === STDOUT ? STDOUT : resolve(folder, v))),
    // Each command says where its output goes in its own words (`check`: the reports beside its verdict; `merge`: a folder).
    flag: { name: 'out', describe: 'output folder, or one file (.csv .json .md .html), or - for stdout', nextWord: true },
  }),
  gate: setting(GATE_SPEC.optional().describe('the CI gate’s settings (`ctxsim check`); the baseline path is absolute'), {
    // Each of its keys is a setting of its own (`GATE_SPEC`), read at its place, and a flag of ctxsim check.
    about: 'the CI gate of ctxsim check: the baseline and the allowed changes',
  }),
  upkeepSource: setting(UPKEEP_SPEC.optional().describe('where summaries, extractions and embeddings come from (absent: simulated, the default prompts); `studyUpkeep` makes the run’s `upkeep` of it'), {
    // Each of its keys is a setting of its own (`UPKEEP_SPEC`), read at its place with its default; the mode, cassette and endpoint are flags too, over the study's.
    key: 'upkeep',
    about: 'where summaries, extractions and embeddings come from: simulated (default), or a real model through an OpenAI-compatible endpoint, recorded into a cassette (with --upkeep record on the command line) and replayed',
    decidesRecords: true,
  }),
  records: setting(z.enum(RECORDS_MODES).optional().describe('`summary`: no per-turn or per-probe rows in the outputs'), {
    about: 'full (default) or summary: summary writes no per-turn or per-probe rows (no turns.csv, probes.csv, nor their lists in results.json), every report, chart, table and the gate the same; --records overrides',
    flag: {
      name: 'records',
      describe: 'full | summary: summary writes no per-turn or per-probe rows (no turns.csv, probes.csv, nor their lists in results.json), every report the same; a shard file keeps every record',
      defaultDescription: 'full',
      valuesInHelp: true,
    },
  }),
  answers: setting(z.boolean().optional().describe('each probe turn’s first prompt also goes to the chat model through the upkeep endpoint, and probes are scored on its answer'), {
    about: 'true: each probe turn’s first prompt also goes to the chat model through the upkeep endpoint (needs upkeep mode record, replay or live), and each probe is scored on its answer too (default false; --answers)',
    flag: {
      name: 'answers',
      describe: 'also send each probe turn’s first prompt to the chat model through the upkeep endpoint and score the probes on its answer (needs --upkeep record, replay or live)',
      defaultDescription: 'the study’s, else false',
    },
    decidesRecords: true,
  }),
  judge: setting(z.string().min(1).optional().describe('with `answers`: the model that grades a reply that does not hold a probed value as written'), {
    about: 'with answers: a model (in the price table) that grades a reply that does not hold the probed value as written; its yes makes the probe answered (judged) when the prompt held the value, and a yes on a value not sent is counted apart (judged_unsent); sent through the upkeep endpoint, a measurement apart from every cost (--judge)',
    flag: {
      name: 'judge',
      describe: 'with --answers: a model that grades a reply that does not hold the probed value as written (its yes makes the probe answered when the prompt held the value; a yes on a value not sent is counted apart, judged_unsent), through the upkeep endpoint',
      defaultDescription: 'the study’s, else none',
      // A blank one (a shell variable left empty) is refused in words that say what to give.
      written: written(z.string(), undefined, (v) => (v.trim() ? undefined : 'name the model that grades the answers, e.g. --judge gpt-4o')),
    },
    decidesRecords: true,
  }),
});

/** The study's own settings, as a `Study` holds them (paths absolute). */
export type StudyOwnSettings = z.output<typeof STUDY_SPEC>;


/** The settings a study holds: every `RunSpec` setting but `upkeep` (the study's own upkeep, answers and judge make it: `studyUpkeep`), its price table a path; and the report settings. */
export type StudySettings = Omit<CanonicalSpec, 'upkeep' | 'prices'> & { prices: string } & ReportSettings;

/**
 * What only the command line sets, a study file never: how this machine
 * runs the study (its cache folder, worker threads, the limits of policy
 * modules). Declared as the other settings are, with no study key; their
 * flags and reading follow (cli/_study-options.ts, cli/_study.ts). The
 * upkeep it may open the network for (`--upkeep record` and where it
 * sends) is the flags of the study's `upkeep:` keys (`UPKEEP_SPEC`).
 */
export const COMMAND_SPEC = z.strictObject({
  tokenCache: setting(z.union([z.string().min(1), z.literal(false)]).optional().describe('the cache folder as given (false: none); absent: `$CTXSIM_CACHE_DIR`, else the user’s cache folder'), {
    key: false,
    // The folder as given: where it is used (cli/_cache-folder.ts), it is checked, and none given is $CTXSIM_CACHE_DIR or the user's cache folder.
    written: written(z.union([z.string(), z.literal(false)]), undefined, (v) => (v === '' ? 'name a folder (or use --no-token-cache)' : undefined)),
    flag: {
      name: 'token-cache',
      describe: 'folder of the persistent caches: token counts, and the records of each scenario × model × policy replayed (--no-token-cache or --no-cache: none)',
      defaultDescription: `$${CACHE_DIR_ENV}, else ${DEFAULT_CACHE_FOLDER}`,
      lastWins: true,
    },
  }),
  jobs: setting(z.number().int().min(1).optional().describe('worker threads'), {
    key: false,
    flag: { name: 'jobs', describe: 'worker threads (output is the same for any number)', defaultDescription: 'cores; 1 below 4 MB of message text or for one scenario' },
  }),
  policyTimeout: setting(z.number().int().min(1).optional().describe('seconds one call into a policy module may take'), {
    key: false,
    flag: {
      name: 'policy-timeout',
      describe: 'seconds one call into a policy module (its import, start, a session method) may take; past it the command stops naming the module, scenario and turn',
      defaultDescription: String(DEFAULT_POLICY_TIMEOUT),
    },
  }),
  policyMemory: setting(z.number().int().min(16).optional().describe('MB of heap (and as much outside it) a policy module’s thread may use'), {
    key: false,
    flag: {
      name: 'policy-memory',
      describe: 'MB of heap the thread that runs policy modules may use, and MB it may hold outside its heap; past either the command stops naming the module',
      defaultDescription: String(DEFAULT_POLICY_MEMORY),
    },
  }),
});

/** What the command line alone sets (`COMMAND_SPEC`), as read from its flags. */
export type CommandSettings = z.output<typeof COMMAND_SPEC>;

/** What a setting is as written, and how a value is read (study/_setting.ts). */
export { readSetting, type Setting } from './_setting.js';

/**
 * Every setting, of every kind, in one order: the run settings in
 * `RUN_SPEC` order, the report settings, the command line's, then the
 * study's own. The study file's keys, its schema and JSON Schema, the flags of
 * the commands and their reading, and `ctxsim check`'s command that accepts
 * a change are all derived from this list.
 */
export const SETTINGS: readonly Setting[] = [
  ...RUN_SPEC_KEYS.map((name) => settingOf('run', RUN_SPEC, name)),
  ...REPORT_SPEC_KEYS.map((name) => settingOf('report', REPORT_SPEC, name)),
  ...Object.keys(COMMAND_SPEC.shape).map((name) => settingOf('command', COMMAND_SPEC, name)),
  ...Object.keys(STUDY_SPEC.shape).map((name) => settingOf('study', STUDY_SPEC, name)),
];

/** The gate's settings (`GATE_SPEC`), inside the study's `gate:`: their keys there, and `ctxsim check`'s flags. */
export const GATE_SETTINGS: readonly Setting[] = SETTINGS.find((s) => s.name === 'gate')!.fields!;

/** The upkeep's settings (`UPKEEP_SPEC`, recording/upkeep-settings.ts), inside the study's `upkeep:`: their keys there, and the flags of the mode, cassette and endpoint, over the study's. */
export const UPKEEP_SETTINGS: readonly Setting[] = SETTINGS.find((s) => s.name === 'upkeepSource')!.fields!;

/** Every setting, and after one that holds settings (the gate, the upkeep), those inside it: what the flags are looked up among. */
export const EVERY_SETTING: readonly Setting[] = SETTINGS.flatMap((s) => [s, ...(s.fields ?? [])]);

/** A setting a study file holds: its key is given. */
export type WrittenSetting = Setting & { key: string; of: 'run' | 'report' | 'study' };

/** Every setting a study file holds, in `SETTINGS` order: the run settings, the report settings, then the study's own. */
export const WRITTEN_SETTINGS: readonly WrittenSetting[] = SETTINGS.filter((s): s is WrittenSetting => s.key !== undefined);

/**
 * The study file's keys, each optional (a setting given as a list of one
 * may also be written as its `one` key).
 */
export function settingKeys(): Record<string, z.ZodType> {
  const keys: Record<string, z.ZodType> = {};
  for (const s of WRITTEN_SETTINGS) {
    if (s.meta.one) keys[s.meta.one.key] = elementOf(s.schema).optional();
    keys[s.key] = s.schema.optional();
  }
  return keys;
}

/** The element schema of a list setting (through its `readonly` wrapper). */
function elementOf(s: z.ZodType): z.ZodType {
  const inner = s instanceof z.ZodReadonly ? (s.unwrap() as z.ZodType) : s;
  if (!(inner instanceof z.ZodArray)) throw new Error(`a setting written as one of a list is a list: ${String(inner.def.type)}`);
  return inner.element as z.ZodType;
}

/** The JSON Schema descriptions of the study file's keys. */
export function settingKeyDescriptions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of WRITTEN_SETTINGS) {
    if (s.meta.one) out[s.meta.one.key] = s.meta.one.about;
    out[s.key] = s.meta.about ?? String(s.declared.description);
  }
  return out;
}

/**
 * The settings a checked study file `doc` gives, as the spec holds them
 * (paths resolved from the study's folder `dir`), by setting name; and the
 * problems that keep some from being read, at their keys.
 */
export function readSettings(doc: Readonly<Record<string, unknown>>, dir: string): { settings: Partial<StudySettings & StudyOwnSettings>; problems: ValueProblem[] } {
  const settings: Record<string, unknown> = {};
  const problems: ValueProblem[] = [];
  for (const s of WRITTEN_SETTINGS) {
    if (s.meta.apart) continue;
    const key = doc[s.key] !== undefined ? s.key : s.meta.one && doc[s.meta.one.key] !== undefined ? s.meta.one.key : undefined;
    if (key === undefined) continue;
    const r = readSetting(s, key === s.key ? doc[key] : [doc[key]], dir);
    if ('value' in r) settings[s.name] = r.value;
    else for (const p of r.problems) problems.push({ path: key === s.key ? [key, ...p.path] : [key], message: p.message });
  }
  return { settings: settings as Partial<StudySettings & StudyOwnSettings>, problems };
}

/** The study keys a setting is written under (its `one` key, and its key). */
export function keysOf(s: Pick<WrittenSetting, 'key' | 'meta'>): string[] {
  return s.meta.one ? [s.meta.one.key, s.key] : [s.key];
}
