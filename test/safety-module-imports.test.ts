import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPolicyModule } from '../src/policies/module.js';
import { scaffold } from '../src/study/init.js';
import { builtSince, runBuilt } from './_built.js';
import { tempDir } from './_tmp.js';

/**
 * A policy module's units in the replay cache are keyed on the files it
 * imports as well as its own: a pull request that changes only a file the
 * module imports is replayed, never served the base branch's records, so
 * `check` fails a regression it makes whatever the cache holds.
 */

const BUILT = builtSince('policies/module-host.ts', 'policies/module.ts', 'engine/replay-cache.ts');

/** A project made by `ctxsim init` whose policy module takes `keep` from `./helper.mjs`. */
function project(keep: number): { dir: string; module: string; helper: string } {
  const dir = join(tempDir(), 'project');
  scaffold(dir);
  const module = join(dir, 'policies', 'example-policy.mjs');
  const source = readFileSync(module, 'utf8').replace('const keep = params.keep;', 'const keep = KEEP;');
  writeFileSync(module, `import { KEEP } from './helper.mjs';\n${source}`);
  const helper = join(dir, 'policies', 'helper.mjs');
  writeFileSync(helper, `export const KEEP = ${keep};\n`);
  return { dir, module, helper };
}

describe('a policy module’s imports key its units', () => {
  it.skipIf(!BUILT)('loading tells a hash of what the module imports, which changes with an imported file; a module that imports nothing has none', async () => {
    const { module, helper } = project(0);
    const before = await loadPolicyModule(module, './policies/example-policy.mjs');
    expect(before.imports).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(helper, 'export const KEEP = 5;\n');
    const after = await loadPolicyModule(module, './policies/example-policy.mjs');
    expect(after.hash).toBe(before.hash);
    expect(after.imports).toMatch(/^[0-9a-f]{64}$/);
    expect(after.imports).not.toBe(before.imports);
    const alone = join(tempDir(), 'alone');
    scaffold(alone);
    expect((await loadPolicyModule(join(alone, 'policies', 'example-policy.mjs'), 'example-policy.mjs')).imports).toBeUndefined();
    // Named through a symbolic link (a temp folder may be one), which the loader resolves: still its own file, not an import.
    const link = join(tempDir(), 'linked');
    symlinkSync(join(alone, 'policies'), link);
    expect((await loadPolicyModule(join(link, 'example-policy.mjs'), 'example-policy.mjs')).imports).toBeUndefined();
  });

  it.skipIf(!BUILT)('ctxsim check: a change to an imported file alone is replayed and fails the gate, with the base branch’s units in the cache', async () => {
    const { dir, helper } = project(0);
    const cache = join(tempDir(), 'cache');
    const args = ['--policy', './policies/example-policy.mjs', '--token-cache', cache, '--quiet'];
    const saved = await runBuilt(['run', 'study.yaml', ...args, '--save-baseline', 'b.json', '--out', 'r'], { cwd: dir });
    expect(saved.code, saved.err).toBe(0);
    // The pull request: the module's file as it was, the file it imports keeping more exchanges.
    writeFileSync(helper, 'export const KEEP = 5;\n');
    const changed = await runBuilt(['check', 'study.yaml', ...args, '--baseline', 'b.json'], { cwd: dir });
    expect(changed.out).toContain('ctxsim check: FAILED (2 regressions)');
    expect(changed.err).not.toContain('units served');
    expect(changed.code).toBe(1);
    // Unchanged since, it is served from the cache, and fails the same.
    const again = await runBuilt(['check', 'study.yaml', ...args, '--baseline', 'b.json'], { cwd: dir });
    expect(again.err).toContain('replay cache: 2 of 2 units served');
    expect(again.code).toBe(1);
  });
});
