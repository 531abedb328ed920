import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { EXTRACT_TEMPLATE, extract } from '../src/upkeep/extractor.js';

const tokens = new TokenCounter('chars4');
const exchange: Message[] = [
  { role: 'user', content: "Hi, I'm Kavya. My order SE-10423 hasn't arrived.", turn: 1 }, // 48 chars → 12
  { role: 'assistant', content: 'Sorry Kavya! It is out for delivery and should arrive by 8 pm.', turn: 1 }, // 62 chars → 15
];
const stated = [
  ['name', 'Kavya'],
  ['order_id', 'SE-10423'],
] as const;

/** A scripted stream: the draws a test wants, in order. */
const draws = (...xs: number[]) => () => {
  const x = xs.shift();
  if (x === undefined) throw new Error('no draw left');
  return x;
};

describe('simulated extractor', () => {
  it('finds every fact at recall 1 and prices template + turn in, facts out (chars4)', () => {
    const r = extract({ tokens, random: draws(0.99, 0.99), model: 'gpt-4o-mini', recall: 1, exchange, stated });
    expect(r.found).toEqual(stated);
    // in: template 207 chars → 51, + 12 + 15 = 78; out: "name: Kavya; order_id: SE-10423" 31 chars → 7
    expect(EXTRACT_TEMPLATE.content.length).toBe(207);
    expect(r.call).toEqual({ kind: 'extract', model: 'gpt-4o-mini', inputTokens: 78, outputTokens: 7, sync: false });
  });

  it('finds each fact with probability recall, one draw per fact in order', () => {
    // draws 0.3 < 0.5 keeps name, 0.7 ≥ 0.5 misses order_id
    const r = extract({ tokens, random: draws(0.3, 0.7), model: 'm', recall: 0.5, exchange, stated });
    expect(r.found).toEqual([['name', 'Kavya']]);
    expect(r.call.outputTokens).toBe(2); // "name: Kavya" 11 chars → 2
  });

  it('answers "none" when nothing is found, and still costs the call', () => {
    const r = extract({ tokens, random: draws(0.1, 0.1), model: 'm', recall: 0, exchange, stated });
    expect(r.found).toEqual([]);
    expect(r.call.inputTokens).toBe(78);
    expect(r.call.outputTokens).toBe(1); // "none" → 1
  });

  it('reads the text it is given: a fact whose value is not in the messages is not found, and draws nothing', () => {
    // Only the reply is read: it says "Kavya" but not the order number (compared as probes are scored: any case).
    const reply = [exchange[1]!];
    const r = extract({ tokens, random: draws(0.1), model: 'm', recall: 0.5, exchange: reply, stated });
    expect(r.found).toEqual([['name', 'Kavya']]);
    // in: 51 + 15; out: "name: Kavya" 11 chars → 2. The one draw (0.1 < 0.5) went to name; order_id was never drawn for.
    expect([r.call.inputTokens, r.call.outputTokens]).toEqual([66, 2]);
    const none = extract({ tokens, random: draws(), model: 'm', recall: 1, exchange: [{ role: 'user', content: 'KAVYA   here', turn: 1 }], stated: [['order_id', 'SE-10423']] });
    expect(none.found).toEqual([]);
    expect(extract({ tokens, random: draws(0.9), model: 'm', recall: 1, exchange: [{ role: 'user', content: 'It is\nSE-10423', turn: 1 }], stated: [['order_id', 'se-10423']] }).found).toEqual([['order_id', 'se-10423']]);
  });
});

