import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cacheFolderOf } from '../src/cli/_cache-folder.js';
import { CtxsimError, UsageError } from '../src/errors.js';
import { userFolder } from '../src/process.js';
import { entryHeader } from '../src/store/entry.js';
import { checkoutOf } from '../src/study/confine.js';
import { scaffold } from '../src/study/init.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The cache folder lies outside the trust boundary of a checkout: by
 * default the user's cache folder, never the working folder; a folder
 * reached through a link planted in the working folder is refused; `check`
 * runs without a named folder that lies in the checkout, and says when a
 * cache served units and from where.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('userFolder', () => {
  it('is $XDG_CACHE_HOME/ctxsim (or $XDG_STATE_HOME/ctxsim) when absolute, on any system; else the system’s place', () => {
    expect(userFolder('cache', { XDG_CACHE_HOME: '/x/cache', HOME: '/home/me' }, 'linux')).toBe('/x/cache/ctxsim');
    expect(userFolder('state', { XDG_STATE_HOME: '/x/state', HOME: '/home/me' }, 'darwin')).toBe('/x/state/ctxsim');
    // A relative XDG path is invalid (the XDG spec): ignored.
    expect(userFolder('cache', { XDG_CACHE_HOME: 'rel', HOME: '/home/me' }, 'linux')).toBe('/home/me/.cache/ctxsim');
    expect(userFolder('state', { HOME: '/home/me' }, 'linux')).toBe('/home/me/.local/state/ctxsim');
    expect(userFolder('cache', { HOME: '/Users/me' }, 'darwin')).toBe('/Users/me/Library/Caches/ctxsim');
    expect(userFolder('state', { HOME: '/Users/me' }, 'darwin')).toBe('/Users/me/Library/Application Support/ctxsim');
    expect(userFolder('cache', { LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' }, 'win32')).toBe('C:\\Users\\me\\AppData\\Local\\ctxsim\\Cache');
    expect(userFolder('state', { USERPROFILE: 'C:\\Users\\me' }, 'win32')).toBe('C:\\Users\\me\\AppData\\Local\\ctxsim\\State');
  });

  it('with no home folder: a CtxsimError saying so', () => {
    expect(() => userFolder('cache', {}, 'linux')).toThrow(new CtxsimError('HOME is not set and the system names no home folder', 'no-home'));
    expect(() => userFolder('cache', { HOME: 'relative' }, 'darwin')).toThrow(new CtxsimError('HOME is not an absolute path (relative) and the system names no home folder', 'no-home'));
  });
});

describe('the cache folder of a command', () => {
  it('is the user’s cache folder unless named', () => {
    const home = tempDir();
    vi.stubEnv('CTXSIM_CACHE_DIR', '');
    vi.stubEnv('XDG_CACHE_HOME', home);
    expect(cacheFolderOf(undefined, tempDir())).toEqual({ dir: join(home, 'ctxsim'), named: false });
  });

  it.skipIf(!existsSync(MAIN))('ctxsim run with no cache named fills the user’s cache folder, and writes nothing in the working folder but its output', () => {
    const home = tempDir();
    const cwd = tempDir();
    const env = { ...process.env, CTXSIM_CACHE_DIR: '', XDG_CACHE_HOME: home };
    const r = spawnSync(process.execPath, [MAIN, 'run', '--scenario', join(ROOT, 'scenarios', 'noah-amnesia.yaml'), '--policy', 'full', '--out', 'out', '--quiet'], { cwd, env, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(join(home, 'ctxsim')).sort()).toEqual(['charts', 'replay', 'tokens']);
    expect(readdirSync(cwd)).toEqual(['out']);
  });

  it('a default folder that cannot be made is one warning, and the run goes without a cache', async () => {
    const dir = tempDir();
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    vi.stubEnv('CTXSIM_CACHE_DIR', '');
    vi.stubEnv('XDG_CACHE_HOME', file);
    const warning = `no cache folder: ${join(file, 'ctxsim')} cannot be made (ENOTDIR); running without a cache (name one with --token-cache DIR or $CTXSIM_CACHE_DIR)`;
    expect(cacheFolderOf(undefined)).toEqual({ dir: false, named: false, warning });
    const r = await cli('run', '--scenario', join(ROOT, 'scenarios', 'noah-amnesia.yaml'), '--policy', 'full', '--out', join(dir, 'out.json'), '--quiet');
    expect(r.err).toBe(`ctxsim: warning: ${warning}\n`);
    expect(r.code).toBe(0);
    expect((await cli('cache', 'info')).err).toBe(`ctxsim: cache: no cache folder: ${join(file, 'ctxsim')} cannot be made (ENOTDIR) (name one with --token-cache DIR or $CTXSIM_CACHE_DIR)\n`);
  });

  it('a named folder reached through a symbolic link in the working folder is refused: the flag’s and the variable’s', () => {
    const cwd = tempDir();
    const outside = tempDir();
    symlinkSync(outside, join(cwd, '.ctxsim-cache'));
    const refusal = (how: string, named: string) =>
      new UsageError(`${how} ${named}: ${join(cwd, '.ctxsim-cache')} is a symbolic link in the working folder (to ${outside}); a cache folder is never reached through one: name the folder itself`);
    expect(() => cacheFolderOf(join(cwd, '.ctxsim-cache'), cwd)).toThrow(refusal('--token-cache', join(cwd, '.ctxsim-cache')));
    expect(() => cacheFolderOf(join(cwd, '.ctxsim-cache', 'sub'), cwd)).toThrow(refusal('--token-cache', join(cwd, '.ctxsim-cache', 'sub')));
    vi.stubEnv('CTXSIM_CACHE_DIR', join(cwd, '.ctxsim-cache'));
    expect(() => cacheFolderOf(undefined, cwd)).toThrow(refusal('CTXSIM_CACHE_DIR', join(cwd, '.ctxsim-cache')));
    // Nothing was made where it leads.
    expect(readdirSync(outside)).toEqual([]);
    // A link above the working folder is the user's own: followed.
    const work = join(cwd, '.ctxsim-cache', 'work');
    mkdirSync(work);
    expect(cacheFolderOf(join(work, 'cache'), work)).toEqual({ dir: join(work, 'cache'), named: true });
  });
});

/** A project made by `ctxsim init`, its baseline saved on gpt-4o-mini with no cache. */
async function project(): Promise<{ dir: string; study: string; baseline: string }> {
  const dir = join(tempDir(), 'project');
  scaffold(dir);
  const study = join(dir, 'study.yaml');
  const baseline = join(dir, 'ctxsim-baseline.json');
  const saved = await cli('run', study, '--policy', 'full', '--save-baseline', baseline, '--no-token-cache', '--quiet');
  expect(saved.code, saved.err).toBe(0);
  return { dir, study, baseline };
}

/** The replay entries of a cache folder: key → file. */
function replayEntries(cache: string): Map<string, string> {
  const root = join(cache, 'replay');
  return new Map(readdirSync(root).flatMap((fan) => readdirSync(join(root, fan)).map((key) => [key, join(root, fan, key)] as const)));
}

/**
 * A forged cache: the units of the study on `model`, their records taken
 * from the run on gpt-4o-mini — each payload written under the key of the
 * unit it is not, checksum recomputed, as anyone who can write the folder
 * can.
 */
async function forged(study: string, model: string, cache: string): Promise<void> {
  const cheap = join(tempDir(), 'cheap');
  // Their records in one file: the replay cache's units are what is forged.
  expect((await cli('run', study, '--policy', 'full', '--token-cache', cheap, '--out', join(tempDir(), 'o.json'), '--quiet')).code).toBe(0);
  expect((await cli('run', study, '--policy', 'full', '--model', model, '--token-cache', cache, '--out', join(tempDir(), 'o.json'), '--quiet')).code).toBe(0);
  const from = [...replayEntries(cheap).values()].map((f) => readFileSync(f).subarray(84));
  const to = [...replayEntries(cache)];
  expect(to).toHaveLength(from.length);
  // One unit per scenario; the keys' order is not the scenarios', so each forged entry is the cheap run's unit of the same scenario.
  for (const [key, file] of to) {
    const payload = from.find((p) => sameScenario(p, readFileSync(file).subarray(84)))!;
    writeFileSync(file, Buffer.concat([entryHeader(key, payload), payload]));
  }
}

/** Whether two unit payloads are of the same scenario (its id is in the serialized records). */
function sameScenario(a: Buffer, b: Buffer): boolean {
  const id = (p: Buffer) => /(plant-shop-order|smart-home-scenes)/.exec(p.toString('latin1'))?.[1];
  return id(a) === id(b);
}

describe('ctxsim check and a cache it did not fill', () => {
  it('a forged cache in a trusted folder passes a cost regression, and check says it served the units; in the checkout it is not read, and the regression fails', async () => {
    const { dir, study, baseline } = await project();
    vi.stubEnv('CTXSIM_CACHE_DIR', '');
    // Outside the checkout: the gate trusts it, and says so.
    const trusted = join(tempDir(), 'trusted');
    await forged(study, 'gpt-4o', trusted);
    const summary = join(tempDir(), 'summary.md');
    vi.stubEnv('GITHUB_STEP_SUMMARY', summary);
    const fooled = await cli('check', study, '--policy', 'full', '--model', 'gpt-4o', '--baseline', baseline, '--token-cache', trusted, '--quiet');
    const served = `replay cache: 2 of 2 units served from ${trusted}, 0 replayed; the gate trusts that folder (--no-token-cache replays every unit)`;
    expect(fooled.err).toBe(`${served}\n`);
    expect(fooled.code).toBe(0);
    expect(readFileSync(summary, 'utf8').endsWith(`\n${served}\n`)).toBe(true);

    // The same entries in the checkout, named on purpose: not read; every unit replayed, and the regression fails.
    const planted = join(dir, '.ctxsim-cache');
    await forged(study, 'gpt-4o', planted);
    const entries = readdirSync(join(planted, 'replay'), { recursive: true }).sort();
    const caught = await cli('check', study, '--policy', 'full', '--model', 'gpt-4o', '--baseline', baseline, '--token-cache', planted, '--quiet');
    expect(caught.err).toBe(
      `ctxsim: note: the cache folder ${planted} lies in the checkout (the working folder, the study's, or the git work tree they are in), whose files a pull request can change: check runs without a cache; name a folder outside it to keep one\n`,
    );
    expect(caught.code).toBe(1);
    expect(caught.out).toMatch(/^### ctxsim check: FAILED \(2 regressions\)/);
    // Neither written: the folder is as it was planted.
    expect(readdirSync(join(planted, 'replay'), { recursive: true }).sort()).toEqual(entries);

    // Not named: the default folder, empty here; the planted one is an ordinary folder of the checkout.
    vi.stubEnv('XDG_CACHE_HOME', join(tempDir(), 'xdg'));
    const plain = await cli('check', study, '--policy', 'full', '--model', 'gpt-4o', '--baseline', baseline, '--quiet');
    expect(plain.err).toBe('');
    expect(plain.code).toBe(1);
  });

  it('a cache folder elsewhere in the git work tree of the study (a job run in a subfolder) is not read either', async () => {
    const { dir, study, baseline } = await project();
    vi.stubEnv('CTXSIM_CACHE_DIR', '');
    // The project is the subfolder a job runs in; its checkout's root is the folder above, with a `.git`.
    const root = dirname(dir);
    const planted = join(root, '.ctxsim-cache');
    await forged(study, 'gpt-4o', planted);
    const args = ['check', study, '--policy', 'full', '--model', 'gpt-4o', '--baseline', baseline, '--token-cache', planted, '--quiet'];
    // Without a `.git` above, the folder is outside the checkout as far as anyone can tell: trusted (unless the temporary folder itself lies in a git work tree).
    if (checkoutOf(root) === undefined) expect((await cli(...args)).code).toBe(0);
    mkdirSync(join(root, '.git'));
    const caught = await cli(...args);
    expect(caught.err).toBe(
      `ctxsim: note: the cache folder ${planted} lies in the checkout (the working folder, the study's, or the git work tree they are in), whose files a pull request can change: check runs without a cache; name a folder outside it to keep one\n`,
    );
    expect(caught.code).toBe(1);
  });

  it('the user’s cache folder when it lies in the checkout ($XDG_CACHE_HOME set into it) is not read either: the regression fails', async () => {
    const { dir, study, baseline } = await project();
    vi.stubEnv('CTXSIM_CACHE_DIR', '');
    const planted = join(dir, '.cache', 'ctxsim');
    await forged(study, 'gpt-4o', planted);
    const entries = readdirSync(join(planted, 'replay'), { recursive: true }).sort();
    vi.stubEnv('XDG_CACHE_HOME', join(dir, '.cache'));
    const caught = await cli('check', study, '--policy', 'full', '--model', 'gpt-4o', '--baseline', baseline, '--quiet');
    expect(caught.err).toBe(
      `ctxsim: note: the cache folder ${planted} lies in the checkout (the working folder, the study's, or the git work tree they are in), whose files a pull request can change: check runs without a cache; name a folder outside it to keep one\n`,
    );
    expect(caught.code).toBe(1);
    expect(caught.out).toMatch(/^### ctxsim check: FAILED \(2 regressions\)/);
    expect(readdirSync(join(planted, 'replay'), { recursive: true }).sort()).toEqual(entries);
  });
});

describe('the workflow ctxsim init writes', () => {
  it('keeps the cache folder outside the checkout with the runner’s cache, keyed on the lockfile', () => {
    const text = readFileSync(join(ROOT, 'templates', 'init', '.github', 'workflows', 'ctxsim.yml'), 'utf8');
    expect(text).toContain(
      [
        '      - uses: actions/cache@v4',
        '        with:',
        '          path: ~/.cache/ctxsim',
        "          key: ctxsim-${{ runner.os }}-${{ hashFiles('package-lock.json') }}-${{ github.sha }}",
        "          restore-keys: ctxsim-${{ runner.os }}-${{ hashFiles('package-lock.json') }}-",
      ].join('\n'),
    );
    // No step names a cache folder, nor sets the variable: the default, outside the checkout.
    expect(text).not.toMatch(/--token-cache|CTXSIM_CACHE_DIR|\.ctxsim-cache/);
  });
});
