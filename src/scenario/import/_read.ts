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
    const pos = m ? lineCol(text, Number(m[1])) : undefined;
    const reason = msg.replace(/ in JSON at position \d+.*$/, '').replace(/^JSON\.parse: /, '');
    throw new ScenarioError([{ file, ...(pos && { line: pos.line + lineOffset, column: pos.column }), path: '', message: `invalid JSON: ${reason}` }]);
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
