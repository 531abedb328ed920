import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cosine, embed, type Vector } from '../src/upkeep/embedder.js';
import { VectorStore } from '../src/upkeep/store.js';

const WORDS = ['order', 'number', 'socks', 'cart', 'refund', 'email', 'plumber', 'task', 'memo', 'blue', 'size', 'the', 'my'];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 12 }).map((w) => w.join(' '));
const op = fc.oneof(
  fc.record({ add: text, gap: fc.integer({ min: 0, max: 100 }) }),
  fc.record({ keepNewest: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ dropOlderThan: fc.integer({ min: 0, max: 300 }) }),
  fc.record({ remove: fc.constantFrom(...WORDS) }),
);

/** Cosine of normalised vectors summed in the query's order (the order the store sums in, so floats agree exactly). */
function dot(q: Vector, v: Vector): number {
  let s = 0;
  q.buckets.forEach((b, i) => {
    const at = v.buckets.indexOf(b);
    if (at >= 0) s += q.weights[i]! * v.weights[at]!;
  });
  return s;
}

/** The k best by a cosine with every live entry, best first, ties to the newer one. */
function expectedBest(s: VectorStore<string>, q: Vector) {
  return s.all
    .map((entry) => ({ entry, score: dot(q, entry.vector) }))
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score || b.entry.seq - a.entry.seq);
}

describe('vector store', () => {
  it('keeps the newest entries and drops old ones by time (hand-worked)', () => {
    const s = new VectorStore<string>();
    const [a, b, c, d] = ['a order', 'b order', 'c order', 'd order'].map((t, i) => s.add(t, embed(t), i * 60));
    s.keepNewest(3);
    expect(s.all.map((e) => e.value)).toEqual(['b order', 'c order', 'd order']);
    s.dropBefore(120); // b was stored at 60 s
    expect(s.all.map((e) => [e.value, e.time, e.seq])).toEqual([
      ['c order', 120, 2],
      ['d order', 180, 3],
    ]);
    expect(s.best(embed('order'), 5).map((h) => h.entry.value)).toEqual(['d order', 'c order']); // equal scores: newer first
    expect([a, b, c, d].map((e) => s.has(e!))).toEqual([false, false, true, true]);
  });

  it('finds the k best like a cosine over every live entry, through evictions, removals and index rebuilds', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), text, (ops, query) => {
        const s = new VectorStore<string>();
        const added: ReturnType<typeof s.add>[] = [];
        let time = 0;
        for (const o of ops) {
          if ('add' in o) added.push(s.add(o.add, embed(o.add), (time += o.gap)));
          else if ('keepNewest' in o) s.keepNewest(o.keepNewest);
          else if ('remove' in o) s.remove((v) => v.split(' ').includes(o.remove));
          else s.dropBefore(time - o.dropOlderThan);
        }
        // An entry is stored until it is evicted, dropped or removed, through index rebuilds.
        for (const e of added) expect(s.has(e)).toBe(s.all.includes(e));
        const q = embed(query);
        const expected = expectedBest(s, q);
        for (const k of [0, 1, 3, Infinity]) {
          const found = s.best(q, k);
          expect(found.map((h) => h.entry)).toEqual(expected.slice(0, k).map((h) => h.entry));
          found.forEach((h, i) => expect(h.score).toBe(expected[i]!.score));
          for (const h of found) expect(h.score).toBeCloseTo(cosine(q, h.entry.vector), 12);
        }
        // Skipped entries are passed over, not counted against k.
        const odd = (e: { seq: number }) => e.seq % 2 === 1;
        expect(s.best(q, 2, odd).map((h) => h.entry)).toEqual(expected.filter((h) => !odd(h.entry)).slice(0, 2).map((h) => h.entry));
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('still finds the k best once the index has grown past its first arrays (64 entries, 1024 cells)', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 100, maxLength: 400, size: 'max' }), fc.integer({ min: 1, max: 300 }), text, (texts, keep, query) => {
        const s = new VectorStore<string>();
        texts.forEach((t, i) => s.add(t, embed(t), i));
        s.keepNewest(keep); // may rebuild the index from a grown one
        const q = embed(query);
        const expected = expectedBest(s, q);
        const found = s.best(q, 10);
        expect(found.map((h) => h.entry)).toEqual(expected.slice(0, 10).map((h) => h.entry));
        found.forEach((h, i) => expect(h.score).toBe(expected[i]!.score));
      }),
      { seed: 42, numRuns: 40 },
    );
  });
});
