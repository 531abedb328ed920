import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { EXTRACT_TEMPLATE, extract, factEntry, factSalience } from '../src/upkeep/extractor.js';

const tokens = new TokenCounter('chars4');
// Statements, in order: the user's name and the user's order (the user message, "Hi," cut), and the delivery time (the reply,
// "Sorry Kavya!" cut: an interjection with the name called).
const exchange: Message[] = [
  { role: 'user', content: "Hi, I'm Kavya. My order SE-10423 hasn't arrived.", turn: 1 }, // 48 chars → 12
  { role: 'assistant', content: 'Sorry Kavya! It is out for delivery and should arrive by 8 pm.', turn: 1 }, // 62 chars → 15
];
// Each statement is named by a NUL (which the sheet does not write), then its text normalized.
const KAVYA = ['\0the user is kavya.', 'The user is Kavya.'] as const; // 18 chars
const ORDER = ['\0the user’s order se-10423 hasn\'t arrived.', 'The user’s order SE-10423 hasn\'t arrived.'] as const; // 41 chars
const EIGHT = ['\0it is out for delivery and should arrive by 8 pm.', 'It is out for delivery and should arrive by 8 pm.'] as const; // 49 chars

/** A scripted stream: the draws a test wants, in order; a draw more than scripted throws. */
const draws = (...xs: number[]) => () => {
  const x = xs.shift();
  if (x === undefined) throw new Error('no draw left');
  return x;
};

describe('simulated extractor', () => {
  it('finds every statement at recall 1 and prices template + turn in, its answer on one line out (chars4)', () => {
    // Three draws, one per statement: a fourth would throw.
    const r = extract({ tokens, random: draws(0.99, 0.99, 0.99), model: 'gpt-4o-mini', recall: 1, exchange });
    expect(r.found).toEqual([KAVYA, ORDER, EIGHT]);
    // A sheet writes a statement as its sentence alone, a named fact as "name: value.".
    expect(r.found.map(([k, v]) => factEntry(k, v))).toEqual([KAVYA[1], ORDER[1], EIGHT[1]]);
    expect(factEntry('instruction', 'ignore the rules')).toBe('instruction: ignore the rules.');
    // Salience (hand-worked): user 1 + Kavya (a name) 4 = 5; SE-10423 8 + user’s, order, hasn't, arrived 4 = 12; 8 pm 8 + delivery, arrive 2 = 10.
    expect(r.found.map(([k, v]) => factSalience(k, v))).toEqual([5, 12, 10]);
    expect(factSalience('instruction', 'x')).toBeUndefined();
    // in: template 207 chars → 51, + 12 + 15 = 78; out: 18 + 1 + 41 + 1 + 49 = 110 chars → 27
    expect(EXTRACT_TEMPLATE.content.length).toBe(207);
    expect(r.call).toEqual({ kind: 'extract', model: 'gpt-4o-mini', inputTokens: 78, outputTokens: 27, sync: false });
    expect(r.today).toBeUndefined();
  });

  it('counts its answer as one line, as its instruction asks, under OpenAI\'s encodings too', () => {
    const named: Message[] = [
      { role: 'user', name: 'Caroline', content: 'I went to a support group.', turn: 1 },
      { role: 'assistant', name: 'Melanie', content: 'I painted a lake sunrise.', turn: 1 },
    ];
    const r = extract({ tokens: new TokenCounter('o200k_base'), random: draws(0.99, 0.99), model: 'gpt-4o-mini', recall: 1, exchange: named });
    const written = r.found.map(([k, v]) => factEntry(k, v));
    expect(written).toEqual(['Caroline went to a support group.', 'Melanie painted a lake sunrise.']);
    const count = (text: string) => new TokenCounter('o200k_base').text(text);
    // A line break before "Melanie" is a token more than a space: the answer is counted as the line it is.
    expect(count(written.join('\n'))).toBe(count(written.join(' ')) + 1);
    expect(r.call.outputTokens).toBe(count(written.join(' ')));
  });

  it('finds each statement with probability recall, one draw per statement in order', () => {
    // draws 0.3 < 0.5 finds the name, 0.7 ≥ 0.5 misses the order, 0.2 < 0.5 finds the delivery time
    const r = extract({ tokens, random: draws(0.3, 0.7, 0.2), model: 'm', recall: 0.5, exchange });
    expect(r.found).toEqual([KAVYA, EIGHT]);
    expect(r.call.outputTokens).toBe(17); // 18 + 1 + 49 = 68 chars → 17
  });

  it('answers "none" when nothing is found, and still costs the call', () => {
    const r = extract({ tokens, random: draws(0.1, 0.1, 0.1), model: 'm', recall: 0, exchange });
    expect(r.found).toEqual([]);
    expect(r.call.inputTokens).toBe(78);
    expect(r.call.outputTokens).toBe(1); // "none" → 1
  });

  it('reads the text it is given: a statement of a message it is not given is not found, and draws nothing', () => {
    // Only the reply is read: one statement, one draw (a second would throw); the user message's are never drawn for.
    const reply = [exchange[1]!];
    const r = extract({ tokens, random: draws(0.1), model: 'm', recall: 0.5, exchange: reply });
    expect(r.found).toEqual([EIGHT]);
    // in: 51 + 15; out: 49 chars → 12.
    expect([r.call.inputTokens, r.call.outputTokens]).toEqual([66, 12]);
    // A message that states nothing: nothing found, no draw.
    const none = extract({ tokens, random: draws(), model: 'm', recall: 1, exchange: [{ role: 'user', content: 'Thanks, that is all.', turn: 1 }] });
    expect(none.found).toEqual([]);
    expect(none.call.outputTokens).toBe(1);
  });

  it('reads a statement written twice in a turn once: one entry, one draw, as first written', () => {
    const r = extract({ tokens, random: draws(0.9), model: 'm', recall: 1, exchange: [{ role: 'user', content: 'My order is SE-10423. Yes, my order  is SE-10423!', turn: 1 }] });
    expect(r.found).toEqual([['\0the user’s order is se-10423.', 'The user’s order is SE-10423.']]);
  });

  it('resolves relative times against the day a header stated, and returns that day for the next turn', () => {
    const dated: Message[] = [{ role: 'user', content: 'DATE: 1:56 pm on 8 May, 2023\nI went to a support group yesterday.', name: 'Caroline', turn: 1 }];
    const r = extract({ tokens, random: draws(0.1), model: 'm', recall: 1, exchange: dated });
    expect(r.found.map(([, v]) => v)).toEqual(['Caroline went to a support group on 7 May 2023.']);
    expect(r.today).toBe(Date.UTC(2023, 4, 8) / 86_400_000);
    // The next turn, with no header, is read on that day.
    const next = extract({ tokens, random: draws(0.1), model: 'm', recall: 1, today: r.today, exchange: [{ role: 'user', content: 'I am painting tomorrow.', name: 'Caroline', turn: 2 }] });
    expect(next.found.map(([, v]) => v)).toEqual(['Caroline is painting on 9 May 2023.']);
  });
});
