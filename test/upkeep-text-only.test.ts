import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { extract } from '../src/upkeep/extractor.js';
import { summarize } from '../src/upkeep/summarizer.js';

/**
 * Simulated upkeep decides from the text alone: a fact the user gave is one
 * salient span among others, and a small memory keeps the ones its order
 * ranks first, whether or not a later turn will ask for them.
 */

const tokens = new TokenCounter('chars4');

// Turn 1 states the order number once; turns 2 and 3 mention three other orders twice each, and two days.
const folded: Message[] = [
  { role: 'user', content: 'Hi, my order is SE-10423.', turn: 1 },
  { role: 'assistant', content: 'Thanks, noted.', turn: 1 },
  { role: 'user', content: 'Compare NW-1, NW-2 and NW-3 for me.', turn: 2 },
  { role: 'assistant', content: 'Sure: NW-1 ships on Monday, NW-2 on Friday.', turn: 2 },
  { role: 'user', content: 'Which of NW-1, NW-2 or NW-3 ships first?', turn: 3 },
  { role: 'assistant', content: 'NW-1.', turn: 3 },
];

const at = (summaryTokens: number) => summarize({ tokens, random: () => 0, model: 'm', summaryTokens, keep: 1, folded }).summary;

describe('simulated summarizer, text only (hand-worked, chars4)', () => {
  it('lists what it read in order of appearance, and drops by kind, then mentions, then age', () => {
    // Header "Summary of the conversation so far (turns 1-3)." 47 chars → 11; " Known:" 7 → 1; the entries' sentence sums:
    // " SE-10423;" 10 → 2, " NW-1;" 6 → 1, " NW-2;" 1, " NW-3;" 1, " Monday;" 8 → 2, " Friday;" 8 → 2: 9 in all, 21 with the rest.
    // At 21 everything fits (exact count of the 94-char text: 23 > 21), so the trim drops the first in drop order:
    // Monday (a date: a lower kind than the codes, 1 mention, turn 2), then Friday: 78 chars → 19.
    expect(at(21).message.content).toBe('Summary of the conversation so far (turns 1-3). Known: SE-10423; NW-1; NW-2; NW-3.');
    // At 18 the codes compete: SE-10423 (1 mention) goes before NW-1, NW-2, NW-3 (2 mentions each) — the one a later turn asks about.
    const small = at(18);
    expect(small.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: NW-1; NW-2; NW-3.');
    expect([...small.facts.values()]).toEqual(['NW-1', 'NW-2', 'NW-3']);
    expect(small.mentions.get('nw-1')).toEqual({ count: 2, lastTurn: 3, tier: 2 });
  });

  it('keeps the fact when the summary is large enough, with a topic sentence per exchange that names no span', () => {
    const large = at(120);
    expect(large.message.content).toContain('Known: SE-10423; NW-1; NW-2; NW-3; Monday; Friday.');
    expect(large.topics).toEqual([
      'In turn 1 the user asked about order, and the assistant answered about noted.',
      'In turn 2 the user asked about compare, and the assistant answered about ships.',
      'In turn 3 the user asked about ships first.',
    ]);
  });

  it('reads no annotation: a conversation whose spans are the same gives the same summary', () => {
    // The same text with other words around the spans keeps the same list.
    const other: Message[] = folded.map((m) => ({ ...m, content: m.content.replace('Compare', 'Look at') }));
    expect(summarize({ tokens, random: () => 0, model: 'm', summaryTokens: 18, keep: 1, folded: other }).summary.facts).toEqual(at(18).facts);
  });
});

describe('simulated extractor, text only', () => {
  it('finds each salient span of the turn under its kind, one draw each, and nothing else', () => {
    let draws = 0;
    const r = extract({ tokens, random: () => (draws++, 0), model: 'm', recall: 1, exchange: folded.slice(2, 4) });
    expect(r.found.map(([name, value]) => [name.split('\0')[0], value])).toEqual([
      ['id', 'NW-1'],
      ['id', 'NW-2'],
      ['id', 'NW-3'],
      ['date', 'Monday'],
      ['date', 'Friday'],
    ]);
    expect(draws).toBe(5);
    // "id: NW-1; id: NW-2; id: NW-3; date: Monday; date: Friday" = 56 characters → 14 tokens.
    expect(r.call.outputTokens).toBe(14);
  });
});
