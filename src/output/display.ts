/**
 * How a path is shown: what the command line needs before it loads a study
 * (this module imports no other part of ctxsim, so a command that needs no
 * more starts fast).
 * @module
 */
import { relative } from 'node:path';

/** Displays a path relative to the working directory when that is shorter. */
export function displayPath(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith('..') ? r : p;
}

