import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { Cassette, type CassetteEntry } from '../src/upkeep/cassette.js';
import { encodeVector, requestKey, type UpkeepRequest } from '../src/upkeep/request.js';
import { cosine } from '../src/upkeep/embedder.js';
import { DEFAULT_PROMPTS, extractRequest, summaryRequest } from '../src/upkeep/prompts.js';
import { VectorStore } from '../src/upkeep/store.js';
import { recordedUpkeep, type Miss } from '../src/upkeep/upkeep.js';

/**
 * Upkeep from a cassette (`recordedUpkeep`): a summary is the model's text,
 * holding the statements of the folded text that it states word for word; an
 * extraction is the facts of the model's answer; an embedding is the
 * model's vector, ranked by cosine (the vector store takes negative
 * components); tokens are the recorded usage. A
 * request the cassette lacks goes to the miss handler with where it was made,
 * and a later request that holds the stand-in given for it is dependent.
 */

const tokens = new TokenCounter('chars4');
const folded: Message[] = [
  { role: 'user', content: 'Hi, my name is Kavya and my order SE-10423 is late.', turn: 1 },
  { role: 'assistant', content: 'Sorry Kavya, it arrives by 8 pm.', turn: 1 },
];
// Its statements: "The user’s name is Kavya and the user’s order SE-10423 is late." (salience 17) and "It arrives by 8 pm." (9).
const NAME_ORDER = 'the user’s name is kavya and the user’s order se-10423 is late.';
const ARRIVES = 'it arrives by 8 pm.';

function entry(request: UpkeepRequest, answer: { text?: string; vector?: number[] }, usage = { input: 11, output: 7 }): CassetteEntry {
  return {
    key: requestKey(request),
    kind: request.kind,
    model: request.model,
    ...(answer.text !== undefined && { text: answer.text }),
    ...(answer.vector && { vector: encodeVector(answer.vector) }),
    usage,
  };
}

function upkeep(entries: CassetteEntry[], misses: Miss[] = []) {
  return recordedUpkeep({
    tokens,
    cassette: new Cassette(entries),
    prompts: DEFAULT_PROMPTS,
    onMiss: (m) => misses.push(m),
    where: () => ({ scenario: 's', policy: 'p', turn: 3 }),
  });
}

const fold = { tokens, random: () => 0.99, model: 'm', summaryTokens: 50, keep: 0, folded };

describe('recorded upkeep', () => {
  it('a summary is the model’s text, holds the statements of the folded text that it states (keep does not apply), and costs the recorded usage', () => {
    const request = summaryRequest('m', 50, undefined, folded, DEFAULT_PROMPTS.summary);
    const u = upkeep([entry(request, { text: '  Kavya reports a late order. It arrives by 8 PM.  ' }, { input: 120, output: 9 })]);
    const { summary, call } = u.summarize(fold);
    expect(summary.message).toEqual({ role: 'system', content: 'Kavya reports a late order. It arrives by 8 PM.', origin: 'summary' });
    // Of the two statements it could hold, the text states the second (in any case); the first only in other words, which is
    // not holding it (keep 0 would have lost both in a simulated summary).
    expect([...summary.facts]).toEqual([[ARRIVES, 'It arrives by 8 pm.']]);
    expect([...summary.mentions]).toEqual([[ARRIVES, { count: 1, lastTurn: 1, tier: 9 }]]);
    expect(call).toEqual({ kind: 'summary', model: 'm', inputTokens: 120, outputTokens: 9, sync: true });
  });

  it('an extraction is the facts of the model’s answer, whatever their names; recall does not apply', () => {
    const request = extractRequest('m', folded, 500, DEFAULT_PROMPTS.extract);
    const u = upkeep([entry(request, { text: 'customer name: Kavya\norder: SE-10423.' })]);
    const r = u.extract({ tokens, random: () => 0.99, model: 'm', recall: 0, exchange: folded });
    expect(r.found).toEqual([
      ['customer name', 'Kavya'],
      ['order', 'SE-10423'],
    ]);
    expect(r.call).toEqual({ kind: 'extract', model: 'm', inputTokens: 11, outputTokens: 7, sync: false });
  });

  it('an embedding is the model’s vector, normalised, and its tokens are the recorded usage', () => {
    const u = upkeep([entry({ kind: 'embed', model: 'e', input: 'blender' }, { vector: [3, -4] }, { input: 2, output: 0 }), entry({ kind: 'embed', model: 'e', input: 'jar' }, { vector: [0, 1] })]);
    const a = u.embed('blender', 'e');
    const b = u.embed('jar', 'e');
    expect(a.inputTokens).toBe(2);
    expect(a.vector.weights.map((w) => Math.round(w * 1e6) / 1e6)).toEqual([0.6, -0.8]);
    expect(cosine(a.vector, b.vector)).toBeCloseTo(-0.8, 6);
    // The same recording gives the same vector object; empty text is not a request.
    expect(u.embed('blender', 'e').vector).toBe(a.vector);
    expect(u.embed('  ', 'e')).toEqual({ vector: { buckets: [], weights: [] }, inputTokens: 0 });
  });

  it('the vector store ranks dense vectors with negative components as a brute-force cosine does', () => {
    const vec = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }).filter((v) => v.some((x) => Math.abs(x) > 1e-3));
    fc.assert(
      fc.property(fc.array(vec, { minLength: 1, maxLength: 12 }), vec, (stored, query) => {
        const u = upkeep(
          [...stored, query].map((v, i) => entry({ kind: 'embed', model: 'e', input: `t${i}` }, { vector: v })),
          [],
        );
        const store = new VectorStore<number>();
        stored.forEach((_, i) => store.add(i, u.embed(`t${i}`, 'e').vector, i));
        const q = u.embed(`t${stored.length}`, 'e').vector;
        const expected = stored
          .map((_, i) => ({ i, score: cosine(q, u.embed(`t${i}`, 'e').vector) }))
          .filter((h) => h.score > 0)
          .sort((x, y) => y.score - x.score || y.i - x.i)
          .slice(0, 3)
          .map((h) => h.i);
        expect(store.best(q, 3).map((h) => h.entry.value)).toEqual(expected);
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('a missing response goes to the miss handler with where it was asked; a request holding its stand-in is dependent', () => {
    const misses: Miss[] = [];
    const u = upkeep([], misses);
    const first = u.summarize(fold);
    // The stand-in is the simulated summary, keeping every statement it read (keep 0 and the draws of 0.99 notwithstanding), drawing nothing.
    expect([...first.summary.facts.keys()]).toEqual([NAME_ORDER, ARRIVES]);
    const next = [{ role: 'user' as const, content: 'Any news?', turn: 2 }];
    u.summarize({ ...fold, previous: first.summary, folded: next });
    u.extract({ tokens, random: () => 0, model: 'm', recall: 1, exchange: next });
    expect(misses.map((m) => [m.request.kind, m.dependent, m.scenario, m.policy, m.turn])).toEqual([
      ['summary', false, 's', 'p', 3],
      ['summary', true, 's', 'p', 3],
      ['extract', false, 's', 'p', 3],
    ]);
    expect(misses[1]!.request).toEqual(summaryRequest('m', 50, first.summary.message.content, next, DEFAULT_PROMPTS.summary));
  });
});
