import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * Vitest global setup: the suite must remove every temp folder it makes
 * (`test/_tmp.ts` does it for a test). Teardown fails the run naming any
 * `ctxsim-*` entry of the temp folder that appeared while it ran.
 */
const ours = () => new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('ctxsim-')));

let before = new Set<string>();

export function setup(): void {
  before = ours();
}

export function teardown(): void {
  const left = [...ours()].filter((f) => !before.has(f));
  if (!left.length) return;
  process.exitCode = 1;
  throw new Error(`the tests left ${left.length} temp folder(s) behind in ${tmpdir()}: ${left.slice(0, 5).join(', ')}${left.length > 5 ? ', …' : ''}`);
}
