/**
 * Generated and imported scenario sources of a study: the `{generate: …}`
 * and `{import: …}` entries, checked where they are written and loaded in order.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Problem } from '../errors.js';
import type { Conversation } from '../types.js';
import type { SourceDoc } from '../text/document.js';
import { generateConversations, PROFILES } from '../scenario/generate/index.js';
import { formatImportReport, importDataset, IMPORTERS } from '../scenario/import/index.js';

/** Generated conversations: `{generate: {profile, count, seed?, prefix?, ...overrides}}`. */
export interface GenerateSource {
  kind: 'generate';
  profile: string;
  count: number;
  /** Default: the study's seed. */
  seed?: number;
  prefix?: string;
  /** Profile overrides, already checked against the profile's schema. */
  params: Record<string, unknown>;
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
  at?: Problem;
}

/** Options for loading a study's scenarios. */
export interface LoadOptions {
  /** Seed of generated sets that name none (the study's seed). */
  seed?: number;
  /** Receives import reports and quirks, one line each (the CLI prints them on stderr). */
  onNote?: (line: string) => void;
}

/** The most conversations one generated set may have (`ctxsim generate --count`, a study's `generate: {count}`). */
export const MAX_GENERATE_COUNT = 100_000;

const generateEntry = z.looseObject({
  profile: z.string(),
  count: z.number().int().min(1).max(MAX_GENERATE_COUNT),
  seed: z.number().int().optional(),
  prefix: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a-z, 0-9 and -').optional(),
});
const importEntry = z.looseObject({ format: z.string(), path: z.string().min(1) });

/** A study's `{generate: …}` or `{import: …}` scenario entry, checked against its profile or format. */
export function sourceEntry(src: SourceDoc, entry: unknown, i: number, dir: string, problems: Problem[]): GenerateSource | ImportSource | undefined {
  const keys = entry && typeof entry === 'object' && !Array.isArray(entry) ? Object.keys(entry) : [];
  const kind = keys[0];
  if (keys.length !== 1 || (kind !== 'generate' && kind !== 'import')) {
    problems.push(src.problem(['scenarios', i], `expected a glob of scenario files, {generate: {profile, count}} or {import: {format, path}}, got ${JSON.stringify(entry)}`));
    return undefined;
  }
  const body = (entry as Record<string, unknown>)[kind];
  const path = ['scenarios', i, kind];
  const at = src.problem(path, '');
  if (kind === 'generate') {
    const g = src.check(generateEntry, body, path, problems);
    if (!g) return undefined;
    const profile = PROFILES.get(g.profile);
    if (!profile) {
      problems.push(src.problem([...path, 'profile'], `unknown profile "${g.profile}"; expected one of ${[...PROFILES.keys()].join(', ')}`));
      return undefined;
    }
    const { profile: _p, count, seed, prefix, ...rest } = g;
    const params = src.check(profile.overrides, rest, path, problems);
    if (!params) return undefined;
    return { kind, profile: g.profile, count, ...(seed !== undefined && { seed }), ...(prefix !== undefined && { prefix }), params, at };
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
  return { kind, format: m.format, path: resolve(dir, file), base: dir, options: rest, at };
}

/** The conversations of a generate or import entry (validated; throws ScenarioError). */
export function loadSource(s: GenerateSource | ImportSource, opts: LoadOptions, display: (path: string) => string): Conversation[] {
  if (s.kind === 'generate') {
    return generateConversations({ profile: s.profile, count: s.count, seed: s.seed ?? opts.seed ?? 42, prefix: s.prefix, params: s.params });
  }
  const r = importDataset(s.format, { path: s.path, file: display(s.path), base: s.base }, s.options);
  formatImportReport(r.report).forEach((l) => opts.onNote?.(l));
  return r.conversations;
}
