/** Access to the project's shared real data (`../shared/data` beside the repository), which may be absent. */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The shared data folder: `../shared/data` beside the repository (or $CTXSIM_SHARED_DATA). */
const DATA = process.env.CTXSIM_SHARED_DATA ?? resolve(ROOT, '..', 'shared', 'data');

/** The absolute path of `relPath` under the shared data folder, or undefined when absent. */
export function sharedData(relPath: string): string | undefined {
  const p = resolve(DATA, relPath);
  return existsSync(p) ? p : undefined;
}

/** The reason printed when a real-data test skips. */
export function skipReason(relPath: string): string {
  return `skipped: real data ../shared/data/${relPath} is not present`;
}

/** `describe` that runs only when the shared file exists, and says why it was skipped otherwise. */
export function describeShared(relPath: string, name: string, fn: (path: string) => void): void {
  const p = sharedData(relPath);
  if (p) describe(name, () => fn(p));
  else describe.skip(`${name} (${skipReason(relPath)})`, () => {});
}

/** `it` that runs only when the shared file exists, and says why it was skipped otherwise. */
export function itShared(relPath: string, name: string, fn: (path: string) => void | Promise<void>): void {
  const p = sharedData(relPath);
  if (p) it(name, () => fn(p));
  else it.skip(`${name} (${skipReason(relPath)})`, () => {});
}
