import { EMBED_BUCKETS, room, type Vector } from './embedder.js';

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

/** An entry with its place in the index. */
interface Entry<T> extends Stored<T> {
  slot: number;
}

/**
 * A vector store for the lexical embedding, oldest entry first. Search goes
 * through an inverted index (bucket → entries with their weights), so a query
 * costs what it shares with the store, not one cosine per stored entry; each
 * entry's score accumulates in the query's bucket order (so the sum is the
 * same float as a cosine taken in that order). Weights may be negative (a
 * model's embedding has such), so a search marks the entries it has scored.
 *
 * The index is numbers in typed arrays that double when full: each entry has
 * a slot (the order it was indexed in), each (entry, bucket) pair a cell, and
 * each bucket a chain of its cells, newest first. Adding a message then
 * allocates nothing per bucket and leaves the garbage collector nothing to
 * trace or copy.
 */
export class VectorStore<T> {
  private entries: Entry<T>[] = [];
  /** Entries by slot; a dropped entry's slot is emptied, and its cells stay until the index is rebuilt. */
  private slots: (Entry<T> | undefined)[] = [];
  /** By slot: the score the current search has summed so far (0 between searches). */
  private scores = new Float64Array(64);
  /** The slots a search scored (as many as there are slots at most), reused from search to search. */
  private touched = new Int32Array(64);
  /** By slot: 1 while the current search has scored it. */
  private marked = new Uint8Array(64);
  /**
   * Bucket → its newest cell. Every bucket has its place (4 bytes each, 1 MB a
   * store): cheaper than hashing the bucket twice for each one a message adds.
   */
  private readonly heads = new Int32Array(EMBED_BUCKETS);
  /** By cell: its entry's slot, the entry's weight in the bucket, and the bucket's next (older) cell. Cell 0 is none: it ends a chain. */
  private cellSlot = new Int32Array(1024);
  private cellWeight = new Float64Array(1024);
  private cellNext = new Int32Array(1024);
  private cells = 1;
  private removed = 0;
  private seq = 0;

  /** Entries in the order they were stored. */
  get all(): readonly Stored<T>[] {
    return this.entries;
  }

  add(value: T, vector: Vector, time: number): Stored<T> {
    const entry: Entry<T> = { value, vector, time, seq: this.seq++, slot: 0 };
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
        this.slots[e.slot] = undefined;
        gone++;
      }
    }
    if (!gone) return 0;
    this.entries = this.entries.filter((e) => this.slots[e.slot] !== undefined);
    this.removed += gone;
    this.compact();
    return gone;
  }

  /** Whether an entry this store returned is still stored. */
  has(entry: Stored<T>): boolean {
    return this.slots[(entry as Entry<T>).slot] === entry;
  }

  /**
   * The `k` stored entries most similar to the query (similarity > 0), best
   * first, ties to the newer entry; entries `skip` accepts are passed over.
   */
  best(query: Vector, k: number, skip?: (entry: Stored<T>) => boolean): Hit<T>[] {
    // None asked (a policy's `topK` of 0): the loop below compares with the k-th best, which there is not.
    if (!(k > 0)) return [];
    const { scores, heads, cellSlot, cellWeight, cellNext, touched, marked } = this;
    let n = 0;
    for (let q = 0; q < query.buckets.length; q++) {
      const weight = query.weights[q]!;
      for (let c = heads[query.buckets[q]!]!; c; c = cellNext[c]!) {
        const slot = cellSlot[c]!;
        if (!marked[slot]) {
          marked[slot] = 1;
          touched[n++] = slot;
        }
        scores[slot]! += weight * cellWeight[c]!;
      }
    }
    // Keep the best k in order as they come (k is small, the touched list may not be), and zero the scores again.
    const top: Hit<T>[] = [];
    for (let i = 0; i < n; i++) {
      const slot = touched[i]!;
      const score = scores[slot]!;
      scores[slot] = 0;
      marked[slot] = 0;
      const entry = this.slots[slot];
      if (!entry || !(score > 0) || (top.length >= k && !before(score, slot, top[top.length - 1]!)) || skip?.(entry)) continue;
      let at = top.length;
      while (at > 0 && before(score, slot, top[at - 1]!)) at--;
      top.splice(at, 0, { entry, score });
      if (top.length > k) top.pop();
    }
    return top;
  }

  private index(entry: Entry<T>): void {
    const slot = (entry.slot = this.slots.length);
    this.slots.push(entry);
    this.scores = room(this.scores, slot + 1);
    this.touched = room(this.touched, slot + 1);
    this.marked = room(this.marked, slot + 1);
    const { buckets, weights } = entry.vector;
    this.cellSlot = room(this.cellSlot, this.cells + buckets.length);
    this.cellWeight = room(this.cellWeight, this.cells + buckets.length);
    this.cellNext = room(this.cellNext, this.cells + buckets.length);
    for (let i = 0; i < buckets.length; i++) {
      const cell = this.cells++;
      this.cellSlot[cell] = slot;
      this.cellWeight[cell] = weights[i]!;
      this.cellNext[cell] = this.heads[buckets[i]!]!;
      this.heads[buckets[i]!] = cell;
    }
  }

  private drop(n: number): void {
    for (let i = 0; i < n; i++) this.slots[this.entries[i]!.slot] = undefined;
    this.entries = this.entries.slice(n);
    this.removed += n;
    this.compact();
  }

  /** Rebuilds the index once dropped entries outnumber live ones, so it stays proportional to the store. */
  private compact(): void {
    if (this.removed > this.entries.length) {
      this.slots = [];
      this.heads.fill(0);
      this.cells = 1;
      for (const e of this.entries) this.index(e);
      this.removed = 0;
    }
  }
}

/** Whether a slot's score ranks before a hit: a higher score, or the same score and newer (slots follow the order entries were stored in). */
const before = (score: number, slot: number, h: Hit<unknown>) => score > h.score || (score === h.score && slot > (h.entry as Entry<unknown>).slot);
