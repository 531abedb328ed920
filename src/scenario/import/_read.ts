import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { SourceDoc, type DocPath } from '../../text/document.js';

/** Reads a dataset file; a missing file is a one-line problem, not a crash. */
export function readText(path: string, file: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new ScenarioError([{ file, path: '', message: `cannot read file (${(e as NodeJS.ErrnoException).code ?? e})` }]);
  }
}

/** Parses JSON; a syntax error names its line and column. */
export function parseJson(text: string, file: string, lineOffset = 0): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const m = /at position (\d+)/.exec(msg);
    // Some messages name no position (`Unexpected token 'x', "…" is not valid JSON`): a scan finds it.
    const pos = lineCol(text, m ? Number(m[1]) : jsonErrorOffset(text));
    const reason = msg
      .replace(/ in JSON at position \d+.*$/s, '')
      .replace(/, ".*" is not valid JSON$/s, '')
      .replace(/^JSON\.parse: /, '');
    throw new ScenarioError([{ file, line: pos.line + lineOffset, column: pos.column, path: '', message: `invalid JSON: ${reason}` }]);
  }
}

/** Parses JSON Lines (blank lines skipped); every bad line is reported. */
export function parseJsonLines(text: string, file: string): unknown[] {
  const out: unknown[] = [];
  const problems: Problem[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push(parseJson(line, file, i));
    } catch (e) {
      if (!(e instanceof ScenarioError)) throw e;
      problems.push(...e.problems.map((p) => ({ ...p, line: i + 1, column: p.column ?? 1 })));
    }
  });
  if (problems.length) throw new ScenarioError(problems);
  return out;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);

/**
 * Where the first JSON syntax error in `s` is (its length when the text ends
 * too soon): a scan by the JSON grammar, with an explicit stack so deep
 * nesting cannot overflow it. Only called on text JSON.parse refused.
 */
function jsonErrorOffset(s: string): number {
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
 * Checks a dataset value against the shape an importer expects; problems
 * (file, path inside the dataset, message) go to `out`.
 */
export function checkShape<T>(schema: z.ZodType<T>, value: unknown, file: string, path: DocPath, out: Problem[]): T | undefined {
  return SourceDoc.fromValue(file, value).check(schema, value, path, out);
}
