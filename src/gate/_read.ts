import type { z } from 'zod';
import { CtxsimError, ScenarioError, type Problem } from '../errors.js';
import { readInputText, unreadableReason } from '../process.js';
import { SourceDoc, type DocPath } from '../text/document.js';
import { isObject, JsonSource, parseJson } from '../text/json.js';

/**
 * Baselines and shard files, read alike: the file's text in one read, its
 * JSON parsed (a syntax error at its line and column), then checked against
 * the format's schema, every problem at `file:line:col path: …`.
 */

/**
 * A file's text, in one read, only when it is a regular file of a size that
 * can be parsed (`readInputText`); a file that cannot be read is one line
 * naming it (`what`: `baseline`, `shard file`).
 */
export function readInput(file: string, shown: string, what: string): string {
  try {
    return readInputText(file, { shown, json: true });
  } catch (e) {
    throw new CtxsimError(`${shown}: ${unreadableReason(e, what)}`, 'input');
  }
}

/**
 * Above this size a file's problems are named by their field path only: the
 * parser that knows where each value is (the YAML parser, reading JSON) takes
 * about half a second and 70 MB per megabyte, so a large shard file is not
 * parsed a second time to place a problem.
 */
const MAX_PLACED_CHARS = 4_000_000;

/** How many problems of one file are listed; the rest are counted in one more line. */
const MAX_PROBLEMS = 20;

/** A parsed JSON file that places a problem at a path: its line and column, or (a large file) its path. */
export interface JsonDoc {
  value: unknown;
  /** The problem at `path`, placed. */
  problem(path: DocPath, message: string): Problem;
  /** Validates `value` (at `path`) against a schema; placed problems go to `out`. */
  check<T>(schema: z.ZodType<T>, value: unknown, path: DocPath, out: Problem[]): T | undefined;
}

/** Parses a file's JSON text (a leading byte order mark, which some editors write, ignored). */
export function jsonDoc(text: string, file: string): JsonDoc {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const value = parseJson(body, file);
  const src = body.length <= MAX_PLACED_CHARS ? new JsonSource(file, body) : SourceDoc.fromValue(file, value);
  return { value, problem: (path, message) => src.problem(path, message), check: (schema, v, path, out) => src.check(schema, v, path, out) };
}

/** Throws the problems found, if any: the first of each field, the first `MAX_PROBLEMS` of those one line each, and how many more. */
export function throwProblems(found: readonly Problem[]): void {
  if (!found.length) return;
  const fields = new Set<string>();
  const problems = found.filter((p) => !fields.has(p.path) && fields.add(p.path));
  const shown = problems.slice(0, MAX_PROBLEMS);
  const more = problems.length - shown.length;
  throw new ScenarioError(more > 0 ? [...shown, { file: shown[0]!.file, path: '', message: `and ${more} more problem${more === 1 ? '' : 's'}` }] : shown);
}

/** A baseline's or a shard's format, told by its top level: `what` names it in errors. */
export function notTheFormat(doc: JsonDoc, what: string, version: number, kind?: string): Problem | undefined {
  const root = doc.value;
  if (isObject(root) && root.kind === 'ctxsim-shard' && kind !== 'ctxsim-shard') return doc.problem([], `a shard file, not a ${what}: merge it with ctxsim merge`);
  // A run's results.json (its `meta` names ctxsim) is the file most often taken for a baseline: its fields would be refused one by one.
  if (isObject(root) && kind === undefined && !('studyHash' in root) && isObject(root.meta) && root.meta.tool === 'ctxsim') {
    return doc.problem([], `a run's results (results.json), not a ${what}: save one with ctxsim run --save-baseline FILE`);
  }
  if (!isObject(root) || (kind === undefined ? !('schemaVersion' in root) : root.kind !== kind)) {
    return doc.problem([], `not a ${what} (expected ${kind === undefined ? '' : `kind "${kind}" and `}schemaVersion ${version})`);
  }
  const v = root.schemaVersion;
  if (typeof v === 'number' && Number.isInteger(v) && v > version) return doc.problem(['schemaVersion'], `a ${what} of schemaVersion ${v}, written by a later ctxsim; this one reads schemaVersion ${version}`);
  return undefined;
}

/** A JSON object (not null, not a list). */
