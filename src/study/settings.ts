import { z } from 'zod';
import { RUN_SPEC, RUN_SPEC_KEYS, settingMeta, type CanonicalSpec, type RunSpec, type SettingMeta, type ValueProblem } from '../engine/spec.js';
import { REPORT_SPEC, REPORT_SPEC_KEYS, reportSettingMeta, type ReportSettings } from '../report/settings.js';
import { issueText, valueAt } from '../text/document.js';
import { valueOf } from '../text/zod.js';

/**
 * The run settings as a study file and the command line write them, all
 * derived from `RUN_SPEC` and each setting's meta (engine/spec.ts): a
 * setting declared there with a study key is a key of every study file,
 * described in its JSON Schema and read here; with a flag, a flag of every
 * command that runs a study (cli/_study-options.ts). The report settings
 * (`REPORT_SPEC`, report/settings.ts) are declared and written the same
 * way; their flags are those of the commands that write reports.
 */

/** The settings a study holds: every `RunSpec` setting but `upkeep` (the study's own upkeep, answers and judge make it: `studyUpkeep`), its price table a path; and the report settings. */
export type StudySettings = Omit<CanonicalSpec, 'upkeep' | 'prices'> & { prices: string } & ReportSettings;

/** One run or report setting as written outside the library. */
export interface WrittenSetting {
  /** Its `RunSpec` or `ReportSettings` name. */
  name: keyof RunSpec | keyof ReportSettings;
  /** Whether it decides the run's records (`RUN_SPEC`) or only what the reports say of them (`REPORT_SPEC`). */
  of: 'run' | 'report';
  /** Its schema as declared, and the schema of a value it holds (the declared one unwrapped of its default or optional). */
  declared: z.ZodType;
  held: z.ZodType;
  /** Its study key. */
  key: string;
  /** The schema of the value as written: a study file's key, or a flag's value. */
  schema: z.ZodType;
  meta: SettingMeta;
  /** The value as the spec holds it: a path resolved from `folder`, a duration in seconds, … */
  read(value: unknown, folder: string): unknown;
}

/** A setting as written, from its declaration and meta; none when a study file does not hold it. */
function writtenSetting(name: WrittenSetting['name'], of: WrittenSetting['of'], declared: z.ZodType, meta: SettingMeta): WrittenSetting[] {
  if (meta.key === false) return [];
  const held = valueOf(declared);
  return [{ name, of, declared, held, key: meta.key ?? name, schema: meta.written?.schema ?? held, meta, read: meta.written?.read ?? ((v: unknown) => v) }];
}

/** Every setting a study file holds: the run settings in `RUN_SPEC` order, then the report settings in `REPORT_SPEC` order. */
export const WRITTEN_SETTINGS: readonly WrittenSetting[] = [
  ...RUN_SPEC_KEYS.flatMap((name) => writtenSetting(name, 'run', RUN_SPEC.shape[name], settingMeta(name))),
  ...REPORT_SPEC_KEYS.flatMap((name) => writtenSetting(name, 'report', REPORT_SPEC.shape[name], reportSettingMeta(name))),
];

/**
 * The study file's keys for the run settings, each optional and described
 * (a setting given as a list of one may also be written as its `one` key).
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

/** The JSON Schema descriptions of the settings' keys. */
export function settingKeyDescriptions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of WRITTEN_SETTINGS) {
    if (s.meta.one) out[s.meta.one.key] = s.meta.one.about;
    out[s.key] = s.meta.about ?? String(s.declared.description);
  }
  return out;
}

/**
 * A setting's value as written, read as the spec holds it (a path from
 * `folder`, …): the value, or what keeps it from being one — not written as
 * the setting is (`5x` for a duration), a value the spec does not hold (a
 * duration of 0), a check across its items (a model listed twice) — at
 * places below the setting.
 */
export function readSetting(s: WrittenSetting, written: unknown, folder: string): { value: unknown } | { problems: ValueProblem[] } {
  const w = s.schema.safeParse(written);
  if (!w.success) return { problems: issues(w.error, written) };
  const problem = s.meta.written?.problem?.(w.data);
  if (problem !== undefined) return { problems: [{ path: [], message: problem }] };
  const value = s.read(w.data, folder);
  const held = s.held.safeParse(value);
  if (!held.success) return { problems: issues(held.error, value) };
  const problems = s.meta.problems?.(value) ?? [];
  return problems.length ? { problems } : { value };
}

/** A zod error's issues as problems in `value`, worded as a study file's. */
function issues(error: z.ZodError, value: unknown): ValueProblem[] {
  return error.issues.map((i) => {
    const path = i.path as (string | number)[];
    return { path, message: issueText(i, valueAt(value, path)) };
  });
}

/**
 * The settings a checked study file `doc` gives, as the spec holds them
 * (paths resolved from the study's folder `dir`), by setting name; and the
 * problems that keep some from being read, at their keys.
 */
export function readSettings(doc: Readonly<Record<string, unknown>>, dir: string): { settings: Partial<StudySettings>; problems: ValueProblem[] } {
  const settings: Record<string, unknown> = {};
  const problems: ValueProblem[] = [];
  for (const s of WRITTEN_SETTINGS) {
    const key = doc[s.key] !== undefined ? s.key : s.meta.one && doc[s.meta.one.key] !== undefined ? s.meta.one.key : undefined;
    if (key === undefined) continue;
    const r = readSetting(s, key === s.key ? doc[key] : [doc[key]], dir);
    if ('value' in r) settings[s.name] = r.value;
    else for (const p of r.problems) problems.push({ path: key === s.key ? [key, ...p.path] : [key], message: p.message });
  }
  return { settings: settings as Partial<StudySettings>, problems };
}

/** The study keys a setting is written under (its key, and its `one` key). */
export function keysOf(s: WrittenSetting): string[] {
  return s.meta.one ? [s.meta.one.key, s.key] : [s.key];
}
