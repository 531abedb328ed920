import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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

/**
 * Writes files all-or-nothing: each goes to a temp file beside it first, and
 * only when all are written are they renamed into place.
 */
export function writeFilesAtomic(dir: string, files: ReadonlyMap<string, string | Uint8Array>): string[] {
  mkdirSync(dir, { recursive: true });
  const temps: [string, string][] = [];
  try {
    for (const [name, content] of files) {
      const target = join(dir, name);
      mkdirSync(dirname(target), { recursive: true });
      const tmp = `${target}.${process.pid}.tmp`;
      writeFileSync(tmp, content);
      temps.push([tmp, target]);
    }
  } catch (e) {
    for (const [tmp] of temps) rmSync(tmp, { force: true });
    throw e;
  }
  for (const [tmp, target] of temps) renameSync(tmp, target);
  return temps.map(([, t]) => t);
}
