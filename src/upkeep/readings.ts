import { hash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import { CacheSpace } from '../store/store.js';

/** A reading as kept: texts, numbers and lists of them (a statement list, a statement's note). */
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

/**
 * What the simulated extractor and summarizer read of each text (its
 * statements, a statement's salience and gist, a tool result's notable
 * lines), kept in the `readings` namespace of the cache folder beside the
 * token counts, so that a rerun of the same conversations — another budget,
 * another policy, another model — does no language processing. One entry
 * per engine version (`engineId`: a change of the reader that moves any
 * record bumps it, so no reading outlives the code that made it), merged
 * under its lock as the token counts are: a map from the first 128 bits of
 * the SHA-256 of how and what was read to the reading, `v8.serialize`d. A
 * damaged entry is a warning; the run reads afresh and replaces it.
 */
export class Readings implements ReadingStore {
  private loaded = new Map<string, Kept>();
  private added = new Map<string, Kept>();
  private replace = false;
  private readonly space: CacheSpace;
  private readonly key: string;

  private constructor(dir: string, engine: string) {
    this.space = new CacheSpace(dir, 'readings');
    this.key = this.space.keyOf(engine);
  }

  /** The readings of the cache folder `dir` for the engine `engine` (`engineId`); none there is an empty store. */
  static open(dir: string, engine: string): Readings {
    const r = new Readings(dir, engine);
    const found = r.space.get(r.key, decode, 'reading texts afresh');
    if (found.status === 'ok') r.loaded = found.value;
    else if (found.status === 'damaged') r.replace = true;
    return r;
  }

  get<T extends Kept>(as: string, text: string, read: () => T): T {
    const key = hash('sha256', `${as}\0${text}`, 'binary').slice(0, 16);
    const kept = this.loaded.get(key) ?? this.added.get(key);
    if (kept) return kept as T;
    const value = read();
    this.added.set(key, value);
    return value;
  }

  /** Readings loaded, and added since. */
  get size(): { loaded: number; added: number } {
    return { loaded: this.loaded.size, added: this.added.size };
  }

  /** Problems met so far, one line each. */
  get warnings(): readonly string[] {
    return this.space.warnings;
  }

  /** Writes the readings added, merged under the entry's lock into the entry as it is now; returns this save's warnings. */
  save(): string[] {
    if (!this.added.size && !this.replace) return [];
    const before = this.warnings.length;
    const saved = this.space.merge(this.key, (current) => {
      let onDisk = new Map<string, Kept>();
      try {
        if (current) onDisk = decode(current);
      } catch {
        // Damaged since it was loaded: replaced.
      }
      return serialize(new Map([...onDisk, ...this.added]));
    });
    if (saved) {
      for (const [k, v] of this.added) this.loaded.set(k, v);
      this.added = new Map();
      this.replace = false;
    }
    return this.warnings.slice(before);
  }
}

/** An entry's payload: a map of 16-character keys to readings; throws on anything else. */
function decode(payload: Buffer): Map<string, Kept> {
  const v: unknown = deserialize(payload);
  if (!(v instanceof Map)) throw new Error('not a map of readings');
  for (const [k, r] of v as Map<unknown, unknown>) {
    if (typeof k !== 'string' || k.length !== 16 || !Array.isArray(r) || !r.every(isPart)) throw new Error('not a map of readings');
  }
  return v as Map<string, Kept>;
}

const isPart = (x: unknown): boolean => typeof x === 'string' || typeof x === 'number' || (Array.isArray(x) && x.every((s) => typeof s === 'string'));
