/**
 * Where the caches are: the use of the command line's `tokenCache` setting
 * (`--token-cache`, `COMMAND_SPEC` in study/settings.ts, which declares the
 * flag and reads it: a folder as given, false from `--no-token-cache`, the
 * last one given counting), and its old spelling `--no-cache`.
 * @module
 */
import { existsSync, statSync } from 'node:fs';
import { CtxsimError, UsageError } from '../errors.js';
import { CACHE_DIR_ENV, folderProblem, userFolder } from '../process.js';
import { linkOnTheWay } from '../output/real-path.js';
import { displayPath } from '../output/display.js';

/** `--no-cache`, the old name of `--no-token-cache` (before `--`), under its name: yargs would take it for a negated `--cache`. */
export function noCacheAlias(args: readonly string[]): readonly string[] {
  const end = args.indexOf('--');
  return args.map((a, i) => (a === '--no-cache' && (end < 0 || i < end) ? '--no-token-cache' : a));
}

/** The cache folder a command uses, and how it came to be that one. */
export interface CacheFolder {
  /** The folder, or false for none. */
  dir: string | false;
  /** Named on purpose (`--token-cache DIR` or `$CTXSIM_CACHE_DIR`), not the user's cache folder by default. */
  named: boolean;
  /** Why the default folder cannot be used, so the command runs without a cache: one line for stderr. */
  warning?: string;
}

/**
 * The cache folder `--token-cache` names (as `commandSettings` reads it): a
 * folder, none (false, from `--no-token-cache`), else `$CTXSIM_CACHE_DIR`,
 * else the user's cache folder (`userFolder('cache')`: never the working
 * folder, which in CI is the checkout a pull request writes).
 *
 * A folder named on purpose that is a file, that cannot be made, or that is
 * reached through a symbolic link lying in the working folder (a link a
 * repository can ship, leading anywhere) is a usage error: the cache would
 * be written through it. The default folder, when there is no home folder
 * or it cannot be made, is a warning and no cache: a cache only saves time.
 */
export function cacheFolderOf(tokenCache: string | false | undefined, cwd = process.cwd()): CacheFolder {
  if (tokenCache === false) return { dir: false, named: true };
  const fromEnv = tokenCache === undefined && process.env[CACHE_DIR_ENV] ? process.env[CACHE_DIR_ENV] : undefined;
  const named = tokenCache ?? fromEnv;
  if (named === undefined) return defaultFolder();
  const how = tokenCache !== undefined ? '--token-cache' : CACHE_DIR_ENV;
  const link = linkOnTheWay(named, cwd);
  if (link) {
    throw new UsageError(`${how} ${named}: ${displayPath(link.link)} is a symbolic link in the working folder (to ${link.leadsTo}); a cache folder is never reached through one: name the folder itself`);
  }
  // Caught here rather than as a warning per cache file at the end of the run.
  if (existsSync(named) && !statSync(named).isDirectory()) throw new UsageError(`${how} ${named}: a file, not a folder`);
  const problem = folderProblem(named);
  if (problem) throw new UsageError(`${how} ${named}: the folder cannot be made (${problem})`);
  return { dir: named, named: true };
}

/** The user's cache folder, or none with a warning saying why. */
function defaultFolder(): CacheFolder {
  const without = (why: string): CacheFolder => ({ dir: false, named: false, warning: `no cache folder: ${why}; running without a cache (name one with --token-cache DIR or $${CACHE_DIR_ENV})` });
  let dir: string;
  try {
    dir = userFolder('cache');
  } catch (e) {
    if (e instanceof CtxsimError) return without(e.message);
    throw e;
  }
  if (existsSync(dir) && !statSync(dir).isDirectory()) return without(`${dir} is a file, not a folder`);
  const problem = folderProblem(dir);
  return problem ? without(`${dir} cannot be made (${problem})`) : { dir, named: false };
}
