/**
 * Control and invisible format characters (bidirectional overrides, zero-width
 * spaces, a byte order mark…) written as escapes such as `\x1b`, `\u202e` or
 * `\ufeff`, so a value quoted in an error cannot drive the terminal, reorder
 * the line or hide in it; newlines stay when `keepNewlines` (they separate problems).
 */
export function escapeControl(text: string, keepNewlines = false): string {
  return text.replace(CONTROL, (c) => {
    if (keepNewlines && c === '\n') return c;
    const code = c.codePointAt(0)!;
    if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code < 0x10000 ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** C0 and C1 controls, line and paragraph separators, and format characters (invisible: bidirectional marks, zero-width spaces and joiners, BOM, tags). */
const CONTROL = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/** Whether a text holds a character `escapeControl` escapes. */
export function hasControl(text: string): boolean {
  return new RegExp(CONTROL.source, 'u').test(text);
}

/**
 * Known failures. The CLI prints `message` on one line and exits with
 * `exitCode`; control characters in it are escaped here, once for every error.
 */
export class CtxsimError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly exitCode = 2,
  ) {
    super(escapeControl(message, true));
    this.name = new.target.name;
  }
}

/** Bad usage: unknown flag value, model, policy or parameter. */
export class UsageError extends CtxsimError {
  constructor(message: string) {
    super(message, 'usage');
  }
}

/** One problem at a place in an input file. */
export interface Problem {
  file: string;
  line?: number;
  column?: number;
  /** Path inside the document, e.g. `turns[3].user`. */
  path: string;
  message: string;
}

/** Formats a problem as `file:line:col path: message`. */
export function formatProblem(p: Problem): string {
  const where = p.line === undefined ? p.file : `${p.file}:${p.line}:${p.column ?? 1}`;
  // One line per problem: a newline inside a value is escaped too.
  return escapeControl(p.path ? `${where} ${p.path}: ${p.message}` : `${where}: ${p.message}`);
}

/** A bad input file: every problem found, one per line. */
export class ScenarioError extends CtxsimError {
  constructor(readonly problems: readonly Problem[]) {
    super(problems.map(formatProblem).join('\n'), 'input');
  }
  get file(): string {
    return this.problems[0]?.file ?? '';
  }
  get line(): number | undefined {
    return this.problems[0]?.line;
  }
  get column(): number | undefined {
    return this.problems[0]?.column;
  }
  get path(): string {
    return this.problems[0]?.path ?? '';
  }
}
