import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const SHARED = resolve(ROOT, '..', 'shared', 'data');

/**
 * The absolute path of a file in the optional real-data folder beside the
 * repository, or undefined when it is absent: tests that use it skip then.
 */
export function sharedData(relPath: string): string | undefined {
  const p = join(SHARED, relPath);
  return existsSync(p) ? p : undefined;
}

/** The reason printed when a real-data test skips. */
export function skipReason(relPath: string): string {
  return `skipped: real data ../shared/data/${relPath} is not present`;
}
