/**
 * Generated and imported scenario sources of a study: the `{generate: …}`
 * and `{import: …}` entries, checked where they are written and loaded in order.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../errors.js';
import type { Conversation } from '../types.js';
import type { SourceDoc } from '../text/document.js';
import { conversationMaker, generatedId, generatedSource, PROFILES } from '../scenario/generate/index.js';
import { commonOverrides } from '../scenario/generate/profile.js';
import { setting, written } from '../engine/spec.js';
import { readSetting, settingOf, type Setting } from './_setting.js';
import { weightSchema } from '../scenario/schema.js';
import { formatImportReport, importDataset, IMPORTERS, UnreadableFile, type Imported } from '../scenario/import/index.js';

/** Where scenarios come from: a glob of scenario files (relative to `base`): `pattern` or `{glob: pattern, weight}`. */
export interface GlobSource {
  kind: 'glob';
  pattern: string;
  base: string;
  /** Multiplies the weight of every conversation it yields (default 1). */
  weight?: number;
  /** Where it was written, for errors. */
  at?: Problem;
}

/** Generated conversations: `{generate: {profile, count, seed?, prefix?, ...overrides}}`, each field as its entry holds it (`GENERATE_SPEC`). */
export interface GenerateSource extends Pick<GenerateFields, 'profile' | 'count' | 'seed' | 'prefix'> {
  kind: 'generate';
  /** Profile overrides (`turns` among them), already checked against the profile's schema. */
  params: Record<string, unknown>;
  /** Multiplies the weight of every conversation it yields (default 1). */
  weight?: number;
  at?: Problem;
}

/** A dataset read directly: `{import: {format, path, ...options}}`. */
export interface ImportSource {
  kind: 'import';
  format: string;
  /** The dataset, absolute. */
  path: string;
  /** Folder for relative side files named in the options. */
  base: string;
  /** Format options, already checked against the importer's schema. */
  options: Record<string, unknown>;
  /** Multiplies the weight of every conversation it yields (default 1). */
  weight?: number;
  at?: Problem;
  /** The files the entry names (the dataset, a side file), absolute, each with the place of its key. */
  files?: { path: string; at: Problem }[];
}

/** Options for loading a study's scenarios. */
export interface LoadOptions {
  /** Seed of generated sets that name none (the study's seed). */
  seed?: number;
  /** Receives import reports and quirks, one line each (the CLI prints them on stderr). */
  onNote?: (line: string) => void;
  /** Receives where each conversation is written: a scenario file's `id:` (file as displayed, line), a generated or imported one's study entry. */
  onPlace?: (id: string, at: Problem) => void;
}

/** The most conversations one generated set may have (`ctxsim generate --count`, a study's `generate: {count}`). */
export const MAX_GENERATE_COUNT = 100_000;

/** An id prefix of generated conversations: ids are `<prefix>-0001`, `<prefix>-0002`… */
const ID_PREFIX = /^[a-z0-9][a-z0-9-]*$/;

/** What is wrong with a profile's name, or nothing. */
function profileProblem(name: string): string | undefined {
  return PROFILES.has(name) ? undefined : `unknown profile "${name}"; expected one of ${[...PROFILES.keys()].join(', ')}`;
}

/** `name=value` pairs (`--set`) as the parameters they give: a value that reads as a number is one. */
function namedValues(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of pairs) {
    const eq = kv.indexOf('=');
    const v = kv.slice(eq + 1);
    // Defined, not assigned: `--set __proto__=1` is a name like any other (an unknown one).
    Object.defineProperty(out, kv.slice(0, eq), { value: v !== '' && Number.isFinite(Number(v)) ? Number(v) : v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * The fields of a `{generate: …}` scenario source, each an entry
 * (`setting`): its key in the study's entry and its flag of `ctxsim
 * generate`, from which the entry's check (`sourceEntry`) and the command's
 * flags and their reading follow. The profile's parameters — `turns`, which
 * every profile has, and each profile's own — are checked by the profile
 * that takes them, together (`apart`): in a study, the entry's other keys;
 * on the command line, `--turns` and each `--set name=value`.
 */
export const GENERATE_SPEC = z.strictObject({
  profile: setting(z.string().describe('the generator profile'), {
    written: written(z.string(), undefined, profileProblem),
    flag: { name: 'profile', describe: [...PROFILES.keys()].join(' | ') },
  }),
  count: setting(z.number().int().min(1).max(MAX_GENERATE_COUNT).describe('how many conversations'), {
    flag: { name: 'count', describe: 'how many conversations' },
  }),
  seed: setting(z.number().int().optional().describe('the seed of the set (default: the study’s seed)'), {
    flag: { name: 'seed', describe: 'random seed' },
  }),
  prefix: setting(z.string().regex(ID_PREFIX, 'expected a-z, 0-9 and -').optional().describe('the id prefix (default: the profile id)'), {
    flag: { name: 'prefix', describe: 'id prefix (default: the profile id)' },
  }),
  turns: setting(commonOverrides.turns.describe('turns per conversation, MIN-MAX (default: the profile’s)'), {
    flag: { name: 'turns', describe: 'turns per conversation, MIN-MAX (default: the profile’s)' },
    apart: true,
  }),
  params: setting(z.record(z.string(), z.unknown()).describe('the profile’s other parameters'), {
    // The entry's other keys: no key of its own.
    key: false,
    flag: {
      name: 'set',
      describe: 'profile parameter, e.g. correctionShare=0.5 (repeatable)',
      written: written(z.array(z.string()), namedValues, (pairs) => {
        const bad = pairs.find((kv) => kv.indexOf('=') < 1);
        return bad === undefined ? undefined : `${bad}: expected name=value`;
      }),
    },
    apart: true,
  }),
});

/** A generate source's fields, as its entries hold them. */
export type GenerateFields = z.output<typeof GENERATE_SPEC>;

/** The fields of a generate source (`GENERATE_SPEC`), as settings: their keys in its entry, and `ctxsim generate`'s flags. */
export const GENERATE_SETTINGS: readonly Setting[] = Object.keys(GENERATE_SPEC.shape).map((name) => settingOf('study', GENERATE_SPEC, name));

/** The generate source's field `name` (`GENERATE_SPEC`), as a setting. */
export function generateField(name: keyof GenerateFields): Setting {
  return GENERATE_SETTINGS.find((f) => f.name === name)!;
}

/** A study's `generate:` entry, checked but for the profile's parameters (its other keys, checked by the profile). */
const generateEntry = z.looseObject(Object.fromEntries(GENERATE_SETTINGS.flatMap((f) => (f.meta.apart || f.key === undefined ? [] : [[f.key, f.declared]]))));
const importEntry = z.looseObject({ format: z.string(), path: z.string().min(1) });

/** A conversation with its weight multiplied by its study entry's (weight 1 is left out, as the loader leaves it out). */
export function weighted(c: Conversation, by: number | undefined): Conversation {
  if (by === undefined || by === 1) return c;
  const { weight: own, ...rest } = c;
  const weight = (own ?? 1) * by;
  return weight === 1 ? { ...rest } : { ...c, weight };
}

/**
 * A study's `{glob: …}`, `{generate: …}` or `{import: …}` scenario entry, checked against its
 * profile or format; each may have a `weight` beside it.
 */
export function sourceEntry(src: SourceDoc, entry: unknown, i: number, dir: string, problems: Problem[]): GlobSource | GenerateSource | ImportSource | undefined {
  const keys = entry && typeof entry === 'object' && !Array.isArray(entry) ? Object.keys(entry).filter((k) => k !== 'weight') : [];
  const kind = keys[0];
  if (keys.length !== 1 || (kind !== 'generate' && kind !== 'import' && kind !== 'glob')) {
    problems.push(src.problem(['scenarios', i], `expected a glob of scenario files, {glob}, {generate: {profile, count}} or {import: {format, path}} (each may have a weight), got ${JSON.stringify(entry)}`));
    return undefined;
  }
  const given = (entry as Record<string, unknown>).weight;
  let weight: number | undefined;
  if (given !== undefined) {
    weight = src.check(weightSchema, given, ['scenarios', i, 'weight'], problems);
    if (weight === undefined) return undefined;
  }
  const w = weight !== undefined && weight !== 1 ? { weight } : {};
  const body = (entry as Record<string, unknown>)[kind];
  if (kind === 'glob') {
    const pattern = src.check(z.string().min(1), body, ['scenarios', i, 'glob'], problems);
    return pattern === undefined ? undefined : { kind, pattern, base: dir, ...w, at: src.problem(['scenarios', i], '') };
  }
  const path = ['scenarios', i, kind];
  const at = src.problem(path, '');
  if (kind === 'generate') {
    const g = src.check(generateEntry, body, path, problems) as (Partial<GenerateFields> & Record<string, unknown>) | undefined;
    if (!g) return undefined;
    const named = readSetting(generateField('profile'), g.profile, dir);
    if ('problems' in named) {
      problems.push(src.problem([...path, 'profile'], named.problems[0]!.message));
      return undefined;
    }
    const profile = PROFILES.get(g.profile!)!;
    const { profile: _p, count, seed, prefix, ...rest } = g;
    const params = src.check(profile.overrides, rest, path, problems);
    if (!params) return undefined;
    return { kind, profile: profile.id, count: count!, ...(seed !== undefined && { seed }), ...(prefix !== undefined && { prefix }), params, ...w, at };
  }
  const m = src.check(importEntry, body, path, problems);
  if (!m) return undefined;
  const importer = IMPORTERS.get(m.format);
  if (!importer) {
    problems.push(src.problem([...path, 'format'], `unknown import format "${m.format}"; expected one of ${[...IMPORTERS.keys()].join(', ')}`));
    return undefined;
  }
  const { format: _f, path: file, ...rest } = m;
  const options = src.check(importer.options, rest, path, problems);
  if (!options) return undefined;
  const files = [{ path: resolve(dir, file), at: src.problem([...path, 'path'], '') }];
  // A side file of annotations is read too (its path relative to the study).
  if ('annotations' in options && typeof options.annotations === 'string') files.push({ path: resolve(dir, options.annotations), at: src.problem([...path, 'annotations'], '') });
  return { kind, format: m.format, path: resolve(dir, file), base: dir, options: rest, ...w, at, files };
}

/**
 * A generate entry's conversations, numbered 1 to `count`: each one's id and
 * `source` known without making it, the conversation (validated, weighted as
 * the entry says) made when `make(k)` asks for it, anew each time.
 */
export interface GeneratedSet {
  count: number;
  id(k: number): string;
  /** The `source` a conversation of the set says it comes from, by its id. */
  source(id: string): string;
  make(k: number): Conversation;
}

/** The conversations of a generate entry, as a set made on demand. */
export function generatedSet(s: GenerateSource, opts: Pick<LoadOptions, 'seed'>): GeneratedSet {
  const req = { profile: s.profile, count: s.count, seed: s.seed ?? opts.seed ?? 42, prefix: s.prefix, params: s.params };
  const make = conversationMaker(req);
  return {
    count: s.count,
    id: (k) => generatedId(s.prefix ?? s.profile, k, s.count),
    source: (id) => generatedSource(req, id),
    make: (k) => weighted(make(k), s.weight),
  };
}

/** The conversations of an import entry (validated; throws ScenarioError). */
export function loadSource(s: ImportSource, opts: LoadOptions, display: (path: string) => string): Conversation[] {
  let r: Imported;
  try {
    r = importDataset(s.format, { path: s.path, file: display(s.path), base: s.base }, s.options);
  } catch (e) {
    // A file that cannot be read has no place of its own: the key of the study entry naming it is where it is wrong.
    if (e instanceof UnreadableFile) {
      const named = s.files?.find((f) => f.path === e.filePath);
      if (named) throw new ScenarioError([{ ...named.at, message: `${e.file}: ${e.problems[0]!.message}` }]);
    }
    throw e;
  }
  formatImportReport(r.report).forEach((l) => opts.onNote?.(l));
  return r.conversations;
}
