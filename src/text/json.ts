import type { z } from 'zod';
import { ScenarioError, type Problem } from '../errors.js';
import { DocTooLarge, formatPath, SourceDoc, type DocPath } from './document.js';

/**
 * JSON read with places for its errors: a syntax error at its line and
 * column, a value's problem at the line and column of its node. The
 * importers, baselines and shard files read JSON through these.
 */

/** Whether `v` is a JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses JSON; a syntax error names its line and column. */
export function parseJson(text: string, file: string, lineOffset = 0): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const m = /at position (\d+)/.exec(msg);
    // Some messages name no position (`Unexpected token 'x', "…" is not valid JSON`): a scan finds it.
    const pos = lineCol(text, m ? Number(m[1]) : jsonErrorOffset(text));
    throw new ScenarioError([{ file, line: pos.line + lineOffset, column: pos.column, path: '', message: `invalid JSON: ${jsonSyntaxReason(msg)}` }]);
  }
}

/**
 * What JSON.parse's error `message` says is wrong, without its position and
 * without the excerpt of the text it quotes (cut with `...` at either end
 * when long): the place is said apart, and the file may be any file a link
 * leads to (`../.git/config`, holding a CI job's token), whose text is not
 * printed into the job's log.
 */
export function jsonSyntaxReason(message: string): string {
  return message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
    .replace(/^JSON\.parse: /, '');
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);

/**
 * Where the first JSON syntax error in `s` is (its length when the text ends
 * too soon): a scan by the JSON grammar, with an explicit stack so deep
 * nesting cannot overflow it. Only called on text JSON.parse refused.
 */
export function jsonErrorOffset(s: string): number {
  let i = 0;
  const stack: ('[' | '{')[] = [];
  const ws = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  };
  /** Scans a string at `i`; false at the error (left at `i`). */
  const string = (): boolean => {
    if (s[i] !== '"') return false;
    i++;
    while (i < s.length) {
      const c = s[i]!;
      if (c === '"') {
        i++;
        return true;
      }
      if (c.charCodeAt(0) < 0x20) return false;
      if (c === '\\') {
        if (!ESCAPES.has(s[i + 1] ?? '')) return false;
        if (s[i + 1] === 'u' && !/^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) return false;
        i += s[i + 1] === 'u' ? 6 : 2;
      } else i++;
    }
    return false;
  };
  let mode: 'value' | 'after' | 'key' = 'value';
  for (;;) {
    ws();
    if (mode === 'key') {
      if (!string()) return i;
      ws();
      if (s[i] !== ':') return i;
      i++;
      mode = 'value';
      continue;
    }
    if (mode === 'value') {
      const c = s[i];
      if (c === '{' || c === '[') {
        i++;
        ws();
        if (s[i] === (c === '{' ? '}' : ']')) {
          i++;
          mode = 'after';
        } else {
          stack.push(c);
          mode = c === '{' ? 'key' : 'value';
        }
        continue;
      }
      if (c === '"') {
        if (!string()) return i;
      } else {
        // A literal is wrong where it stops matching (`nope`: at the o), as JSON.parse says.
        const word = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : undefined;
        NUMBER.lastIndex = i;
        if (word) {
          let j = 0;
          while (j < word.length && s[i + j] === word[j]) j++;
          if (j < word.length) return i + j;
          i += j;
        } else if (NUMBER.test(s)) i = NUMBER.lastIndex;
        else return i;
      }
      mode = 'after';
      continue;
    }
    const top = stack[stack.length - 1];
    if (!top) return i < s.length ? i : s.length;
    if (s[i] === ',') {
      i++;
      mode = top === '{' ? 'key' : 'value';
    } else if (s[i] === (top === '{' ? '}' : ']')) {
      i++;
      stack.pop();
    } else return i;
  }
}

function lineCol(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/**
 * Where an imported value sits, so a problem with it names a line and a
 * column: a JSON document's text, or one line of a JSON Lines file (`line`,
 * 1-based). The text is parsed again — by the YAML parser, which keeps
 * positions — only when a problem needs one.
 */
export class JsonSource {
  private doc: SourceDoc | null | undefined;

  constructor(
    readonly file: string,
    private readonly text: string,
    private readonly line = 1,
  ) {}

  /** The problem at a path of the value: positioned at its node, or at the nearest parent that exists (with no position, in a text too large to parse again). */
  problem(path: DocPath, message: string): Problem {
    const doc = this.parsed();
    return doc ? this.placed(doc.problem(path, message)) : { file: this.file, path: formatPath(path), message };
  }

  /** Checks the value at `path` against the shape an importer expects; positioned problems go to `out`. */
  check<T>(schema: z.ZodType<T>, value: unknown, path: DocPath, out: Problem[]): T | undefined {
    const ok = SourceDoc.fromValue(this.file, value).check(schema, value, path, []);
    if (ok !== undefined) return ok;
    const doc = this.parsed();
    if (!doc) return SourceDoc.fromValue(this.file, value).check(schema, value, path, out);
    const found: Problem[] = [];
    doc.check(schema, value, path, found);
    for (const p of found) out.push(this.placed(p));
    return undefined;
  }

  /** The text parsed again with positions, or undefined when it is too large to be (its problems then have none). */
  private parsed(): SourceDoc | undefined {
    if (this.doc === undefined) {
      try {
        this.doc = SourceDoc.parse(this.file, this.text);
      } catch (e) {
        if (!(e instanceof DocTooLarge)) throw e;
        this.doc = null;
      }
    }
    return this.doc ?? undefined;
  }

  private placed(p: Problem): Problem {
    return this.line === 1 || p.line === undefined ? p : { ...p, line: p.line + this.line - 1 };
  }
}
