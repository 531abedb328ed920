import { cpSync, existsSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * `run`, `check`, `explain` and `table` with no study named use the study
 * in the working folder: `./ctxsim.yaml`, else `./study.yaml` (said in one
 * line on stderr), and the built-in default study only when neither is
 * there. A link in its place that leads out of the folder is refused.
 */

/** Runs `fn` with `dir` as the working folder. */
async function inFolder<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(cwd);
  }
}

const note = (name: string) => `ctxsim: note: using ${name}, the study in the working folder (no study file named)\n`;

/** A folder with one shipped scenario and a study of it named `name`, whose one policy is `policy`. */
function folderWith(name: string, policy: string, dir = tempDir('ctxsim-folder-')): string {
  cpSync(join(ROOT, 'scenarios', 'noah-amnesia.yaml'), join(dir, 'scenarios', 'noah-amnesia.yaml'));
  writeFileSync(join(dir, name), ['model: gpt-4o-mini', 'scenarios: [scenarios/noah-amnesia.yaml]', 'policies:', `  - ${policy}`, 'out: out/', ''].join('\n'));
  return dir;
}

describe('the study in the working folder', () => {
  it('a project made by init: run and check use its study.yaml, and check finds the baseline the study names', async () => {
    const dir = tempDir('ctxsim-project-');
    expect((await cli('init', dir)).code).toBe(0);
    await inFolder(dir, async () => {
      const missing = await cli('check', '--quiet');
      expect(missing).toEqual({ code: 2, out: '', err: `${note('study.yaml')}ctxsim: ctxsim-baseline.json: no baseline there yet; save one first: npx ctxsim run study.yaml --save-baseline ctxsim-baseline.json\n` });
      const run = await cli('run', '--save-baseline', 'ctxsim-baseline.json', '--quiet');
      expect(run.err).toBe(note('study.yaml'));
      expect(run.code).toBe(0);
      // The study's own `out: reports/`, and its name in the results.
      expect(JSON.parse(readFileSync(join(dir, 'reports', 'results.json'), 'utf8')).study.studyFile).toBe('study.yaml');
      expect(existsSync(join(dir, 'ctxsim-baseline.json'))).toBe(true);
      const check = await cli('check', '--quiet', '--no-token-cache');
      expect([check.code, check.err, check.out.split('\n')[0]]).toEqual([0, note('study.yaml'), '### ctxsim check: passed']);
    });
  });

  it('ctxsim.yaml comes before study.yaml; a study named on the command line before both, and then nothing is said', async () => {
    const dir = folderWith('study.yaml', 'window-turns');
    folderWith('ctxsim.yaml', 'full', dir);
    await inFolder(dir, async () => {
      const found = await cli('table', '--format', 'csv', '--quiet');
      expect(found.code).toBe(0);
      expect(found.err).toBe(note('ctxsim.yaml'));
      expect(found.out.split('\n').slice(1, -1).map((l) => l.split(',')[0])).toEqual(['full']);
      const named = await cli('table', 'study.yaml', '--format', 'csv', '--quiet');
      expect(named.err).toBe('');
      expect(named.out.split('\n').slice(1, -1).map((l) => l.split(',')[0])).toEqual(['window-turns']);
    });
  });

  it('explain without a file explains a conversation of the folder’s study, else of the built-in default study', async () => {
    const dir = folderWith('study.yaml', 'full');
    await inFolder(dir, async () => {
      const r = await cli('explain', '--policy', 'full', '--turn', '1');
      expect(r.code).toBe(0);
      expect(r.err).toBe(note('study.yaml'));
      expect(r.out.split('\n')[0]).toBe('noah-amnesia · full · turn 1 · gpt-4o-mini · o200k_base');
    });
    await inFolder(tempDir('ctxsim-empty-'), async () => {
      const r = await cli('explain', '--policy', 'full', '--turn', '1');
      expect(r).toEqual({ code: 2, out: '', err: expect.stringMatching(/^ctxsim: --scenario: the study has 33 scenarios, name one: /) });
      const one = await cli('explain', '--policy', 'full', '--turn', '1', '--scenario', 'noah-amnesia');
      expect([one.code, one.err, one.out.split('\n')[0]]).toEqual([0, '', 'noah-amnesia · full · turn 1 · gpt-4o-mini · o200k_base']);
    });
  });

  it('a link in its place that leads out of the working folder is refused, before anything runs', async () => {
    const outside = folderWith('study.yaml', 'full');
    const dir = tempDir('ctxsim-linked-');
    symlinkSync(join(outside, 'study.yaml'), join(dir, 'ctxsim.yaml'));
    await inFolder(dir, async () => {
      const r = await cli('run', '--quiet');
      expect(r).toEqual({ code: 2, out: '', err: `ctxsim: ctxsim.yaml, the study in the working folder, leads to ${realpathSync(join(outside, 'study.yaml'))}, outside it: name the study on the command line to run it\n` });
    });
    expect(existsSync(join(dir, 'reports'))).toBe(false);
    // A link that stays in the folder is followed, as the system follows it.
    const inside = folderWith('study.yaml', 'full');
    symlinkSync('study.yaml', join(inside, 'ctxsim.yaml'));
    await inFolder(inside, async () => {
      const r = await cli('table', '--format', 'csv', '--quiet');
      expect([r.code, r.err]).toEqual([0, note('ctxsim.yaml')]);
    });
  });
});
