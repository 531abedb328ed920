import { StringDecoder } from 'node:string_decoder';
import { abortOpenStaging } from '../output/files.js';
import type { StudyEvents } from '../study/pipeline.js';

/** Where a command prints; injected so tests capture it. */
export interface IO {
  out(text: string): void;
  err(text: string): void;
  /**
   * When stdout holds more than it has written (its reader is behind): a
   * promise that resolves once it has caught up (or is closed); else
   * undefined. A long output waits on it between chunks, so it is not all
   * held in memory at once.
   */
  outBehind?(): Promise<void> | undefined;
  /** Whether stderr is a terminal (progress redraws a line there). */
  isTTY: boolean;
  /** Stdout's width in columns when it is a terminal; absent when it is not (a pipe, a file). */
  readonly outColumns?: number;
}

/**
 * A writer of UTF-8 chunks to `io.out`: a character split across two chunks
 * is printed whole, with the second (`end` prints what is left). Each write
 * returns `io.outBehind()`: a promise to wait for while stdout's reader is
 * behind.
 */
export function bytesOut(io: IO): { write(chunk: string | Uint8Array): Promise<void> | undefined; end(): void } {
  const text = new StringDecoder('utf8');
  return {
    write: (chunk) => {
      io.out(typeof chunk === 'string' ? chunk : text.write(chunk));
      return io.outBehind?.();
    },
    end: () => io.out(text.end()),
  };
}

/** Why stdout took no more output: `EPIPE` when its reader stopped early, another code when writing failed. */
let stdoutClosed: string | undefined;
let stderrClosed = false;

export const processIO: IO = {
  out: (t) => {
    if (stdoutClosed === undefined) process.stdout.write(t);
  },
  err: (t) => {
    if (!stderrClosed) process.stderr.write(t);
  },
  isTTY: Boolean(process.stderr.isTTY),
  // Read when the output is laid out: a terminal may have been resized since the command started.
  get outColumns() {
    return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined;
  },
  outBehind: () => {
    const out = process.stdout;
    if (stdoutClosed !== undefined || !out.writableNeedDrain) return undefined;
    // Caught up, or closed (a reader that left, a failed write): nothing more will drain.
    return new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done).off('close', done).off('error', done);
        resolve();
      };
      out.on('drain', done).on('close', done).on('error', done);
    });
  },
};

/**
 * Write errors on stdout and stderr arrive as stream events, after the write.
 * A reader that stops early (`ctxsim prices --all | head -1`) closes the pipe:
 * like other Unix tools, ctxsim drops the rest of that output quietly and
 * finishes the command (files it writes are still written). Any other write
 * failure on stdout (a full disk) is one line on stderr; `stdoutFailed` then
 * says the run must not end with 0.
 */
export function watchStdio(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (stdoutClosed !== undefined) return;
    stdoutClosed = e.code ?? 'EIO';
    if (e.code === 'EPIPE') return;
    processIO.err(`ctxsim: cannot write to stdout: ${reasonOf(e)}\n`);
    // The event may come after the command returned its code.
    if (!process.exitCode) process.exitCode = 2;
  });
  process.stderr.on('error', () => {
    stderrClosed = true;
  });
}

/** Whether writing to stdout failed for another reason than its reader leaving. */
export function stdoutFailed(): boolean {
  return stdoutClosed !== undefined && stdoutClosed !== 'EPIPE';
}

/**
 * On Ctrl-C (SIGINT) or SIGTERM, removes the staging folders of the outputs
 * being written, then raises the signal again with no handler left, so the
 * process ends as it would have (exit status 130 or 143).
 */
export function abortStagingOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      abortOpenStaging();
      process.kill(process.pid, signal);
    });
  }
}

/** What a failed system call's error code means, in words. */
const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EISDIR: 'it is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  ENOENT: 'no such file or folder',
  EEXIST: 'it already exists',
  ENOTEMPTY: 'the folder is not empty',
  EMFILE: 'too many open files',
  EIO: 'input/output error',
  EXDEV: 'cannot move across devices',
  ENAMETOOLONG: 'the name is too long',
};

/** A system error's reason: words for the common codes, else the code. */
export function reasonOf(e: NodeJS.ErrnoException): string {
  const code = e.code ?? '';
  return Object.hasOwn(REASONS, code) ? `${REASONS[code]} (${code})` : code || e.message;
}

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

/** A word for a shell command we print (a path, a flag's value): quoted unless it is plain. */
export const shellWord = (s: string): string => (/^[\w./:=,@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
