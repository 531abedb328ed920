import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { crc32 } from 'node:zlib';
import { alive, makeDirs, readRegularFile } from '../process.js';
import type { PolicyVariant } from '../policies/spec.js';
import type { PriceTable } from '../pricing/prices.js';
import { settingsModels } from '../pricing/settings.js';
import type { Conversation } from '../types.js';
import type { ProbeRecord, SummaryRecord, TurnRecord, ViolationRecord } from '../records/registry.js';
import type { ReplayContext } from './replay.js';

/**
 * The replay cache: the records of each unit of work — one scenario under one
 * policy variant on one chat model — kept on disk under `replay/` in the
 * cache folder (`.ctxsim-cache/` by default, beside the token-count files),
 * so a rerun replays only the units whose inputs changed.
 *
 * A unit's key is the SHA-256 of everything its records depend on: this
 * format's version, ctxsim's version and a hash of its own code, the
 * conversation's content, the variant (name, policy id, parameters, module
 * hash), the context of the model (seed, model, tokenizer, the cost
 * settings, message rules, upkeep prompts and cassette, tool definitions),
 * and the price-table entries of the models the unit can price (see
 * `priceKey`). A change to any of them is a new key; entries
 * nobody asks for again age out.
 *
 * One file per key, `replay/<first 2 hex digits>/<key>.rec`:
 *
 * | offset | bytes | content                                         |
 * |--------|-------|-------------------------------------------------|
 * | 0      | 8     | magic `ctxsimRC`                                |
 * | 8      | 4     | format version (u32 LE)                         |
 * | 12     | 4     | payload length n (u32 LE)                       |
 * | 16     | 4     | CRC-32 of the key and the payload (u32 LE)      |
 * | 20     | 64    | the key, hex                                    |
 * | 84     | n     | the records, `v8.serialize`d (bigints, −0, NaN, absent and undefined fields all kept) |
 *
 * A file whose header, size, checksum, key or content does not hold is never
 * trusted: the unit is replayed again and the file replaced, with a warning.
 * Files are written to a temp file beside them and renamed into place, so
 * concurrent runs (processes or worker threads) never read a half-written
 * entry. A hit sets the file's mtime: at the end of a run, when the folder is
 * over its size bound, the least recently used entries are removed.
 */

const MAGIC = Buffer.from('ctxsimRC', 'latin1');
const VERSION = 1;
const HEADER = 84;
const KEY_HEX = 64;

/** The replay cache's folder inside the cache folder. */
export const REPLAY_DIR = 'replay';

/** The default size bound of the replay cache: 1 GB. */
export const DEFAULT_REPLAY_CACHE_BYTES = 1_000_000_000;

/** A unit's records: its turns, probes, summary row and violations. */
export interface UnitRecords {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  summary: SummaryRecord[];
  violations: ViolationRecord[];
}

/** JSON of plain data with Maps, Sets and bigints spelled out: a stable text to hash, the same on every thread. */
function canon(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return { $bigint: v.toString() };
    if (v instanceof Map) return { $map: [...v.entries()] };
    if (v instanceof Set) return { $set: [...v] };
    if (typeof v === 'function') return { $function: v.name };
    if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
    return v;
  });
}

function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

let code: string | undefined;

/**
 * ctxsim's version and a hash of its code (every `.js` or `.ts` file of the
 * folder this module was loaded from, `dist/` or `src/`): a built-in policy or
 * the engine changed by an edit makes new keys even when the version stays.
 * Computed once per thread.
 */
export function codeId(): string {
  if (code !== undefined) return code;
  const here = fileURLToPath(import.meta.url);
  const root = resolve(dirname(here), '..');
  let version = '?';
  try {
    version = (JSON.parse(readFileSync(resolve(root, '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    // Not in a package: the code hash alone.
  }
  const h = createHash('sha256');
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (/\.(js|ts|json)$/.test(e.name) && !e.name.endsWith('.d.ts')) files.push(path);
    }
  };
  try {
    walk(root);
  } catch {
    // An unreadable folder: hash what was found.
  }
  for (const f of files.sort()) {
    h.update(relative(root, f).split(sep).join('/')).update('\0');
    h.update(readFileSync(f)).update('\0');
  }
  code = `ctxsim@${version} code:${h.digest('hex')}`;
  return code;
}

/** What reading an entry found. */
type Read<T> = { status: 'ok'; value: T } | { status: 'missing' } | { status: 'damaged'; reason: string };

function isList(v: unknown): boolean {
  return Array.isArray(v);
}

/** Reads and checks an entry holding what `valid` accepts (`what` names it in a warning); never throws. */
function readEntry<T>(file: string, key: string, valid: (v: unknown) => v is T, what: string): Read<T> {
  const read = readRegularFile(file);
  if (read.status === 'missing') return read;
  if (read.status === 'unreadable') return { status: 'damaged', reason: read.reason };
  const { buf } = read;
  if (buf.length < HEADER || !buf.subarray(0, 8).equals(MAGIC)) return { status: 'damaged', reason: 'not a ctxsim replay-cache entry' };
  const version = buf.readUInt32LE(8);
  if (version !== VERSION) return { status: 'damaged', reason: `format version ${version}, expected ${VERSION}` };
  const n = buf.readUInt32LE(12);
  if (buf.length !== HEADER + n) return { status: 'damaged', reason: `${buf.length} bytes, expected ${HEADER + n}` };
  if (crc32(buf.subarray(20)) !== buf.readUInt32LE(16)) return { status: 'damaged', reason: 'checksum mismatch' };
  if (buf.toString('latin1', 20, HEADER) !== key) return { status: 'damaged', reason: 'written for another key' };
  let v: unknown;
  try {
    v = deserialize(buf.subarray(HEADER));
  } catch (e) {
    return { status: 'damaged', reason: `unreadable ${what} (${(e as Error).message})` };
  }
  return valid(v) ? { status: 'ok', value: v } : { status: 'damaged', reason: `not ${what}` };
}

function isUnit(v: unknown): v is UnitRecords {
  const r = v as Partial<UnitRecords> | null;
  return !!r && typeof r === 'object' && isList(r.turns) && isList(r.probes) && isList(r.summary) && isList(r.violations);
}

function encodeEntry(key: string, value: unknown): Buffer {
  const payload = serialize(value);
  const buf = Buffer.alloc(HEADER + payload.length);
  MAGIC.copy(buf, 0);
  buf.writeUInt32LE(VERSION, 8);
  buf.writeUInt32LE(payload.length, 12);
  buf.write(key, 20, KEY_HEX, 'latin1');
  payload.copy(buf, HEADER);
  buf.writeUInt32LE(crc32(buf.subarray(20)), 16);
  return buf;
}

/** An entry's temp file: `<key>.rec.<pid>-<thread>-<random>.tmp`. */
const TEMP = /^[0-9a-f]{64}\.rec\.(\d+)-\d+-[0-9a-f]{8}\.tmp$/;
const ENTRY = /^[0-9a-f]{64}\.rec$/;
const TEMP_STALE_MS = 3_600_000;

/**
 * One thread's view of the replay cache in `dir` (the `replay/` folder):
 * keys of units, their records read and written, and counts of what a run
 * replayed and took from the cache. Problems (a damaged entry replayed, a
 * failed write) are kept as warnings, one line each; the cache never fails a
 * run.
 */
export class ReplayCache {
  /** Units replayed (misses). */
  replayed = 0;
  /** Units taken from the cache (hits). */
  cached = 0;
  readonly warnings: string[] = [];
  private readonly specKeys = new WeakMap<object, string>();
  private readonly priceKeys = new WeakMap<ReplayContext, Map<PolicyVariant, string>>();
  private readonly tableKeys = new WeakMap<PriceTable, string>();
  private readonly variantKeys = new WeakMap<PolicyVariant, string>();
  private writeFailed = false;

  constructor(
    readonly dir: string,
    private readonly code = codeId(),
  ) {}

  /** The hash of a conversation's content, to key its units with (`unitKey`): all of it but `source` (where it was read from, which no record holds). */
  conversationKey(c: Conversation): string {
    const { source: _source, ...content } = c;
    return sha256(canon(content));
  }

  /**
   * The key of a unit: the conversation's (from `conversationKey`), the
   * variant's, the run's spec as the unit's chat model sees it (`spec`:
   * `unitSpec` of the canonical `RunSpec`, hashed whole, so every setting of
   * the spec keys the unit) and the prices it can use (`priceKey`).
   */
  unitKey(conversationKey: string, variant: PolicyVariant, ctx: ReplayContext, spec: object): string {
    let v = this.variantKeys.get(variant);
    if (v === undefined) {
      v = sha256(canon({ name: variant.name, policy: variant.policy.id, params: variant.params, module: variant.module?.hash ?? null }));
      this.variantKeys.set(variant, v);
    }
    let c = this.specKeys.get(spec);
    if (c === undefined) this.specKeys.set(spec, (c = sha256(canon(spec))));
    return sha256(`ctxsim replay cache ${VERSION}\0${this.code}\0${conversationKey}\0${v}\0${c}\0${this.priceKey(variant, ctx)}`);
  }

  /**
   * The prices a unit depends on: the entries of the models it can price —
   * the chat model, the route and fallback models, and every model a
   * parameter of the variant names (`summaryModel`, `embedModel`, …, resolved
   * with their defaults). A policy module or a pipeline may name models
   * otherwise: for them, the whole table.
   */
  private priceKey(variant: PolicyVariant, ctx: ReplayContext): string {
    let byVariant = this.priceKeys.get(ctx);
    if (!byVariant) this.priceKeys.set(ctx, (byVariant = new Map()));
    let k = byVariant.get(variant);
    if (k !== undefined) return k;
    const table = ctx.prices;
    if (variant.module || variant.policy.id === 'pipeline') {
      k = this.tableKeys.get(table);
      if (k === undefined) this.tableKeys.set(table, (k = sha256(canon({ models: table.models, unpriced: table.unpriced ?? null }))));
    } else {
      const named = Object.values(variant.params).filter((x): x is string => typeof x === 'string' && table.models.has(x));
      const models = [...new Set([ctx.model, ...(ctx.costs ? settingsModels(ctx.costs) : []), ...named])].sort();
      k = sha256(canon(models.map((m) => [m, table.models.get(m) ?? null])));
    }
    byVariant.set(variant, k);
    return k;
  }

  private file(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.rec`);
  }

  /** A unit's records if the cache has them (its file's mtime set to now); a damaged entry is a miss, with a warning. */
  get(key: string): UnitRecords | undefined {
    return this.getValue(key, isUnit, 'a unit’s records', 'replaying its unit again');
  }

  /** Stores a unit's records (a temp file renamed into place); a failed write is a warning, once per run. */
  put(key: string, records: UnitRecords): void {
    this.putValue(key, records);
  }

  /**
   * The key of anything else a run makes from `content` alone with ctxsim's
   * code (a rendered chart from its spec): `kind` keeps kinds apart, and
   * should name every library the making depends on.
   */
  keyOf(kind: string, content: string): string {
    return sha256(`ctxsim replay cache ${VERSION}\0${this.code}\0${kind}\0${content}`);
  }

  /** A value kept under `key` that `valid` accepts (`what` names it, `redo` says what a damaged entry costs, in the warning). */
  getValue<T>(key: string, valid: (v: unknown) => v is T, what: string, redo: string): T | undefined {
    const file = this.file(key);
    const read = readEntry(file, key, valid, what);
    if (read.status === 'ok') {
      try {
        const now = new Date();
        utimesSync(file, now, now);
      } catch {
        // Removed meanwhile, or read-only: it served this run anyway.
      }
      return read.value;
    }
    if (read.status === 'damaged') this.warnings.push(`replay cache entry ${file} is damaged (${read.reason}); ${redo} and replacing it`);
    return undefined;
  }

  /** Stores a value (a temp file renamed into place); a failed write is a warning, once per run. */
  putValue(key: string, value: unknown): void {
    const file = this.file(key);
    const tmp = `${file}.${process.pid}-${threadId}-${randomBytes(4).toString('hex')}.tmp`;
    try {
      makeDirs(dirname(file));
      writeFileSync(tmp, encodeEntry(key, value));
      renameSync(tmp, file);
    } catch (e) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // Nothing was written there.
      }
      if (!this.writeFailed) this.warnings.push(`replay cache ${this.dir} cannot be written (${(e as NodeJS.ErrnoException).code ?? e}); nothing was saved`);
      this.writeFailed = true;
    }
  }
}

/** What the replay cache holds. */
export interface ReplayCacheStats {
  entries: number;
  bytes: number;
}

interface Entry {
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * Every entry of the replay cache in `dir`. Temp files found on the way are
 * removed with `sweep`: `stale` those of dead processes or older than an hour
 * (writes that died before their rename), `all` every one; `none` reads only.
 */
function entries(dir: string, sweep: 'none' | 'stale' | 'all'): Entry[] {
  const now = Date.now();
  const out: Entry[] = [];
  let subs: string[];
  try {
    subs = readdirSync(dir);
  } catch {
    return out;
  }
  for (const sub of subs) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    let names: string[];
    try {
      names = readdirSync(join(dir, sub));
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, sub, name);
      try {
        if (ENTRY.test(name)) {
          const st = statSync(path);
          if (st.isFile()) out.push({ path, size: st.size, mtimeMs: st.mtimeMs });
          continue;
        }
        const m = sweep === 'none' ? null : TEMP.exec(name);
        if (m && (sweep === 'all' || !alive(Number(m[1])) || now - statSync(path).mtimeMs > TEMP_STALE_MS)) rmSync(path, { force: true });
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return out;
}

/** How many entries the replay cache in `dir` holds, and their bytes. */
export function replayCacheStats(dir: string): ReplayCacheStats {
  const list = entries(dir, 'none');
  return { entries: list.length, bytes: list.reduce((n, e) => n + e.size, 0) };
}

/**
 * Keeps the replay cache in `dir` within `maxBytes`: when over, removes the
 * least recently used entries (oldest mtime first) until it is within. Returns
 * how many were removed. Best effort: never throws.
 */
export function evictReplayCache(dir: string, maxBytes = DEFAULT_REPLAY_CACHE_BYTES): number {
  const list = entries(dir, 'stale');
  let total = list.reduce((n, e) => n + e.size, 0);
  if (total <= maxBytes) return 0;
  list.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : 1));
  let removed = 0;
  for (const e of list) {
    if (total <= maxBytes) break;
    try {
      rmSync(e.path, { force: true });
      total -= e.size;
      removed++;
    } catch {
      // Not ours to remove.
    }
  }
  return removed;
}

/** Empties the replay cache in `dir`: every entry and temp file goes, and the emptied subfolders. Returns what was removed. */
export function clearReplayCache(dir: string): ReplayCacheStats {
  const list = entries(dir, 'all');
  let bytes = 0;
  for (const e of list) {
    rmSync(e.path, { force: true });
    bytes += e.size;
  }
  for (const sub of safeList(dir)) {
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    try {
      rmdirSync(join(dir, sub));
    } catch {
      // Not empty (another run is writing): left.
    }
  }
  return { entries: list.length, bytes };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
