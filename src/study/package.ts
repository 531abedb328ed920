/**
 * Where ctxsim is installed, its version, and how a path is shown: what
 * the command line needs before it loads a study (this module imports no
 * other part of ctxsim, so a command that needs no more starts fast).
 * @module
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own folder (for shipped scenarios). */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Displays a path relative to the working directory when that is shorter. */
export function displayPath(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
}

let version: string | undefined;

/** ctxsim's own version, from its package.json (wherever it is installed). */
export function ctxsimVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
