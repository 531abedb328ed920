import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { dropOrder } from '../src/upkeep/mentions.js';
import { summaryInstruction } from '../src/upkeep/prompts.js';
import { summarize, type SummarizeRequest } from '../src/upkeep/summarizer.js';

const tokens = new TokenCounter('chars4');
// Statements of turn 1 (" sentence" after a space, chars4 · salience): S1 "The user is Kavya." 19 → 4 · 5; S2 "The user’s order SE-10423
// hasn't arrived." 42 → 10 · 12; S3 "It is out for delivery and should arrive by 8 pm." 50 → 12 · 10 (the reply's "Sorry Kavya!" is cut).
const t1: Message[] = [
  { role: 'user', content: "Hi, I'm Kavya. My order SE-10423 hasn't arrived.", turn: 1 }, // 48 chars → 12
  { role: 'assistant', content: 'Sorry Kavya! It is out for delivery and should arrive by 8 pm.', turn: 1 }, // 62 chars → 15
];
const S1 = 'The user is Kavya.';
const S2 = "The user’s order SE-10423 hasn't arrived.";
const S3 = 'It is out for delivery and should arrive by 8 pm.';
const K1 = 'the user is kavya.';
const K2 = "the user’s order se-10423 hasn't arrived.";
const K3 = 'it is out for delivery and should arrive by 8 pm.';
// One statement: "The user’s email is kavya@old.example." (salience 10); "Thanks, noted." states nothing.
const t2: Message[] = [
  { role: 'user', content: 'My email is kavya@old.example.', turn: 2 },
  { role: 'assistant', content: 'Thanks, noted.', turn: 2 },
];
const OLD = ['the user’s email is kavya@old.example.', 'The user’s email is kavya@old.example.'] as const;
// One statement, the corrected e-mail: "The user’s email is kavya@new.example now." (salience 10).
const t3: Message[] = [
  { role: 'user', content: 'Sorry, my email is kavya@new.example now.', turn: 3 }, // 41 chars → 10
  { role: 'assistant', content: 'Updated.', turn: 3 }, // 8 chars → 2
];
const NEW = ['the user’s email is kavya@new.example now.', 'The user’s email is kavya@new.example now.'] as const;

/** A scripted stream: the draws a test wants, in order; a draw more than scripted throws. */
const draws = (...xs: number[]) => () => {
  const x = xs.shift();
  if (x === undefined) throw new Error('no draw left');
  return x;
};

const base = (over: Partial<SummarizeRequest>): SummarizeRequest => ({
  tokens,
  random: () => 0.5,
  model: 'gpt-4o-mini',
  summaryTokens: 40,
  keep: 1,
  folded: t1,
  ...over,
});

describe('simulated summarizer', () => {
  it('states the statements it keeps and pads to about summaryTokens (hand-worked, chars4)', () => {
    const r = summarize(base({}));
    // header "Summary of the conversation so far (turn 1)." 44 → 11; S1 4 + S2 10 + S3 12: 37 ≤ 40, all stay. The first padding
    // sentence (" The conversation stayed polite throughout." 43 → 10) would make 47 > 40. Text: 44 + 19 + 42 + 50 = 155 chars → 38.
    expect(r.summary.message).toEqual({ role: 'system', origin: 'summary', content: `Summary of the conversation so far (turn 1). ${S1} ${S2} ${S3}` });
    // Entries by key (the statement normalized) → the statement as written.
    expect([...r.summary.facts]).toEqual([
      [K1, S1],
      [K2, S2],
      [K3, S3],
    ]);
    expect([...r.summary.mentions]).toEqual([
      [K1, { count: 1, lastTurn: 1, tier: 5 }],
      [K2, { count: 1, lastTurn: 1, tier: 12 }],
      [K3, { count: 1, lastTurn: 1, tier: 10 }],
    ]);
    // in: template (187 chars → 46) + 12 + 15 = 73; out: 38
    expect(summaryInstruction(40).content.length).toBe(187);
    expect(r.call).toEqual({ kind: 'summary', model: 'gpt-4o-mini', inputTokens: 73, outputTokens: 38, sync: true });
  });

  it('pads with neutral sentences when there is room (hand-worked, chars4)', () => {
    const r = summarize(base({ summaryTokens: 60 }));
    // 37 + padding 10 = 47, + " Nothing else needed a follow-up." 33 → 8 = 55; the next (" The user gave no further details." 34 → 8) → 63 > 60.
    // 155 + 43 + 33 = 231 chars → 57 tokens.
    expect(r.summary.message.content).toBe(
      `Summary of the conversation so far (turn 1). ${S1} ${S2} ${S3} The conversation stayed polite throughout. Nothing else needed a follow-up.`,
    );
    expect(r.call.outputTokens).toBe(57);
  });

  it('writes no sentence of what states nothing: questions, greetings, thanks', () => {
    const folded: Message[] = [
      { role: 'user', content: 'Hi! Is the pmo review at 8 pm? Thanks so much!', turn: 1 },
      { role: 'assistant', content: 'Noted.', turn: 1 },
    ];
    const r = summarize(base({ summaryTokens: 200, folded }));
    expect(r.summary.facts.size).toBe(0);
    expect(r.summary.message.content.toLowerCase()).not.toMatch(/pmo|8 pm|thanks|asked about/);
  });

  it('keeps each statement with probability keep, and a lost one appears nowhere in the text', () => {
    // draws, one per statement in order: 0.2 < 0.5 keeps S1; 0.8 loses S2; 0.4 keeps S3
    const r = summarize(base({ keep: 0.5, random: draws(0.2, 0.8, 0.4), summaryTokens: 200 }));
    expect([...r.summary.facts.keys()]).toEqual([K1, K3]);
    expect(r.summary.message.content).toContain(`(turn 1). ${S1} ${S3} The conversation`);
    expect(r.summary.message.content.toLowerCase()).not.toContain('se-10423');
    // keep 0: nothing stated, the header and padding only.
    const none = summarize(base({ keep: 0, summaryTokens: 200 }));
    expect(none.summary.facts.size).toBe(0);
    expect(none.summary.message.content).toMatch(/^Summary of the conversation so far \(turn 1\)\. The conversation stayed polite throughout\./);
    expect(none.summary.message.content.toLowerCase()).not.toMatch(/kavya|se-10423|8 pm|order|delivery/);
  });

  it('compounds loss: an entry lost once is gone from every later summary', () => {
    const first = summarize(base({ keep: 0.5, random: draws(0.1, 0.9, 0.9) })); // S1 kept, S2 and S3 lost
    expect([...first.summary.facts.keys()]).toEqual([K1]);
    // Second fold: candidates S1 (old) then the old e-mail (new); draws 0.1 keep, 0.1 keep. S2 is not a candidate any more.
    const second = summarize(base({ keep: 0.5, random: draws(0.1, 0.1), previous: first.summary, folded: t2 }));
    expect([...second.summary.facts]).toEqual([[K1, S1], OLD]);
    // Third fold: the corrected e-mail replaces the old one among the candidates (two draws, not three):
    // S1 drawn 0.7 → lost, the new e-mail 0.1 → kept (a third draw would throw).
    const third = summarize(base({ keep: 0.5, random: draws(0.7, 0.1), previous: second.summary, folded: t3 }));
    expect([...third.summary.facts]).toEqual([NEW]);
    const text = third.summary.message.content.toLowerCase();
    expect(text).toContain(`(turns 1-3). ${NEW[0]}`);
    expect(text).not.toMatch(/kavya@old|se-10423|8 pm|user is kavya/);
    // in: template 46 + old summary + folded turn 3 (10 + 2)
    expect(third.call.inputTokens).toBe(46 + tokens.text(second.summary.message.content) + 10 + 2);
  });

  it('replaces a corrected value: the new e-mail takes the old one’s place and its mentions', () => {
    const second = summarize(base({ summaryTokens: 200, folded: t2 }));
    const third = summarize(base({ summaryTokens: 200, previous: second.summary, folded: t3 }));
    expect([...third.summary.facts]).toEqual([NEW]);
    expect(third.summary.message.content).not.toContain('kavya@old.example');
    expect([...third.summary.mentions]).toEqual([[NEW[0], { count: 2, lastTurn: 3, tier: 10 }]]);
    // A statement of another kind of span is never the same fact: the order stays beside the e-mail.
    const withOrder = summarize(base({ summaryTokens: 200, previous: summarize(base({ summaryTokens: 200 })).summary, folded: t3 }));
    expect([...withOrder.summary.facts.keys()]).toEqual([K1, K2, K3, NEW[0]]);
  });

  it('never exceeds summaryTokens, and stays close to it when there is enough to say', () => {
    for (const n of [40, 60, 100, 120]) {
      const r = summarize(base({ summaryTokens: n }));
      expect(r.call.outputTokens).toBeLessThanOrEqual(n);
      // The padding sentence that did not fit is at most 14 tokens (+1 for rounding).
      expect(r.call.outputTokens).toBeGreaterThanOrEqual(n - 15);
    }
  });

  it('is shorter than asked when there is little to say: padding never repeats', () => {
    const r = summarize(base({ summaryTokens: 400 }));
    const sentences = r.summary.message.content.split(/(?<=\.) /);
    expect(new Set(sentences).size).toBe(sentences.length);
    expect(r.call.outputTokens).toBeLessThan(200);
  });

  it('drops the entries that do not fit: the least salient, then the fewest-mentioned, then the one mentioned longest ago (hand-worked, chars4)', () => {
    // B "The room is BRAVO-200." (salience 8 + room 1 = 9) in turns 1 and 2; C "The desk is CHARLIE-300." (9) in turn 3;
    // A "The user’s code is ALPHA-100." (8 + user’s, code = 10) in turn 3. Drop order: C (9, 1 mention), B (9, 2 mentions), A (10).
    const folded: Message[] = [
      { role: 'user', content: 'The room is BRAVO-200.', turn: 1 },
      { role: 'user', content: 'The room is BRAVO-200.', turn: 2 },
      { role: 'user', content: 'The desk is CHARLIE-300. My code is ALPHA-100.', turn: 3 },
    ];
    const B = 'The room is BRAVO-200.';
    const C = 'The desk is CHARLIE-300.';
    const A = 'The user’s code is ALPHA-100.';
    const at = (summaryTokens: number) => summarize(base({ summaryTokens, folded }));
    // Header "Summary of the conversation so far (turns 1-3)." 47 chars → 11; " B" 23 → 5, " C" 25 → 6, " A" 30 → 7: 29.
    // At 31 all three fit (sums 29, and the first padding sentence, 10, does not): 47 + 23 + 25 + 30 = 125 chars → 31.
    expect(at(31).summary.message.content).toBe(`Summary of the conversation so far (turns 1-3). ${B} ${C} ${A}`);
    // At 30 the sums (29) fit but the exact count (31) does not: C goes: 47 + 23 + 30 = 100 chars → 25.
    const r30 = at(30);
    expect(r30.summary.message.content).toBe(`Summary of the conversation so far (turns 1-3). ${B} ${A}`);
    expect(r30.call.outputTokens).toBe(25);
    expect([...r30.summary.mentions]).toEqual([
      ['the room is bravo-200.', { count: 2, lastTurn: 2, tier: 9 }],
      ['the user’s code is alpha-100.', { count: 1, lastTurn: 3, tier: 10 }],
    ]);
    // At 23: sums 29 > 23, C goes (23); the exact count of header, B, A is 25 > 23: B goes: 47 + 30 = 77 chars → 19.
    expect(at(23).summary.message.content).toBe(`Summary of the conversation so far (turns 1-3). ${A}`);
    // At 18: C → 23, B → 18 by sums; exact 19 > 18: A goes too, and padding was laid out before: the header alone.
    expect(at(18).summary.message.content).toBe('Summary of the conversation so far (turns 1-3).');
    // At 10 not even the header fits: the shorter "Summary of the conversation so far." (35 chars → 8) and nothing else.
    expect(at(10).summary.message.content).toBe('Summary of the conversation so far.');
    expect(at(1).summary.message.content).toBe('Summary');
  });

  it('counts a statement made again as mentioned again, fresh again; drops by salience, then mentions, then age', () => {
    const first = summarize(base({ summaryTokens: 200 }));
    const again: Message[] = [
      { role: 'user', content: "I'm Kavya.", turn: 2 },
      { role: 'assistant', content: 'Not yet, Kavya.', turn: 2 },
    ];
    const second = summarize(base({ summaryTokens: 200, previous: first.summary, folded: again }));
    expect([...second.summary.facts.keys()]).toEqual([K1, K2, K3]);
    expect(second.summary.mentions.get(K1)).toEqual({ count: 2, lastTurn: 2, tier: 5 });
    // Salience first, however many mentions; then (same salience) the fewest mentions; then the one mentioned longest ago.
    const mentions = new Map([
      [K1, { count: 1, lastTurn: 1, tier: 9 }],
      [K2, { count: 1, lastTurn: 3, tier: 9 }],
      [K3, { count: 5, lastTurn: 3, tier: 8 }],
    ]);
    expect(dropOrder(first.summary.facts, mentions)).toEqual([K3, K1, K2]);
    mentions.set(K3, { count: 5, lastTurn: 3, tier: 9 });
    expect(dropOrder(first.summary.facts, mentions)).toEqual([K1, K2, K3]);
  });

  it('reads a summary made without mentions (by a policy module written before them) as each entry mentioned once, kept before any statement', () => {
    const first = summarize(base({ summaryTokens: 200 }));
    const { mentions: _, ...older } = first.summary;
    const r = summarize(base({ summaryTokens: 200, previous: older as typeof first.summary, folded: t2 }));
    expect([...r.summary.mentions]).toEqual([
      [K1, { count: 1, lastTurn: 1 }],
      [K2, { count: 1, lastTurn: 1 }],
      [K3, { count: 1, lastTurn: 1 }],
      [OLD[0], { count: 1, lastTurn: 2, tier: 10 }],
    ]);
    expect(dropOrder(r.summary.facts, r.summary.mentions)[0]).toBe(OLD[0]);
  });

  it('reads the text it is given: a statement of an exchange not folded is not known, and draws nothing', () => {
    // Only turn 2 is folded: its one statement takes the one draw (0.2 < 0.5); turn 1's are not read (a second draw would throw).
    const r = summarize(base({ keep: 0.5, random: draws(0.2), summaryTokens: 200, folded: t2 }));
    expect([...r.summary.facts]).toEqual([OLD]);
    expect(r.summary.message.content).toContain(`(turn 2). ${OLD[1]}`);
  });
});
