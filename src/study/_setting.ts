/**
 * What a setting is, as written outside the library, and how its value as
 * written is read: for the specs of study/settings.ts (the study's and the
 * command line's settings) and of study/sources.ts (a generate source's
 * fields), which both read their entries so.
 * @module
 */
import { z } from 'zod';
import { isSetting, metaOf, type SettingMeta, type ValueProblem, type WrittenForm } from '../engine/spec.js';
import { issueText, valueAt } from '../text/document.js';
import { valueOf } from '../text/zod.js';

/** One setting of any kind (run, report, the study's own, the command line's), as written outside the library. */
export interface Setting {
  /** Its name in its spec. */
  name: string;
  /** Its spec: `RUN_SPEC` (it decides the run's records), `REPORT_SPEC` (only what the reports say of them), `STUDY_SPEC` (the study's own), `COMMAND_SPEC` (the command line's alone). */
  of: 'run' | 'report' | 'study' | 'command';
  /** Whether its value can change a record: every run setting, and those whose meta says so (`decidesRecords`). */
  decidesRecords: boolean;
  /** Its schema as declared, and the schema of a value it holds (the declared one unwrapped of its default or optional). */
  declared: z.ZodType;
  held: z.ZodType;
  /** Its study key; none: a study file does not hold it. */
  key: string | undefined;
  /** The schema of the value as a study file writes it (and a flag, unless its meta gives the flag a form of its own: `SettingFlag.written`). */
  schema: z.ZodType;
  meta: SettingMeta;
  /** The settings inside it, when it holds an object of settings (the study's `gate:`, `GATE_SPEC`; its `upkeep:`, `UPKEEP_SPEC`): each written at its key there, read as a setting is, with its own flag. */
  fields?: readonly Setting[];
  /** The study key of the setting it is inside (`gate`, `upkeep`), for a setting of `fields`. */
  within?: string;
}

/** A setting of `spec` (of the kind `of`), from its declaration and meta; `within`: the key of the setting it is inside. */
export function settingOf(of: Setting['of'], spec: z.ZodObject, name: string, within?: string): Setting {
  const declared = spec.shape[name] as z.ZodType;
  const meta = metaOf(declared);
  const held = valueOf(declared);
  const key = meta.key === false ? undefined : (meta.key ?? name);
  // An object of settings is written as an object of their written forms, each described as its key is.
  const inner = held instanceof z.ZodObject && Object.values(held.shape as Record<string, z.ZodType>).every(isSetting) ? held : undefined;
  const fields = inner && Object.keys(inner.shape).map((f) => settingOf(of, inner, f, key));
  const schema = meta.written?.schema ?? (fields ? z.strictObject(Object.fromEntries(fields.flatMap((f) => (f.key === undefined ? [] : [[f.key, f.schema.optional().describe(f.meta.about ?? String(f.declared.description))]])))) : held);
  return {
    name,
    of,
    decidesRecords: of === 'run' || meta.decidesRecords === true,
    declared,
    held,
    key,
    schema,
    meta,
    ...(fields && { fields }),
    ...(within !== undefined && { within }),
  };
}

/**
 * A setting's value as written, read as the spec holds it (a path from
 * `folder`, …): the value, or what keeps it from being one — not written as
 * the setting is (`5x` for a duration), a value the spec does not hold (a
 * duration of 0), a check across its items (a model listed twice) — at
 * places below the setting. `form`: how it is written, when not as the
 * study key writes it (a flag's own form, `SettingFlag.written`).
 */
export function readSetting(s: Setting, written: unknown, folder: string, form: WrittenForm | undefined = s.meta.written): { value: unknown } | { problems: ValueProblem[] } {
  if (s.fields && !form) return readFields(s, s.fields, written, folder);
  const w = (form?.schema ?? s.held).safeParse(written);
  if (!w.success) return { problems: issues(w.error, written) };
  const problem = form?.problem?.(w.data);
  if (problem !== undefined) return { problems: [{ path: [], message: problem }] };
  const value = form ? form.read(w.data, folder) : w.data;
  const held = s.held.safeParse(value);
  if (!held.success) return { problems: issues(held.error, value) };
  const problems = s.meta.problems?.(value) ?? [];
  return problems.length ? { problems } : { value };
}

/** A setting that holds an object of settings (`fields`), as written: each field read as its setting (one not given, as its default), its problems at its key, every field's listed. */
function readFields(s: Setting, fields: readonly Setting[], written: unknown, folder: string): { value: unknown } | { problems: ValueProblem[] } {
  const w = s.schema.safeParse(written);
  if (!w.success) return { problems: issues(w.error, written) };
  const given = w.data as Readonly<Record<string, unknown>>;
  const value: Record<string, unknown> = {};
  const problems: ValueProblem[] = [];
  for (const f of fields) {
    // A field not given is its default as written (`SettingMeta.default`), or unset.
    const at = f.key === undefined ? undefined : given[f.key] !== undefined ? given[f.key] : f.meta.default;
    if (at === undefined) continue;
    const r = readSetting(f, at, folder);
    if ('value' in r) value[f.name] = r.value;
    else problems.push(...r.problems.map((p) => ({ path: [f.key!, ...p.path], message: p.message })));
  }
  return problems.length ? { problems } : { value };
}

/** A zod error's issues as problems in `value`, worded as a study file's. */
function issues(error: z.ZodError, value: unknown): ValueProblem[] {
  return error.issues.map((i) => {
    const path = i.path as (string | number)[];
    return { path, message: issueText(i, valueAt(value, path)) };
  });
}

