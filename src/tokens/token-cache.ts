import { hash } from 'node:crypto';
import { endianness } from 'node:os';
import { CacheSpace } from '../store/store.js';
import type { TokenCount } from './bounded.js';

/**
 * The persistent token-count cache: one entry per counter in the `tokens`
 * namespace of the store in the cache folder (`~/.cache/ctxsim/tokens/` by
 * default on Linux; see store/store.ts for the entry format and its lock), so a rerun
 * of an unchanged study does almost no tokenizer work. The entry's key is the
 * SHA-256 of the counter's id (see `counterId`): counts made by another
 * tokenizer, or another version of one, are another entry.
 *
 * The payload is the records, sorted by key (integers little-endian, 20 bytes
 * each): key (4 × u32: the first 128 bits of the text's SHA-256), value (u32:
 * tokens, top bit set when estimated). Records are sorted by the key's four
 * u32 words in order, so lookups are a binary search over the entry as read:
 * no parsing, and a million entries load in milliseconds. A damaged entry is
 * never trusted: the run starts without it and replaces it. Saves merge
 * under the entry's lock: they read the entry again, merge their new counts
 * in and write it whole, so concurrent runs (processes or worker threads)
 * sharing the folder never drop each other's counts. Readers need no lock.
 */

const RECORD_WORDS = 5;
const RECORD_BYTES = 4 * RECORD_WORDS;
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

/** Sorted records: RECORD_WORDS u32 per record. */
type Records = Uint32Array;

/** Where `key` is in `recs`, records of `stride` words sorted by their first four (index ≥ 0), or where it would go (-(index + 1)). */
export function search(recs: Uint32Array, key: CacheKey, stride = RECORD_WORDS): number {
  let lo = 0;
  let hi = recs.length / stride - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareAt(recs, mid * stride, key);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid - 1;
    else return mid;
  }
  return -(lo + 1);
}

function compareAt(recs: Uint32Array, at: number, key: CacheKey): number {
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

/** Records are little-endian on disk; typed arrays use the host's order. */
const SWAP = endianness() === 'BE';

/** The records of an entry's payload: a view when aligned (large entries get memory of their own), a copy otherwise. Throws on a payload of no whole records. */
function readRecords(payload: Buffer): Records {
  if (payload.length % RECORD_BYTES) throw new Error(`${payload.length} bytes of counts, not whole ${RECORD_BYTES}-byte records`);
  if (SWAP) payload.swap32();
  const n = payload.length / 4;
  if (payload.byteOffset % 4 === 0) return new Uint32Array(payload.buffer, payload.byteOffset, n);
  const records = new Uint32Array(n);
  new Uint8Array(records.buffer).set(payload);
  return records;
}

/** The payload of an entry holding `records`. */
function recordBytes(records: Records): Uint8Array {
  const bytes = new Uint8Array(records.buffer, records.byteOffset, records.byteLength);
  if (!SWAP) return bytes;
  const copy = Buffer.from(bytes);
  copy.swap32();
  return copy;
}

/**
 * One counter's token counts on disk, loaded at the start of a run and saved
 * at its end. Warnings (a damaged entry rebuilt, a failed write) are kept as
 * data; the CLI prints them.
 */
export class TokenCache {
  private records: Records = new Uint32Array(0);
  /** Records added since loading, RECORD_WORDS numbers each, unsorted. */
  private added: number[] = [];
  /** Whether the entry on disk must be replaced even with nothing new (it was damaged). */
  private replace = false;
  private readonly space: CacheSpace;
  private readonly key: string;

  private constructor(dir: string, counter: string) {
    this.space = new CacheSpace(dir, 'tokens');
    this.key = this.space.keyOf(counter);
  }

  /** Opens the counts of `counter` (see `counterId`) in the cache folder `dir`; none there is an empty cache. */
  static open(dir: string, counter: string): TokenCache {
    const cache = new TokenCache(dir, counter);
    const found = cache.space.get(cache.key, readRecords, 'counting without it');
    if (found.status === 'ok') cache.records = found.value;
    else if (found.status === 'damaged') cache.replace = true;
    return cache;
  }

  /** The entry's file. */
  get file(): string {
    return this.space.file(this.key);
  }

  /** Problems met so far, one line each. */
  get warnings(): readonly string[] {
    return this.space.warnings;
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
   * Writes new counts: merges them, under the entry's lock, into the entry as
   * it is now (another run may have saved since). Returns the warnings of this
   * save (also kept in `warnings`).
   */
  save(): string[] {
    if (!this.added.length && !this.replace) return [];
    const mine = sortRecords(Uint32Array.from(this.added));
    const before = this.warnings.length;
    let records: Records | undefined;
    const saved = this.space.merge(this.key, (current) => {
      let onDisk: Records = new Uint32Array(0);
      try {
        if (current) onDisk = readRecords(current);
      } catch {
        // Damaged since it was loaded: replaced.
      }
      records = merge(merge(onDisk, this.records), mine);
      return recordBytes(records);
    });
    if (saved && records) {
      this.records = records;
      this.added = [];
      this.replace = false;
    }
    return this.warnings.slice(before);
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
