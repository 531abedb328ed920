import type { Vector } from './embedder.js';

/** One stored entry: what was stored, its embedding, when (simulated seconds) and in which order. */
export interface Stored<T> {
  value: T;
  vector: Vector;
  time: number;
  seq: number;
}

/**
 * A vector store for the lexical embedding, oldest entry first. Search goes
 * through an inverted index (bucket → entries), so a query costs what it
 * shares with the store, not one cosine per stored entry.
 */
export class VectorStore<T> {
  private entries: Stored<T>[] = [];
  private readonly postings = new Map<number, Stored<T>[]>();
  private readonly live = new Set<Stored<T>>();
  private removed = 0;
  private seq = 0;

  /** Entries in the order they were stored. */
  get all(): readonly Stored<T>[] {
    return this.entries;
  }

  add(value: T, vector: Vector, time: number): Stored<T> {
    const entry = { value, vector, time, seq: this.seq++ };
    this.entries.push(entry);
    this.live.add(entry);
    this.index(entry);
    return entry;
  }

  /** Keeps the newest `max` entries. */
  keepNewest(max: number): void {
    if (this.entries.length > max) this.drop(this.entries.length - max);
  }

  /** Drops entries stored before `time`. */
  dropBefore(time: number): void {
    let n = 0;
    while (n < this.entries.length && this.entries[n]!.time < time) n++;
    if (n) this.drop(n);
  }

  /** Deletes every entry whose value matches (its embedding goes with it); returns how many. */
  remove(match: (value: T) => boolean): number {
    const gone = this.entries.filter((e) => match(e.value));
    if (!gone.length) return 0;
    for (const e of gone) this.live.delete(e);
    this.entries = this.entries.filter((e) => this.live.has(e));
    this.removed += gone.length;
    this.compact();
    return gone.length;
  }

  /** The first stored entry that matches. */
  find(match: (value: T) => boolean): Stored<T> | undefined {
    return this.entries.find((e) => match(e.value));
  }

  /** Every stored entry that shares a feature with the query, with its cosine similarity (> 0 up to rounding). */
  search(query: Vector): Map<Stored<T>, number> {
    const scores = new Map<Stored<T>, number>();
    for (const [bucket, weight] of query) {
      for (const e of this.postings.get(bucket) ?? []) {
        if (this.live.has(e)) scores.set(e, (scores.get(e) ?? 0) + weight * e.vector.get(bucket)!);
      }
    }
    return scores;
  }

  private index(entry: Stored<T>): void {
    for (const bucket of entry.vector.keys()) {
      const list = this.postings.get(bucket);
      if (list) list.push(entry);
      else this.postings.set(bucket, [entry]);
    }
  }

  private drop(n: number): void {
    for (const e of this.entries.slice(0, n)) this.live.delete(e);
    this.entries = this.entries.slice(n);
    this.removed += n;
    this.compact();
  }

  /** Rebuilds the index once dropped entries outnumber live ones, so it stays proportional to the store. */
  private compact(): void {
    if (this.removed > this.entries.length) {
      this.postings.clear();
      for (const e of this.entries) this.index(e);
      this.removed = 0;
    }
  }
}
