import { mkdirSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * A folder written all-or-nothing: each file goes to a temp file beside its
 * target (`NAME.PID.tmp`) first; `commit` renames them all into place, and
 * `abort` removes them, leaving the folder's files as they were. Scratch
 * files (pieces a file is assembled from) are temp files that are removed,
 * never renamed.
 */
export class StagedFiles {
  private readonly temps: [tmp: string, target: string][] = [];
  private readonly scratches: string[] = [];
  /** The first folder the constructor created, if the folder did not exist. */
  private readonly created: string | undefined;

  constructor(readonly dir: string) {
    this.created = mkdirSync(dir, { recursive: true });
  }

  /** The temp path to write file `name` (relative to the folder) at; it goes into place on `commit`. */
  path(name: string): string {
    const target = join(this.dir, name);
    mkdirSync(dirname(target), { recursive: true });
    const tmp = `${target}.${process.pid}.tmp`;
    this.temps.push([tmp, target]);
    return tmp;
  }

  /** A temp path for a piece of work, in the folder, removed on `commit` and on `abort`. */
  scratch(name: string): string {
    const tmp = `${join(this.dir, name)}.${process.pid}.tmp`;
    this.scratches.push(tmp);
    return tmp;
  }

  /** Writes file `name` to its temp path. */
  write(name: string, content: string | Uint8Array): void {
    writeFileSync(this.path(name), content);
  }

  /** Removes the scratch files and renames every file into place; returns the targets. */
  commit(): string[] {
    for (const tmp of this.scratches) rmSync(tmp, { force: true });
    for (const [tmp, target] of this.temps) renameSync(tmp, target);
    return this.temps.map(([, t]) => t);
  }

  /** Removes every temp and scratch file, and the folders it created if they are left empty; the folder's files stay as they were. */
  abort(): void {
    // Best effort, each file on its own: one that cannot go must not keep the others.
    for (const tmp of [...this.scratches, ...this.temps.map(([t]) => t)]) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // (not a file we wrote: e.g. a folder in the way, which is what failed)
      }
    }
    if (this.created === undefined) return;
    for (let d = this.dir; ; d = dirname(d)) {
      try {
        rmdirSync(d);
      } catch {
        return;
      }
      if (d === this.created) return;
    }
  }
}

/**
 * Writes files all-or-nothing: each goes to a temp file beside it first, and
 * only when all are written are they renamed into place.
 */
export function writeFilesAtomic(dir: string, files: ReadonlyMap<string, string | Uint8Array>): string[] {
  const staged = new StagedFiles(dir);
  try {
    for (const [name, content] of files) staged.write(name, content);
  } catch (e) {
    staged.abort();
    throw e;
  }
  return staged.commit();
}

/** Writes one file all-or-nothing (a temp file beside it, renamed into place). */
export function writeFileAtomic(path: string, content: string | Uint8Array): void {
  writeFilesAtomic(dirname(path), new Map([[basename(path), content]]));
}
