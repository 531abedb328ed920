import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The shared data folder: `../shared/data` beside the repo (or $CTXSIM_SHARED_DATA). */
const DATA = process.env.CTXSIM_SHARED_DATA ?? resolve(ROOT, '..', 'shared', 'data');

/** Absolute path of a file under the shared data folder, or undefined when it is absent. */
export function sharedData(relPath: string): string | undefined {
  const p = join(DATA, relPath);
  return existsSync(p) ? p : undefined;
}

/** A describe block that runs only when the shared file exists, and says why when it is skipped. */
export function describeShared(relPath: string, name: string, body: (path: string) => void): void {
  const p = sharedData(relPath);
  if (p) describe(name, () => body(p));
  else
    describe.skip(`${name} — skipped: ../shared/data/${relPath} is absent`, () => {
      it('needs the shared data file', () => {});
    });
}
