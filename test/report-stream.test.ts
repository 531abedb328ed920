import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { studyFromFlags } from '../src/cli/_study.js';
import { resultsMeta, runStudyPipeline } from '../src/study/pipeline.js';
import { memorySink } from '../src/output/sinks.js';
import { csvHeader, csvRow, csvRows, VIOLATION_COLUMNS } from '../src/records/csv.js';
import { jsonRows } from '../src/records/json.js';
import { recordText } from '../src/records/encode.js';
import { reportFiles } from '../src/report/outputs.js';
import { VIOLATION_RECORD, type ViolationRecord } from '../src/records/registry.js';
import { builtSince, runBuilt } from './_built.js';
import { capture, expectSameFiles } from './_io.js';
import { ROOT } from './_shared.js';

/**
 * `ctxsim run` into a folder streams the records to turns.csv, probes.csv,
 * violations.csv and results.json as they come and builds the rest from the
 * digest: every file must be byte for byte what `reportFiles` makes from the
 * records held in memory, and a failure must leave the folder as it was.
 */

const tmp = mkdtempSync(join(tmpdir(), 'ctxsim-stream-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ENV = { SOURCE_DATE_EPOCH: '0' };

/** A study of several scenarios: generated support and coding conversations of uneven lengths (probes, tools, corrections). */
const MULTI = join(tmp, 'multi.yaml');
writeFileSync(MULTI, ['seed: 3', 'scenarios:', '  - generate: {profile: support, count: 3, turns: 8-14}', '  - generate: {profile: coding, count: 2, turns: 6-9}', ''].join('\n'));

/** What `reportFiles` makes of the same study run in memory. */
async function inMemory(args: string[]): Promise<Map<string, Buffer>> {
  const { results, info } = (await runStudyPipeline(await studyFromFlags({ study: args[0], tokenCache: false, jobs: 1 }), memorySink())).output;
  const files = await reportFiles(results, info, resultsMeta(info.priceDate, ENV));
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, Buffer.from(v)]));
}

let multi: Promise<Map<string, Buffer>> | undefined;
/** `inMemory([MULTI])`, made once for the file's tests, which change neither the study nor the files. */
const multiInMemory = () => (multi ??= inMemory([MULTI]));

/** Runs `ctxsim run` in this process, with SOURCE_DATE_EPOCH pinned. */
async function run(args: string[], io = capture()): Promise<number> {
  const before = process.env.SOURCE_DATE_EPOCH;
  process.env.SOURCE_DATE_EPOCH = ENV.SOURCE_DATE_EPOCH;
  try {
    return await runMain(['run', ...args, '--no-token-cache', '--quiet'], io);
  } finally {
    if (before === undefined) delete process.env.SOURCE_DATE_EPOCH;
    else process.env.SOURCE_DATE_EPOCH = before;
  }
}

describe('ctxsim run into a folder: streamed files equal the in-memory ones', () => {
  it('for the default study', async () => {
    const out = join(tmp, 'default');
    expect(await run(['--out', out])).toBe(0);
    expectSameFiles(out, await inMemory([]));
  });

  it('for a study of several scenarios', async () => {
    const out = join(tmp, 'multi');
    expect(await run([MULTI, '--out', out])).toBe(0);
    const want = await multiInMemory();
    expect(want.get('turns.csv')!.length).toBeGreaterThan(1000);
    expectSameFiles(out, want);
  });

  const built = builtSince('cli/run.ts');
  it.skipIf(!built)(`for a study of several scenarios on two worker threads (the built CLI)${built ? '' : ' (skipped: dist/ is missing or stale)'}`, async () => {
    const out = join(tmp, 'multi-jobs2');
    const r = await runBuilt(['run', MULTI, '--out', out, '--jobs', '2', '--no-token-cache', '--quiet'], { env: ENV, cwd: ROOT });
    expect(r.code, r.err).toBe(0);
    expectSameFiles(out, await multiInMemory());
  });
});

describe('CSV written row by row', () => {
  it('has the bytes of one call: header once, formulas escaped, quoting per cell', () => {
    // Cells that need escaping or quoting: formula starts, separators, quotes, line breaks.
    const cell = fc.stringMatching(/^[=+\-@a-z,"\n\t ]{0,6}$/);
    const row = fc.record({ scenario: cell, policy: cell, turn: fc.nat(99), rule: cell, detail: cell, call: fc.constantFrom('main' as const, 'upkeep' as const) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 12 }), (rows) => {
        const records = rows as unknown as ViolationRecord[];
        let text = csvHeader(VIOLATION_COLUMNS);
        for (const r of records) text += csvRow(VIOLATION_COLUMNS, r);
        expect(text).toBe(csvRows(VIOLATION_COLUMNS, records));
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});

describe("a batch's text, as a worker thread makes it", () => {
  it('is the UTF-8 of its CSV rows and results.json lines, however long (property)', () => {
    const cell = fc.string({ unit: 'grapheme', maxLength: 12 });
    const row = fc.record({ scenario: cell, policy: cell, turn: fc.nat(99), rule: cell, detail: fc.oneof(cell, fc.constant('é'.repeat(40_000))), call: fc.constantFrom('main' as const, 'upkeep' as const) });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 40 }), (rows) => {
        const violations = rows as unknown as ViolationRecord[];
        const text = recordText({ turns: [], probes: [], violations });
        const utf8 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8');
        expect(utf8(text.violations.csv)).toBe(csvRows(VIOLATION_COLUMNS, violations, false));
        expect(utf8(text.violations.json)).toBe(jsonRows(VIOLATION_RECORD, violations));
        expect(text.turns.csv.length + text.turns.json.length + text.probes.csv.length + text.probes.json.length).toBe(0);
        // Each part owns its buffer from the start, so it can be transferred.
        for (const b of [text.violations.csv, text.violations.json]) expect(b.byteOffset).toBe(0);
      }),
      { seed: 42, numRuns: 100 },
    );
  });
});

describe('a failed run leaves the folder as it was', () => {
  // The failure is a folder standing where an output goes: refused before the records stream (results.json), or after the charts rendered (report.html).
  it.each(['results.json', 'report.html'])('failing at %s: no staged file left, old files untouched', async (blocked) => {
    const out = join(tmp, `failed-${blocked}`);
    mkdirSync(out);
    const old = new Map([
      ['turns.csv', 'old turns\n'],
      ['probes.csv', 'old probes\n'],
      ['notes.txt', 'mine\n'],
    ]);
    for (const [name, text] of old) writeFileSync(join(out, name), text);
    mkdirSync(join(out, blocked));
    const io = capture();
    expect(await run([MULTI, '--out', out], io)).toBe(2);
    expect(io.stderr).toBe(`ctxsim: ${join(out, blocked)}: is a folder, not a regular file; refusing to write it\n`);
    // Only the old files and the folder in the way: no staging folder, nothing renamed into place.
    expect(readdirSync(out).sort()).toEqual([...old.keys(), blocked].sort());
    for (const [name, text] of old) expect(readFileSync(join(out, name), 'utf8')).toBe(text);
  });

  it('a folder the failed run created is removed again', async () => {
    const parent = join(tmp, 'fresh');
    mkdirSync(parent);
    // The scenario glob matches nothing: the run fails (a usage error, exit code 2) after the output folder was set up.
    const io = capture();
    expect(await run(['--scenario', join(tmp, 'none-*.yaml'), '--out', join(parent, 'a', 'b')], io)).toBe(2);
    expect(io.stderr).toContain('none-*.yaml');
    expect(readdirSync(parent)).toEqual([]);
  });
});
