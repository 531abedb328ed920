import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { resultsJson, type RecordsMode } from '../src/records/json.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { csvStreamSink, fileSink, jsonStreamSink, memorySink } from '../src/output/sinks.js';
import { turnsCsv } from '../src/records/csv.js';
import { bytesOut } from '../src/cli/_io.js';
import { defaultStudy } from '../src/study/study.js';
import { STAGING_PREFIX } from '../src/output/files.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * `--out FILE.json` streams: the record lists go to scratch files as the
 * records come (as an output folder's results.json does) and only the
 * summaries are kept, yet the file is byte for byte the results.json made
 * from every record kept in memory.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const built = ['output/sinks', 'output/record-files', 'records/json', 'engine/run', 'cli/run', 'cli/_io'].every((f) => {
  const js = join(ROOT, 'dist', `${f}.js`);
  return existsSync(MAIN) && existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${f}.ts`)).mtimeMs;
});

/** A sink's failure at the second scenario. */
const fail = (): never => {
  throw new Error('the second scenario');
};

/** The shipped scenarios, two policies, one thread. */
function study() {
  const s = defaultStudy();
  return Object.assign(s, {
    scenarios: [{ kind: 'glob' as const, pattern: join(ROOT, 'scenarios', '*.yaml'), base: ROOT }],
    policies: s.policies.filter((p) => p.name === 'full' || p.name.startsWith('summary')),
    cacheFolder: false as const,
    jobs: 1,
  });
}

describe('results.json as one output file', () => {
  it.each(['full', 'summary'] as const)('records %s: the streamed file is the text made from every record kept', async (records: RecordsMode) => {
    vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
    const kept = await runStudyPipeline(study(), memorySink());
    const { results } = kept.output;
    const expected = resultsJson(records === 'full' ? results : { ...results, turns: [], probes: [] }, kept.info, kept.meta, records);
    const dir = tempDir('ctxsim-json-');
    const path = join(dir, 'out', 'results.json');
    const run = await runStudyPipeline(study(), fileSink(path, 'json', { records }));
    expect(run.output).toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(expected);
    expect(readdirSync(join(dir, 'out'))).toEqual(['results.json']);
  }, 120_000);

  it('streams to a writer as to a file (--out - --format json): the same text, given only once the run is done', async () => {
    vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
    const kept = await runStudyPipeline(study(), memorySink());
    const expected = resultsJson(kept.output.results, kept.info, kept.meta, 'full');
    const chunks: Buffer[] = [];
    let during = 0;
    const sink = jsonStreamSink((chunk) => void chunks.push(Buffer.from(chunk)));
    await runStudyPipeline(study(), { ...sink, add: (records, i) => ((during += chunks.length), sink.add(records, i)) });
    expect(during).toBe(0);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(expected);
    // A run that fails part of the way gives the writer nothing, and leaves no scratch file in the temp folder
    // (this process's: test files running at the same time in other processes stage there too).
    const staging = () => readdirSync(tmpdir()).filter((f) => f.startsWith(`${STAGING_PREFIX}${process.pid}-`));
    const before = staging();
    const given: unknown[] = [];
    const failing = jsonStreamSink((chunk) => void given.push(chunk));
    let added = 0;
    const broken = { ...failing, add: (records: Parameters<typeof failing.add>[0], i: number) => (++added === 2 ? fail() : failing.add(records, i)) };
    await expect(runStudyPipeline(study(), broken)).rejects.toThrow('the second scenario');
    expect([added, given.length]).toEqual([2, 0]);
    expect(staging()).toEqual(before);
  }, 120_000);

  it('streams turns.csv to a writer (--out -): the text made from every record kept', async () => {
    const kept = await runStudyPipeline(study(), memorySink());
    const chunks: Buffer[] = [];
    await runStudyPipeline(study(), csvStreamSink((chunk) => void chunks.push(Buffer.from(chunk))));
    expect(Buffer.concat(chunks).toString('utf8')).toBe(turnsCsv(kept.output.results));
    // …and to a file, alone in its folder.
    const dir = tempDir('ctxsim-csv-');
    await runStudyPipeline(study(), fileSink(join(dir, 'out', 'turns.csv'), 'csv'));
    expect(readFileSync(join(dir, 'out', 'turns.csv'), 'utf8')).toBe(turnsCsv(kept.output.results));
    expect(readdirSync(join(dir, 'out'))).toEqual(['turns.csv']);
    expect(() => csvStreamSink(() => {}, { records: 'summary' })).toThrow(/^--records summary: the csv output is turns\.csv/);
  }, 120_000);

  it('waits for a writer that asks (a promise: stdout\'s reader is behind) before giving it the next chunk, json and csv alike', async () => {
    vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
    const kept = await runStudyPipeline(study(), memorySink());
    /** A writer that is behind after every chunk, caught up a timer later; counts the chunks given while it was behind. */
    const slow = () => {
      const chunks: Buffer[] = [];
      let behind = false;
      let early = 0;
      const write = (chunk: string | Uint8Array) => {
        if (behind) early++;
        chunks.push(Buffer.from(chunk));
        behind = true;
        return new Promise<void>((resolve) => setTimeout(() => resolve(void (behind = false)), 1));
      };
      return { write, text: () => Buffer.concat(chunks).toString('utf8'), early: () => early, count: () => chunks.length };
    };
    const json = slow();
    await runStudyPipeline(study(), jsonStreamSink(json.write));
    expect(json.text()).toBe(resultsJson(kept.output.results, kept.info, kept.meta, 'full'));
    expect([json.early(), json.count() > 5]).toEqual([0, true]);
    const csv = slow();
    await runStudyPipeline(study(), csvStreamSink(csv.write));
    expect(csv.text()).toBe(turnsCsv(kept.output.results));
    expect(csv.early()).toBe(0);
  }, 120_000);

  it.skipIf(!built)('stdout, a pipe whose reader pauses: a long output waits for it, so at most a chunk is held (not all of it)', async () => {
    // 64 chunks of 1 MB through the CLI's stdout writer, as --out - gives them; the child tells the most stdout held unwritten.
    const script = [
      `import { bytesOut, processIO, watchStdio } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'cli', '_io.js')).href)};`,
      `import { writeAll } from ${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'output', 'record-files.js')).href)};`,
      'watchStdio();',
      'const out = bytesOut(processIO);',
      'let most = 0;',
      "const chunk = Buffer.alloc(1 << 20, 'x');",
      'await writeAll(Array.from({ length: 64 }, () => chunk), (c) => { const wait = out.write(c); most = Math.max(most, process.stdout.writableLength); return wait; });',
      'out.end();',
      'process.stderr.write(String(most));',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Not read for a while: the pipe fills, and the writer must wait.
    await new Promise((ok) => setTimeout(ok, 300));
    let bytes = 0;
    child.stdout.on('data', (c: Buffer) => (bytes += c.length));
    const code = await new Promise<number | null>((ok) => child.on('close', ok));
    expect(code, stderr).toBe(0);
    expect(bytes).toBe(64 << 20);
    // A chunk and stdout's own buffer at most; all 64 MB when the writer does not wait.
    expect(Number(stderr)).toBeLessThanOrEqual((1 << 20) + (1 << 16));
  });

  it('prints a character split across two chunks whole', () => {
    const io = capture();
    const out = bytesOut(io);
    const bytes = Buffer.from('{"fact":"café ☕"}');
    out.write(bytes.subarray(0, 12));
    out.write(bytes.subarray(12, 16));
    out.write(bytes.subarray(16));
    out.end();
    expect(io.stdout).toBe('{"fact":"café ☕"}');
  });

  it('a run that fails after it began leaves nothing beside the file, and the file as it was', async () => {
    const dir = tempDir('ctxsim-json-');
    writeFileSync(join(dir, 'x.json'), 'previous\n');
    const io = capture();
    // The output is set up before the scenarios are loaded: a glob that matches nothing fails after.
    const args = ['run', '--scenario', join(dir, 'none-*.yaml'), '--policy', 'full', '--no-token-cache', '--quiet', '--out', join(dir, 'x.json')];
    expect(await runMain(args, io)).toBe(2);
    expect(io.stderr).toMatch(/no scenario file matches/);
    expect(readdirSync(dir)).toEqual(['x.json']);
    expect(readFileSync(join(dir, 'x.json'), 'utf8')).toBe('previous\n');
  }, 60_000);

  it.skipIf(!built)('the CLI on worker threads writes the bytes of --out - --format json', () => {
    const dir = tempDir('ctxsim-json-');
    const args = [MAIN, 'run', '--scenario', join(ROOT, 'scenarios', '*.yaml'), '--policy', 'full', '--policy', 'summary', '--no-token-cache', '--quiet'];
    const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };
    const stdout = spawnSync(process.execPath, [...args, '--out', '-', '--format', 'json'], { env, maxBuffer: 1 << 28 });
    expect(stdout.status, String(stdout.stderr)).toBe(0);
    const file = spawnSync(process.execPath, [...args, '--jobs', '2', '--out', join(dir, 'r.json')], { env, encoding: 'utf8' });
    expect(file.status, file.stderr).toBe(0);
    expect(readFileSync(join(dir, 'r.json')).equals(stdout.stdout)).toBe(true);
    // turns.csv likewise (two scenarios: enough for two threads): on stdout from worker threads, as the file from one.
    const two = [MAIN, 'run', '--scenario', join(ROOT, 'scenarios', 'kavya-late-order.yaml'), '--scenario', join(ROOT, 'scenarios', 'noah-amnesia.yaml'), '--policy', 'full', '--policy', 'summary', '--no-token-cache', '--quiet'];
    const csv = spawnSync(process.execPath, [...two, '--jobs', '2', '--out', '-'], { env, maxBuffer: 1 << 28 });
    expect(csv.status, String(csv.stderr)).toBe(0);
    expect(spawnSync(process.execPath, [...two, '--jobs', '1', '--out', join(dir, 't.csv')], { env }).status).toBe(0);
    expect(readFileSync(join(dir, 't.csv')).equals(csv.stdout)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith(STAGING_PREFIX))).toEqual([]);
  }, 240_000);
});
