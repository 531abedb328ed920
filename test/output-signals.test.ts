import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGING_PREFIX } from '../src/output/files.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A run stopped by Ctrl-C (SIGINT) or SIGTERM removes its staging folder and
 * ends by the signal (exit status 130 or 143 in a shell); the output folder
 * keeps the previous run's files.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** Whether dist/ holds the compiled signal handling: each file built after its source was changed. */
const built = ['output/files', 'cli/_output', 'cli/main'].every((f) => {
  const js = join(ROOT, 'dist', `${f}.js`);
  return existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${f}.ts`)).mtimeMs;
});

// Several scenarios on worker threads: the main thread is free to take the signal at once.
const ARGS = [MAIN, 'run', '--scenario', join(ROOT, 'scenarios', '*.yaml'), '--jobs', '2', '--no-token-cache', '--quiet'];
const staging = (dir: string) => readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `ready()` holds or the child has exited, looking every 25 ms for up to a minute: a busy machine starts the CLI slowly. */
async function until(ready: () => boolean, child: ChildProcess): Promise<void> {
  for (const end = Date.now() + 60_000; !ready() && child.exitCode === null && child.signalCode === null && Date.now() < end; ) await sleep(25);
}

describe('a run stopped by a signal', () => {
  it.skipIf(!built).each(['SIGINT', 'SIGTERM'] as const)(`%s: leaves no staging folder and the previous files${built ? '' : ' (skipped: dist/ is missing or stale; npm test builds it)'}`, async (signal) => {
    const out = tempDir('ctxsim-signal-');
    for (const f of ['report.md', 'turns.csv', 'notes.txt']) writeFileSync(join(out, f), `previous ${f}\n`);
    const child = spawn(process.execPath, [...ARGS, '--out', out], { stdio: 'ignore' });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
    await until(() => staging(out).length > 0, child);
    expect(staging(out)).toHaveLength(1);
    await sleep(200);
    child.kill(signal);
    // Ended by the signal itself, as without a handler: a shell says 130 (SIGINT) or 143 (SIGTERM).
    expect(await exited).toEqual({ code: null, signal });
    expect(readdirSync(out).sort()).toEqual(['notes.txt', 'report.md', 'turns.csv']);
    for (const f of ['report.md', 'turns.csv']) expect(readFileSync(join(out, f), 'utf8')).toBe(`previous ${f}\n`);
  });

  it.skipIf(!built)('an output folder the run made is removed with its staging folder', async () => {
    const out = join(tempDir('ctxsim-signal-'), 'reports');
    const child = spawn(process.execPath, [...ARGS, '--out', out], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_, signal) => r(signal)));
    await until(() => existsSync(out) && staging(out).length > 0, child);
    await sleep(200);
    child.kill('SIGINT');
    expect(await exited).toBe('SIGINT');
    expect(existsSync(out)).toBe(false);
  });
});
