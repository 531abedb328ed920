import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { extract } from '../src/upkeep/extractor.js';
import { summarize } from '../src/upkeep/summarizer.js';
import { scenario, trace } from './_policies.js';

/**
 * Simulated upkeep decides from the text alone: a fact the user gave is one
 * statement among others, and a small memory keeps the ones its salience
 * ranks first, whether or not a later turn will ask for them; what a
 * scenario annotates (`facts:`, `probe:`) is never read.
 */

const tokens = new TokenCounter('chars4');

// Statements (salience · " sentence" after a space, chars4 · turn): A "The user’s order is SE-10423." 10 · 7 · t1;
// B "The user’s sister ordered NW-20931 on Monday." 15 · 11 · t2; C "Yours, SE-10423." 8 · 4 · t3. Thanks, a question and
// "It ships on Friday." (no personal word, no whole date) state nothing.
const folded: Message[] = [
  { role: 'user', content: 'Hi, my order is SE-10423.', turn: 1 },
  { role: 'assistant', content: 'Thanks, noted.', turn: 1 },
  { role: 'user', content: 'My sister ordered NW-20931 on Monday.', turn: 2 },
  { role: 'assistant', content: 'It ships on Friday.', turn: 2 },
  { role: 'user', content: 'Which order ships first?', turn: 3 },
  { role: 'assistant', content: 'Yours, SE-10423.', turn: 3 },
];
const A = 'The user’s order is SE-10423.';
const B = 'The user’s sister ordered NW-20931 on Monday.';
const C = 'Yours, SE-10423.';

const at = (summaryTokens: number, messages = folded) => summarize({ tokens, random: () => 0, model: 'm', summaryTokens, keep: 1, folded: messages }).summary;

describe('simulated summarizer, text only (hand-worked, chars4)', () => {
  it('writes what it read in order, and drops by salience, then mentions, then age', () => {
    // Header "Summary of the conversation so far (turns 1-3)." 47 chars → 11. At 40: 11 + 7 + 11 + 4 = 33, and the first
    // padding sentence (10) would make 43: 47 + 30 + 46 + 17 = 140 chars → 35.
    expect(at(40).message.content).toBe(`Summary of the conversation so far (turns 1-3). ${A} ${B} ${C}`);
    // At 30: C (8) goes → 29; 47 + 30 + 46 = 123 chars → 30.
    expect(at(30).message.content).toBe(`Summary of the conversation so far (turns 1-3). ${A} ${B}`);
    // At 25: then A (10) → 22: the sister's order stays, the user's own — the one turn 3 asks about — goes. 93 chars → 23.
    const small = at(25);
    expect(small.message.content).toBe(`Summary of the conversation so far (turns 1-3). ${B}`);
    expect(small.mentions.get(B.toLowerCase())).toEqual({ count: 1, lastTurn: 2, tier: 15 });
  });

  it('reads only the text: other words around the same statements give the same summary', () => {
    const other: Message[] = folded.map((m) => ({ ...m, content: m.content.replace('Which order ships first?', 'And which of them ships first?') }));
    expect(at(25, other).message.content).toBe(at(25).message.content);
  });
});

describe('simulated extractor, text only', () => {
  it('finds each statement of the turn, one draw each, and nothing else', () => {
    let draws = 0;
    const r = extract({ tokens, random: () => (draws++, 0), model: 'm', recall: 1, exchange: folded.slice(2, 4) });
    expect(r.found.map(([, value]) => value)).toEqual([B]);
    expect(draws).toBe(1);
    // "The user’s sister ordered NW-20931 on Monday." 45 characters → 11 tokens.
    expect(r.call.outputTokens).toBe(11);
  });
});

describe('label-blind: annotations change nothing a memory policy sends', () => {
  const text = (facts: string, probe: string) =>
    scenario(`
id: blind
system: You are a support agent.
turns:
  - user: Hi, I'm Kavya. My order SE-10423 hasn't arrived.${facts}
    assistant: Sorry Kavya! It is out for delivery and should arrive by 8 pm.
  - user: My email is kavya@old.example if you need it.
    assistant: Thanks, noted.
  - user: Which order was late again?${probe}
    assistant: Order SE-10423.
  - user: And my email?
    assistant: kavya@old.example.
`);
  const annotated = text('\n    facts: {name: Kavya, order_id: SE-10423}', '\n    probe: [order_id]');
  const stripped = text('', '');
  // Decoyed: the annotation names another value of the same turn, and the probe asks for it.
  const decoyed = text('\n    facts: {eta: 8 pm}', '\n    probe: [eta]');

  for (const spec of ['facts:recent=1,sheetTokens=20', 'summary:threshold=30,summaryTokens=40', 'summary-buffer:budget=80,keepRecent=1,summaryTokens=30']) {
    it(`${spec}: annotated, stripped and decoyed send byte-identical prompts at the same cost`, () => {
      const sent = (c: ReturnType<typeof text>) => JSON.stringify(trace(c, spec).map((t) => [t.calls.map((call) => [call.messages, call.upkeep]), t.after]));
      const a = sent(annotated);
      expect(sent(stripped)).toBe(a);
      expect(sent(decoyed)).toBe(a);
      // The memory is there to be compared: some turn sends a policy-made message.
      expect(a).toMatch(/"origin":"(?:facts|summary)"/);
    });
  }
});
