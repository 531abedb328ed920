import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ctxsim, moduleText, NOAH, project } from './_hostile-module.js';
import { builtSince } from './_built.js';

/**
 * A policy module's time limits start once its thread has loaded ctxsim's
 * own code (module-link.ts `HOST_READY`), not when the thread starts: on a
 * busy machine a thread can take seconds to start, and that is not the
 * module's. Here each thread that hosts a module (its `workerData` is the
 * host's setup: the modules, their memory and its task) is held 1.5 s before
 * anything of ctxsim loads (a preloaded module), while the run's own
 * threads start at once and ask for the module; a well-behaved module must
 * still be described, load and run within a 1 s limit.
 */

const built = builtSince('policies/module-link.ts');

/** Preloaded in every thread of the CLI: a module's host thread sleeps before its own code loads. */
const SLOW_START = `import { workerData } from 'node:worker_threads';
if (workerData && Object.keys(workerData).sort().join() === 'memoryMb,modules,task') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
`;

describe.skipIf(!built)(`a policy module's time limits${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
  it('start when its thread is ready: a host thread 1.5 s slow to start does not eat into a 1 s limit, describing the module or loading it for the run’s sessions (--jobs 2)', { timeout: 120_000 }, async () => {
    const { dir, file } = project(moduleText(''));
    const slow = join(dir, 'slow-start.mjs');
    writeFileSync(slow, SLOW_START);
    const r = await ctxsim(['run', '--scenario', NOAH, '--policy', file, '--tokenizer', 'chars4', '--no-token-cache', '--quiet', '--policy-timeout', '1', '--jobs', '2', '--out', '-'], dir, undefined, ['--import', pathToFileURL(slow).href]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^scenario,policy,turn,/);
    expect(r.out).toContain('noah-amnesia,hostile,');
  });
});
