import type { IO } from '../src/cli/_io.js';

/** An IO that records what a command prints. */
export function capture(): IO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    isTTY: false,
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
  };
  return io;
}
