import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { studyFromFlags } from '../src/cli/_study.js';
import { OutputSet, StagedFiles, STAGING_PREFIX } from '../src/output/files.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { folderSink } from '../src/output/sinks.js';
import { cli, expectSameFiles, expectUsage, folder } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A command's outputs in several places — the reports (`--out`), the
 * baseline (`--save-baseline`), the JUnit file (`--junit`) — are written
 * all-or-nothing together: when one cannot be written, none is, and every
 * target stays as it was.
 */

const SCENARIO = join(ROOT, 'scenarios', 'kavya-late-order.yaml');
const SMALL = ['--scenario', SCENARIO, '--policy', 'full', '--no-token-cache', '--quiet'];

/** An output folder holding a previous run's files (stand-ins) and a file of the user's. */
function previousRun(dir: string): Map<string, Buffer> {
  mkdirSync(dir, { recursive: true });
  for (const f of ['report.md', 'turns.csv', 'results.json', 'notes.txt']) writeFileSync(join(dir, f), `previous ${f}\n`);
  return folder(dir);
}

/** `path`, once `make` has made what is in its way. */
function made(path: string, make: () => void): string {
  make();
  return path;
}

/** Exit 2 with exactly this one line on stderr and nothing on stdout. */
describe('run --save-baseline that cannot be written', () => {
  it.each([
    ['a device', () => '/dev/null', (b: string) => `${b}: is a device, not a regular file; refusing to write it`],
    ['a folder', (dir: string) => made(join(dir, 'taken'), () => mkdirSync(join(dir, 'taken'))), (b: string) => `${b}: is a folder, not a regular file; refusing to write it`],
    ['under a file', (dir: string) => made(join(dir, 'plain', 'b.json'), () => writeFileSync(join(dir, 'plain'), 'mine\n')), (b: string) => `--save-baseline ${b}: ${join(b, '..')} is a file, not a folder`],
  ])('%s: no report is written, the folder stays as it was', async (_, target, message) => {
    const dir = tempDir();
    const baseline = target(dir);
    const out = join(dir, 'reports');
    const before = previousRun(out);
    await expectUsage(['run', ...SMALL, '--out', out, '--save-baseline', baseline, '--force'], `ctxsim: ${message(baseline)}`);
    expectSameFiles(out, before);
    // A new folder is not even made.
    await expectUsage(['run', ...SMALL, '--out', join(dir, 'fresh'), '--save-baseline', baseline, '--force'], `ctxsim: ${message(baseline)}`);
    expect(readdirSync(dir)).not.toContain('fresh');
  });

  it('written: the reports and the baseline are both in place, and no staging folder is left', async () => {
    const dir = tempDir();
    const out = join(dir, 'reports');
    const r = await cli('run', ...SMALL, '--out', out, '--save-baseline', join(dir, 'b.json'));
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['b.json', 'reports']);
    expect(readdirSync(out)).toContain('report.md');
    expect(readdirSync(out).filter((f) => f.startsWith(STAGING_PREFIX))).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, 'b.json'), 'utf8')).schemaVersion).toBe(1);
  });
});

describe('check --junit that cannot be written', () => {
  it('under a file: refused before the run; nothing printed, no report written', async () => {
    const dir = tempDir();
    const baseline = join(dir, 'b.json');
    expect((await cli('run', ...SMALL, '--out', '-', '--save-baseline', baseline)).code).toBe(0);
    writeFileSync(join(dir, 'plain'), 'mine\n');
    const junit = join(dir, 'plain', 'j.xml');
    const out = join(dir, 'ck');
    await expectUsage(['check', ...SMALL, '--baseline', baseline, '--junit', junit, '--out', out], `ctxsim: --junit ${junit}: ${join(dir, 'plain')} is a file, not a folder`);
    expect(readdirSync(dir).sort()).toEqual(['b.json', 'plain']);
    // Written: both in place.
    const ok = await cli('check', ...SMALL, '--baseline', baseline, '--junit', join(dir, 'j.xml'), '--out', out);
    expect(ok.code, ok.err).toBe(0);
    expect(readFileSync(join(dir, 'j.xml'), 'utf8')).toMatch(/^<\?xml/);
    expect(readdirSync(out)).toContain('report.md');
  });
});

describe('generate and import --out under a file', () => {
  it('names the file on the way and the flag', async () => {
    const dir = tempDir();
    const file = join(dir, 'afile');
    writeFileSync(file, 'mine\n');
    const out = join(file, 'x');
    await expectUsage(['generate', '--profile', 'support', '--count', '1', '--out', out], `ctxsim: --out ${out}: ${file} is a file, not a folder`);
    const dataset = join(ROOT, 'test', 'fixtures', 'import', 'locomo-sample.json');
    // Refused before the dataset is read: no import report first.
    await expectUsage(['import', '--format', 'locomo', dataset, '--out', out], `ctxsim: --out ${out}: ${file} is a file, not a folder`);
    expect(readFileSync(file, 'utf8')).toBe('mine\n');
  });
});

describe('an output set', () => {
  it('a part that fails to go into place puts back the parts placed before it', () => {
    const dir = tempDir();
    const reports = join(dir, 'reports');
    const before = previousRun(reports);
    const set = new OutputSet();
    const staged = new StagedFiles(reports);
    staged.write('report.md', 'new report\n');
    staged.retire('turns.csv');
    set.add(staged);
    set.file(join(dir, 'b.json'), '{}\n');
    // The baseline's target turns into a folder after it was staged: its placing fails, after the reports were placed.
    mkdirSync(join(dir, 'b.json'));
    expect(() => set.commit()).toThrow(`${join(dir, 'b.json')}: is a folder, not a regular file; refusing to write it`);
    set.abort();
    expectSameFiles(reports, before);
    expect(readdirSync(dir).sort()).toEqual(['b.json', 'reports']);
  });

  it('the pipeline writes no report when the baseline cannot be staged at the end', async () => {
    const dir = tempDir();
    const out = join(dir, 'reports');
    const before = previousRun(out);
    const baseline = join(dir, 'b.json');
    const study = await studyFromFlags({ scenario: [SCENARIO], policy: ['full'], tokenCache: false, jobs: 1 });
    // Checked at the start, the target becomes a folder while the study runs.
    const run = runStudyPipeline(study, folderSink(out), { baseline, onProgress: () => mkdirSync(baseline, { recursive: true }) });
    await expect(run).rejects.toThrow(`${baseline}: is a folder, not a regular file; refusing to write it`);
    expectSameFiles(out, before);
  });
});
