import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGING_PREFIX } from '../src/output/files.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';
import { builtSince } from './_built.js';

/**
 * A run killed with SIGKILL in the middle leaves its staging folder and
 * nothing else: the output folder keeps the previous run's files, whole;
 * the next run removes the staging folder and writes every output.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const built = builtSince('output/files.ts');

const CHARTS = ['cost-breakdown', 'cost-by-turn', 'retention-by-age', 'retention-vs-cost', 'tokens-by-turn'];
const OUTPUTS = [
  ...['policies.csv', 'probes.csv', 'report.html', 'report.md', 'results.json', 'summary.csv', 'turns.csv', 'violations.csv'],
  ...CHARTS.flatMap((c) => [`${c}.png`, `${c}.svg`, `${c}.vl.json`]),
].sort();

const ARGS = [MAIN, 'run', '--scenario', join(ROOT, 'scenarios', 'coding-help-long.yaml'), '--no-token-cache', '--quiet'];
const staging = (dir: string) => readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `ready()` holds or the child has exited, looking every 25 ms for up to a minute: a busy machine starts the CLI slowly. */
async function until(ready: () => boolean, child: ChildProcess): Promise<void> {
  for (const end = Date.now() + 60_000; !ready() && child.exitCode === null && child.signalCode === null && Date.now() < end; ) await sleep(25);
}

describe('a run killed mid-run', () => {
  it.skipIf(!built)(`leaves no mix of two runs, and the next run cleans up after it${built ? '' : ' (skipped: dist/ is missing or stale; npm test builds it)'}`, async () => {
    const out = tempDir('ctxsim-kill-');
    // The previous run's outputs (stand-ins), and a file of the user's.
    for (const f of OUTPUTS) writeFileSync(join(out, f), `previous ${f}\n`);
    writeFileSync(join(out, 'notes.txt'), 'mine\n');

    const child = spawn(process.execPath, [...ARGS, '--out', out], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_, signal) => r(signal)));
    // Killed once its staging folder has existed for a while: records are streaming into it.
    await until(() => staging(out).length > 0, child);
    expect(staging(out)).toHaveLength(1);
    await sleep(700);
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // Every output present is the previous run's, whole; the staging folder is all the dead run left.
    const left = readdirSync(out).sort();
    expect(left.filter((f) => !f.startsWith(STAGING_PREFIX))).toEqual([...OUTPUTS, 'notes.txt'].sort());
    for (const f of OUTPUTS) expect(readFileSync(join(out, f), 'utf8'), f).toBe(`previous ${f}\n`);
    const dead = staging(out);
    expect(dead).toHaveLength(1);

    const again = spawnSync(process.execPath, [...ARGS, '--out', out], { encoding: 'utf8' });
    expect(again.status, again.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual([...OUTPUTS, 'notes.txt'].sort());
    for (const f of OUTPUTS) expect(readFileSync(join(out, f), 'utf8').startsWith('previous '), f).toBe(false);
    expect(readFileSync(join(out, 'turns.csv'), 'utf8').split('\n').length).toBeGreaterThan(100);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine\n');
  }, 120_000);
});
