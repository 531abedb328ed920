import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { cacheFolderOf } from '../src/cli/_cache-folder.js';
import { commandSettings } from '../src/cli/_setting-flags.js';
import { COMMAND_OPTIONS } from '../src/cli/_study-options.js';
import { runStudy } from '../src/engine/run.js';
import type { RunOptions } from '../src/engine/spec.js';
import { UsageError } from '../src/errors.js';
import { turnsCsv } from '../src/records/csv.js';
import { cacheKey, TokenCache } from '../src/tokens/token-cache.js';
import { openTokenCounter } from '../src/tokens/counter.js';
import { counterId } from '../src/tokens/encoding.js';
import { conversation, variant } from './_policies.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

const ID = counterId('o200k_base');

/** The file of the counts of counter `id` in the cache folder `dir`: `tokens/<2 hex>/<key>`, the key the SHA-256 of the namespace and the id. */
function entryFile(dir: string, id = ID): string {
  const key = createHash('sha256').update(`ctxsim tokens\0${id}`).digest('hex');
  return join(dir, 'tokens', key.slice(0, 2), key);
}

function chat(secondUser = 'Thanks!') {
  return conversation({
    id: 'c',
    system: 'You are a support bot.',
    turns: [
      { user: 'Where is my order?', assistant: 'It ships today.' },
      { user: secondUser, assistant: 'Glad to help.' },
    ],
  });
}

function study(dir: string | false, conv = chat()): RunOptions {
  return {
    conversations: [conv],
    policies: [variant('full'), variant('window-turns:turns=1')],
    seed: 1,
    models: ['gpt-4o-mini'],
    tokenizer: 'o200k_base',
    // The token counts alone: every run replays its units.
    cacheFolder: dir,
    cacheReplays: false,
  };
}

describe('token cache across runs', () => {
  it('a second run of an unchanged study makes no tokenizer calls and writes the same rows', () => {
    const dir = tempDir();
    const cold = runStudy(study(dir));
    // Distinct texts: 1 system + 2 user + 2 assistant + 3 role names (system, user, assistant).
    expect(cold.tokenizerCalls).toBe(8);
    expect(cold.warnings).toEqual([]);
    expect(readdirSync(dir)).toEqual(['tokens']);
    expect(existsSync(entryFile(dir))).toBe(true);
    const warm = runStudy(study(dir));
    expect(warm.tokenizerCalls).toBe(0);
    expect(turnsCsv(warm)).toBe(turnsCsv(cold));
    expect(turnsCsv(warm)).toBe(turnsCsv(runStudy(study(false))));
  });

  it('recounts only a changed message', () => {
    const dir = tempDir();
    runStudy(study(dir));
    expect(runStudy(study(dir, chat('Thanks a lot!'))).tokenizerCalls).toBe(1);
    // Both versions are cached now.
    expect(runStudy(study(dir, chat('Thanks!'))).tokenizerCalls).toBe(0);
    expect(runStudy(study(dir, chat('Thanks a lot!'))).tokenizerCalls).toBe(0);
  });

  it('without a cache folder every run counts again and nothing is written', () => {
    expect(runStudy(study(false)).tokenizerCalls).toBe(8);
    expect(runStudy(study(false)).tokenizerCalls).toBe(8);
  });

  it('a save removes the temp files of saves that died before their rename, and keeps a live run’s', () => {
    const dir = tempDir();
    runStudy(study(dir));
    // A process that has exited: its pid is free (and not reused within this test).
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const file = entryFile(dir);
    const [fan, key] = [dirname(file), basename(file)];
    const other = `${key.slice(0, 2)}${'0'.repeat(62)}.${dead}-0-0123abcd.tmp`;
    const stale = `${key}.${dead}-0-0123abcd.tmp`;
    const live = `${key}.${process.pid}-1-89abcdef.tmp`;
    const old = `${key}.${process.pid}-2-deadbeef.tmp`;
    for (const f of [stale, live, old, other]) writeFileSync(join(fan, f), 'partial');
    utimesSync(join(fan, old), new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    runStudy(study(dir, chat('Something new')));
    // A dead process's temp file of another key in the same folder goes too.
    expect(readdirSync(fan).sort()).toEqual([live, key].sort());
  });

  it('chars4 needs no cache file', () => {
    const dir = tempDir();
    runStudy({ ...study(dir), tokenizer: 'chars4' });
    expect(readdirSync(dir)).toEqual([]);
  });
});

/** A cache file holding three counts, one of them an estimate. */
function filled(dir: string): string {
  const c = TokenCache.open(dir, ID);
  c.put(cacheKey('one'), { tokens: 1, estimated: false });
  c.put(cacheKey('two'), { tokens: 2, estimated: false });
  c.put(cacheKey('long'), { tokens: 123456, estimated: true });
  expect(c.save()).toEqual([]);
  return c.file;
}

describe('token cache file', () => {
  it('keys a text by the first 128 bits of its SHA-256, as four little-endian u32 words', () => {
    // sha256("abc") = ba7816bf 8f01cfea 414140de 5dae2223 …: bytes ba 78 16 bf read little-endian = 0xbf1678ba.
    expect(cacheKey('abc')).toEqual([0xbf1678ba, 0xeacf018f, 0xde404141, 0x2322ae5d]);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        const d = createHash('sha256').update(text, 'utf8').digest();
        expect(cacheKey(text)).toEqual([0, 4, 8, 12].map((i) => d.readUInt32LE(i)));
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('keeps counts and the estimate flag', () => {
    const dir = tempDir();
    filled(dir);
    const c = TokenCache.open(dir, ID);
    expect(c.warnings).toEqual([]);
    expect(c.loaded).toBe(3);
    expect(c.get(cacheKey('one'))).toEqual({ tokens: 1, estimated: false });
    expect(c.get(cacheKey('long'))).toEqual({ tokens: 123456, estimated: true });
    expect(c.get(cacheKey('three'))).toBeUndefined();
  });

  it('has the documented layout: a store entry keyed by the counter id, its payload 20-byte records sorted by key', () => {
    const dir = tempDir();
    const file = filled(dir);
    expect(file).toBe(entryFile(dir));
    const buf = readFileSync(file);
    // 84-byte entry header + 3 records × 20 bytes.
    expect(buf.length).toBe(84 + 3 * 20);
    expect(buf.toString('latin1', 0, 8)).toBe('ctxsimST');
    expect(buf.readUInt32LE(8)).toBe(1);
    expect(buf.readUInt32LE(12)).toBe(60);
    expect(buf.toString('latin1', 20, 84)).toBe(basename(file));
    const records = [0, 1, 2].map((i) => [0, 1, 2, 3, 4].map((w) => buf.readUInt32LE(84 + 20 * i + 4 * w)));
    const sorted = (['one', 'two', 'long'] as const).map((t) => [...cacheKey(t)]).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    expect(records.map((r) => r.slice(0, 4))).toEqual(sorted);
    // The value: tokens, with the top bit for an estimate.
    expect(records.find((r) => r[0] === cacheKey('long')[0])![4]).toBe(0x8000_0000 + 123456);
  });

  const damage: [string, (b: Buffer) => Buffer, RegExp][] = [
    ['truncated', (b) => b.subarray(0, b.length - 1), /damaged \(143 bytes, expected 144\)/],
    ['a flipped record byte', (b) => Buffer.concat([b.subarray(0, b.length - 3), Buffer.from([b[b.length - 3]! ^ 1]), b.subarray(b.length - 2)]), /damaged \(checksum mismatch\)/],
    ['not a cache', () => Buffer.from('hello world, this is not a cache'), /damaged \(not a ctxsim cache entry\)/],
    ['empty', () => Buffer.alloc(0), /damaged \(not a ctxsim cache entry\)/],
    ['a newer format', (b) => Buffer.concat([b.subarray(0, 8), Buffer.from([2, 0, 0, 0]), b.subarray(12)]), /damaged \(format version 2, expected 1\)/],
  ];
  for (const [what, corrupt, message] of damage) {
    it(`ignores and rebuilds a file that is ${what}`, () => {
      const dir = tempDir();
      const file = filled(dir);
      writeFileSync(file, corrupt(readFileSync(file)));
      const c = TokenCache.open(dir, ID);
      expect(c.warnings).toHaveLength(1);
      expect(c.warnings[0]).toMatch(message);
      expect(c.warnings[0]).toContain('; counting without it and replacing it');
      expect(c.loaded).toBe(0);
      expect(c.get(cacheKey('one'))).toBeUndefined();
      // Saving replaces it with a good file, even with nothing new.
      expect(c.save()).toEqual([]);
      const again = TokenCache.open(dir, ID);
      expect(again.warnings).toEqual([]);
      expect(again.loaded).toBe(0);
    });
  }

  it('does not reuse counts made by another counter: its counts are another entry', () => {
    const dir = tempDir();
    filled(dir);
    const other = 'o200k_base js-tiktoken@0.0.1 bounded@1';
    const c = TokenCache.open(dir, other);
    expect(c.warnings).toEqual([]);
    expect(c.get(cacheKey('one'))).toBeUndefined();
    c.put(cacheKey('one'), { tokens: 9, estimated: false });
    expect(c.save()).toEqual([]);
    expect(c.file).toBe(entryFile(dir, other));
    expect(TokenCache.open(dir, other).get(cacheKey('one'))).toEqual({ tokens: 9, estimated: false });
    expect(TokenCache.open(dir, ID).get(cacheKey('one'))).toEqual({ tokens: 1, estimated: false });
  });

  it('ignores and rebuilds an entry whose payload is not whole records', () => {
    const dir = tempDir();
    const file = filled(dir);
    const buf = readFileSync(file);
    // A well-formed entry (length and checksum right) holding 7 bytes.
    const payload = Buffer.from('1234567');
    const head = Buffer.concat([buf.subarray(0, 12), Buffer.alloc(4), buf.subarray(16, 84)]);
    head.writeUInt32LE(7, 12);
    head.writeUInt32LE(crc32(payload, crc32(head.subarray(20))), 16);
    writeFileSync(file, Buffer.concat([head, payload]));
    const c = TokenCache.open(dir, ID);
    expect([...c.warnings]).toEqual([`token cache entry ${file} is damaged (7 bytes of counts, not whole 20-byte records); counting without it and replacing it`]);
    expect(c.save()).toEqual([]);
    const again = TokenCache.open(dir, ID);
    expect([again.loaded, again.warnings]).toEqual([0, []]);
  });

  it('a run with a damaged file counts everything again and leaves a good file', () => {
    const dir = tempDir();
    runStudy(study(dir));
    const file = entryFile(dir);
    writeFileSync(file, readFileSync(file).subarray(0, 100));
    const r = runStudy(study(dir));
    expect(r.tokenizerCalls).toBe(8);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^token cache entry .*tokens\/[0-9a-f]{2}\/[0-9a-f]{64} is damaged \(100 bytes, expected 244\); counting without it and replacing it$/);
    expect(runStudy(study(dir))).toMatchObject({ tokenizerCalls: 0, warnings: [] });
  });

  it('reports a folder it cannot write and still runs', () => {
    const dir = tempDir();
    // A file where the folder should be.
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, '');
    const r = runStudy(study(blocked));
    expect(r.tokenizerCalls).toBe(8);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^token cache .*blocked\/tokens cannot be written \((EEXIST|ENOTDIR)\); token counts were not saved$/);
  });

  it('two runs sharing a folder merge their counts on save (write, then rename)', () => {
    const dir = tempDir();
    const a = TokenCache.open(dir, ID);
    const b = TokenCache.open(dir, ID);
    a.put(cacheKey('from a'), { tokens: 3, estimated: false });
    b.put(cacheKey('from b'), { tokens: 4, estimated: true });
    b.put(cacheKey('both'), { tokens: 5, estimated: false });
    a.put(cacheKey('both'), { tokens: 5, estimated: false });
    expect(a.save()).toEqual([]);
    expect(b.save()).toEqual([]);
    const c = TokenCache.open(dir, ID);
    expect(c.loaded).toBe(3);
    expect(c.get(cacheKey('from a'))).toEqual({ tokens: 3, estimated: false });
    expect(c.get(cacheKey('from b'))).toEqual({ tokens: 4, estimated: true });
    expect(readdirSync(dirname(c.file))).toEqual([basename(c.file)]);
  });

  it('saves under a lock file, removes it after, and clears one left by a run that died', () => {
    const dir = tempDir();
    const file = filled(dir);
    expect(readdirSync(dirname(file))).toEqual([basename(file)]);
    // A lock a minute old: its run is gone.
    writeFileSync(`${file}.lock`, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    const c = TokenCache.open(dir, ID);
    c.put(cacheKey('four'), { tokens: 4, estimated: false });
    expect(c.save()).toEqual([]);
    expect(readdirSync(dirname(file))).toEqual([basename(file)]);
    expect(TokenCache.open(dir, ID).loaded).toBe(4);
  });

  it('round-trips any set of counts, saved in two batches (property)', () => {
    const entry = fc.record({ text: fc.string({ maxLength: 30 }), tokens: fc.nat({ max: 0x7fffffff }), estimated: fc.boolean() });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), fc.array(entry, { maxLength: 40 }), (first, second) => {
        const dir = tempDir();
        const expected = new Map<string, { tokens: number; estimated: boolean }>();
        for (const batch of [first, second]) {
          const c = TokenCache.open(dir, ID);
          for (const e of batch) {
            // A text's count never changes; the first one saved stays.
            if (expected.has(e.text)) continue;
            expected.set(e.text, { tokens: e.tokens, estimated: e.estimated });
            c.put(cacheKey(e.text), { tokens: e.tokens, estimated: e.estimated });
          }
          expect(c.save()).toEqual([]);
        }
        const c = TokenCache.open(dir, ID);
        expect(c.loaded).toBe(expected.size);
        for (const [text, count] of expected) expect(c.get(cacheKey(text))).toEqual(count);
      }),
      { seed: 42, numRuns: 40 },
    );
  });

  it('serves a counter: hits are not tokenizer calls', () => {
    const dir = tempDir();
    const t1 = openTokenCounter('o200k_base', dir);
    expect(t1.text('tiktoken is great!')).toBe(6);
    expect(t1.text('tiktoken is great!')).toBe(6);
    expect(t1.tokenizerCalls).toBe(1);
    t1.save();
    const t2 = openTokenCounter('o200k_base', dir);
    expect(t2.text('tiktoken is great!')).toBe(6);
    expect(t2).toMatchObject({ tokenizerCalls: 0, tokenCacheHits: 1 });
  });
});

describe('token cache flags', () => {
  it('defaults to $CTXSIM_CACHE_DIR, else the user’s cache folder; a flag wins over the variable; one naming a file is named', () => {
    const dir = tempDir();
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    try {
      vi.stubEnv('CTXSIM_CACHE_DIR', '');
      vi.stubEnv('XDG_CACHE_HOME', join(dir, 'xdg'));
      expect(cacheFolderOf(undefined)).toEqual({ dir: join(dir, 'xdg', 'ctxsim'), named: false });
      vi.stubEnv('CTXSIM_CACHE_DIR', join(dir, 'ci-cache'));
      expect(cacheFolderOf(undefined)).toEqual({ dir: join(dir, 'ci-cache'), named: true });
      expect(cacheFolderOf(join(dir, 'x')).dir).toBe(join(dir, 'x'));
      expect(cacheFolderOf(false).dir).toBe(false);
      vi.stubEnv('CTXSIM_CACHE_DIR', file);
      expect(() => cacheFolderOf(undefined)).toThrow(new UsageError(`CTXSIM_CACHE_DIR ${file}: a file, not a folder`));
      expect(() => cacheFolderOf(file)).toThrow(new UsageError(`--token-cache ${file}: a file, not a folder`));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('run without a cache flag fills $CTXSIM_CACHE_DIR', async () => {
    const dir = tempDir();
    vi.stubEnv('CTXSIM_CACHE_DIR', join(dir, 'ci-cache'));
    try {
      expect((await cli('--out', join(dir, 'out'))).code).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(readdirSync(join(dir, 'ci-cache')).sort()).toEqual(['charts', 'replay', 'tokens']);
  });

  it('--no-token-cache is false; of both, the last wins (the option made from the setting’s entry keeps the last)', () => {
    const dir = tempDir();
    const [x, y] = [join(dir, 'x'), join(dir, 'y')];
    const { coerce } = COMMAND_OPTIONS['token-cache'] as { coerce: (raw: unknown) => unknown };
    const read = (raw: unknown) => cacheFolderOf(commandSettings({ tokenCache: coerce(raw) }).tokenCache).dir;
    expect(read(x)).toBe(x);
    expect(read(false)).toBe(false);
    expect(read([x, false])).toBe(false);
    expect(read([false, y])).toBe(y);
    expect(() => read('')).toThrow(new UsageError('--token-cache: name a folder (or use --no-token-cache)'));
  });

  const scenario = join(ROOT, 'scenarios', 'noah-amnesia.yaml');
  async function cli(...args: string[]) {
    const io = capture();
    const code = await runMain(['run', '--scenario', scenario, '--policy', 'full', '--quiet', ...args], io);
    return { code, ...io };
  }

  it('run --token-cache DIR fills the folder; a damaged file is rebuilt with a warning on stderr', async () => {
    const dir = tempDir();
    const cache = join(dir, 'cache');
    const out = join(dir, 'out');
    expect((await cli('--out', out, '--token-cache', cache)).code).toBe(0);
    const file = entryFile(cache);
    expect(existsSync(file)).toBe(true);
    const first = readFileSync(join(out, 'turns.csv'), 'utf8');
    writeFileSync(file, 'garbage');
    const r = await cli('--out', out, '--token-cache', cache);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`ctxsim: warning: token cache entry ${file} is damaged (not a ctxsim cache entry); counting without it and replacing it\n`);
    expect(readFileSync(join(out, 'turns.csv'), 'utf8')).toBe(first);
    expect((await cli('--out', out, '--token-cache', cache)).stderr).toBe('');
  });

  it('--no-token-cache writes no cache, also after --token-cache; a later --token-cache wins', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'out'));
    expect((await cli('--out', join(dir, 'out'), '--token-cache', join(dir, 'a'), '--no-token-cache')).code).toBe(0);
    expect(existsSync(join(dir, 'a'))).toBe(false);
    expect((await cli('--out', join(dir, 'out'), '--no-token-cache', '--token-cache', join(dir, 'b'))).code).toBe(0);
    expect(existsSync(entryFile(join(dir, 'b')))).toBe(true);
  });
});
