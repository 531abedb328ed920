/** Known failures. The CLI prints `message` on one line and exits with `exitCode`. */
export class CtxsimError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly exitCode = 2,
  ) {
    super(message);
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
  return p.path ? `${where} ${p.path}: ${p.message}` : `${where}: ${p.message}`;
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
