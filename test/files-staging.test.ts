import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { seal } from '../src/output/_seal.js';
import { onStagingNotice, removeStaleStaging, StagedFiles, STAGING_PREFIX, writeFileAtomic } from '../src/output/files.js';
import { cacheKey, TokenCache } from '../src/tokens/token-cache.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

/** The pid of a process that has exited. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  if (pid === undefined) throw new Error('no child process');
  return pid;
}

/**
 * Makes staging folder `name` in `dir` as a run of this user's would (its
 * `owner` seal, for folder `sealedFor`); with `sealedFor` another folder, it
 * is made in `dir` sealed for that one.
 */
function ownStaging(sealedFor: string, name: string, dir = sealedFor): void {
  mkdirSync(join(dir, name, 'new'), { recursive: true });
  writeFileSync(join(dir, name, 'owner'), seal('staging', realpathSync(sealedFor), name)!);
}

const days = (n: number) => new Date(Date.now() - n * 24 * 3600 * 1000);

describe('staged files', () => {
  it('are written in one staging folder and moved into place on commit; other files stay', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.txt'), 'old a\n');
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    const staged = new StagedFiles(dir);
    const path = staged.path('a.txt');
    writeFileSync(path, 'new a\n');
    staged.write('sub/b.txt', 'new b\n');
    writeFileSync(staged.scratch('piece'), 'scratch\n');
    const staging = readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX));
    expect(staging).toHaveLength(1);
    expect(path).toBe(join(dir, staging[0]!, 'new', 'a.txt'));
    // Nothing is in place before the commit.
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('old a\n');
    expect(staged.commit()).toEqual([join(dir, 'a.txt'), join(dir, 'sub', 'b.txt')]);
    expect(readdirSync(dir).sort()).toEqual(['a.txt', 'notes.txt', 'sub']);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('new a\n');
    expect(readFileSync(join(dir, 'sub', 'b.txt'), 'utf8')).toBe('new b\n');
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('abort removes the staging folder and leaves the files as they were', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.txt'), 'old a\n');
    const staged = new StagedFiles(dir);
    staged.write('a.txt', 'new a\n');
    staged.abort();
    expect(readdirSync(dir)).toEqual(['a.txt']);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('old a\n');
  });

  it('a commit that fails halfway puts the previous files back', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.txt'), 'old a\n');
    writeFileSync(join(dir, 'b.txt'), 'old b\n');
    const staged = new StagedFiles(dir);
    staged.write('a.txt', 'new a\n');
    const b = staged.path('b.txt');
    // b.txt is never written: its move fails after a.txt's succeeded.
    expect(() => staged.commit()).toThrow(/ENOENT/);
    staged.abort();
    expect(readdirSync(dir).sort()).toEqual(['a.txt', 'b.txt']);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('old a\n');
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('old b\n');
    expect(b.startsWith(join(dir, STAGING_PREFIX))).toBe(true);
  });

  it('a later run removes staging folders of dead runs and old ones, and keeps live recent ones', () => {
    const dir = tempDir();
    const dead = `${STAGING_PREFIX}${deadPid()}-ab12`;
    const live = `${STAGING_PREFIX}${process.pid}-cd34`;
    const ancient = `${STAGING_PREFIX}${process.pid}-ef56`;
    for (const f of [dead, live, ancient]) ownStaging(dir, f);
    writeFileSync(join(dir, dead, 'new', 'turns.csv'), 'x'.repeat(1000));
    utimesSync(join(dir, ancient), days(8), days(8));
    // Not a staging folder's name: never touched.
    mkdirSync(join(dir, `${STAGING_PREFIX}notes`));
    expect(removeStaleStaging(dir).sort()).toEqual([ancient, dead].sort());
    expect(readdirSync(dir).sort()).toEqual([live, `${STAGING_PREFIX}notes`].sort());
    // Any run into the folder does it.
    const other = `${STAGING_PREFIX}${deadPid()}-9f`;
    ownStaging(dir, other);
    writeFileAtomic(join(dir, 'gate.xml'), '<x/>\n');
    expect(readdirSync(dir).sort()).toEqual([live, `${STAGING_PREFIX}notes`, 'gate.xml'].sort());
  });

  it('a staging folder of a dead run that no run of this user made for this folder is left as it is, and said once', () => {
    const dir = tempDir();
    const lines: string[] = [];
    const was = onStagingNotice((line) => lines.push(line));
    try {
      const planted = `${STAGING_PREFIX}${deadPid()}-ab12`;
      mkdirSync(join(dir, planted, 'new'), { recursive: true });
      // Sealed, but for another folder: not this one's.
      const moved = `${STAGING_PREFIX}${deadPid()}-cd34`;
      ownStaging(tempDir(), moved, dir);
      expect(removeStaleStaging(dir)).toEqual([]);
      writeFileAtomic(join(dir, 'gate.xml'), '<x/>\n');
      expect(readdirSync(dir).sort()).toEqual([planted, moved, 'gate.xml'].sort());
      const why = 'not made by a ctxsim run of this user for this folder; if no run of yours is using it, look inside and remove it';
      expect(lines.sort()).toEqual([`${join(dir, moved)}: left as it is: ${why}`, `${join(dir, planted)}: left as it is: ${why}`].sort());
    } finally {
      onStagingNotice(was);
    }
  });
});

describe('targets that are not regular files are refused', () => {
  it('a FIFO', () => {
    const dir = tempDir();
    const fifo = join(dir, 'gate.xml');
    execFileSync('mkfifo', [fifo]);
    expect(() => writeFileAtomic(fifo, '<x/>\n')).toThrow(`${fifo}: is a FIFO, not a regular file; refusing to write it`);
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(['gate.xml']);
    const staged = new StagedFiles(dir);
    expect(() => staged.path('gate.xml')).toThrow(`${fifo}: is a FIFO, not a regular file; refusing to write it`);
    staged.abort();
    expect(readdirSync(dir)).toEqual(['gate.xml']);
  });

  it('/dev/null', () => {
    expect(() => writeFileAtomic('/dev/null', 'x')).toThrow('/dev/null: is a device, not a regular file; refusing to write it');
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    expect(readdirSync('/dev').filter((f) => f.startsWith(STAGING_PREFIX))).toEqual([]);
  });

  it('check --junit FIFO: one line, exit 2', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'gate.xml');
    execFileSync('mkfifo', [fifo]);
    const io = capture();
    const code = await runMain(['check', '--baseline', join(dir, 'b.json'), '--junit', fifo, '--quiet'], io);
    // The baseline is read after the output is checked: the FIFO is named first.
    expect(io.stderr).toBe(`ctxsim: ${fifo}: is a FIFO, not a regular file; refusing to write it\n`);
    expect(code).toBe(2);
    expect(statSync(fifo).isFIFO()).toBe(true);
  });
});

describe('the token cache lock', () => {
  const ID = 'o200k_base@test';
  it.each([
    ['a file', (p: string) => writeFileSync(p, '')],
    ['a folder', (p: string) => mkdirSync(join(p, 'inside'), { recursive: true })],
  ])('left over as %s by a run that died is broken at once, not waited on', (_, make) => {
    const dir = tempDir();
    const c = TokenCache.open(dir, ID);
    const lock = `${c.file}.lock`;
    mkdirSync(dirname(lock), { recursive: true });
    make(lock);
    utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    c.put(cacheKey('four'), { tokens: 4, estimated: false });
    const start = Date.now();
    expect(c.save()).toEqual([]);
    // The wait for a held lock is 10 s: well under it, with room for a busy machine.
    expect(Date.now() - start).toBeLessThan(8000);
    expect(readdirSync(dirname(c.file))).toEqual([basename(c.file)]);
    expect(TokenCache.open(dir, ID).loaded).toBe(1);
  });
});
