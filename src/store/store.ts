import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, renameSync, rmdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { alive, makeDirs, readRegularFile } from '../process.js';
import { LOCK_WAIT_MS, takeLock } from './_lock.js';
import { TEMP, tempName } from './_temp.js';
import { entryHeader, entryPayload, isKey } from './entry.js';
import { NAMESPACE_NAMES, NAMESPACES, type NamespaceName } from './namespaces.js';

/**
 * The store: every persistent cache of ctxsim, in one folder (the cache
 * folder, the user's — `~/.cache/ctxsim/` on Linux — by default), one namespace per cache
 * (namespaces.ts). An entry is one file,
 * `<cache folder>/<namespace>/<first 2 hex digits of its key>/<key>`, its key
 * a SHA-256 of everything its content depends on (`keyOf`), its bytes in the
 * one entry format (entry.ts: magic, format version, CRC-32, key, payload).
 *
 * - Reads take no lock and never throw: a missing entry is a miss; one whose
 *   header, size, checksum or key does not hold, or that its namespace cannot
 *   decode, is a miss with a warning (`<label> entry <file> is damaged (…)`),
 *   and the caller replaces it. A hit sets the entry's mtime.
 * - Writes go to a temp file beside the entry (`<key>.<pid>-<thread>-<random>.tmp`)
 *   renamed into place, so concurrent runs (processes or worker threads)
 *   never see half an entry. A failed write is a warning, once per space.
 * - An entry that runs merge into rather than replace (the token counts) is
 *   written under its lock file (`<key>.lock`, created exclusively, holding
 *   its owner's token: _lock.ts): read again, merged, written, renamed. A
 *   lock older than 30 s is left from a run that died and is broken (moved
 *   away first, and removed only if what was moved is that stale lock); one
 *   held for 10 s is given up on, with a warning, and the merge goes ahead
 *   without it. A run removes only its own lock.
 * - Temp files of writes that died before their rename, and locks a run
 *   that died had moved away to remove them (their process gone, or older
 *   than an hour), are swept at the end of a run and under a lock.
 * - One eviction policy: at the end of a run, when the folder's entries, all
 *   namespaces together, are over the size bound, the least recently used
 *   (oldest mtime first) are removed until they are within it.
 * - Nothing goes through a symbolic link inside the cache folder (a
 *   namespace's folder, a fan-out folder, an entry: `linkedFolder`): a folder
 *   named in a checkout may hold links a pull request planted, leading
 *   anywhere. Such a namespace is neither read, written nor swept (a write is
 *   a warning); the cache folder itself may be a link, the user's own.
 */

/** The default size bound of the cache folder: 1 GB. */
export const DEFAULT_STORE_BYTES = 1_000_000_000;

const TEMP_STALE_MS = 3_600_000;

const FAN = /^[0-9a-f]{2}$/;
const LOCK = /^[0-9a-f]{64}\.lock$/;

/** What reading an entry found. */
export type EntryRead = { status: 'ok'; payload: Buffer } | { status: 'missing' } | { status: 'damaged'; reason: string } | { status: 'unreadable'; reason: string };

/** What `get` found: the decoded value, or why there is none. */
export type Found<T> = { status: 'ok'; value: T } | { status: 'missing' | 'damaged' | 'unreadable' };

/**
 * One namespace of the store in the cache folder `root`, as one thread of a
 * run sees it: entries read, written and merged by key, and the problems met
 * as warnings, one line each (a cache never fails a run).
 */
export class CacheSpace {
  readonly warnings: string[] = [];
  /** The namespace's folder. */
  readonly dir: string;
  private writeFailed = false;

  constructor(
    readonly root: string,
    readonly name: NamespaceName,
    /** How long a merge waits for a lock another run holds before it saves without it. */
    private readonly lockWaitMs = LOCK_WAIT_MS,
  ) {
    this.dir = join(root, name);
  }

  /** A key: the SHA-256 of `parts` (each a text that what is kept depends on), in this namespace. */
  keyOf(...parts: readonly string[]): string {
    return createHash('sha256').update(`ctxsim ${this.name}\0${parts.join('\0')}`).digest('hex');
  }

  /** The file of an entry. */
  file(key: string): string {
    if (!isKey(key)) throw new Error(`store: not a key: ${JSON.stringify(key)}`);
    return join(this.dir, key.slice(0, 2), key);
  }

  /** An entry's payload, checked (its mtime set to now when found); never throws. Behind a link (`linkedFolder`), a miss: the write that follows says why. */
  read(key: string): EntryRead {
    const file = this.file(key);
    if (linkedFolder(this.root, this.name, key.slice(0, 2))) return { status: 'missing' };
    const r = readRegularFile(file, { follow: false });
    if (r.status !== 'ok') return r;
    const e = entryPayload(r.buf, key);
    if (e.status === 'ok') touch(file);
    return e;
  }

  /**
   * An entry's payload through `decode` (which throws, its message the
   * reason, on a payload it cannot read). A damaged or unreadable entry is a
   * warning ending in `redo`: what the caller does instead.
   */
  get<T>(key: string, decode: (payload: Buffer) => T, redo: string): Found<T> {
    let r = this.read(key);
    if (r.status === 'ok') {
      try {
        return { status: 'ok', value: decode(r.payload) };
      } catch (e) {
        r = { status: 'damaged', reason: (e as Error).message };
      }
    }
    const { label } = NAMESPACES[this.name];
    if (r.status === 'damaged') this.warnings.push(`${label} entry ${this.file(key)} is damaged (${r.reason}); ${redo} and replacing it`);
    if (r.status === 'unreadable') this.warnings.push(`${label} entry ${this.file(key)} cannot be read (${r.reason}); ${redo}`);
    return { status: r.status };
  }

  /** A `v8.serialize`d value that `valid` accepts (`what` names it in a warning), or undefined. */
  getValue<T>(key: string, valid: (v: unknown) => v is T, what: string, redo: string): T | undefined {
    const found = this.get(
      key,
      (payload) => {
        let v: unknown;
        try {
          v = deserialize(payload);
        } catch (e) {
          throw new Error(`unreadable ${what} (${(e as Error).message})`, { cause: e });
        }
        if (!valid(v)) throw new Error(`not ${what}`);
        return v;
      },
      redo,
    );
    return found.status === 'ok' ? found.value : undefined;
  }

  /** Stores a payload under `key`, replacing what was there; false (and a warning, once) when it cannot be written. */
  put(key: string, payload: Uint8Array): boolean {
    if (this.linked(key)) return false;
    try {
      makeDirs(dirname(this.file(key)));
      this.write(key, payload);
      return true;
    } catch (e) {
      this.writeProblem(e);
      return false;
    }
  }

  /** Stores a value, `v8.serialize`d (bigints, −0, NaN, absent and undefined fields all kept). */
  putValue(key: string, value: unknown): boolean {
    return this.put(key, serialize(value));
  }

  /**
   * Merges into the entry under `key`, under its lock: `combine` gets the
   * payload on disk now (undefined when there is none, or it is damaged) and
   * returns the payload to write. False (and a warning) when it cannot be
   * written.
   */
  merge(key: string, combine: (current: Buffer | undefined) => Uint8Array): boolean {
    const file = this.file(key);
    if (this.linked(key)) return false;
    let release: (() => void) | undefined;
    try {
      makeDirs(dirname(file));
      release = takeLock(file, this.lockWaitMs);
      if (!release) this.warnings.push(`${NAMESPACES[this.name].label} entry ${file}: another run held the lock for ${this.lockWaitMs / 1000} s; saving without it`);
      else sweepTemps(dirname(file), 'stale');
      const now = this.read(key);
      this.write(key, combine(now.status === 'ok' ? now.payload : undefined));
      return true;
    } catch (e) {
      this.writeProblem(e);
      return false;
    } finally {
      release?.();
    }
  }

  /** Writes an entry to a temp file and renames it into place; throws when it cannot. */
  private write(key: string, payload: Uint8Array): void {
    const file = this.file(key);
    const tmp = tempName(file);
    try {
      const fd = openSync(tmp, 'w');
      try {
        // On a descriptor, writeFileSync writes at its position, and all of it.
        writeFileSync(fd, entryHeader(key, payload));
        writeFileSync(fd, payload);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
    } catch (e) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // Nothing was written there.
      }
      throw e;
    }
  }

  /** Whether the folders of `key`'s entry go through a symbolic link (`linkedFolder`): then nothing is written there, and the write is a warning. */
  private linked(key: string): boolean {
    const link = linkedFolder(this.root, this.name, key.slice(0, 2));
    if (link) this.writeProblem(`${link} is a symbolic link, which the cache never follows`);
    return link !== undefined;
  }

  /** One warning per space: why a write failed (an error, or the reason in words). */
  private writeProblem(e: unknown): void {
    const { label, holds } = NAMESPACES[this.name];
    const why = typeof e === 'string' ? e : ((e as NodeJS.ErrnoException).code ?? e);
    if (!this.writeFailed) this.warnings.push(`${label} ${this.dir} cannot be written (${String(why)}); ${holds} were not saved`);
    this.writeFailed = true;
  }
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // Removed meanwhile, or read-only: it served this run anyway.
  }
}

/** Removes a file (or a lock some tool made a folder), if it can: best effort. */
function remove(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // Not ours to remove.
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Removes the temp files in a fan-out folder: `stale` those of dead
 * processes or older than an hour (writes that died before their rename),
 * `all` every one, and the entries' lock files too (`names`: the folder's,
 * when already listed). Best effort.
 */
function sweepTemps(dir: string, which: 'stale' | 'all', names = list(dir), now = Date.now()): void {
  for (const name of names) {
    const path = join(dir, name);
    if (which === 'all' && LOCK.test(name)) remove(path);
    const m = TEMP.exec(name);
    if (!m) continue;
    try {
      // A lock moved aside to be removed may be a folder some tool made.
      if (which === 'all' || !alive(Number(m[2])) || now - statSync(path).mtimeMs > TEMP_STALE_MS) remove(path);
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
}

interface Entry {
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * The first symbolic link among the folders below the cache folder `root`
 * that an entry of namespace `name` lies in — the namespace's folder, then
 * its fan-out folder `fan` (when given) — or undefined when there is none.
 * A link there would lead the store's writes, reads and sweeps out of the
 * cache folder: the store never goes through one.
 */
function linkedFolder(root: string, name: NamespaceName, fan?: string): string | undefined {
  for (const dir of [join(root, name), ...(fan === undefined ? [] : [join(root, name, fan)])]) {
    try {
      if (lstatSync(dir).isSymbolicLink()) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The fan-out folders of a namespace: none through a symbolic link (`linkedFolder`). */
function fans(root: string, name: NamespaceName): string[] {
  if (linkedFolder(root, name)) return [];
  const dir = join(root, name);
  return list(dir)
    .filter((s) => FAN.test(s) && !linkedFolder(root, name, s))
    .map((s) => join(dir, s));
}

/** Every entry of a namespace, its temp files swept on the way as `sweep` says (`none`: read only). */
function entries(root: string, name: NamespaceName, sweep: 'none' | 'stale' | 'all'): Entry[] {
  const out: Entry[] = [];
  for (const dir of fans(root, name)) {
    // One listing: what the sweep removes is no entry.
    const names = list(dir);
    if (sweep !== 'none') sweepTemps(dir, sweep, names);
    for (const n of names) {
      if (!isKey(n)) continue;
      const path = join(dir, n);
      try {
        // Not through a link: an entry that is one is no entry of the store (`linksIn`).
        const st = lstatSync(path);
        if (st.isFile()) out.push({ path, size: st.size, mtimeMs: st.mtimeMs });
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return out;
}

/**
 * The symbolic links inside the cache folder `root` that the store never
 * goes through — a namespace's folder, a fan-out folder, an entry — in
 * namespace order, each folder's sorted: what `storeStats` and `clearStore`
 * skip, for the command to say so.
 */
function linksIn(root: string): string[] {
  const out: string[] = [];
  const isLink = (path: string) => {
    try {
      return lstatSync(path).isSymbolicLink();
    } catch {
      return false;
    }
  };
  for (const name of NAMESPACE_NAMES) {
    const dir = join(root, name);
    if (isLink(dir)) {
      out.push(dir);
      continue;
    }
    for (const fan of list(dir).filter((s) => FAN.test(s)).sort()) {
      const path = join(dir, fan);
      if (isLink(path)) out.push(path);
      else out.push(...list(path).filter(isKey).sort().map((n) => join(path, n)).filter(isLink));
    }
  }
  return out;
}

/** Entries and their bytes. */
export interface CacheStats {
  entries: number;
  bytes: number;
}

/** What the cache folder holds: per namespace, in all, and files of the layout before the store (`legacy`, which nothing reads). */
export interface StoreStats {
  namespaces: Record<NamespaceName, CacheStats>;
  total: CacheStats;
  legacy: CacheStats;
  /** The symbolic links inside the folder, skipped: neither counted, followed nor removed (`linksIn`). */
  links: string[];
}

const sum = (list: readonly { size: number }[]): CacheStats => ({ entries: list.length, bytes: list.reduce((n, e) => n + e.size, 0) });

const total = (namespaces: Record<NamespaceName, CacheStats>): CacheStats => {
  const all = Object.values(namespaces);
  return { entries: all.reduce((n, s) => n + s.entries, 0), bytes: all.reduce((n, s) => n + s.bytes, 0) };
};

/**
 * Files an older ctxsim kept in the cache folder, before the store: token
 * counts as `<encoding>.tokens` at its top, replayed units as
 * `replay/<2 hex>/<key>.rec` (with their locks and temp files). Never read;
 * counted by `storeStats` and removed by `clearStore`.
 */
function legacyFiles(root: string): Entry[] {
  const paths = [
    ...list(root)
      .filter((n) => /\.tokens(\.lock|\.\d+-\d+-[0-9a-f]{8}\.tmp)?$/.test(n))
      .map((n) => join(root, n)),
    ...fans(root, 'replay').flatMap((dir) =>
      list(dir)
        .filter((n) => /^[0-9a-f]{64}\.rec(\.\d+-\d+-[0-9a-f]{8}\.tmp)?$/.test(n))
        .map((n) => join(dir, n)),
    ),
  ];
  return paths.flatMap((path) => {
    try {
      const st = statSync(path);
      return st.isFile() ? [{ path, size: st.size, mtimeMs: st.mtimeMs }] : [];
    } catch {
      return [];
    }
  });
}

/** What the cache folder `root` holds. */
export function storeStats(root: string): StoreStats {
  const namespaces = Object.fromEntries(NAMESPACE_NAMES.map((n) => [n, sum(entries(root, n, 'none'))])) as Record<NamespaceName, CacheStats>;
  return { namespaces, total: total(namespaces), legacy: sum(legacyFiles(root)), links: linksIn(root) };
}

/**
 * Keeps the cache folder `root` within `maxBytes`, all namespaces together:
 * when over, removes the least recently used entries (oldest mtime first)
 * until it is within; stale temp files are swept on the way, and the files
 * of the layout before the store removed. Returns how many entries were
 * removed. Best effort: never throws.
 */
export function evictStore(root: string, maxBytes = DEFAULT_STORE_BYTES): number {
  // Files of the layout before the store are read by nothing: they go first, whatever the bound.
  for (const e of legacyFiles(root)) remove(e.path);
  const all = NAMESPACE_NAMES.flatMap((n) => entries(root, n, 'stale'));
  let bytes = all.reduce((n, e) => n + e.size, 0);
  if (bytes <= maxBytes) return 0;
  all.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : 1));
  let removed = 0;
  for (const e of all) {
    if (bytes <= maxBytes) break;
    try {
      rmSync(e.path, { force: true });
      bytes -= e.size;
      removed++;
    } catch {
      // Not ours to remove.
    }
  }
  return removed;
}

/**
 * Empties the cache folder `root`: every entry and temp file of every
 * namespace, the folders so emptied, and the files of the layout before the
 * store. Other files, and symbolic links (`linksIn`), are left. Returns
 * what was removed, and the links left.
 */
export function clearStore(root: string): StoreStats {
  const removed = (found: Entry[]): CacheStats => {
    for (const e of found) rmSync(e.path, { force: true });
    return sum(found);
  };
  const legacy = removed(legacyFiles(root));
  const namespaces = {} as Record<NamespaceName, CacheStats>;
  for (const n of NAMESPACE_NAMES) {
    namespaces[n] = removed(entries(root, n, 'all'));
    for (const dir of [...fans(root, n), join(root, n)]) {
      try {
        rmdirSync(dir);
      } catch {
        // Not empty (another run is writing), or not there: left.
      }
    }
  }
  return { namespaces, total: total(namespaces), legacy, links: linksIn(root) };
}
