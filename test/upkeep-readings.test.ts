/**
 * What the simulated memory reads of a text is kept in the cache folder's
 * `readings` namespace: a rerun of the same conversations reads nothing
 * again (the readings entry is left as it was: a reading the store lacked
 * would be added and the entry rewritten) and makes the very same records;
 * a changed message is read and added; a damaged entry is a warning, read
 * afresh and replaced. Each run imports the engine afresh, so nothing read
 * by an earlier run in this process is remembered but what the cache folder
 * holds.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { RunOptions } from '../src/engine/spec.js';
import { engineId } from '../src/engine/version.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { Readings } from '../src/upkeep/readings.js';
import { statementsIn } from '../src/upkeep/statements.js';
import { variant } from './_policies.js';
import { tempDir } from './_tmp.js';

const CONVERSATIONS = generateConversations({ profile: 'support', count: 3, seed: 7, params: { turns: [12, 12] } });

function study(dir: string | false, conversations = CONVERSATIONS): RunOptions {
  return {
    conversations,
    policies: [variant('facts:sheetTokens=120'), variant('summary-buffer'), variant('summary')],
    seed: 1,
    models: ['gpt-4o-mini'],
    tokenizer: 'o200k_base',
    cacheFolder: dir,
    cacheReplays: false,
  };
}

/**
 * A run with the engine imported afresh (no reading remembered in memory),
 * as a new process would: its turns.csv, warnings, and how many sentences
 * the reader looked into (every sentence it reads and every statement it
 * weighs goes through `shapeSpans`).
 */
async function freshRun(opts: RunOptions): Promise<{ csv: string; warnings: readonly string[]; looked: number }> {
  vi.resetModules();
  let looked = 0;
  vi.doMock('../src/upkeep/shapes.js', async (original) => {
    const shapes = await original<typeof import('../src/upkeep/shapes.js')>();
    return { ...shapes, shapeSpans: (text: string) => (looked++, shapes.shapeSpans(text)) };
  });
  const { runStudy } = await import('../src/engine/run.js');
  const { turnsCsv } = await import('../src/records/csv.js');
  const r = runStudy(opts);
  vi.doUnmock('../src/upkeep/shapes.js');
  return { csv: turnsCsv(r), warnings: r.warnings, looked };
}

/** The readings entry of the cache folder `dir`: `readings/<2 hex>/<key>`, the key the SHA-256 of the namespace and the engine's id. */
function entryFile(dir: string): string {
  const key = createHash('sha256').update(`ctxsim readings\0${engineId()}`).digest('hex');
  return join(dir, 'readings', key.slice(0, 2), key);
}

describe('readings kept in the cache folder', () => {
  it('a rerun reads nothing again and makes the same records', async () => {
    const dir = tempDir();
    const cold = await freshRun(study(dir));
    expect(cold.warnings).toEqual([]);
    expect(cold.looked).toBeGreaterThan(100);
    const entry = readFileSync(entryFile(dir));
    const warm = await freshRun(study(dir));
    expect(warm.csv).toBe(cold.csv);
    expect(warm.looked).toBe(0);
    expect(readFileSync(entryFile(dir)).equals(entry)).toBe(true);
    // And the same as a run with no cache folder at all.
    expect((await freshRun(study(false))).csv).toBe(cold.csv);
  });

  it('a changed message is read and added, once; the others are not read again', async () => {
    const dir = tempDir();
    await freshRun(study(dir));
    const before = Readings.open(dir, engineId()).size.loaded;
    const changed = structuredClone(CONVERSATIONS);
    changed[0]!.turns[0]!.user.content = 'My order NW-558120 was due on Friday and my email is kwame@example.org.';
    await freshRun(study(dir, changed));
    const after = Readings.open(dir, engineId()).size.loaded;
    // One reading more for the new message under its voices and day, and one for the note of each statement it makes (none
    // of them made before: the message names an order and an address no other does); every other text was read before.
    const said = statementsIn([changed[0]!.turns[0]!.user], undefined).statements.length;
    expect(said).toBeGreaterThan(0);
    expect(after - before).toBe(1 + said);
  });

  it('a damaged entry is a warning to a run that reads texts; the run reads afresh, makes the same records and replaces it', async () => {
    const dir = tempDir();
    const cold = await freshRun(study(dir));
    const file = entryFile(dir);
    const bytes = readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    writeFileSync(file, bytes);
    // A run that reads no text does not load the entry: no warning, the entry left as it is.
    const windows = await freshRun({ ...study(dir), policies: [variant('full'), variant('window-turns:turns=2')] });
    expect(windows.warnings).toEqual([]);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    const damaged = await freshRun(study(dir));
    expect(damaged.csv).toBe(cold.csv);
    expect(damaged.warnings).toHaveLength(1);
    expect(damaged.warnings[0]).toMatch(new RegExp(`^readings cache entry ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged \\(.+\\); reading texts afresh and replacing it$`));
    const replaced = Readings.open(dir, engineId());
    expect(replaced.size.loaded).toBeGreaterThan(0);
    expect(replaced.warnings).toEqual([]);
  });
});

describe('Readings', () => {
  it('gives a kept reading without reading again, and keeps each way of reading a text apart', () => {
    const dir = tempDir();
    let reads = 0;
    const read = (out: string[]) => () => (reads++, out);
    const first = Readings.open(dir, 'engine@test');
    expect(first.get('voices A', 'I live in Lisbon.', read(['Kavya lives in Lisbon.']))).toEqual(['Kavya lives in Lisbon.']);
    expect(first.get('voices B', 'I live in Lisbon.', read(['Mel lives in Lisbon.']))).toEqual(['Mel lives in Lisbon.']);
    expect(reads).toBe(2);
    expect(first.save()).toEqual([]);
    const again = Readings.open(dir, 'engine@test');
    expect(again.get('voices A', 'I live in Lisbon.', read(['other']))).toEqual(['Kavya lives in Lisbon.']);
    expect(again.get('voices B', 'I live in Lisbon.', read(['other']))).toEqual(['Mel lives in Lisbon.']);
    expect(reads).toBe(2);
    // Another engine's readings are not this one's.
    expect(Readings.open(dir, 'engine@other').get('voices A', 'I live in Lisbon.', read(['fresh']))).toEqual(['fresh']);
    expect(reads).toBe(3);
  });

  it('two runs saving at once keep each other\'s readings (a save merges into the entry as it is on disk)', () => {
    const dir = tempDir();
    const a = Readings.open(dir, 'engine@test');
    const b = Readings.open(dir, 'engine@test');
    a.get('as', 'one', () => ['1']);
    b.get('as', 'two', () => ['2', 2, ['two']]);
    b.get('as', 'one', () => ['1 again']);
    expect(a.save()).toEqual([]);
    expect(b.save()).toEqual([]);
    const both = Readings.open(dir, 'engine@test');
    expect(both.size).toEqual({ loaded: 2, added: 0 });
    const fail = () => {
      throw new Error('read again');
    };
    // The first saved of two readings under one key stays.
    expect(both.get('as', 'one', fail)).toEqual(['1']);
    expect(both.get('as', 'two', fail)).toEqual(['2', 2, ['two']]);
  });

  it('an entry past its bound keeps only what the saving run used or made', () => {
    const dir = tempDir();
    const first = Readings.open(dir, 'engine@test', 200);
    first.get('as', 'x', () => ['x'.repeat(60)]);
    first.get('as', 'y', () => ['y'.repeat(60)]);
    first.save();
    const second = Readings.open(dir, 'engine@test', 200);
    expect(second.size.loaded).toBe(2);
    second.get('as', 'x', () => ['read again']);
    second.get('as', 'z', () => ['z'.repeat(60)]);
    second.save();
    const third = Readings.open(dir, 'engine@test', 200);
    expect(third.size.loaded).toBe(2);
    expect(third.get('as', 'x', () => ['read again'])).toEqual(['x'.repeat(60)]);
    expect(third.get('as', 'z', () => ['read again'])).toEqual(['z'.repeat(60)]);
    expect(third.get('as', 'y', () => ['read again'])).toEqual(['read again']);
  });

  it('a run keeps what it reads up to the bound, as bytes: past it a text is read again each time it is asked for, and the same', () => {
    const dir = tempDir();
    let reads = 0;
    const run = Readings.open(dir, 'engine@test', 200);
    const text = (i: number) => `text ${i}`;
    const reading = (i: number) => () => (reads++, [`${i}`.repeat(60), i, ['a', 'b']]);
    // Each reading's JSON is about 75 bytes: the third passes the bound, the fourth is not kept.
    for (let i = 0; i < 4; i++) run.get('as', text(i), reading(i));
    expect(run.size.added).toBe(3);
    expect(reads).toBe(4);
    // A kept reading is given as it was read (from its bytes), without reading again; one not kept is read again.
    expect(run.get('as', text(1), reading(1))).toEqual(['1'.repeat(60), 1, ['a', 'b']]);
    expect(reads).toBe(4);
    expect(run.get('as', text(3), reading(3))).toEqual(['3'.repeat(60), 3, ['a', 'b']]);
    expect(reads).toBe(5);
    run.save();
    const rerun = Readings.open(dir, 'engine@test', 200);
    expect(rerun.size).toEqual({ loaded: 3, added: 0 });
  });
});
