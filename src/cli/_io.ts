import type { StudyEvents } from '../study/pipeline.js';

/** Where a command prints; injected so tests capture it. */
export interface IO {
  out(text: string): void;
  err(text: string): void;
  /** Whether stderr is a terminal (progress redraws a line there). */
  isTTY: boolean;
}

export const processIO: IO = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  isTTY: Boolean(process.stderr.isTTY),
};

/** Progress on stderr: one redrawn line on a terminal, one plain line per finished scenario otherwise. */
export function progressLine(io: IO) {
  return (done: number, total: number, scenario: string) => {
    const line = `[${done}/${total}] ${scenario}`;
    if (io.isTTY) io.err(`\r\x1b[K${line}${done === total ? '\n' : ''}`);
    else io.err(`${line}\n`);
  };
}

/** What a study run tells on stderr: notes and progress unless quiet, warnings always. */
export function studyEvents(io: IO, quiet: boolean | undefined): StudyEvents {
  return {
    ...(!quiet && { onNote: (line: string) => io.err(`${line}\n`), onProgress: progressLine(io) }),
    onWarning: (line) => io.err(`ctxsim: warning: ${line}\n`),
  };
}
