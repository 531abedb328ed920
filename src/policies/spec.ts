import { z } from 'zod';
import { POLICY_PATH } from './module.js';
import { COMMON_PARAMS, defaultOf, policyParams, readParam, studyParamSchema } from './params.js';
import type { ParamValue, Policy, PolicyVariant } from './types.js';

/** A policy as the user wrote it: id and parameters in the order given. */
export interface PolicySpec {
  id: string;
  given: readonly (readonly [string, ParamValue])[];
}

export type { PolicyVariant } from './types.js';

/**
 * Canonical name: the id, then the given parameters as key=value. With the
 * policy, they are in the order its schema declares them (its own, then the
 * common ones), whatever the order written, so `window:turns=3,budget=500`
 * and `window:budget=500,turns=3` are one variant, `window:turns=3,budget=500`;
 * without it, in the order given.
 */
export function canonicalName(spec: PolicySpec, policy?: Policy): string {
  if (!spec.given.length) return spec.id;
  const given = policy ? declarationOrder(policy, spec.given) : spec.given;
  return `${spec.id}:${given.map(([k, v]) => `${k}=${v}`).join(',')}`;
}

/** Parameters in the order the policy declares them (a stable sort: a name it does not declare keeps its place after those it does). */
function declarationOrder<T extends readonly [string, unknown]>(policy: Policy, given: readonly T[]): T[] {
  const keys = Object.keys(paramShape(policy));
  const rank = (k: string) => {
    const i = keys.indexOf(k);
    return i < 0 ? keys.length : i;
  };
  return [...given].sort((a, b) => rank(a[0]) - rank(b[0]));
}

/** Parses a command-line spec such as `window-tokens:budget=2000` (values as text, lists as `a|b`). */
export function parseSpecString(text: string): { id: string; given: [string, string | string[]][] } | string {
  const colon = text.indexOf(':');
  const id = (colon < 0 ? text : text.slice(0, colon)).trim();
  if (!id) return `policy spec "${text}": missing policy id`;
  const given: [string, string | string[]][] = [];
  // A pipeline's parameter is its stages, specs themselves: kept whole, with or without their name (`stages=`).
  if (id === 'pipeline' && colon >= 0) return { id, given: [['stages', text.slice(colon + 1).replace(/^\s*stages\s*=/, '').trim()]] };
  if (colon >= 0) {
    for (const part of text.slice(colon + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) return `policy spec "${text}": expected key=value, got "${part}"`;
      const value = part.slice(eq + 1).trim();
      const key = part.slice(0, eq).trim();
      // Given twice, one value would be dropped without a word (and the variant named with both).
      if (given.some(([k]) => k === key)) return `policy spec "${text}": parameter ${key} is given twice`;
      given.push([key, value.includes('|') ? value.split('|') : value]);
    }
  }
  return { id, given };
}

/** Every parameter a policy takes, in order: its own, then the common ones (which win a clash of names). */
export function paramShape(policy: Policy): Readonly<Record<string, z.ZodType>> {
  return { ...policyParams(policy).shape, ...COMMON_PARAMS.shape };
}

/**
 * Resolves a spec against the registry: unknown ids and parameters are errors;
 * a list value makes a sweep, one variant per combination, in the order given.
 * Each variant is named canonically (`canonicalName`), its parameters in the
 * order the policy declares them: the order they are written in changes
 * neither the name nor the variant's numbers (its random stream is seeded by
 * the name). Returns variants, or an error message.
 */
export function resolveSpec(
  registry: ReadonlyMap<string, Policy>,
  id: string,
  given: readonly (readonly [string, unknown])[],
): PolicyVariant[] | string {
  const policy = registry.get(id);
  if (!policy) return `unknown policy "${id}" (expected one of ${[...registry.keys()].join(', ')})`;
  return resolvePolicy(policy, given);
}

/** `resolveSpec` for one policy: its variants for the parameters given, or an error message. */
export function resolvePolicy(policy: Policy, given: readonly (readonly [string, unknown])[]): PolicyVariant[] | string {
  if (policy.variants) return policy.variants(given);
  const { id } = policy;
  const shape = paramShape(policy);
  let combos: [string, ParamValue][][] = [[]];
  for (const [key, raw] of given) {
    const schema = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!schema) return `policy ${id}: unknown parameter "${key}" (expected one of ${Object.keys(shape).join(', ')})`;
    const values: ParamValue[] = [];
    for (const r of Array.isArray(raw) ? raw : [raw]) {
      const v = readParam(key, schema, r);
      if ('error' in v) return `policy ${id}: ${v.error}`;
      values.push(v.value);
    }
    if (!values.length) return `policy ${id}: parameter ${key}: empty list`;
    combos = combos.flatMap((c) => values.map((v) => [...c, [key, v] as [string, ParamValue]]));
  }
  const variants: PolicyVariant[] = [];
  for (const c of combos) {
    const params: Record<string, ParamValue | undefined> = {};
    for (const [k, s] of Object.entries(shape)) params[k] = defaultOf(s);
    for (const [k, v] of c) params[k] = v;
    const name = canonicalName({ id, given: c }, policy);
    const broken = brokenRule(policy, params);
    if (broken !== undefined) return `policy ${name}: ${broken}`;
    variants.push({ name, policy, params });
  }
  return variants;
}

/**
 * The message of a rule between a policy's parameters (a check on its
 * parameter object, such as summary-buffer's `summaryTokens` below `budget`)
 * that these values break, if any. Each value has passed its own checks.
 */
function brokenRule(policy: Policy, params: Readonly<Record<string, ParamValue | undefined>>): string | undefined {
  const schema = policyParams(policy);
  const own = Object.fromEntries(Object.keys(schema.shape).map((k) => [k, params[k]]));
  const r = schema.safeParse(own);
  // An issue of one parameter (a path) was reported as that parameter's already; only the object's own rules are new.
  return r.success ? undefined : r.error.issues.find((i) => i.path.length === 0)?.message;
}

/**
 * A study file's `policies` entry, for the file's JSON Schema: a policy id
 * or a command-line spec (`window-tokens:budget=2000`, its parameter names
 * checked), or `{id: {parameter: value or [values]}}`, each policy with its
 * own parameters, kinds, bounds and defaults.
 */
export function policyEntrySchema(registry: ReadonlyMap<string, Policy>): z.ZodType {
  const policies = [...registry.values()];
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const specs = policies.map((p) => {
    // A policy made of policies takes its own spec after the colon (the pipeline's stages).
    if (p.variants) return `${escape(p.id)}\\s*:.+`;
    const key = `\\s*(${Object.keys(paramShape(p)).map(escape).join('|')})\\s*=[^,]*`;
    return `${escape(p.id)}\\s*(:${key}(,${key})*)?`;
  });
  const spec = z
    .string()
    .regex(new RegExp(`^\\s*(${specs.join('|')})\\s*$`))
    .describe('a policy id, or a spec as on the command line: id:key=value,… (a|b|c makes a sweep)');
  const objects = policies.map((p) =>
    z
      .strictObject({
        [p.id]: z
          .union([z.strictObject(Object.fromEntries(Object.entries(paramShape(p)).map(([name, s]) => [name, studyParamSchema(s)]))), z.null()])
          .describe(`${p.describe}; a list of values makes a sweep`),
      })
      .describe(`${p.id}: ${p.describe}`),
  );
  // A module's path (see module.ts), as a spec or as the key of its parameters: checked when the module is loaded.
  const moduleSpec = z
    .string()
    .regex(new RegExp(`^\\s*${POLICY_PATH.source.slice(1, -1)}\\s*(:.*)?$`))
    .describe('a policy module: the path of a JavaScript file (./…, ../…, /… or ….mjs/.js), relative to the study file, with parameters as on the command line');
  const moduleObject = z
    .record(z.string().regex(POLICY_PATH), z.union([z.record(z.string(), z.unknown()), z.null()]))
    .describe('a policy module’s path (relative to the study file) and its parameters; a list of values makes a sweep');
  // A policy made of policies (the pipeline) may list them: each item an entry of its own.
  const lists = policies
    .filter((p) => p.variants)
    .map((p) => z.strictObject({ [p.id]: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).min(1).describe('its stages, in order, each a policy entry') }).describe(`${p.id}: ${p.describe}`));
  return z.union([spec, ...objects, ...lists, moduleSpec, moduleObject]);
}
