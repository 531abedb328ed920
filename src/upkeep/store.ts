import type { Vector } from './embedder.js';

/** One stored entry: what was stored, its embedding, when (simulated seconds) and in which order. */
export interface Stored<T> {
  readonly value: T;
  readonly vector: Vector;
  readonly time: number;
  readonly seq: number;
}

/** A search hit: an entry and its cosine similarity with the query. */
export interface Hit<T> {
  entry: Stored<T>;
  score: number;
}

/** An entry with the search's scratch fields: its score in the search numbered `round`. */
interface Entry<T> extends Stored<T> {
  live: boolean;
  round: number;
  score: number;
}

/** The entries that hold one bucket, with their weight in it (parallel lists). */
interface Posting<T> {
  entries: Entry<T>[];
  weights: number[];
}

/** Whether a scored entry ranks before a hit: a higher score, or the same score and newer. */
const before = (e: Entry<unknown>, h: Hit<unknown>) => e.score > h.score || (e.score === h.score && e.seq > h.entry.seq);

/**
 * A vector store for the lexical embedding, oldest entry first. Search goes
 * through an inverted index (bucket → entries with their weights), so a query
 * costs what it shares with the store, not one cosine per stored entry; each
 * entry's score accumulates on the entry itself, in the query's bucket order
 * (so the sum is the same float as a cosine taken in that order).
 */
export class VectorStore<T> {
  private entries: Entry<T>[] = [];
  private readonly postings = new Map<number, Posting<T>>();
  private removed = 0;
  private seq = 0;
  private round = 0;
  /** The entries a search scored, reused from search to search. */
  private readonly touched: Entry<T>[] = [];

  /** Entries in the order they were stored. */
  get all(): readonly Stored<T>[] {
    return this.entries;
  }

  add(value: T, vector: Vector, time: number): Stored<T> {
    const entry: Entry<T> = { value, vector, time, seq: this.seq++, live: true, round: 0, score: 0 };
    this.entries.push(entry);
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
    let gone = 0;
    for (const e of this.entries) {
      if (match(e.value)) {
        e.live = false;
        gone++;
      }
    }
    if (!gone) return 0;
    this.entries = this.entries.filter((e) => e.live);
    this.removed += gone;
    this.compact();
    return gone;
  }

  /** The first stored entry that matches. */
  find(match: (value: T) => boolean): Stored<T> | undefined {
    return this.entries.find((e) => match(e.value));
  }

  /**
   * The `k` stored entries most similar to the query (similarity > 0), best
   * first, ties to the newer entry; entries `skip` accepts are passed over.
   */
  best(query: Vector, k: number, skip?: (entry: Stored<T>) => boolean): Hit<T>[] {
    const round = ++this.round;
    const touched = this.touched;
    touched.length = 0;
    for (let q = 0; q < query.buckets.length; q++) {
      const posting = this.postings.get(query.buckets[q]!);
      if (!posting) continue;
      const weight = query.weights[q]!;
      const { entries, weights } = posting;
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        if (!e.live) continue;
        if (e.round !== round) {
          e.round = round;
          e.score = weight * weights[i]!;
          touched.push(e);
        } else e.score += weight * weights[i]!;
      }
    }
    // Keep the best k in order as they come: k is small, the touched list may not be.
    const top: Hit<T>[] = [];
    for (const e of touched) {
      if (!(e.score > 0) || (top.length >= k && !before(e, top[top.length - 1]!)) || skip?.(e)) continue;
      let at = top.length;
      while (at > 0 && before(e, top[at - 1]!)) at--;
      top.splice(at, 0, { entry: e, score: e.score });
      if (top.length > k) top.pop();
    }
    return top;
  }

  private index(entry: Entry<T>): void {
    const { buckets, weights } = entry.vector;
    for (let i = 0; i < buckets.length; i++) {
      const posting = this.postings.get(buckets[i]!);
      if (posting) {
        posting.entries.push(entry);
        posting.weights.push(weights[i]!);
      } else this.postings.set(buckets[i]!, { entries: [entry], weights: [weights[i]!] });
    }
  }

  private drop(n: number): void {
    for (let i = 0; i < n; i++) this.entries[i]!.live = false;
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
