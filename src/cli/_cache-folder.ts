import { existsSync, statSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { folderProblem } from '../process.js';

/** `--token-cache`'s value: a folder, or false from `--no-token-cache`; both flags given: a list, the last wins. */
export type TokenCacheFlag = string | false | (string | false)[];

/** Where the token-count cache and the replay cache (in its `replay/`) live unless `--token-cache` says otherwise (relative to the working directory). */
export const DEFAULT_TOKEN_CACHE = '.ctxsim-cache';

/** The environment variable that names the cache folder when no flag does (CI jobs that keep one folder between runs). */
export const CACHE_DIR_ENV = 'CTXSIM_CACHE_DIR';

/** `--no-cache`, the old name of `--no-token-cache` (before `--`), under its name: yargs would take it for a negated `--cache`. */
export function noCacheAlias(args: readonly string[]): readonly string[] {
  const end = args.indexOf('--');
  return args.map((a, i) => (a === '--no-cache' && (end < 0 || i < end) ? '--no-token-cache' : a));
}

/** The token-cache folder the flags name: a folder, false for none, else $CTXSIM_CACHE_DIR, else the default. */
export function tokenCacheFromFlags(flag: TokenCacheFlag | undefined): string | false {
  const last = Array.isArray(flag) ? flag[flag.length - 1] : flag;
  if (last === '') throw new UsageError('--token-cache: name a folder (or use --no-token-cache)');
  const fromEnv = last === undefined && process.env[CACHE_DIR_ENV] ? process.env[CACHE_DIR_ENV] : undefined;
  const dir = last ?? fromEnv ?? DEFAULT_TOKEN_CACHE;
  // Caught here rather than as a warning per cache file at the end of the run.
  if (dir === false) return dir;
  const named = last !== undefined ? '--token-cache' : fromEnv ? CACHE_DIR_ENV : 'the cache folder';
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UsageError(`${named} ${dir}: a file, not a folder`);
  const problem = folderProblem(dir);
  if (problem) throw new UsageError(`${named} ${dir}: the folder cannot be made (${problem})`);
  return dir;
}
