import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { seal } from '../src/output/_seal.js';
import { COMMIT_FILE, StagedFiles, STAGING_PREFIX } from '../src/output/files.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A run killed while it moves its files into place (its commit) leaves the
 * previous run's files in its staging folder, listed in `commit.json`. The
 * next run into the folder puts them back before anything else, so the
 * previous run is whole again even when that run fails; only a run that
 * commits replaces it.
 */

const FILES = join(ROOT, 'dist', 'output', 'files.js');
const built = existsSync(FILES) && statSync(FILES).mtimeMs >= statSync(join(ROOT, 'src', 'output', 'files.ts')).mtimeMs;
const SKIP = built ? '' : ' (skipped: dist/ is missing or stale; npm test builds it)';

/** The previous run's files; the new run writes a.txt, sub/b.txt (both replace one) and c.txt (new), and retires d.txt. */
const PREVIOUS = { 'a.txt': 'old a\n', 'sub/b.txt': 'old b\n', 'd.txt': 'old d\n', 'notes.txt': 'mine\n' };
const NEW = { 'a.txt': 'new a\n', 'sub/b.txt': 'new b\n', 'c.txt': 'new c\n', 'notes.txt': 'mine\n' };

/** Moves in a commit of these files: a.txt, sub/b.txt and d.txt aside, then a.txt, sub/b.txt and c.txt in. */
const RENAMES = 6;

/**
 * A child process that stages the new run and commits it, killing itself
 * (SIGKILL) just before its `k`-th rename: the state a run killed at that
 * point of its commit leaves.
 */
const CHILD = `
import fs, { writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const [dir, k] = [process.argv[1], Number(process.argv[2])];
const rename = fs.renameSync;
let n = 0;
fs.renameSync = (from, to) => {
  if (++n === k) process.kill(process.pid, 'SIGKILL');
  return rename(from, to);
};
syncBuiltinESMExports();
const { StagedFiles } = await import(${JSON.stringify(FILES)});
const staged = new StagedFiles(dir);
staged.write('a.txt', 'new a\\n');
staged.write('sub/b.txt', 'new b\\n');
staged.write('c.txt', 'new c\\n');
staged.retire('d.txt');
staged.commit();
`;

/** Every file under `dir` but staging folders, with its text. */
function filesOf(dir: string, under = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, under), { withFileTypes: true })) {
    const name = under ? `${under}/${e.name}` : e.name;
    if (e.name.startsWith(STAGING_PREFIX)) continue;
    if (e.isDirectory()) Object.assign(out, filesOf(dir, name));
    else out[name] = readFileSync(join(dir, name), 'utf8');
  }
  return out;
}

const staging = (dir: string) => readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX));

/** A folder holding the previous run's files. */
function previousRun(): string {
  const dir = tempDir('ctxsim-recover-');
  for (const [name, text] of Object.entries(PREVIOUS)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** Runs the child that dies before rename `k`: its staging folder stays, listing the commit under way. */
function killedAt(k: number): string {
  const dir = previousRun();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, dir, String(k)], { encoding: 'utf8' });
  expect(child.signal, child.stderr).toBe('SIGKILL');
  const left = staging(dir);
  expect(left).toHaveLength(1);
  expect(existsSync(join(dir, left[0]!, COMMIT_FILE))).toBe(true);
  return dir;
}

describe('a run killed during its commit', () => {
  it.skipIf(!built).each(Array.from({ length: RENAMES }, (_, i) => i + 1))(`before move %i of the commit: a later run that fails puts the previous run back, whole${SKIP}`, (k) => {
    const dir = killedAt(k);
    // Past the first move, the previous run is no longer whole in the folder.
    if (k > 1) expect(filesOf(dir)).not.toEqual(PREVIOUS);
    const later = new StagedFiles(dir);
    later.write('a.txt', 'never\n');
    later.abort();
    expect(filesOf(dir)).toEqual(PREVIOUS);
    expect(staging(dir)).toEqual([]);
  });

  it.skipIf(!built)(`a later run that commits replaces the previous run; nothing of the dead run stays${SKIP}`, () => {
    const dir = killedAt(4);
    const later = new StagedFiles(dir);
    for (const name of ['a.txt', 'sub/b.txt', 'c.txt']) later.write(name, NEW[name as keyof typeof NEW]);
    later.retire('d.txt');
    later.commit();
    expect(filesOf(dir)).toEqual(NEW);
    expect(staging(dir)).toEqual([]);
  });

  it.skipIf(!built)(`a putting back that is itself stopped is taken up by the next run${SKIP}`, () => {
    const dir = killedAt(5);
    const [dead] = staging(dir);
    // The state mid-way through a recovery: a.txt's new file is back in new/, its previous one still aside.
    const a = join(dir, dead!, 'new', 'a.txt');
    renameSync(join(dir, 'a.txt'), a);
    new StagedFiles(dir).abort();
    expect(filesOf(dir)).toEqual(PREVIOUS);
  });

  it.skipIf(!built)(`when a previous file cannot be put back, its staging folder is kept, holding it${SKIP}`, () => {
    const dir = killedAt(RENAMES);
    // Something the recovery cannot replace where a previous file goes: a folder with a file in it.
    mkdirSync(join(dir, 'd.txt', 'x'), { recursive: true });
    new StagedFiles(dir).abort();
    const kept = staging(dir);
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dir, kept[0]!, 'old', 'd.txt'), 'utf8')).toBe('old d\n');
    expect(existsSync(join(dir, kept[0]!, COMMIT_FILE))).toBe(true);
  });

  it.skipIf(!built)(`ctxsim run: a failing run leaves the previous run whole, a succeeding one replaces it${SKIP}`, async () => {
    const dir = tempDir('ctxsim-recover-');
    const out = join(dir, 'reports');
    const scenario = join(ROOT, 'scenarios', 'kavya-late-order.yaml');
    const args = ['run', '--scenario', scenario, '--policy', 'full', '--no-token-cache', '--quiet', '--out', out];
    expect(await runMain(args, capture())).toBe(0);
    const previous = filesOf(out);
    // The state a run killed mid-commit leaves: a commit list, two previous files aside, one new file in.
    // Sealed as the dead run sealed it (a staging folder no run of this user's made is never touched).
    const name = `${STAGING_PREFIX}${deadPid()}-0a1b2c`;
    const dead = join(out, name);
    mkdirSync(join(dead, 'old'), { recursive: true });
    mkdirSync(join(dead, 'new'), { recursive: true });
    const list = { names: ['report.md', 'results.json', 'turns.csv'], retired: [] };
    writeFileSync(join(dead, 'owner'), seal('staging', realpathSync(out), name)!);
    writeFileSync(join(dead, COMMIT_FILE), JSON.stringify({ ...list, seal: seal('commit', realpathSync(out), name, JSON.stringify(list)) }));
    for (const f of ['report.md', 'results.json']) writeFileSync(join(dead, 'old', f), previous[f]!);
    writeFileSync(join(out, 'report.md'), 'the dead run’s report\n');
    writeFileSync(join(dead, 'new', 'turns.csv'), 'the dead run’s turns\n');
    // results.json is missing from the folder: aside.
    rmSync(join(out, 'results.json'));

    const failing = capture();
    expect(await runMain([...args.slice(0, 2), join(dir, 'missing.yaml'), ...args.slice(3)], failing)).toBe(2);
    expect(filesOf(out)).toEqual(previous);
    expect(staging(out)).toEqual([]);

    expect(await runMain(args, capture())).toBe(0);
    expect(Object.keys(filesOf(out)).sort()).toEqual(Object.keys(previous).sort());
    expect(filesOf(out)['report.md']).toBe(previous['report.md']);
    expect(staging(out)).toEqual([]);
  }, 120_000);
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  if (pid === undefined) throw new Error('no child process');
  return pid;
}
