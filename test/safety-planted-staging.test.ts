import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { seal } from '../src/output/_seal.js';
import { defaultOutFolder } from '../src/study/confine.js';
import { COMMIT_FILE, onStagingNotice, removeStaleStaging, STAGING_PREFIX } from '../src/output/files.js';
import { runBuilt } from './_built.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * An output folder may come with a checkout of someone else's (a pull
 * request's): a staging folder planted there, with a commit list naming
 * files outside the folder, must make no run write, move or remove anything
 * outside it. The planted folder is left as it is and said in one line.
 */

/** The pid of a process that has exited. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  if (pid === undefined) throw new Error('no child process');
  return pid;
}

const SCENARIO = join(ROOT, 'scenarios', 'kavya-late-order.yaml');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/**
 * A machine with a victim's files beside a project: `root/victim.txt` (the
 * planted list would overwrite it) and `root/secret.txt` (it would move it
 * into the project).
 */
function machine() {
  const root = tempDir();
  writeFileSync(join(root, 'victim.txt'), 'victim\n');
  writeFileSync(join(root, 'secret.txt'), 'secret\n');
  const project = join(root, 'project');
  mkdirSync(project);
  return { root, project };
}

/**
 * Plants in output folder `dir` (two levels below the machine's root) what
 * a hostile checkout ships: a staging folder of a dead run whose commit list
 * names `../../victim.txt` (with a payload where a roll back would take the
 * previous file from) and `../../secret.txt`.
 */
function plant(dir: string): string {
  const name = `${STAGING_PREFIX}${deadPid()}-abcdef`;
  const staging = join(dir, name);
  mkdirSync(join(staging, 'old'), { recursive: true });
  writeFileSync(join(staging, COMMIT_FILE), JSON.stringify({ names: ['../../victim.txt', '../../secret.txt'], retired: [] }));
  // join(staging, 'old', '../../victim.txt') is dir/victim.txt.
  writeFileSync(join(dir, 'victim.txt'), 'payload\n');
  writeFileSync(join(staging, 'owner'), 'f'.repeat(64));
  return staging;
}

/** Checks that nothing outside the project changed and the planted folder is still there, said once on stderr. */
function unharmed(root: string, staging: string, stderr: string): void {
  expect(readFileSync(join(root, 'victim.txt'), 'utf8')).toBe('victim\n');
  expect(readFileSync(join(root, 'secret.txt'), 'utf8')).toBe('secret\n');
  expect(readdirSync(staging).sort()).toEqual([COMMIT_FILE, 'old', 'owner']);
  const said = stderr.split('\n').filter((l) => l.includes(STAGING_PREFIX));
  expect(said).toEqual([`ctxsim: warning: ${staging}: left as it is: not made by a ctxsim run of this user for this folder; if no run of yours is using it, look inside and remove it`]);
}

describe('a staging folder planted in an output folder', () => {
  // Every command that writes files, each into a folder holding a planted staging folder.
  const commands: [string, (p: string) => { args: string[]; dir: string; before?: () => Promise<void> }][] = [
    ['run --out DIR', (p) => ({ args: ['run', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--out', join(p, 'reports')], dir: join(p, 'reports') })],
    ['run --out FILE.csv', (p) => ({ args: ['run', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--out', join(p, 'out', 'turns.csv')], dir: join(p, 'out') })],
    ['run --save-baseline', (p) => ({ args: ['run', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--out', join(p, 'reports'), '--save-baseline', join(p, 'ci', 'baseline.json')], dir: join(p, 'ci') })],
    [
      'check --junit --out (the workflow init writes)',
      (p) => ({
        args: ['check', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--baseline', join(p, 'baseline.json'), '--junit', join(p, 'ctxsim-reports', 'junit.xml'), '--out', join(p, 'ctxsim-reports')],
        dir: join(p, 'ctxsim-reports'),
        before: async () => {
          expect(await runMain(['run', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--out', join(p, 'first'), '--save-baseline', join(p, 'baseline.json')], capture())).toBe(0);
        },
      }),
    ],
    [
      'merge --out DIR',
      (p) => ({
        args: ['merge', join(p, 'shard'), '--quiet', '--out', join(p, 'merged')],
        dir: join(p, 'merged'),
        before: async () => {
          expect(await runMain(['run', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--shard', '1/1', '--out', join(p, 'shard')], capture())).toBe(0);
        },
      }),
    ],
    ['import --out DIR', (p) => ({ args: ['import', '--format', 'openai', join(ROOT, 'test', 'fixtures', 'import', 'openai-chats.jsonl'), '--out', join(p, 'imported')], dir: join(p, 'imported') })],
    ['generate --out DIR', (p) => ({ args: ['generate', '--profile', 'support', '--count', '1', '--seed', '1', '--out', join(p, 'generated')], dir: join(p, 'generated') })],
    ['init DIR', (p) => ({ args: ['init', join(p, 'new')], dir: join(p, 'new') })],
  ];

  it.each(commands)('%s: writes nothing outside, leaves it as it is, says so in one line', async (_, make) => {
    const { root, project } = machine();
    const { args, dir, before } = make(project);
    await before?.();
    mkdirSync(dir, { recursive: true });
    const staging = plant(dir);
    const io = capture();
    const code = await runMain(args, io);
    expect(io.stderr.replace(/^.*staging.*\n/gm, '')).not.toMatch(/error/);
    expect(code).toBe(0);
    unharmed(root, staging, io.stderr);
  });
});

describe('the key that seals staging folders', () => {
  it('is made once in the state folder, 32 bytes readable by the user alone', async () => {
    const { project } = machine();
    expect(await runMain(['generate', '--profile', 'support', '--count', '1', '--seed', '1', '--out', join(project, 'g')], capture())).toBe(0);
    const key = join(process.env.XDG_STATE_HOME!, 'ctxsim', 'staging.key');
    const st = statSync(key);
    expect(st.isFile()).toBe(true);
    expect(st.size).toBe(32);
    expect(st.mode & 0o777).toBe(0o600);
    expect(readdirSync(join(process.env.XDG_STATE_HOME!, 'ctxsim'))).toEqual(['staging.key']);
  });
});

describe('a commit list sealed by this user that names a file outside the folder', () => {
  /** A sealed staging folder as a run of this user's makes it, holding a sealed commit list of `names`. */
  function sealedStaging(dir: string, names: string[]): string {
    const name = `${STAGING_PREFIX}${deadPid()}-abcdef`;
    const staging = join(dir, name);
    const real = realpathSync(dir);
    mkdirSync(join(staging, 'old'), { recursive: true });
    writeFileSync(join(staging, 'owner'), seal('staging', real, name)!);
    const list = { names, retired: [] };
    writeFileSync(join(staging, COMMIT_FILE), JSON.stringify({ ...list, seal: seal('commit', real, name, JSON.stringify(list)) }));
    return staging;
  }

  /** removeStaleStaging on `dir`, with the lines it says. */
  function clean(dir: string): { removed: string[]; said: string[] } {
    const said: string[] = [];
    const was = onStagingNotice((line) => said.push(line));
    try {
      return { removed: removeStaleStaging(dir), said };
    } finally {
      onStagingNotice(was);
    }
  }

  it.each([['../../victim.txt'], ['/etc/passwd'], ['a/../../victim.txt'], ['./x'], ['a\\..\\b'], ['']])('%j is not a plain name: left as it is', (bad) => {
    const { root, project } = machine();
    const dir = join(project, 'reports');
    mkdirSync(dir);
    writeFileSync(join(dir, 'victim.txt'), 'payload\n');
    const staging = sealedStaging(dir, ['report.md', bad]);
    const { removed, said } = clean(dir);
    expect(removed).toEqual([]);
    expect(said).toEqual([`${staging}: left as it is: its commit list names ${JSON.stringify(bad)}, not a plain name inside the folder; if no run of yours is using it, look inside and remove it`]);
    expect(readFileSync(join(root, 'victim.txt'), 'utf8')).toBe('victim\n');
    expect(existsSync(join(staging, COMMIT_FILE))).toBe(true);
  });

  it('a name that leads through a link: left as it is', () => {
    const { root, project } = machine();
    const dir = join(project, 'reports');
    mkdirSync(dir);
    symlinkSync(root, join(dir, 'charts'));
    const staging = sealedStaging(dir, ['charts/victim.txt']);
    mkdirSync(join(staging, 'old', 'charts'));
    writeFileSync(join(staging, 'old', 'charts', 'victim.txt'), 'payload\n');
    const { removed, said } = clean(dir);
    expect(removed).toEqual([]);
    expect(said).toEqual([`${staging}: left as it is: its commit list names "charts/victim.txt", which leads through a link; if no run of yours is using it, look inside and remove it`]);
    expect(readFileSync(join(root, 'victim.txt'), 'utf8')).toBe('victim\n');
  });

  it('a list whose seal does not check (edited after it was sealed): left as it is', () => {
    const { project } = machine();
    const dir = join(project, 'reports');
    mkdirSync(dir);
    const staging = sealedStaging(dir, ['report.md']);
    const list = JSON.parse(readFileSync(join(staging, COMMIT_FILE), 'utf8')) as { names: string[] };
    list.names.push('notes.md');
    writeFileSync(join(staging, COMMIT_FILE), JSON.stringify(list));
    writeFileSync(join(dir, 'notes.md'), 'mine\n');
    const { removed, said } = clean(dir);
    expect(removed).toEqual([]);
    expect(said).toEqual([`${staging}: left as it is: its commit list was not written by a ctxsim run of this user for this folder; if no run of yours is using it, look inside and remove it`]);
    expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('mine\n');
  });

  it('a plain list is rolled back as before', () => {
    const { project } = machine();
    const dir = join(project, 'reports');
    mkdirSync(dir);
    writeFileSync(join(dir, 'report.md'), 'new\n');
    const staging = sealedStaging(dir, ['report.md']);
    mkdirSync(join(staging, 'new'));
    writeFileSync(join(staging, 'old', 'report.md'), 'previous\n');
    const { removed, said } = clean(dir);
    expect(said).toEqual([]);
    expect(removed).toHaveLength(1);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toBe('previous\n');
    expect(readdirSync(dir)).toEqual(['report.md']);
  });
});

describe('a planted link where the default output folder goes', () => {
  it('refuses reports/ when it leads out of the working folder, and takes it when it stays inside', () => {
    const { root, project } = machine();
    symlinkSync(root, join(project, 'reports'));
    expect(() => defaultOutFolder('reports', project)).toThrow(`reports/, the default output folder, leads to ${realpathSync(root)}, outside the working folder: a command writes there only when --out names it`);
    const inside = tempDir();
    mkdirSync(join(inside, 'elsewhere'));
    symlinkSync('elsewhere', join(inside, 'reports'));
    expect(defaultOutFolder('reports', inside)).toBe(join(inside, 'reports'));
  });

  // run through the built CLI in this process, merge in a process of its own (its exit status and its stderr alone).
  it.skipIf(!existsSync(CLI))('ctxsim run and ctxsim merge without --out: exit 2 in one line, nothing written outside', async () => {
    const { root, project } = machine();
    const outside = join(root, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, join(project, 'reports'));
    const line = `ctxsim: reports/, the default output folder, leads to ${realpathSync(outside)}, outside the working folder: a command writes there only when --out names it\n`;
    const run = await runBuilt(['run', '--scenario', SCENARIO, '--policy', 'full', '--quiet'], { cwd: project });
    expect([run.code, run.err]).toEqual([2, line]);
    const merge = spawnSync(process.execPath, [CLI, 'merge', 'shards'], { cwd: project, encoding: 'utf8' });
    expect([merge.status, merge.stderr]).toEqual([2, line]);
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe('a planted link where a named output goes', () => {
  /** A project whose `ctxsim-reports` (the folder the workflow `init` writes names) is a link out of it, as a checkout can ship. */
  function linked(): { project: string; outside: string } {
    const { root, project } = machine();
    const outside = join(root, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, join(project, 'ctxsim-reports'));
    mkdirSync(join(project, 'kept'));
    symlinkSync('kept', join(project, 'inside'));
    return { project, outside };
  }

  // The built CLI in this process (each refusal, and the runs that write), and once in a process of its own.
  it.skipIf(!existsSync(CLI))('--out, --junit, --save-baseline, import --out through a link in the working folder that leads out: exit 2 in one line, nothing written there', async () => {
    const { project, outside } = linked();
    const refusal = (flag: string, named: string) =>
      `ctxsim: ${flag} ${named}: ctxsim-reports is a symbolic link in the working folder that leads out of it (to ${realpathSync(outside)}); an output is never written through one: name the folder it leads to\n`;
    const run = ['run', '--scenario', SCENARIO, '--policy', 'full', '--no-token-cache', '--quiet'];
    for (const [args, flag, named] of [
      [[...run, '--out', 'ctxsim-reports'], '--out', 'ctxsim-reports'],
      [[...run, '--out', 'ctxsim-reports/sub/'], '--out', 'ctxsim-reports/sub/'],
      [[...run, '--out', 'ctxsim-reports/turns.csv'], '--out', 'ctxsim-reports/turns.csv'],
      [[...run, '--out', 'r', '--save-baseline', 'ctxsim-reports/baseline.json'], '--save-baseline', 'ctxsim-reports/baseline.json'],
      [['check', '--scenario', SCENARIO, '--policy', 'full', '--baseline', 'b.json', '--junit', 'ctxsim-reports/gate.xml'], '--junit', 'ctxsim-reports/gate.xml'],
      [['import', SCENARIO, '--format', 'openai', '--out', 'ctxsim-reports'], '--out', 'ctxsim-reports'],
    ] as const) {
      const r = await runBuilt(args, { cwd: project });
      expect(r.err).toBe(refusal(flag, named));
      expect(r.code).toBe(2);
    }
    // The command line's own process, once: its stderr is that line alone, its exit status 2.
    const r = spawnSync(process.execPath, [CLI, ...run, '--out', 'ctxsim-reports'], { cwd: project, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([2, refusal('--out', 'ctxsim-reports')]);
    expect(readdirSync(outside)).toEqual([]);
    // A link that stays inside the working folder, and a folder named outside it, are written as named.
    const inside = await runBuilt([...run, '--out', 'inside/r'], { cwd: project });
    expect(inside.code, inside.err).toBe(0);
    expect(readdirSync(join(project, 'kept', 'r'))).toContain('report.md');
    const there = await runBuilt([...run, '--out', join(outside, 'r')], { cwd: project });
    expect(there.code, there.err).toBe(0);
    expect(readdirSync(outside)).toEqual(['r']);
  });
});
