/**
 * Setup of the `unit` test project (vitest.config.ts): a unit test runs in
 * this process only. Starting a child process or a worker thread (which
 * runs the built package, dist/) throws here, naming the file and what
 * to do: a test that needs either belongs to the `cli` project, which
 * `test/_projects.ts` decides from the test's text.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import workerThreads from 'node:worker_threads';
import { afterAll, expect } from 'vitest';

/** The repository's root (a test may have changed the working folder). */
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

const STARTS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

/** What the tripwire caught in the running file (shared with the test of the projects, which trips it on purpose). */
export const TRIPPED: string[] = ((globalThis as { [k: symbol]: string[] })[Symbol.for('ctxsim.unit.tripped')] ??= []);

function trip(what: string): never {
  const path = expect.getState().testPath;
  const file = path ? relative(ROOT, path) : 'a unit test';
  const line = `${file} ${what}: it belongs to the cli project (test/_projects.ts says which text puts a test there)`;
  TRIPPED.push(line);
  throw new Error(line);
}

const cp = childProcess as unknown as Record<string, unknown>;
if (!(cp.spawn as { tripwire?: true }).tripwire) {
  for (const name of STARTS) cp[name] = Object.assign(() => trip(`starts a child process (child_process.${name})`), { tripwire: true });
  (workerThreads as unknown as Record<string, unknown>).Worker = class {
    constructor() {
      trip('starts a worker thread (the built package runs on it)');
    }
  };
  // The named imports of node:child_process and node:worker_threads see the replacements too.
  syncBuiltinESMExports();
}

// A test that catches the error (a helper that falls back when a command is missing) still fails its file.
afterAll(() => {
  const caught = TRIPPED.splice(0);
  if (caught.length) throw new Error(caught.join('\n'));
});
