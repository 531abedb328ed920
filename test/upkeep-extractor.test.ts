import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { EXTRACT_TEMPLATE, extract, factLabel } from '../src/upkeep/extractor.js';

const tokens = new TokenCounter('chars4');
// Spans, in order: Kavya (name) and SE-10423 (id) in the user message; Kavya again (the same key in the same turn: read once) and 8 pm (time) in the reply.
const exchange: Message[] = [
  { role: 'user', content: "Hi, I'm Kavya. My order SE-10423 hasn't arrived.", turn: 1 }, // 48 chars → 12
  { role: 'assistant', content: 'Sorry Kavya! It is out for delivery and should arrive by 8 pm.', turn: 1 }, // 62 chars → 15
];
// Each span is named `${kind}\0${key}`: the kind, then (after a NUL the sheet does not write) the span normalized.
const KAVYA = ['name\0kavya', 'Kavya'] as const;
const ORDER = ['id\0se-10423', 'SE-10423'] as const;
const EIGHT = ['time\x008 pm', '8 pm'] as const;

/** A scripted stream: the draws a test wants, in order; a draw more than scripted throws. */
const draws = (...xs: number[]) => () => {
  const x = xs.shift();
  if (x === undefined) throw new Error('no draw left');
  return x;
};

describe('simulated extractor', () => {
  it('finds every span at recall 1 and prices template + turn in, "kind: value" out (chars4)', () => {
    // Three draws, one per span: a fourth would throw.
    const r = extract({ tokens, random: draws(0.99, 0.99, 0.99), model: 'gpt-4o-mini', recall: 1, exchange });
    expect(r.found).toEqual([KAVYA, ORDER, EIGHT]);
    expect(r.found.map(([name]) => factLabel(name))).toEqual(['name', 'id', 'time']);
    // in: template 207 chars → 51, + 12 + 15 = 78; out: "name: Kavya; id: SE-10423; time: 8 pm" 37 chars → 9
    expect(EXTRACT_TEMPLATE.content.length).toBe(207);
    expect(r.call).toEqual({ kind: 'extract', model: 'gpt-4o-mini', inputTokens: 78, outputTokens: 9, sync: false });
  });

  it('finds each span with probability recall, one draw per span in order', () => {
    // draws 0.3 < 0.5 finds Kavya, 0.7 ≥ 0.5 misses SE-10423, 0.2 < 0.5 finds 8 pm
    const r = extract({ tokens, random: draws(0.3, 0.7, 0.2), model: 'm', recall: 0.5, exchange });
    expect(r.found).toEqual([KAVYA, EIGHT]);
    expect(r.call.outputTokens).toBe(5); // "name: Kavya; time: 8 pm" 23 chars → 5
  });

  it('answers "none" when nothing is found, and still costs the call', () => {
    const r = extract({ tokens, random: draws(0.1, 0.1, 0.1), model: 'm', recall: 0, exchange });
    expect(r.found).toEqual([]);
    expect(r.call.inputTokens).toBe(78);
    expect(r.call.outputTokens).toBe(1); // "none" → 1
  });

  it('reads the text it is given: a span of a message it is not given is not found, and draws nothing', () => {
    // Only the reply is read: it says Kavya and 8 pm but not the order number. Two draws: 0.1 < 0.5 finds Kavya, 0.9 misses 8 pm;
    // SE-10423 (in the user message) is never drawn for (a third draw would throw).
    const reply = [exchange[1]!];
    const r = extract({ tokens, random: draws(0.1, 0.9), model: 'm', recall: 0.5, exchange: reply });
    expect(r.found).toEqual([KAVYA]);
    // in: 51 + 15; out: "name: Kavya" 11 chars → 2.
    expect([r.call.inputTokens, r.call.outputTokens]).toEqual([66, 2]);
    // A message without a salient span: nothing found, no draw.
    const none = extract({ tokens, random: draws(), model: 'm', recall: 1, exchange: [{ role: 'user', content: 'Thanks, that is all.', turn: 1 }] });
    expect(none.found).toEqual([]);
    expect(none.call.outputTokens).toBe(1);
  });

  it('reads a span written twice in a turn, in any case, once: one entry, one draw, as first written', () => {
    const r = extract({ tokens, random: draws(0.9), model: 'm', recall: 1, exchange: [{ role: 'user', content: 'It is SE-10423, yes, se-10423.', turn: 1 }] });
    expect(r.found).toEqual([ORDER]);
  });
});
