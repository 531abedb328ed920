import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cosine, embed } from '../src/upkeep/embedder.js';
import { VectorStore } from '../src/upkeep/store.js';

const WORDS = ['order', 'number', 'socks', 'cart', 'refund', 'email', 'plumber', 'task', 'memo', 'blue', 'size', 'the', 'my'];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 12 }).map((w) => w.join(' '));
const op = fc.oneof(
  fc.record({ add: text, gap: fc.integer({ min: 0, max: 100 }) }),
  fc.record({ keepNewest: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ dropOlderThan: fc.integer({ min: 0, max: 300 }) }),
);

describe('vector store', () => {
  it('keeps the newest entries and drops old ones by time (hand-worked)', () => {
    const s = new VectorStore<string>();
    ['a order', 'b order', 'c order', 'd order'].forEach((t, i) => s.add(t, embed(t), i * 60));
    s.keepNewest(3);
    expect(s.all.map((e) => e.value)).toEqual(['b order', 'c order', 'd order']);
    s.dropBefore(120); // b was stored at 60 s
    expect(s.all.map((e) => [e.value, e.time, e.seq])).toEqual([
      ['c order', 120, 2],
      ['d order', 180, 3],
    ]);
    expect([...s.search(embed('order'))].map(([e]) => e.value)).toEqual(['c order', 'd order']);
    expect(s.find((v) => v.startsWith('d'))?.seq).toBe(3);
  });

  it('searches exactly like a cosine over every live entry, through evictions and index rebuilds', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), text, (ops, query) => {
        const s = new VectorStore<string>();
        let time = 0;
        for (const o of ops) {
          if ('add' in o) s.add(o.add, embed(o.add), (time += o.gap));
          else if ('keepNewest' in o) s.keepNewest(o.keepNewest);
          else s.dropBefore(time - o.dropOlderThan);
        }
        const q = embed(query);
        const found = s.search(q);
        const expected = s.all.filter((e) => cosine(q, e.vector) > 0);
        expect([...found.keys()].sort((a, b) => a.seq - b.seq)).toEqual(expected);
        for (const e of expected) expect(found.get(e)).toBeCloseTo(cosine(q, e.vector), 12);
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
