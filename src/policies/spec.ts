import { parseDuration } from '../text/duration.js';
import type { ParamSpec, ParamValue, Params, Policy } from './types.js';

/** Parameters every policy takes. */
export const COMMON_PARAMS: Readonly<Record<string, ParamSpec>> = {
  sessionCap: { default: undefined, kind: 'int', min: 1 },
  /** How a forget event is carried out: `cascade` erases every artifact, `naive` only the raw messages. */
  forget: { default: 'cascade', kind: 'string', oneOf: ['cascade', 'naive'] },
  /** `drop` keeps turns flagged `injection: true` out of memory: answered, never stored. */
  moderation: { default: 'none', kind: 'string', oneOf: ['none', 'drop'] },
};

/** A policy as the user wrote it: id and parameters in the order given. */
export interface PolicySpec {
  id: string;
  given: readonly (readonly [string, ParamValue])[];
}

/** A policy ready to run: its canonical name and resolved parameters (defaults filled in). */
export interface PolicyVariant {
  name: string;
  policy: Policy;
  params: Params;
}

/** Canonical name: the id, then the given parameters as key=value in the order given. */
export function canonicalName(spec: PolicySpec): string {
  if (!spec.given.length) return spec.id;
  return `${spec.id}:${spec.given.map(([k, v]) => `${k}=${v}`).join(',')}`;
}

/** Parses a command-line spec such as `window-tokens:budget=2000` (values as text, lists as `a|b`). */
export function parseSpecString(text: string): { id: string; given: [string, string | string[]][] } | string {
  const colon = text.indexOf(':');
  const id = (colon < 0 ? text : text.slice(0, colon)).trim();
  if (!id) return `policy spec "${text}": missing policy id`;
  const given: [string, string | string[]][] = [];
  if (colon >= 0) {
    for (const part of text.slice(colon + 1).split(',')) {
      const eq = part.indexOf('=');
      if (eq <= 0) return `policy spec "${text}": expected key=value, got "${part}"`;
      const value = part.slice(eq + 1).trim();
      given.push([part.slice(0, eq).trim(), value.includes('|') ? value.split('|') : value]);
    }
  }
  return { id, given };
}

/** Reads one parameter value (from YAML or from text); returns an error message when it is bad. */
export function readParam(key: string, spec: ParamSpec, raw: unknown): { value: ParamValue } | { error: string } {
  const bad = (want: string) => ({ error: `parameter ${key}: expected ${want}, got ${JSON.stringify(raw)}` });
  const num = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  switch (spec.kind) {
    case 'int':
    case 'number':
    case 'probability': {
      if (typeof num !== 'number' || !Number.isFinite(num)) return bad(spec.kind === 'int' ? 'a whole number' : 'a number');
      if (spec.kind === 'int' && !Number.isInteger(num)) return bad('a whole number');
      if (spec.kind === 'probability' && (num < 0 || num > 1)) return bad('a number from 0 to 1');
      if (spec.min !== undefined && num < spec.min) return bad(`a number ≥ ${spec.min}`);
      return { value: num };
    }
    case 'boolean':
      if (raw === true || raw === 'true') return { value: true };
      if (raw === false || raw === 'false') return { value: false };
      return bad('true or false');
    case 'duration': {
      const s = parseDuration(raw);
      return s === undefined ? bad('a duration such as 30s, 5m, 24h') : { value: String(raw) };
    }
    case 'string':
      if (typeof raw !== 'string' || raw === '') return bad('a string');
      if (spec.oneOf && !spec.oneOf.includes(raw)) return bad(`one of ${spec.oneOf.join('|')}`);
      return { value: raw };
  }
}

/**
 * Resolves a spec against the registry: unknown ids and parameters are errors;
 * a list value makes a sweep, one variant per combination, in the order given.
 * Returns variants, or an error message.
 */
export function resolveSpec(
  registry: ReadonlyMap<string, Policy>,
  id: string,
  given: readonly (readonly [string, unknown])[],
): PolicyVariant[] | string {
  const policy = registry.get(id);
  if (!policy) return `unknown policy "${id}" (expected one of ${[...registry.keys()].join(', ')})`;
  const specs = { ...policy.params, ...COMMON_PARAMS };
  let combos: [string, ParamValue][][] = [[]];
  for (const [key, raw] of given) {
    const spec = specs[key];
    if (!spec) return `policy ${id}: unknown parameter "${key}" (expected one of ${Object.keys(specs).join(', ')})`;
    const values: ParamValue[] = [];
    for (const r of Array.isArray(raw) ? raw : [raw]) {
      const v = readParam(key, spec, r);
      if ('error' in v) return `policy ${id}: ${v.error}`;
      values.push(v.value);
    }
    if (!values.length) return `policy ${id}: parameter ${key}: empty list`;
    combos = combos.flatMap((c) => values.map((v) => [...c, [key, v] as [string, ParamValue]]));
  }
  return combos.map((c) => {
    const params: Record<string, ParamValue | undefined> = {};
    for (const [k, s] of Object.entries(specs)) params[k] = s.default;
    for (const [k, v] of c) params[k] = v;
    return { name: canonicalName({ id, given: c }), policy, params };
  });
}
