import { hash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { alive, makeDirs, readRegularFile } from '../process.js';
import { endianness } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import type { TokenCount } from './bounded.js';

/**
 * The persistent token-count cache: one file per encoding in a folder
 * (`.ctxsim-cache/` by default), so a rerun of an unchanged study does
 * almost no tokenizer work.
 *
 * File layout (integers little-endian):
 *
 * | offset | bytes | content                                                      |
 * |--------|-------|--------------------------------------------------------------|
 * | 0      | 8     | magic `ctxsimTK`                                             |
 * | 8      | 4     | format version (1)                                           |
 * | 12     | 4     | record count n                                               |
 * | 16     | 4     | CRC-32 of everything after the header (counter id, records)  |
 * | 20     | 4     | counter id length L                                          |
 * | 24     | L     | counter id, UTF-8, zero-padded to a multiple of 4            |
 * | …      | 20·n  | records sorted by key: key (4 × u32: the first 128 bits of the text's SHA-256), value (u32: tokens, top bit set when estimated) |
 *
 * Records are sorted by the key's four u32 words in order, so lookups are a
 * binary search over the file as read: no parsing, and a million entries
 * load in milliseconds. A file whose header, size or checksum does not hold,
 * or that another counter wrote, is never trusted: the run starts without it
 * and replaces it. Saves never write in place: under a lock file they read
 * the file again, merge their new entries in, write a temp file beside it and
 * rename it over the old one, so concurrent runs (processes or worker
 * threads) sharing the folder never leave a broken file nor drop each
 * other's entries. Readers need no lock: a rename swaps the whole file.
 */

const MAGIC = Buffer.from('ctxsimTK', 'latin1');
const VERSION = 1;
const HEADER = 24;
const RECORD_WORDS = 5;
const ESTIMATED = 0x8000_0000;
const MAX_TOKENS = 0x7fff_ffff;

/** A cache key: the first 128 bits of the SHA-256 of the text, as four u32 words. */
export type CacheKey = readonly [number, number, number, number];

/**
 * The key of a text. The digest comes back as a "binary" (latin1) string,
 * one character per byte: half the cost of a Buffer, which is allocated per
 * call, and every text of a run is keyed once.
 */
export function cacheKey(text: string): CacheKey {
  const d = hash('sha256', text, 'binary');
  return [word(d, 0), word(d, 4), word(d, 8), word(d, 12)];
}

/** The little-endian u32 at byte `i` of a latin1 digest. */
function word(d: string, i: number): number {
  return (d.charCodeAt(i) | (d.charCodeAt(i + 1) << 8) | (d.charCodeAt(i + 2) << 16) | (d.charCodeAt(i + 3) << 24)) >>> 0;
}

/** The file name of an encoding's cache in the folder. */
export function cacheFileName(encoding: string): string {
  return `${encoding}.tokens`;
}

/** Sorted records: RECORD_WORDS u32 per record. */
type Records = Uint32Array;

/** Where `key` is in `recs` (index ≥ 0) or where it would go (-(index + 1)). */
function search(recs: Records, key: CacheKey): number {
  let lo = 0;
  let hi = recs.length / RECORD_WORDS - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareAt(recs, mid * RECORD_WORDS, key);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid - 1;
    else return mid;
  }
  return -(lo + 1);
}

function compareAt(recs: Records, at: number, key: CacheKey): number {
  for (let i = 0; i < 4; i++) {
    const a = recs[at + i]!;
    const b = key[i]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

function compareRecords(a: Records, i: number, b: Records, j: number): number {
  for (let w = 0; w < 4; w++) {
    const x = a[i + w]!;
    const y = b[j + w]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Merges sorted record arrays; on equal keys the first array's record is kept. */
function merge(a: Records, b: Records): Records {
  if (!b.length) return a;
  if (!a.length) return b;
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < a.length && j < b.length) {
    const c = compareRecords(a, i, b, j);
    const from = c <= 0 ? a : b;
    const at = c <= 0 ? i : j;
    out.set(from.subarray(at, at + RECORD_WORDS), o);
    o += RECORD_WORDS;
    if (c <= 0) i += RECORD_WORDS;
    if (c >= 0) j += RECORD_WORDS;
  }
  out.set(a.subarray(i), o);
  o += a.length - i;
  out.set(b.subarray(j), o);
  o += b.length - j;
  return out.subarray(0, o);
}

/** What reading a cache file found. */
type Read =
  | { status: 'ok'; records: Records }
  | { status: 'missing' }
  | { status: 'unreadable'; reason: string }
  | { status: 'damaged'; reason: string }
  | { status: 'foreign'; counter: string };

const pad4 = (n: number) => (n + 3) & ~3;
/** Records are little-endian on disk; typed arrays use the host's order. */
const SWAP = endianness() === 'BE';

/** Reads and checks a cache file; never throws. */
function readCacheFile(file: string, counter: string): Read {
  const r = readRegularFile(file);
  if (r.status !== 'ok') return r;
  const { buf } = r;
  if (buf.length < HEADER || !buf.subarray(0, 8).equals(MAGIC)) return { status: 'damaged', reason: 'not a ctxsim token cache' };
  const version = buf.readUInt32LE(8);
  if (version !== VERSION) return { status: 'damaged', reason: `format version ${version}, expected ${VERSION}` };
  const n = buf.readUInt32LE(12);
  const idLength = buf.readUInt32LE(20);
  const start = HEADER + pad4(idLength);
  const expected = start + n * RECORD_WORDS * 4;
  if (buf.length !== expected) return { status: 'damaged', reason: `${buf.length} bytes, expected ${expected} for ${n} entries` };
  if (crc32(buf.subarray(HEADER)) !== buf.readUInt32LE(16)) return { status: 'damaged', reason: 'checksum mismatch' };
  const id = buf.toString('utf8', HEADER, HEADER + idLength);
  if (id !== counter) return { status: 'foreign', counter: id };
  if (SWAP) buf.subarray(start, expected).swap32();
  // A view when aligned (large files get memory of their own); a copy otherwise.
  const at = buf.byteOffset + start;
  if (at % 4 === 0) return { status: 'ok', records: new Uint32Array(buf.buffer, at, n * RECORD_WORDS) };
  const records = new Uint32Array(n * RECORD_WORDS);
  new Uint8Array(records.buffer).set(buf.subarray(start, expected));
  return { status: 'ok', records };
}

/** The bytes of a cache file holding `records`. */
function encodeCacheFile(counter: string, records: Records): Buffer {
  const id = Buffer.from(counter, 'utf8');
  const start = HEADER + pad4(id.length);
  const buf = Buffer.alloc(start + records.byteLength);
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(VERSION, 8);
  buf.writeUInt32LE(records.length / RECORD_WORDS, 12);
  buf.writeUInt32LE(id.length, 20);
  id.copy(buf, HEADER);
  Buffer.from(records.buffer, records.byteOffset, records.byteLength).copy(buf, start);
  if (SWAP) buf.subarray(start).swap32();
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 16);
  return buf;
}

/**
 * One encoding's token counts on disk, loaded at the start of a run and saved
 * at its end. Warnings (a damaged file rebuilt, a failed write) are returned
 * as data; the CLI prints them.
 */
export class TokenCache {
  private records: Records = new Uint32Array(0);
  /** Records added since loading, RECORD_WORDS numbers each, unsorted. */
  private added: number[] = [];
  /** Whether the file on disk must be replaced even with nothing new (it was damaged or foreign). */
  private replace = false;
  /** Problems met so far, one line each. */
  readonly warnings: string[] = [];

  private constructor(
    readonly file: string,
    readonly counter: string,
  ) {}

  /** Opens the cache of `counter` (see `counterId`) in `dir`; a missing file is an empty cache. */
  static open(dir: string, encoding: string, counter: string): TokenCache {
    const cache = new TokenCache(join(dir, cacheFileName(encoding)), counter);
    const read = readCacheFile(cache.file, counter);
    if (read.status === 'ok') cache.records = read.records;
    else if (read.status === 'damaged') {
      cache.warnings.push(`token cache ${cache.file} is damaged (${read.reason}); ignoring it and rebuilding it`);
      cache.replace = true;
    } else if (read.status === 'foreign') {
      cache.warnings.push(`token cache ${cache.file} was written by another counter (${read.counter}); rebuilding it for ${counter}`);
      cache.replace = true;
    } else if (read.status === 'unreadable') {
      cache.warnings.push(`token cache ${cache.file} cannot be read (${read.reason}); counting without it`);
    }
    return cache;
  }

  /** Entries loaded from disk. */
  get loaded(): number {
    return this.records.length / RECORD_WORDS;
  }

  /** Entries added since loading. */
  get size(): number {
    return this.added.length / RECORD_WORDS;
  }

  /**
   * The count of a key as loaded, if any. Counts added since are not looked
   * up: the token counter's own index by key serves texts counted in this run.
   */
  get(key: CacheKey): TokenCount | undefined {
    const i = search(this.records, key);
    if (i < 0) return undefined;
    const value = this.records[i * RECORD_WORDS + 4]!;
    return { tokens: value & MAX_TOKENS, estimated: (value & ESTIMATED) !== 0 };
  }

  /** Records a count (to be saved). */
  put(key: CacheKey, count: TokenCount): void {
    if (count.tokens > MAX_TOKENS || count.tokens < 0) return;
    this.added.push(key[0], key[1], key[2], key[3], (count.tokens | (count.estimated ? ESTIMATED : 0)) >>> 0);
  }

  /**
   * Writes new entries: merges them into the file as it is now (another run
   * may have saved since), writes a temp file and renames it into place.
   * Returns the warnings of this save (also kept in `warnings`).
   */
  save(): string[] {
    if (!this.added.length && !this.replace) return [];
    const mine = sortRecords(Uint32Array.from(this.added));
    const tmp = `${this.file}.${process.pid}-${threadId}-${randomBytes(4).toString('hex')}.tmp`;
    const warnings: string[] = [];
    let release: (() => void) | undefined;
    let records: Records;
    try {
      makeDirs(join(this.file, '..'));
      release = lock(this.file);
      if (!release) warnings.push(`token cache ${this.file}: another run held the lock for ${LOCK_WAIT_MS / 1000} s; saving without it`);
      else removeStaleTemps(this.file);
      const now = readCacheFile(this.file, this.counter);
      const onDisk = now.status === 'ok' ? now.records : new Uint32Array(0);
      records = merge(merge(onDisk, this.records), mine);
      writeFileSync(tmp, encodeCacheFile(this.counter, records));
      renameSync(tmp, this.file);
    } catch (e) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // Nothing was written there.
      }
      warnings.push(`token cache ${this.file} cannot be written (${(e as NodeJS.ErrnoException).code ?? e}); counts were not saved`);
      this.warnings.push(...warnings);
      return warnings;
    } finally {
      release?.();
    }
    this.warnings.push(...warnings);
    this.records = records;
    this.added = [];
    this.replace = false;
    return warnings;
  }
}

const LOCK_WAIT_MS = 10_000;
const LOCK_STALE_MS = 30_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Takes `<file>.lock` (created exclusively) so that saves merge one at a
 * time and none loses another's entries. Returns its release, or undefined
 * when it stayed taken for LOCK_WAIT_MS. A lock older than LOCK_STALE_MS —
 * a file, or a folder some other tool made — is left over from a run that
 * died: it is removed at once and taken, not waited on.
 */
function lock(file: string): (() => void) | undefined {
  const path = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let wait = 1; ; wait = Math.min(2 * wait, 50)) {
    try {
      closeSync(openSync(path, 'wx'));
      return () => rmSync(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (breakStale(path)) continue;
    if (Date.now() > deadline) return undefined;
    Atomics.wait(pause, 0, 0, wait);
  }
}

/** A save's temp file beside the cache file: `<file>.<pid>-<thread>-<random>.tmp`. */
const TEMP = /^(.*)\.(\d+)-\d+-[0-9a-f]{8}\.tmp$/;

/**
 * Removes the temp files of saves that died before their rename (killed
 * runs): those of `file` whose process is gone, or older than an hour.
 * Called under the lock, when no save of a live run is between its write
 * and its rename (one that gave up waiting for the lock is young). Best effort.
 */
function removeStaleTemps(file: string, now = Date.now()): void {
  const dir = dirname(file);
  const base = basename(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = TEMP.exec(name);
    if (!m || m[1] !== base) continue;
    const path = join(dir, name);
    try {
      if (!alive(Number(m[2])) || now - statSync(path).mtimeMs > TEMP_STALE_MS) rmSync(path, { force: true });
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
}

const TEMP_STALE_MS = 3_600_000;

/** Removes the lock at `path` if it is older than LOCK_STALE_MS; whether it did (or the lock is gone). */
function breakStale(path: string): boolean {
  try {
    if (Date.now() - statSync(path).mtimeMs <= LOCK_STALE_MS) return false;
    rmSync(path, { recursive: true, force: true });
    return true;
  } catch (e) {
    // Released meanwhile: try again at once.
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Records sorted by key, one per key (the first of equal keys kept). */
function sortRecords(recs: Records): Records {
  const n = recs.length / RECORD_WORDS;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => compareRecords(recs, a * RECORD_WORDS, recs, b * RECORD_WORDS) || a - b);
  const out = new Uint32Array(recs.length);
  let o = 0;
  for (let i = 0; i < n; i++) {
    const at = order[i]! * RECORD_WORDS;
    if (o && compareRecords(out, o - RECORD_WORDS, recs, at) === 0) continue;
    out.set(recs.subarray(at, at + RECORD_WORDS), o);
    o += RECORD_WORDS;
  }
  return out.subarray(0, o);
}
