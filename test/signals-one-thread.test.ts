import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGING_PREFIX } from '../src/output/files.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Ctrl-C (SIGINT) or SIGTERM stops a run on one thread at once, as on
 * several: the replay gives the event loop a turn between units, so the
 * signal is heard mid-run, not once the outputs are written. Nothing is
 * committed, no staging folder stays, and the process ends by the signal
 * (130 or 143 in a shell).
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** Whether dist/ holds the compiled one-thread run: each file built after its source was changed. */
const built = ['engine/run', 'engine/parallel', 'report/outputs', 'output/files', 'cli/_output', 'cli/generate', 'cli/_scenarios', 'process'].every((f) => {
  const js = join(ROOT, 'dist', `${f}.js`);
  return existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${f}.ts`)).mtimeMs;
});
const SKIP = built ? '' : ' (skipped: dist/ is missing or stale; npm test builds it)';

/** A study that replays for a while on one thread (well under the size that would start worker threads). */
const STUDY = 'scenarios:\n  - generate: {profile: support, count: 300}\n';

const staging = (dir: string) => readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX));

/**
 * Starts the CLI with `args`; once stderr shows a progress line (the replay
 * has begun), sends `signal`. Resolves with how it ended and its stderr.
 */
function stopMidRun(args: string[], signal: NodeJS.Signals, cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let sent = false;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
    if (!sent && /^\[\d+\/\d+\] /m.test(stderr)) {
      sent = true;
      child.kill(signal);
    }
  });
  return new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, signal: sig, stderr })));
}

/** A folder with the study file and an output folder holding a previous run's files (stand-ins) and a file of the user's. */
function setUp(): { dir: string; out: string } {
  const dir = tempDir('ctxsim-signal1-');
  writeFileSync(join(dir, 'study.yaml'), STUDY);
  const out = join(dir, 'reports');
  mkdirSync(out);
  for (const f of ['report.md', 'turns.csv', 'notes.txt']) writeFileSync(join(out, f), `previous ${f}\n`);
  return { dir, out };
}

/** The output folder as the previous run left it, with no staging folder. */
function expectUntouched(out: string): void {
  expect(readdirSync(out).sort()).toEqual(['notes.txt', 'report.md', 'turns.csv']);
  for (const f of ['report.md', 'turns.csv']) expect(readFileSync(join(out, f), 'utf8')).toBe(`previous ${f}\n`);
}

const COMMON = ['--no-token-cache'];

describe('a one-thread run stopped by a signal', () => {
  // The study is too small for worker threads: the default --jobs is 1, and `--jobs 1` would run the same run.
  it.skipIf(!built).each(['SIGINT', 'SIGTERM'] as const)(`%s: stops mid-run, commits nothing, leaves no staging${SKIP}`, async (signal) => {
    const { dir, out } = setUp();
    const ended = await stopMidRun(['run', 'study.yaml', ...COMMON, '--out', out], signal, dir);
    expect(ended.signal, ended.stderr).toBe(signal);
    expect(ended.code).toBeNull();
    // Stopped early: the last progress line is far from the end.
    const last = [...ended.stderr.matchAll(/^\[(\d+)\/300\] /gm)].pop();
    expect(Number(last?.[1])).toBeLessThan(300);
    expect(staging(out)).toEqual([]);
    expectUntouched(out);
  }, 120_000);

  it.skipIf(!built)(`one output file (--out x.json), a baseline beside it: neither written, no staging beside them${SKIP}`, async () => {
    const { dir } = setUp();
    const ended = await stopMidRun(['run', 'study.yaml', '--jobs', '1', ...COMMON, '--out', 'x.json', '--save-baseline', 'base.json'], 'SIGTERM', dir);
    expect(ended.signal, ended.stderr).toBe('SIGTERM');
    expect(readdirSync(dir).sort()).toEqual(['reports', 'study.yaml']);
  }, 120_000);

  it.skipIf(!built)(`check: its report folder and JUnit file are not written${SKIP}`, async () => {
    const { dir, out } = setUp();
    // Any baseline will do: the run is stopped before the comparison.
    writeFileSync(join(dir, 'one.yaml'), 'scenarios:\n  - generate: {profile: support, count: 1}\n');
    // Made in this process: the test is about the check the signal stops.
    const saved = await cli('run', join(dir, 'one.yaml'), ...COMMON, '--quiet', '--out', join(dir, 'one.json'), '--save-baseline', join(dir, 'base.json'));
    expect(saved.code, saved.err).toBe(0);
    const ended = await stopMidRun(['check', 'study.yaml', '--baseline', 'base.json', '--jobs', '1', ...COMMON, '--out', out, '--junit', 'gate.xml'], 'SIGINT', dir);
    expect(ended.signal, ended.stderr).toBe('SIGINT');
    expect(existsSync(join(dir, 'gate.xml'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX))).toEqual([]);
    expectUntouched(out);
  }, 120_000);

  it.skipIf(!built)(`generate --out: stopped while it writes the files, writes none${SKIP}`, async () => {
    const dir = tempDir('ctxsim-signal1-');
    const out = join(dir, 'generated');
    const child = spawn(process.execPath, [MAIN, 'generate', '--profile', 'support', '--count', '1000', '--out', out], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_, sig) => r(sig)));
    // Its staging folder appears once the conversations are made; the files go into it one by one.
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (let i = 0; i < 2400 && !(existsSync(out) && staging(out).length); i++) await sleep(50);
    expect(staging(out)).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM');
    // The folder the run made is gone with its staging folder.
    expect(existsSync(out)).toBe(false);
  }, 240_000);
});
