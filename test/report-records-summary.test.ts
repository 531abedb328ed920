import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { UsageError } from '../src/errors.js';
import { parseResultsJson } from '../src/records/json.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { folderSink, textSink } from '../src/output/sinks.js';
import { loadStudy } from '../src/study/study.js';
import { MAIN, runBuilt } from './_built.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * `--records summary`: the output folder of a `full` run without turns.csv,
 * probes.csv and results.json's turns and probes lists; every report,
 * chart and table byte for byte the same.
 */

/** The built CLI is current when each compiled file of the records modes is no older than its source. */
const built = [
  ['cli/run', 'cli/run'],
  ['output/sinks', 'output/sinks'],
  ['output/record-files', 'output/record-files'],
  ['records/json', 'records/json'],
  ['records/encode', 'records/encode'],
  ['engine/run', 'engine/run'],
].every(([src, out]) => {
  const js = join(ROOT, 'dist', `${out}.js`);
  return existsSync(MAIN) && existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${src}.ts`)).mtimeMs;
});

let dir: string;
const study = () => join(dir, 'study.yaml');

async function cli(...args: string[]) {
  const io = capture();
  const code = await runMain(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

/** Writes the study and its two scenarios into `folder`; returns the study file. */
function writeStudy(folder: string): string {
  for (const f of ['kavya-late-order.yaml', 'noah-amnesia.yaml']) cpSync(join(ROOT, 'scenarios', f), join(folder, 'scenarios', f));
  const file = join(folder, 'study.yaml');
  writeFileSync(file, ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies:', '  - full', '  - window-turns: {turns: 2}', '  - summary-buffer', 'out: out/', ''].join('\n'));
  return file;
}

beforeEach(() => {
  process.env.SOURCE_DATE_EPOCH = '1700000000';
  dir = tempDir('ctxsim-records-');
  writeStudy(dir);
});

/** A folder of its own, kept until the file's tests end, for the study run once each way. */
const shared = tempDir('ctxsim-records-');
let reference: Promise<{ study: string; full: Awaited<ReturnType<typeof cli>>; summary: Awaited<ReturnType<typeof cli>> }> | undefined;

/**
 * The study of `shared` run once with full records and once with
 * `--records summary` (`--jobs 1`, into `shared`'s `full` and `summary`),
 * with what each printed: made by the first test that asks; the tests that
 * compare with them change neither the study nor those folders.
 */
function referenceRuns(): NonNullable<typeof reference> {
  reference ??= (async () => {
    const file = writeStudy(shared);
    const full = await cli('run', file, '--out', join(shared, 'full'), '--no-token-cache', '--quiet', '--jobs', '1');
    const summary = await cli('run', file, '--out', join(shared, 'summary'), '--records', 'summary', '--no-token-cache', '--quiet', '--jobs', '1');
    return { study: file, full, summary };
  })();
  return reference;
}

afterEach(() => delete process.env.SOURCE_DATE_EPOCH);

/** A summary folder is the full folder without turns.csv and probes.csv, every file byte-identical but results.json, whose other parts are the same. */
function expectSummaryOf(full: string, summary: string): void {
  const files = readdirSync(full).sort();
  expect(files).toContain('turns.csv');
  expect(files).toContain('probes.csv');
  expect(readdirSync(summary).sort()).toEqual(files.filter((f) => f !== 'turns.csv' && f !== 'probes.csv'));
  for (const f of files.filter((f) => !['turns.csv', 'probes.csv', 'results.json'].includes(f))) {
    expect(readFileSync(join(summary, f)).equals(readFileSync(join(full, f))), f).toBe(true);
  }
  const fullText = readFileSync(join(full, 'results.json'), 'utf8');
  const summaryText = readFileSync(join(summary, 'results.json'), 'utf8');
  const whole = JSON.parse(fullText) as Record<string, unknown>;
  const part = JSON.parse(summaryText) as Record<string, unknown>;
  expect((whole.turns as unknown[]).length).toBeGreaterThan(0);
  expect((whole.probes as unknown[]).length).toBeGreaterThan(0);
  // Every part but the turns and probes, in the same order, and the mark that they were left out.
  const { turns: _t, probes: _p, ...rest } = whole;
  expect(Object.keys(part)).toEqual(['schemaVersion', 'meta', 'money', 'records', 'study', 'policies', 'summary', 'violations']);
  expect(part).toEqual({ ...rest, records: 'summary' });
  // Still one record per line: the summary file's lines are the full file's, less the turns and probes lists, plus the mark.
  const lines = (text: string) => text.split('\n');
  const dropped = lines(fullText).filter((l, i, all) => {
    const open = all.findIndex((x) => x === ' "turns": [');
    const close = all.findIndex((x, j) => j > open && x.startsWith(' "violations": '));
    return i < open || i >= close;
  });
  expect(lines(summaryText).filter((l) => l !== ' "records": "summary",')).toEqual(dropped);
  // Read back: the same summaries and policies, no turns or probes, and said so.
  const back = parseResultsJson(summaryText, 'results.json');
  const fullBack = parseResultsJson(fullText, 'results.json');
  expect(back.records).toBe('summary');
  expect(fullBack.records).toBe('full');
  expect(back.results).toEqual({ ...fullBack.results, turns: [], probes: [] });
}

describe('--records summary', () => {
  it('writes the files of a full run but turns.csv and probes.csv; every report the same, results.json without turns and probes', async () => {
    const { study: file, full, summary } = await referenceRuns();
    const explicit = await cli('run', file, '--out', join(dir, 'explicit'), '--records', 'full', '--no-token-cache', '--quiet', '--jobs', '1');
    expect([full.code, explicit.code, summary.code]).toEqual([0, 0, 0]);
    // The run table printed is the same.
    expect(summary.out).toBe(full.out);
    for (const f of readdirSync(join(shared, 'full'))) expect(readFileSync(join(dir, 'explicit', f)).equals(readFileSync(join(shared, 'full', f))), f).toBe(true);
    expectSummaryOf(join(shared, 'full'), join(shared, 'summary'));
  });

  it(`on two worker threads (the built CLI) the same${built ? '' : ' (skipped: dist/ is missing or stale; npm run build)'}`, async (ctx) => {
    if (!built) ctx.skip();
    const { study: file, full } = await referenceRuns();
    expect(full.code).toBe(0);
    const run = (out: string, ...args: string[]) => runBuilt(['run', file, '--out', join(dir, out), '--no-token-cache', '--quiet', '--jobs', '2', ...args]);
    // (That a full run on two threads writes a one-thread run's files, report-stream tests.)
    expect((await run('jobs-summary', '--records', 'summary')).code).toBe(0);
    expectSummaryOf(join(shared, 'full'), join(dir, 'jobs-summary'));
  });

  it('a single json output leaves out turns and probes too; a single csv (turns.csv) is refused', async () => {
    expect((await cli('run', study(), '--out', join(dir, 'summary'), '--records', 'summary', '--no-token-cache', '--quiet')).code).toBe(0);
    const json = await cli('run', study(), '--out', '-', '--format', 'json', '--records', 'summary', '--no-token-cache', '--quiet');
    expect(json.code).toBe(0);
    expect(json.out).toBe(readFileSync(join(dir, 'summary', 'results.json'), 'utf8'));
    const csv = await cli('run', study(), '--out', join(dir, 'turns.csv'), '--records', 'summary', '--no-token-cache', '--quiet');
    expect(csv.code).toBe(2);
    expect(csv.err).toBe('ctxsim: --records summary: the csv output is turns.csv, which summary records leave out; write json, a report, or a folder\n');
    expect(existsSync(join(dir, 'turns.csv'))).toBe(false);
  });

  it.each([['all'], ['Summary'], ['']])('--records %j: exit 2, one line, nothing written', async (value) => {
    const r = await cli('run', study(), '--out', join(dir, 'bad'), '--records', value, '--no-token-cache', '--quiet');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`ctxsim: --records: expected one of full|summary, got ${JSON.stringify(value)}\n`);
    expect(existsSync(join(dir, 'bad'))).toBe(false);
  });

  it('a study may ask for it (records: summary), and --records overrides the study', async () => {
    expect((await cli('run', study(), '--out', join(dir, 'full'), '--no-token-cache', '--quiet', '--jobs', '1')).code).toBe(0);
    writeFileSync(study(), `${readFileSync(study(), 'utf8')}records: summary\n`);
    expect((await cli('run', study(), '--out', join(dir, 'summary'), '--no-token-cache', '--quiet', '--jobs', '1')).code).toBe(0);
    expectSummaryOf(join(dir, 'full'), join(dir, 'summary'));
    expect((await cli('run', study(), '--out', join(dir, 'again'), '--records', 'full', '--no-token-cache', '--quiet', '--jobs', '1')).code).toBe(0);
    for (const f of readdirSync(join(dir, 'full'))) expect(readFileSync(join(dir, 'again', f)).equals(readFileSync(join(dir, 'full', f))), f).toBe(true);
    writeFileSync(study(), `${readFileSync(study(), 'utf8')}`.replace('records: summary', 'records: some'));
    const bad = await cli('run', study(), '--out', join(dir, 'bad'), '--no-token-cache', '--quiet');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/study\.yaml:\d+:\d+ records: /);
  });

  it('merge --records summary writes from the shards what a summary run writes', async () => {
    const { study: file, summary } = await referenceRuns();
    expect(summary.code).toBe(0);
    for (const k of [1, 2]) expect((await cli('run', file, '--shard', `${k}/2`, '--out', join(dir, `shard-${k}`), '--no-token-cache', '--quiet', '--jobs', '1')).code).toBe(0);
    expect((await cli('merge', join(dir, 'shard-1'), join(dir, 'shard-2'), '--out', join(dir, 'merged'), '--records', 'summary', '--quiet')).code).toBe(0);
    expect(readdirSync(join(dir, 'merged')).sort()).toEqual(readdirSync(join(shared, 'summary')).sort());
    for (const f of readdirSync(join(shared, 'summary'))) expect(readFileSync(join(dir, 'merged', f)).equals(readFileSync(join(shared, 'summary', f))), f).toBe(true);
    const bad = await cli('merge', join(dir, 'shard-1'), join(dir, 'shard-2'), '--out', join(dir, 'bad'), '--records', 'none', '--quiet');
    expect([bad.code, bad.err]).toEqual([2, 'ctxsim: --records: expected one of full|summary, got "none"\n']);
    // --out is read as a study's out is, where - is stdout: merge writes a folder.
    for (const out of ['-', '']) {
      const r = await cli('merge', join(dir, 'shard-1'), join(dir, 'shard-2'), '--out', out, '--quiet');
      expect([r.code, r.err]).toEqual([2, `ctxsim: --out${out ? ' -' : ''}: merge writes the files of a run's output folder; name a folder\n`]);
    }
  });

  it('the library: folderSink with records summary writes what the CLI writes', async () => {
    const { study: file, summary } = await referenceRuns();
    const runnable = Object.assign(await loadStudy(file), { cacheFolder: false as const, jobs: 1 });
    await runStudyPipeline(runnable, folderSink(join(dir, 'lib-full')));
    await runStudyPipeline(runnable, folderSink(join(dir, 'lib-summary'), { records: 'summary' }));
    expectSummaryOf(join(dir, 'lib-full'), join(dir, 'lib-summary'));
    expect(summary.code).toBe(0);
    for (const f of readdirSync(join(shared, 'summary'))) expect(readFileSync(join(dir, 'lib-summary', f)).equals(readFileSync(join(shared, 'summary', f))), f).toBe(true);
    // A mode that is neither is refused, as on the command line.
    expect(() => folderSink(join(dir, 'x'), { records: 'none' as never })).toThrow(UsageError);
    expect(() => textSink('csv', { records: 'summary' })).toThrow(UsageError);
  });
});
