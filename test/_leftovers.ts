import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STAGING_PREFIX } from '../src/output/files.js';

/**
 * Vitest global setup: the suite must remove every temp folder it makes
 * (`test/_tmp.ts` does it for a test). Teardown fails the run naming any
 * `ctxsim-*` entry of the temp folder that appeared while it ran, and any
 * staging folder (`.ctxsim-staging-*`) an output streamed to stdout left there.
 *
 * A run that names no cache folder uses `$CTXSIM_CACHE_DIR`: the suite's is
 * a temp folder of its own, removed at the end, so no test writes a cache
 * into the working tree or reads one an earlier run left there. A test that
 * clears the variable (or a child it starts without it) gets the user's
 * folders: `$XDG_CACHE_HOME` and `$XDG_STATE_HOME` name temp folders too,
 * so no test writes into the real ones.
 */
const ours = () => new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('ctxsim-') || f.startsWith(STAGING_PREFIX)));

let before = new Set<string>();
let cache = '';
let home = '';

export function setup(): void {
  before = ours();
  cache = mkdtempSync(join(tmpdir(), 'ctxsim-suite-cache-'));
  process.env.CTXSIM_CACHE_DIR = cache;
  home = mkdtempSync(join(tmpdir(), 'ctxsim-suite-home-'));
  process.env.XDG_CACHE_HOME = join(home, 'cache');
  process.env.XDG_STATE_HOME = join(home, 'state');
}

export function teardown(): void {
  rmSync(cache, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  const left = [...ours()].filter((f) => !before.has(f));
  if (!left.length) return;
  process.exitCode = 1;
  throw new Error(`the tests left ${left.length} temp folder(s) behind in ${tmpdir()}: ${left.slice(0, 5).join(', ')}${left.length > 5 ? ', …' : ''}`);
}
