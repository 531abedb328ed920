import { endianness } from 'node:os';
import { CacheSpace } from '../store/store.js';
import { KeyTable } from '../tokens/keys.js';
import { cacheKey, search, type CacheKey } from '../tokens/token-cache.js';

/** A reading as kept: texts, numbers and lists of texts (a message's statements with their salience, a statement's note, a tool result's lines). */
export type Kept = readonly (string | number | readonly string[])[];

/**
 * Where the simulated memory's reading of texts is kept across runs (see
 * `Readings`); statements.ts asks it before reading a text, and tells it
 * what it read. `as` says how the text is read (the voices and day of a
 * message, a tool's result, a statement's note): one text read two ways is
 * two readings.
 */
export interface ReadingStore {
  /** What `read` gives for `text` read `as`: kept from an earlier run, or read now (and kept). */
  get<T extends Kept>(as: string, text: string, read: () => T): T;
}

/** Index words per reading: its key (4), and where its JSON lies in the texts (offset, length in bytes). */
const STRIDE = 6;

/** The most bytes an entry keeps (past it, a save keeps only the readings its run used or made), and a run of what it reads. */
export const READINGS_BYTES = 32 * 2 ** 20;

/**
 * What the simulated extractor and summarizer read of each text (a
 * message's statements with their salience, a statement's salience and
 * gist, a tool result's notable lines, a tool call's values), kept in the `readings` namespace
 * of the cache folder beside the token counts, so that a rerun over the
 * same conversations — another budget, policy or model — does no language
 * processing. One entry per engine version (`engineId`: a change of the
 * reader that moves any record bumps it, so no reading outlives the code
 * that made it), merged under its lock as the token counts are.
 *
 * The payload (integers little-endian): the number of readings n; n index
 * records of six u32 sorted by key — the key (the first 128 bits of the
 * SHA-256 of how and what was read, as `cacheKey`), then the offset and
 * length of the reading's JSON in the texts that follow —; then the texts,
 * UTF-8. Loading (on the first reading asked for) reads the file and nothing else; a reading is found by a
 * binary search and parsed when a run asks for it, so a large entry costs
 * a run only the readings it uses. A run keeps what it reads as that JSON,
 * up to `READINGS_BYTES` (past it, a text not kept is read again whenever
 * it is asked for), and an entry that would grow past `READINGS_BYTES`
 * keeps only the readings of the run that saves it (those it used and those
 * it made): so a run's memory stays bounded however many texts it reads, and
 * loading an entry stays cheap. A damaged entry is a warning; the run reads
 * afresh and replaces it.
 */
export class Readings implements ReadingStore {
  /** The entry as loaded (or as this run's save left it). */
  private entry: Entry = { index: new Uint32Array(0), texts: Buffer.alloc(0) };
  /** Which loaded readings this run used. */
  private used = new Uint8Array(0);
  /** Readings made in this run: at most `maxBytes` of them, so that a large run's memory stays bounded. */
  private added: Made;
  private replace = false;
  private loaded = false;
  private readonly space: CacheSpace;
  private readonly key: string;

  private constructor(
    dir: string,
    engine: string,
    private readonly maxBytes: number,
  ) {
    this.space = new CacheSpace(dir, 'readings');
    this.added = new Made(maxBytes);
    this.key = this.space.keyOf(engine);
  }

  /**
   * The readings of the cache folder `dir` for the engine `engine`
   * (`engineId`); none there is an empty store. `maxBytes`: the entry's
   * bound. The entry is read when a reading is first asked for: a run that
   * reads no text (windows only, every unit from the replay cache) does
   * not load it.
   */
  static open(dir: string, engine: string, maxBytes = READINGS_BYTES): Readings {
    return new Readings(dir, engine, maxBytes);
  }

  /** Reads the entry, once. */
  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    const found = this.space.get(this.key, decode, 'reading texts afresh');
    if (found.status === 'ok') this.take(found.value);
    else if (found.status === 'damaged') this.replace = true;
  }

  get<T extends Kept>(as: string, text: string, read: () => T): T {
    this.load();
    const key = cacheKey(`${as}\0${text}`);
    const i = search(this.entry.index, key, STRIDE);
    if (i >= 0) {
      this.used[i] = 1;
      return JSON.parse(bytesAt(this.entry, i).toString('utf8')) as T;
    }
    const made = this.added.find(key);
    if (made !== undefined) return JSON.parse(made) as T;
    const value = read();
    // Kept as the bytes it is saved as, up to an entry's bound: past it, a text is read again whenever it is asked for.
    this.added.add(key, value);
    return value;
  }

  private take(entry: Entry): void {
    this.entry = { index: entry.index, texts: entry.texts };
    this.used = new Uint8Array(entry.index.length / STRIDE);
  }

  /** Readings loaded, and added since. */
  get size(): { loaded: number; added: number } {
    this.load();
    return { loaded: this.entry.index.length / STRIDE, added: this.added.count };
  }

  /** Problems met so far, one line each. */
  get warnings(): readonly string[] {
    return this.space.warnings;
  }

  /** Writes the readings added, merged under the entry's lock into the entry as it is now; returns this save's warnings. */
  save(): string[] {
    if (!this.added.count && !this.replace) return [];
    const before = this.warnings.length;
    const mine = readingsOf(this.added.entry);
    let merged: (Entry & { payload: Buffer }) | undefined;
    const saved = this.space.merge(this.key, (current) => {
      let onDisk: Entry = { index: new Uint32Array(0), texts: Buffer.alloc(0) };
      try {
        if (current) onDisk = decode(current);
      } catch {
        // Damaged since it was loaded: replaced.
      }
      const all = byKey([...readingsOf(onDisk), ...readingsOf(this.entry), ...mine]);
      merged = encode(payloadBytes(all) > this.maxBytes ? byKey([...readingsOf(this.entry).filter((_, i) => this.used[i]), ...mine]) : all);
      return merged.payload;
    });
    if (saved && merged) {
      this.take(merged);
      this.added = new Made(this.maxBytes);
      this.replace = false;
    }
    return this.warnings.slice(before);
  }
}

interface Entry {
  index: Uint32Array;
  texts: Buffer;
}

/**
 * The readings a run made, in an entry's layout but in the order made (no
 * object per reading: a run makes hundreds of thousands), found by key; up
 * to `bound` bytes of them.
 */
class Made {
  private index = new Uint32Array(STRIDE * 1024);
  private texts: Buffer = Buffer.allocUnsafe(2 ** 16);
  /** Where each reading is in the index, by key. */
  private readonly at = new KeyTable();
  count = 0;
  /** Bytes of their JSON. */
  private bytes = 0;

  constructor(private readonly bound: number) {}

  /** The JSON of the reading under `key`, if this run made it. */
  find(key: CacheKey): string | undefined {
    const i = this.at.get(key);
    return i === undefined ? undefined : bytesAt(this.entry, i).toString('utf8');
  }

  /** Keeps `value` under `key`, as JSON, unless the bound is reached. */
  add(key: CacheKey, value: Kept): void {
    if (this.bytes >= this.bound) return;
    const json = JSON.stringify(value);
    // A UTF-16 code unit is at most 3 bytes of UTF-8; the buffer doubles, short of the bound.
    const need = this.bytes + 3 * json.length;
    if (need > this.texts.length) this.texts = grown(this.texts, Math.max(need, Math.min(2 * this.texts.length, this.bound)));
    if (STRIDE * (this.count + 1) > this.index.length) {
      const index = new Uint32Array(2 * this.index.length);
      index.set(this.index);
      this.index = index;
    }
    const length = this.texts.write(json, this.bytes);
    const at = this.count * STRIDE;
    this.index.set(key, at);
    this.index[at + 4] = this.bytes;
    this.index[at + 5] = length;
    this.at.set(key, this.count++);
    this.bytes += length;
  }

  /** What it holds, as an entry (unsorted). */
  get entry(): Entry {
    return { index: this.index.subarray(0, STRIDE * this.count), texts: this.texts.subarray(0, this.bytes) };
  }
}

/** `buffer`'s bytes at the start of a buffer of `size` bytes. */
function grown(buffer: Buffer, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  buffer.copy(out);
  return out;
}

/** Little-endian on disk; typed arrays use the host's order. */
const SWAP = endianness() === 'BE';

/** An entry's payload, checked: whole index records, in order, each within the texts; throws on anything else. */
function decode(payload: Buffer): Entry {
  if (payload.length < 4) throw new Error('no count of readings');
  const n = payload.readUInt32LE(0);
  const start = 4 + 4 * STRIDE * n;
  if (start > payload.length) throw new Error(`${n} readings announced, the index cut short`);
  const words = Buffer.from(payload.subarray(4, start));
  if (SWAP) words.swap32();
  const index = new Uint32Array(words.buffer, words.byteOffset, STRIDE * n);
  const texts = payload.subarray(start);
  for (let i = 0; i < n; i++) {
    const at = i * STRIDE;
    if (index[at + 4]! + index[at + 5]! > texts.length) throw new Error(`reading ${i} lies beyond the texts`);
    if (i > 0 && compareKeys(keyAt(index, i - 1), keyAt(index, i)) >= 0) throw new Error('readings out of order');
  }
  return { index, texts };
}

/** Each reading of an entry, as key and bytes. */
function readingsOf(entry: Entry): Reading[] {
  const out: Reading[] = [];
  for (let i = 0; i < entry.index.length / STRIDE; i++) out.push({ key: keyAt(entry.index, i), bytes: bytesAt(entry, i) });
  return out;
}

/** The JSON of the `i`th reading of an entry. */
function bytesAt({ index, texts }: Entry, i: number): Buffer {
  const at = i * STRIDE;
  return texts.subarray(index[at + 4], index[at + 4]! + index[at + 5]!);
}

/** The key of the `i`th reading of an index. */
function keyAt(index: Uint32Array, i: number): CacheKey {
  const at = i * STRIDE;
  return [index[at]!, index[at + 1]!, index[at + 2]!, index[at + 3]!];
}

/** A reading as an entry holds it: its key and its JSON's bytes. */
interface Reading {
  key: CacheKey;
  bytes: Buffer;
}

/** `readings` sorted by key, the first of equal keys kept. */
function byKey(readings: Reading[]): Reading[] {
  const sorted = readings.map((r, i) => ({ r, i })).sort((a, b) => compareKeys(a.r.key, b.r.key) || a.i - b.i);
  return sorted.filter((x, j) => j === 0 || compareKeys(sorted[j - 1]!.r.key, x.r.key) !== 0).map((x) => x.r);
}

/** Bytes of the payload of an entry holding `readings`. */
const payloadBytes = (readings: readonly Reading[]) => readings.reduce((n, r) => n + r.bytes.length, 4 + 4 * STRIDE * readings.length);

/** The entry holding `readings` (sorted by key, no two alike), and its payload: written in one buffer, which its texts are part of. */
function encode(readings: readonly Reading[]): Entry & { payload: Buffer } {
  const payload = Buffer.allocUnsafe(payloadBytes(readings));
  payload.writeUInt32LE(readings.length, 0);
  const start = 4 + 4 * STRIDE * readings.length;
  const index = new Uint32Array(STRIDE * readings.length);
  let offset = 0;
  readings.forEach((r, j) => {
    index.set(r.key, j * STRIDE);
    index[j * STRIDE + 4] = offset;
    index[j * STRIDE + 5] = r.bytes.length;
    r.bytes.copy(payload, start + offset);
    offset += r.bytes.length;
  });
  const words = Buffer.from(index.buffer, index.byteOffset, index.byteLength);
  (SWAP ? Buffer.from(words).swap32() : words).copy(payload, 4);
  return { index, texts: payload.subarray(start), payload };
}

function compareKeys(a: CacheKey, b: CacheKey): number {
  for (let w = 0; w < 4; w++) if (a[w] !== b[w]) return a[w]! < b[w]! ? -1 : 1;
  return 0;
}
