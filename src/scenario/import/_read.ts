import { createHash } from 'node:crypto';
import { ScenarioError, type Problem } from '../../errors.js';
import { InputFileError, readInputText } from '../../process.js';
import type { DocPath } from '../../text/document.js';
import { isObject, jsonErrorOffset, parseJson, type JsonSource } from '../../text/json.js';

export { JsonSource, parseJson } from '../../text/json.js';

/**
 * A dataset or side file that cannot be read. `filePath` (absolute) lets a
 * study entry that names the file put the problem at its key.
 */
export class UnreadableFile extends ScenarioError {
  constructor(
    readonly filePath: string,
    file: string,
    reason: string,
    /** `reason` is the whole message (`is a FIFO, not a regular file`), not a system error's code. */
    whole = false,
  ) {
    super([{ file, path: '', message: whole ? reason : `cannot read file (${reason})` }]);
  }
}

/**
 * Reads a dataset file; a missing file is a one-line problem, not a crash. A
 * leading byte order mark (Windows tools write one) is no part of the text:
 * JSON.parse would refuse it.
 */
export function readText(path: string, file: string): string {
  let text: string;
  try {
    text = readInputText(path, { shown: file, json: true });
  } catch (e) {
    if (e instanceof InputFileError) throw new UnreadableFile(path, file, e.reason, true);
    throw new UnreadableFile(path, file, String((e as NodeJS.ErrnoException).code ?? e));
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A name as an id: lower case, a-z 0-9 and `-`. */
export function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

/**
 * A dataset's conversation id as a scenario id (a-z, 0-9 and `-`):
 * `<prefix>-<name>`, the name in lower case with accents dropped and every
 * other run of characters a `-`. A name that is not plain ASCII (`対話_1`,
 * `Café_1`) loses letters that way, so it also gets the first 8 hex digits
 * of its SHA-256: two such names stay distinct, and each keeps its id.
 */
export function datasetId(prefix: string, name: string): string {
  const readable = slug(name.normalize('NFKD').replace(/\p{M}+/gu, ''));
  const hash = /^\p{ASCII}*$/u.test(name) ? '' : createHash('sha256').update(name).digest('hex').slice(0, 8);
  return [prefix, readable, hash].filter((p) => p).join('-');
}

/**
 * The ids a dataset's conversations are given, each with the path of the
 * value it was made from: two conversations whose ids come out the same
 * (`5` and `-5`, `a_b` and `a-b`, or one id written twice) would be one
 * scenario file, so the second is a problem at its value, naming the first.
 */
export class DatasetIds {
  private readonly seen = new Map<string, DocPath>();

  constructor(private readonly src: JsonSource) {}

  /** Whether `id` is new; else a problem at `path` goes to `out`. */
  add(id: string, path: DocPath, out: Problem[]): boolean {
    const first = this.seen.get(id);
    if (first === undefined) {
      this.seen.set(id, path);
      return true;
    }
    const at = this.src.problem(first, '');
    const where = at.line === undefined ? at.path : `line ${at.line}, column ${at.column ?? 1}`;
    out.push(this.src.problem(path, `gives the conversation id "${id}", as the conversation at ${where} does: ids must be unique`));
    return false;
  }
}

/** A value of a JSON Lines file, with its 1-based line. */
export interface JsonLine {
  line: number;
  value: unknown;
  /** The line's text (to position a problem in it). */
  text: string;
}

/**
 * Parses JSON Lines (blank lines skipped). Only the first bad line is
 * reported: the lines after it say nothing new (a pretty-printed file would
 * give one error per line). A first line that opens a value it does not close
 * starts one JSON document over several lines: a format that also reads JSON
 * documents (`document`) reports that document's first syntax error; one that
 * reads only JSON Lines says it expects one object per line, and which format
 * the document looks like.
 */
export function parseJsonLines(text: string, file: string, expect: { format: string; document?: boolean }): JsonLine[] {
  const lines = text.split('\n');
  const out: JsonLine[] = [];
  lines.forEach((l, i) => {
    if (!l.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(l);
    } catch {
      const more = lines.slice(i + 1).some((x) => x.trim());
      if (!out.length && more && jsonErrorOffset(l) === l.length) {
        if (expect.document) parseJson(text, file);
        throw new ScenarioError([{ file, line: i + 1, column: l.search(/\S/) + 1, path: '', message: notJsonLines(text, i + 1, expect.format) }]);
      }
      parseJson(l, file, i);
    }
    out.push({ line: i + 1, value, text: l });
  });
  return out;
}

/** Why a JSON document over several lines is not JSON Lines, and which format it looks like. */
function notJsonLines(text: string, line: number, format: string): string {
  const expects = `the ${format} format expects one JSON object per line`;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return `not JSON Lines: line ${line} opens a JSON value it does not close, as a document over several lines does; ${expects}`;
  }
  const guess = guessFormat(doc);
  return `not JSON Lines: the file is one JSON document over several lines; ${expects}${guess && guess !== format ? ` (it looks like the ${guess} format)` : ''}`;
}

/** A JSON object (not null, not an array). */

/** The import format a parsed JSON document most likely is, by the keys each format's top level has. */
function guessFormat(v: unknown): string | undefined {
  const first = Array.isArray(v) ? v[0] : undefined;
  if (isObject(v)) {
    if ('trajectory' in v || 'trajectory_format' in v || ('messages' in v && 'info' in v)) return 'swe-agent';
    if ('custom_id' in v || ('messages' in v && ('system' in v || 'max_tokens' in v))) return 'anthropic';
    if ('messages' in v || 'input' in v) return 'openai';
    if ('train' in v) return 'abcd';
  } else if (isObject(first)) {
    if ('sample_id' in first) return 'locomo';
    if ('convo_id' in first) return 'abcd';
    if ('dialogue_id' in first) return 'services' in first ? 'sgd' : 'multiwoz';
    if ('role' in first || 'messages' in first) return 'openai';
  }
  return undefined;
}
