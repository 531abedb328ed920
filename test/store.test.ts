import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { NAMESPACE_NAMES } from '../src/store/namespaces.js';
import { breakIfStill, breakStale, releaseLock, removeIf, takeLock, tryLock } from '../src/store/_lock.js';
import { CacheSpace, clearStore, evictStore, storeStats } from '../src/store/store.js';
import { tempDir } from './_tmp.js';

/**
 * The store below every cache: one entry format, one layout, atomic writes,
 * one lock for merged entries, temp sweeps, stats, clear and one eviction
 * policy over all namespaces.
 */

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const old = (path: string, hoursAgo: number) => utimesSync(path, new Date(Date.now() - hoursAgo * 3600_000), new Date(Date.now() - hoursAgo * 3600_000));

describe('store entries', () => {
  it('declares the namespaces every cache lives in', () => {
    expect(NAMESPACE_NAMES).toEqual(['replay', 'charts', 'tokens', 'readings']);
  });

  it('keys are the SHA-256 of the namespace and the parts', () => {
    const space = new CacheSpace(tempDir(), 'charts');
    expect(space.keyOf('a', 'b')).toBe(sha('ctxsim charts\0a\0b'));
    expect(new CacheSpace(space.root, 'replay').keyOf('a', 'b')).toBe(sha('ctxsim replay\0a\0b'));
    expect(() => space.file('not-a-key')).toThrow('store: not a key: "not-a-key"');
  });

  it('has the documented layout: <namespace>/<2 hex>/<key>, magic, version, length, CRC-32 of key and payload, key, payload', () => {
    const root = tempDir();
    const space = new CacheSpace(root, 'replay');
    const key = space.keyOf('x');
    expect(space.put(key, Buffer.from('hello'))).toBe(true);
    const file = join(root, 'replay', key.slice(0, 2), key);
    expect(space.file(key)).toBe(file);
    const buf = readFileSync(file);
    expect(buf.length).toBe(84 + 5);
    expect(buf.toString('latin1', 0, 8)).toBe('ctxsimST');
    expect([buf.readUInt32LE(8), buf.readUInt32LE(12)]).toEqual([1, 5]);
    expect(buf.readUInt32LE(16)).toBe(crc32(Buffer.from(`${key}hello`, 'latin1')));
    expect(buf.toString('latin1', 20, 84)).toBe(key);
    expect(buf.toString('latin1', 84)).toBe('hello');
    expect(space.read(key)).toEqual({ status: 'ok', payload: Buffer.from('hello') });
    // An empty payload checks too (its CRC is the key's).
    const empty = space.keyOf('empty');
    space.put(empty, new Uint8Array(new ArrayBuffer(0)));
    expect(readFileSync(space.file(empty)).readUInt32LE(16)).toBe(crc32(Buffer.from(empty, 'latin1')));
    expect(space.read(empty)).toEqual({ status: 'ok', payload: Buffer.alloc(0) });
    expect(readdirSync(join(root, 'replay', key.slice(0, 2)))).toEqual([key]);
  });

  it('round-trips values (v8) and says what a damaged entry costs, in its namespace’s words', () => {
    const root = tempDir();
    const space = new CacheSpace(root, 'charts');
    const isObj = (v: unknown): v is { n: bigint } => typeof v === 'object' && v !== null && 'n' in v;
    const [a, b] = [space.keyOf('a'), space.keyOf('b')];
    space.putValue(a, { n: 12n, z: -0 });
    expect(space.getValue(a, isObj, 'a thing', 'making it again')).toStrictEqual({ n: 12n, z: -0 });
    space.putValue(b, 'just text');
    expect(space.getValue(b, isObj, 'a thing', 'making it again')).toBeUndefined();
    // An entry copied under another key's name.
    writeFileSync(space.file(b), readFileSync(space.file(a)));
    expect(space.getValue(b, isObj, 'a thing', 'making it again')).toBeUndefined();
    expect(space.getValue(space.keyOf('never'), isObj, 'a thing', 'making it again')).toBeUndefined();
    expect(space.warnings).toEqual([
      `chart cache entry ${space.file(b)} is damaged (not a thing); making it again and replacing it`,
      `chart cache entry ${space.file(b)} is damaged (written for another key); making it again and replacing it`,
    ]);
  });

  it('a namespace that cannot be written warns once and fails nothing', () => {
    const root = join(tempDir(), 'blocked');
    writeFileSync(root, '');
    const space = new CacheSpace(root, 'replay');
    expect(space.put(space.keyOf('a'), Buffer.from('x'))).toBe(false);
    expect(space.put(space.keyOf('b'), Buffer.from('x'))).toBe(false);
    expect(space.warnings).toEqual([`replay cache ${join(root, 'replay')} cannot be written (ENOTDIR); replayed units were not saved`]);
  });

  it('never goes through a symbolic link inside the cache folder: nothing read, written, swept or removed where it leads, one warning', () => {
    // A cache folder named inside a checkout may hold links a pull request planted.
    const root = tempDir();
    const outside = tempDir();
    const [space, fanned] = [new CacheSpace(root, 'replay'), new CacheSpace(root, 'tokens')];
    const [a, b] = [space.keyOf('a'), fanned.keyOf('b')];
    // An entry where the links lead, as a planted one would be.
    const planted = new CacheSpace(outside, 'replay');
    planted.put(a, Buffer.from('planted'));
    symlinkSync(join(outside, 'replay'), join(root, 'replay'));
    mkdirSync(join(root, 'tokens'));
    mkdirSync(join(outside, 'tokens', b.slice(0, 2)), { recursive: true });
    symlinkSync(join(outside, 'tokens', b.slice(0, 2)), join(root, 'tokens', b.slice(0, 2)));
    writeFileSync(join(outside, 'tokens', b.slice(0, 2), b), 'theirs');
    expect(space.read(a)).toEqual({ status: 'missing' });
    expect(space.put(a, Buffer.from('x'))).toBe(false);
    expect(space.put(space.keyOf('c'), Buffer.from('x'))).toBe(false);
    expect(fanned.read(b)).toEqual({ status: 'missing' });
    expect(fanned.merge(b, () => Buffer.from('x'))).toBe(false);
    expect([...space.warnings, ...fanned.warnings]).toEqual([
      `replay cache ${join(root, 'replay')} cannot be written (${join(root, 'replay')} is a symbolic link, which the cache never follows); replayed units were not saved`,
      `token cache ${join(root, 'tokens')} cannot be written (${join(root, 'tokens', b.slice(0, 2))} is a symbolic link, which the cache never follows); token counts were not saved`,
    ]);
    expect(storeStats(root).total).toEqual({ entries: 0, bytes: 0 });
    expect(evictStore(root, 0)).toBe(0);
    clearStore(root);
    expect(readdirSync(join(outside, 'replay', a.slice(0, 2)))).toEqual([a]);
    expect(readdirSync(join(outside, 'tokens', b.slice(0, 2)))).toEqual([b]);
    expect(readFileSync(join(outside, 'tokens', b.slice(0, 2), b), 'utf8')).toBe('theirs');
    // An entry that is itself a link is not read either.
    const own = new CacheSpace(tempDir(), 'charts');
    const key = own.keyOf('d');
    mkdirSync(dirname(own.file(key)), { recursive: true });
    symlinkSync(planted.file(a), own.file(key));
    expect(own.read(key)).toEqual({ status: 'unreadable', reason: 'is a symbolic link, which is not followed here' });
  });

  it('merges under the entry’s lock: each merge sees the last, a lock left by a dead run is broken, none is left behind', () => {
    const root = tempDir();
    const [one, two] = [new CacheSpace(root, 'tokens'), new CacheSpace(root, 'tokens')];
    const key = one.keyOf('counter');
    const append = (text: string) => (current: Buffer | undefined) => Buffer.from(`${current?.toString() ?? ''}${text}`);
    expect(one.merge(key, append('a'))).toBe(true);
    expect(two.merge(key, append('b'))).toBe(true);
    const lock = `${one.file(key)}.lock`;
    writeFileSync(lock, '');
    old(lock, 1 / 60);
    expect(one.merge(key, append('c'))).toBe(true);
    expect(one.read(key)).toEqual({ status: 'ok', payload: Buffer.from('abc') });
    expect(readdirSync(dirname(one.file(key)))).toEqual([key]);
    expect([...one.warnings, ...two.warnings]).toEqual([]);
  });
});

describe('the merge lock', () => {
  /** A lock's folder and path, and what is in the folder. */
  function lockAt() {
    const dir = tempDir();
    const file = join(dir, sha('entry'));
    return { dir, file, path: `${file}.lock`, files: () => readdirSync(dir), owner: () => readFileSync(`${file}.lock`, 'latin1') };
  }

  it('holds its owner’s token: pid, thread, random', () => {
    const { file, owner, files } = lockAt();
    const release = takeLock(file)!;
    expect(owner()).toMatch(new RegExp(`^${process.pid}-0-[0-9a-f]{16}$`));
    release();
    expect(files()).toEqual([]);
  });

  it('two runs that find the same stale lock: the second never removes the fresh lock the first took after breaking it', () => {
    const { path, owner, files } = lockAt();
    writeFileSync(path, 'a run that died');
    old(path, 1 / 60);
    // Run A breaks it and takes its own.
    expect(breakStale(path)).toBe(true);
    expect(tryLock(path, 'A')).toBe(true);
    // Run B had found the same lock stale before A broke it: what it now moves away is A's fresh lock, and it puts it back.
    expect(breakIfStill(path)).toBe(false);
    expect(owner()).toBe('A');
    expect(tryLock(path, 'B')).toBe(false);
    expect(breakStale(path)).toBe(false);
    // Nor does a release that is not the owner’s remove it.
    expect(releaseLock(path, 'B')).toBe(false);
    expect(owner()).toBe('A');
    expect(files()).toEqual([basename(path)]);
    expect(releaseLock(path, 'A')).toBe(true);
    expect(files()).toEqual([]);
  });

  it('a run whose lock was broken as stale does not release the lock another run took since', () => {
    const { path, owner, files } = lockAt();
    expect(tryLock(path, 'A')).toBe(true);
    // A holds it past LOCK_STALE_MS: B takes it for a dead run’s.
    old(path, 1 / 60);
    expect(breakStale(path)).toBe(true);
    expect(tryLock(path, 'B')).toBe(true);
    expect(releaseLock(path, 'A')).toBe(false);
    expect(owner()).toBe('B');
    expect(releaseLock(path, 'B')).toBe(true);
    expect(files()).toEqual([]);
  });

  it('a lock moved away by mistake is put back, never over one a third run took meanwhile', () => {
    const { path, owner, files } = lockAt();
    expect(tryLock(path, 'A')).toBe(true);
    expect(removeIf(path, () => false)).toBe(false);
    expect(owner()).toBe('A');
    expect(
      removeIf(path, (moved) => {
        expect(readFileSync(moved, 'latin1')).toBe('A');
        expect(tryLock(path, 'C')).toBe(true);
        return false;
      }),
    ).toBe(false);
    expect(owner()).toBe('C');
    expect(files()).toEqual([basename(path)]);
    // Nothing there: nothing to remove.
    expect(releaseLock(path, 'C')).toBe(true);
    expect(removeIf(path, () => false)).toBe(true);
  });

  it('a live run’s lock is waited on, then given up on and left as it is', () => {
    const { file, path, owner } = lockAt();
    expect(tryLock(path, 'live')).toBe(true);
    const start = performance.now();
    expect(takeLock(file, 20)).toBeUndefined();
    // Waited on: at least the 20 ms given (a lower bound: a slow machine only waits longer).
    expect(performance.now() - start).toBeGreaterThanOrEqual(20);
    expect(owner()).toBe('live');
  });

  it(
    'a merge that waited for a live run’s lock goes ahead without it, says so, and leaves that lock',
    () => {
      const root = tempDir();
      // 50 ms for this test; a run waits LOCK_WAIT_MS (10 s).
      const space = new CacheSpace(root, 'tokens', 50);
      const key = space.keyOf('counter');
      mkdirSync(dirname(space.file(key)), { recursive: true });
      const path = `${space.file(key)}.lock`;
      expect(tryLock(path, 'live')).toBe(true);
      expect(space.merge(key, () => Buffer.from('x'))).toBe(true);
      expect(space.read(key)).toEqual({ status: 'ok', payload: Buffer.from('x') });
      expect(space.warnings).toEqual([`token cache entry ${space.file(key)}: another run held the lock for 0.05 s; saving without it`]);
      expect(readFileSync(path, 'latin1')).toBe('live');
    },
  );
});

describe('the cache folder', () => {
  /** One entry in each namespace, in namespace order: 100, 200, 300, 400 bytes of payload, 4, 3, 2, 1 hours old. */
  function fill(root: string): Record<string, string> {
    const files: Record<string, string> = {};
    for (const [i, ns] of NAMESPACE_NAMES.entries()) {
      const space = new CacheSpace(root, ns);
      const key = space.keyOf(ns);
      space.put(key, Buffer.alloc(100 * (i + 1)));
      files[ns] = space.file(key);
      old(files[ns]!, 4 - i);
    }
    return files;
  }

  it('counts entries per namespace and in all', () => {
    const root = tempDir();
    fill(root);
    // Each entry is its 84-byte header (8 magic, 4 version, 4 length, 4 CRC, 64 hex of key) and its payload.
    expect(storeStats(root)).toEqual({
      namespaces: { replay: { entries: 1, bytes: 184 }, charts: { entries: 1, bytes: 284 }, tokens: { entries: 1, bytes: 384 }, readings: { entries: 1, bytes: 484 } },
      total: { entries: 4, bytes: 1336 },
      legacy: { entries: 0, bytes: 0 },
      links: [],
    });
  });

  it('one eviction policy over every namespace: the least recently used go first until the folder is within its bound', () => {
    const root = tempDir();
    const files = fill(root);
    // A read is a use: the oldest entry (replay) becomes the newest.
    const replay = new CacheSpace(root, 'replay');
    expect(replay.read(replay.keyOf('replay')).status).toBe('ok');
    expect(evictStore(root, 1336)).toBe(0);
    expect(evictStore(root, 1100)).toBe(1);
    expect(existsSync(files.charts!)).toBe(false);
    expect(evictStore(root, 700)).toBe(1);
    expect([existsSync(files.replay!), existsSync(files.tokens!), existsSync(files.readings!)]).toEqual([true, false, true]);
    expect(evictStore(root, 200)).toBe(1);
    expect([existsSync(files.replay!), existsSync(files.readings!)]).toEqual([true, false]);
    expect(evictStore(root, 0)).toBe(1);
    expect(storeStats(root).total).toEqual({ entries: 0, bytes: 0 });
  });

  it('sweeps the temp files of writes that died (process gone, or an hour old) and keeps a live one', () => {
    const root = tempDir();
    const files = fill(root);
    const dir = dirname(files.replay!);
    const key = files.replay!.slice(-64);
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const [stale, live, aged] = [`${key}.${dead}-0-0123abcd.tmp`, `${key}.${process.pid}-1-89abcdef.tmp`, `${key}.${process.pid}-2-deadbeef.tmp`];
    // A lock a run that died had moved away to remove it (_lock.ts) is a temp file too.
    const moved = `${key}.lock.${dead}-0-76543210.tmp`;
    for (const f of [stale, live, aged, moved, 'not-ours.txt']) writeFileSync(join(dir, f), 'partial');
    // …and so is a lock some tool made a folder, moved away by a run that died.
    mkdirSync(join(dir, `${key}.lock.${dead}-0-fedcba98.tmp`, 'inside'), { recursive: true });
    old(join(dir, aged), 2);
    // A file of the layout before the store, which nothing reads, goes too, within the bound or not.
    writeFileSync(join(root, 'o200k_base.tokens'), '12345');
    evictStore(root);
    expect(readdirSync(dir).sort()).toEqual([key, live, 'not-ours.txt'].sort());
    expect(existsSync(join(root, 'o200k_base.tokens'))).toBe(false);
  });

  it('clear removes every entry and temp file, the folders so emptied, and the files of the layout before the store; other files stay', () => {
    const root = tempDir();
    const files = fill(root);
    const key = 'ab'.repeat(32);
    mkdirSync(join(root, 'replay', 'ab'));
    for (const f of ['o200k_base.tokens', 'o200k_base.tokens.lock', 'mine.txt']) writeFileSync(join(root, f), '12345');
    for (const f of [`${key}.rec`, `${key}.rec.1-0-0123abcd.tmp`]) writeFileSync(join(root, 'replay', 'ab', f), '123');
    writeFileSync(`${files.charts!}.${process.pid}-0-0123abcd.tmp`, 'partial');
    // A lock a run that died left beside its entry.
    writeFileSync(`${files.tokens!}.lock`, '');
    // 5 + 5 bytes at the top (a .tokens file and its lock), 3 + 3 in replay/ab (a .rec and its temp file).
    expect(storeStats(root).legacy).toEqual({ entries: 4, bytes: 16 });
    const removed = clearStore(root);
    expect(removed.total).toEqual({ entries: 4, bytes: 1336 });
    expect(removed.legacy).toEqual({ entries: 4, bytes: 16 });
    expect(readdirSync(root)).toEqual(['mine.txt']);
  });
});
