import { z } from 'zod';
import { hasControl } from '../errors.js';
import { DURATION_PATTERN } from '../text/duration.js';
import { descriptionOf, valueOf } from '../text/zod.js';
import type { ParamSpec, ParamTable, ParamValue, Policy } from './types.js';

/**
 * Policy parameters as zod schemas. A policy declares each parameter once,
 * with one of the builders below (its default, bounds and a one-line
 * description); reading command-line and study values, the error messages,
 * the docs table and the JSON Schema of study files all derive from it.
 */

/** How a parameter is written and read: the kinds of the parameter table. */
export type ParamKind = ParamSpec['kind'];

/** What a parameter carries besides its zod checks: how to read it from text, and how to document it. */
export interface ParamMeta {
  kind: ParamKind;
  /** One line for the docs and the JSON Schema. */
  describe?: string;
  /** Smallest allowed value, for numbers. */
  min?: number;
  /** Allowed values, for a choice. */
  choices?: readonly string[];
}

/** The meta of every parameter made here (kept apart from zod's global registry, which JSON Schema output copies whole). */
const META = z.registry<ParamMeta>();

/** A written value as its kind reads it: command-line numbers and booleans arrive as text. */
function fromText(kind: ParamKind, raw: unknown): unknown {
  switch (kind) {
    case 'int':
    case 'number':
    case 'probability':
      return typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    default:
      return raw;
  }
}

// The value schemas of the kinds; each message completes "expected …".
const atLeast = (s: z.ZodNumber, min: number | undefined) => (min === undefined ? s : s.min(min, { error: `a number ≥ ${min}` }));
// A safe integer: past 2^53 a number read from text is no longer the one written (99999999999999999999 reads as 1e20).
const intValue = (min?: number) =>
  atLeast(z.number({ error: 'a whole number' }).refine(Number.isInteger, { error: 'a whole number' }), min).max(Number.MAX_SAFE_INTEGER, {
    error: `a whole number ≤ ${Number.MAX_SAFE_INTEGER}`,
  });
const numberValue = (min?: number) => atLeast(z.number({ error: 'a number' }), min);
const probabilityValue = (min?: number) => atLeast(z.number({ error: 'a number' }).min(0, { error: 'a number from 0 to 1' }).max(1, { error: 'a number from 0 to 1' }), min);
const booleanValue = () => z.boolean({ error: 'true or false' });
// The duration as written (`30m`, or a number of seconds), kept as text.
const DURATION_ERROR = { error: 'a duration such as 30s, 5m, 24h' };
const durationValue = () => z.union([z.string(DURATION_ERROR).regex(DURATION_PATTERN, DURATION_ERROR), z.number(DURATION_ERROR).min(0, DURATION_ERROR)], DURATION_ERROR).transform(String);
// A string is part of the policy's name in every report and table: no control or invisible format characters (which a terminal would obey, or a log read as a command).
const stringValue = () =>
  z
    .string({ error: 'a string' })
    .min(1, { error: 'a string' })
    .refine((s) => !hasControl(s), { error: 'a string without control or invisible format characters' });
const choiceValue = <const V extends readonly [string, ...string[]]>(values: V) =>
  z.enum(values, { error: (iss) => (typeof iss.input === 'string' && iss.input !== '' ? `one of ${values.join('|')}` : 'a string') });

/** The value schema a parameter of this meta has. */
function valueSchema(meta: ParamMeta): z.ZodType<ParamValue> {
  const { kind, min, choices } = meta;
  switch (kind) {
    case 'int':
      return intValue(min);
    case 'number':
      return numberValue(min);
    case 'probability':
      return probabilityValue(min);
    case 'boolean':
      return booleanValue();
    case 'duration':
      return durationValue();
    case 'string': {
      if (!choices) return stringValue();
      const [first, ...rest] = choices;
      if (first === undefined) throw new Error('a choice needs at least one value');
      return choiceValue([first, ...rest]);
    }
  }
}

/** Describes a parameter schema and registers its meta. */
function registered<T extends z.ZodType>(schema: T, meta: ParamMeta): T {
  const s = meta.describe ? schema.describe(meta.describe) : schema;
  META.add(s, meta);
  return s;
}

/** A value schema with its default, or optional when it has none. */
function withDefault<T extends z.ZodType<ParamValue>>(value: T, def: z.output<T> | undefined) {
  return def === undefined ? value.optional() : value.default(def as z.util.NoUndefined<z.output<T>>);
}

interface Described {
  /** One line for the docs and the JSON Schema. */
  describe: string;
}

/** A whole number, at least `min`. */
export function int(o: Described & { default: number; min?: number }): z.ZodDefault<z.ZodNumber>;
export function int(o: Described & { default?: undefined; min?: number }): z.ZodOptional<z.ZodNumber>;
export function int(o: Described & { default?: number; min?: number }) {
  return registered(withDefault(intValue(o.min), o.default), { kind: 'int', describe: o.describe, ...(o.min !== undefined && { min: o.min }) });
}

/** A number, at least `min`. */
export function number(o: Described & { default: number; min?: number }): z.ZodDefault<z.ZodNumber>;
export function number(o: Described & { default?: undefined; min?: number }): z.ZodOptional<z.ZodNumber>;
export function number(o: Described & { default?: number; min?: number }) {
  return registered(withDefault(numberValue(o.min), o.default), { kind: 'number', describe: o.describe, ...(o.min !== undefined && { min: o.min }) });
}

/** A number from 0 to 1. */
export function probability(o: Described & { default: number }) {
  return registered(probabilityValue().default(o.default), { kind: 'probability', describe: o.describe });
}

/** `true` or `false`. */
export function boolean(o: Described & { default: boolean }) {
  return registered(booleanValue().default(o.default), { kind: 'boolean', describe: o.describe });
}

/** One of a few words. */
export function choice<const V extends readonly [string, ...string[]]>(values: V, o: Described & { default: V[number] }) {
  return registered(choiceValue(values).default(o.default), { kind: 'string', describe: o.describe, choices: values });
}

/** A span of simulated time: `30s`, `5m`, `24h`, `7d`, or a number of seconds; none by default. */
export function duration(o: Described) {
  return registered(durationValue().optional(), { kind: 'duration', describe: o.describe });
}

/** A model name, as in the price table. */
export function model(o: Described & { default: string }): z.ZodDefault<z.ZodString>;
export function model(o: Described & { default?: undefined }): z.ZodOptional<z.ZodString>;
export function model(o: Described & { default?: string }) {
  return registered(withDefault(stringValue(), o.default), { kind: 'string', describe: o.describe });
}

/** Free text (a list of names, say). */
export function text(o: Described & { default: string }): z.ZodDefault<z.ZodString>;
export function text(o: Described & { default?: undefined }): z.ZodOptional<z.ZodString>;
export function text(o: Described & { default?: string }) {
  return registered(withDefault(stringValue(), o.default), { kind: 'string', describe: o.describe });
}

/** The description of a policy's `budget`, the same for every policy that has one. */
export const BUDGET = 'tokens a prompt may hold, counting all of it: system prompt, tool definitions, policy-made messages, chat overhead, reply priming';

/** Parameters every policy takes. */
export const COMMON_PARAMS = z.object({
  sessionCap: int({ min: 1, describe: 'after N exchanges the conversation restarts with an empty transcript (default: never)' }),
  forget: choice(['cascade', 'naive'], { default: 'cascade', describe: 'how a forget event is carried out: `cascade` erases the values from every artifact, `naive` from the raw messages only' }),
  moderation: choice(['none', 'drop'], { default: 'none', describe: 'with `drop`, a turn flagged `injection: true` is answered but never stored' }),
});

/** The common parameters, as a policy session reads them. */
export type CommonParams = z.output<typeof COMMON_PARAMS>;

/**
 * Converts a parameter table of the documented object shape
 * (`{ turns: { default: 10, kind: 'int', min: 0 } }`) to the zod object a
 * policy declares, so policies written that way keep working.
 *
 * @deprecated Nothing needs to call it: a table given as a policy's
 * `params` is converted when the policy is resolved. Declare new parameters
 * as a `z.object` of the `param` builders, with `definePolicy`.
 */
export function paramsFromTable(table: ParamTable): z.ZodObject {
  return z.object(
    Object.fromEntries(
      Object.entries(table).map(([name, spec]) => [
        name,
        tableParam({ kind: spec.kind, ...(spec.min !== undefined && { min: spec.min }), ...(spec.oneOf && { choices: spec.oneOf }) }, spec.default),
      ]),
    ),
  );
}

const converted = new WeakMap<ParamTable, z.ZodObject>();

/** A policy's own parameters as a zod object: as declared, or converted from a table (once per table). */
export function policyParams(policy: Pick<Policy, 'params'>): z.ZodObject {
  const { params } = policy;
  if (isZodObject(params)) return params;
  let schema = converted.get(params);
  if (!schema) converted.set(params, (schema = paramsFromTable(params)));
  return schema;
}

/** A zod object (by its internals, so one made by another copy of zod counts), not a parameter table. */
function isZodObject(params: z.ZodObject | ParamTable): params is z.ZodObject {
  return '_zod' in params && params instanceof Object && 'shape' in params;
}

/** A parameter of a table: its kind's value schema, with its default. */
function tableParam(meta: ParamMeta, def: ParamValue | undefined): z.ZodType<ParamValue | undefined> {
  const value = valueSchema(meta);
  return registered(def === undefined ? value.optional() : value.default(def), meta);
}

/** The meta of a parameter schema; a plain zod schema (not made by a builder) gets the kind its type implies. */
export function paramMeta(schema: z.ZodType): ParamMeta {
  const known = META.get(schema);
  if (known) return known;
  const inner = valueOf(schema);
  const describe = descriptionOf(schema);
  const meta = (kind: ParamKind, extra: Partial<ParamMeta> = {}): ParamMeta => ({ kind, ...(describe !== undefined && { describe }), ...extra });
  if (inner instanceof z.ZodNumber) return meta(inner.isInt ? 'int' : 'number', inner.minValue !== null && inner.minValue > -Infinity ? { min: inner.minValue } : {});
  if (inner instanceof z.ZodBoolean) return meta('boolean');
  if (inner instanceof z.ZodEnum) return meta('string', { choices: inner.options.map(String) });
  return meta('string');
}

/** A parameter's default, or undefined when it has none. */
export function defaultOf(schema: z.ZodType): ParamValue | undefined {
  const r = schema.safeParse(undefined);
  return r.success ? (r.data as ParamValue | undefined) : undefined;
}

/**
 * A parameter as a study file writes it, for the file's JSON Schema: a value
 * of its kind (whole numbers as `integer`) or a list of them, a sweep; with
 * its description and default.
 */
export function studyParamSchema(schema: z.ZodType): z.ZodType {
  const meta = paramMeta(schema);
  const { min, choices } = meta;
  const bounded = (s: z.ZodNumber) => (min === undefined ? s : s.min(min));
  const value: z.ZodType = {
    int: () => bounded(z.number().int()),
    number: () => bounded(z.number()),
    probability: () => bounded(z.number().min(0).max(1)),
    boolean: () => z.boolean(),
    duration: () => z.union([z.string().regex(DURATION_PATTERN), z.number().min(0)]),
    string: () => (choices ? z.enum(choices.map(String)) : z.string().min(1)),
  }[meta.kind]();
  const def = defaultOf(schema);
  return z
    .union([value, z.array(value).min(1)])
    .optional()
    .meta({ ...(meta.describe !== undefined && { description: meta.describe }), ...(def !== undefined && { default: def }) });
}

/** Why ",", "|" and ">" are not in a text value, nor a space at its ends. */
const SEPARATORS = "they separate parameters, values and a pipeline's stages in a policy's name, id:key=value,… > id:…";

/** Reads one parameter value (from YAML or from text); returns an error message when it is bad. */
export function readParam(key: string, schema: z.ZodType, raw: unknown): { value: ParamValue } | { error: string } {
  const r = valueOf(schema).safeParse(fromText(paramMeta(schema).kind, raw), { error: plainIssue });
  // A value is written in the variant's name (`id:key=value,…`, `a|b` a sweep, `a > b` a pipeline's stages), which --policy and a pipeline read back, trimming each value.
  if (r.success && typeof r.data === 'string' && (/[,|>]/.test(r.data) || r.data.trim() !== r.data)) {
    return { error: `parameter ${key}: expected text without ",", "|" or ">" and without spaces at its ends (${SEPARATORS}), got ${JSON.stringify(raw)}` };
  }
  if (r.success) return { value: r.data as ParamValue };
  return { error: `parameter ${key}: expected ${r.error.issues[0]?.message ?? 'a valid value'}, got ${JSON.stringify(raw)}` };
}

/**
 * What a schema without messages of its own (a policy module's zod object)
 * expected, in the words the parameter builders use: `a whole number ≥ 0`,
 * `one of a, b`. Undefined leaves zod's message.
 */
function plainIssue(issue: z.core.$ZodRawIssue): string | undefined {
  const noun = (origin: unknown) => (origin === 'int' ? 'a whole number' : 'a number');
  switch (issue.code) {
    case 'invalid_type':
      return { int: 'a whole number', number: 'a number', string: 'text', boolean: 'true or false' }[issue.expected as string];
    case 'too_small':
      return issue.origin === 'number' || issue.origin === 'int' ? `${noun(issue.origin)} ${issue.inclusive ? '≥' : '>'} ${issue.minimum}` : undefined;
    case 'too_big':
      return issue.origin === 'number' || issue.origin === 'int' ? `${noun(issue.origin)} ${issue.inclusive ? '≤' : '<'} ${issue.maximum}` : undefined;
    case 'invalid_value':
      return `one of ${issue.values.map(String).join(', ')}`;
    default:
      return undefined;
  }
}
