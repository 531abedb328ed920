import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { dropOrder } from '../src/upkeep/mentions.js';
import { summaryInstruction } from '../src/upkeep/prompts.js';
import { summarize, type SummarizeRequest } from '../src/upkeep/summarizer.js';

const tokens = new TokenCounter('chars4');
// Spans of turn 1: Kavya (name) and SE-10423 (id) in the user message; Kavya again (the same key, read once per turn) and 8 pm (time) in the reply.
const t1: Message[] = [
  { role: 'user', content: "Hi, I'm Kavya. My order SE-10423 hasn't arrived.", turn: 1 }, // 48 chars → 12
  { role: 'assistant', content: 'Sorry Kavya! It is out for delivery and should arrive by 8 pm.', turn: 1 }, // 62 chars → 15
];
// One span: kavya@old.example (email).
const t2: Message[] = [
  { role: 'user', content: 'My email is kavya@old.example.', turn: 2 },
  { role: 'assistant', content: 'Thanks, noted.', turn: 2 },
];
// One span: kavya@new.example (email).
const t3: Message[] = [
  { role: 'user', content: 'Sorry, it is kavya@new.example now.', turn: 3 }, // 35 chars → 8
  { role: 'assistant', content: 'Updated.', turn: 3 }, // 8 chars → 2
];

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
  it('states the spans it keeps and pads to about summaryTokens (hand-worked, chars4)', () => {
    const r = summarize(base({}));
    // header "Summary of the conversation so far (turn 1)." 44 → 11; " Known: Kavya; SE-10423; 8 pm." 30 → 7: 18 used.
    // The turn-1 topic sentence (" In turn 1 … arrive." 102 chars → 25) would make 43 > 40, so it is left out; padding
    // " The conversation stayed polite throughout." 43 → 10 (28) and " Nothing else needed a follow-up." 33 → 8 (36) fit,
    // the next (" The user gave no further details." 34 → 8) would not. Text: 44 + 30 + 43 + 33 = 150 chars → 37 tokens.
    expect(r.summary.message).toEqual({
      role: 'system',
      origin: 'summary',
      content: 'Summary of the conversation so far (turn 1). Known: Kavya; SE-10423; 8 pm. The conversation stayed polite throughout. Nothing else needed a follow-up.',
    });
    // Entries by key (the span normalized) → the span as written.
    expect([...r.summary.facts]).toEqual([
      ['kavya', 'Kavya'],
      ['se-10423', 'SE-10423'],
      ['8 pm', '8 pm'],
    ]);
    // in: template (187 chars → 46) + 12 + 15 = 73; out: 37
    expect(summaryInstruction(40).content.length).toBe(187);
    expect(r.call).toEqual({ kind: 'summary', model: 'gpt-4o-mini', inputTokens: 73, outputTokens: 37, sync: true });
  });

  it('writes a sentence per exchange when there is room, without a word of its spans in it', () => {
    const r = summarize(base({ summaryTokens: 60 }));
    // 18 + topic 25 = 43, + padding 10 = 53; the next padding (8) → 61 > 60. 44 + 30 + 102 + 43 = 219 chars → 54 tokens.
    // The topic leaves out "Kavya", "SE-10423", "8" and "pm" (the words of the spans) and the stopwords.
    const topic = 'In turn 1 the user asked about order arrived, and the assistant answered about sorry delivery arrive.';
    expect(r.summary.message.content).toBe(`Summary of the conversation so far (turn 1). Known: Kavya; SE-10423; 8 pm. ${topic} The conversation stayed polite throughout.`);
    expect(r.call.outputTokens).toBe(54);
    expect(r.summary.topics).toEqual([topic]);
  });

  it('leaves out a topic word only when it is a word of a span: a word that merely contains one stays', () => {
    // The span "8 pm" has the words "8" and "pm"; "pmo" contains "pm" but is another word.
    const folded: Message[] = [
      { role: 'user', content: 'Is the pmo review at 8 pm?', turn: 1 },
      { role: 'assistant', content: 'Noted.', turn: 1 },
    ];
    const r = summarize(base({ summaryTokens: 200, folded }));
    expect([...r.summary.facts]).toEqual([['8 pm', '8 pm']]);
    expect(r.summary.topics).toEqual(['In turn 1 the user asked about pmo review, and the assistant answered about noted.']);
  });

  it('keeps each span with probability keep, and a lost span appears nowhere in the text', () => {
    // draws, one per span in order: 0.2 < 0.5 keeps Kavya; 0.8 loses SE-10423; 0.4 keeps 8 pm
    const r = summarize(base({ keep: 0.5, random: draws(0.2, 0.8, 0.4), summaryTokens: 200 }));
    expect([...r.summary.facts]).toEqual([
      ['kavya', 'Kavya'],
      ['8 pm', '8 pm'],
    ]);
    expect(r.summary.message.content).toContain('Known: Kavya; 8 pm.');
    expect(r.summary.message.content.toLowerCase()).not.toContain('se-10423');
    // keep 0: nothing known, and the topic sentence states no span either.
    const none = summarize(base({ keep: 0, summaryTokens: 200 }));
    expect(none.summary.facts.size).toBe(0);
    expect(none.summary.message.content).toContain('Known: nothing specific yet.');
    expect(none.summary.message.content.toLowerCase()).not.toMatch(/kavya|se-10423|8 pm/);
    expect(none.summary.message.content).toContain('In turn 1 the user asked about order arrived, and the assistant answered about sorry delivery arrive.');
  });

  it('compounds loss: an entry lost once is gone from every later summary', () => {
    const first = summarize(base({ keep: 0.5, random: draws(0.1, 0.9, 0.9) })); // Kavya kept, SE-10423 and 8 pm lost
    expect([...first.summary.facts.keys()]).toEqual(['kavya']);
    // Second fold: candidates Kavya (old) then the old e-mail (new); draws 0.1 keep, 0.1 keep. SE-10423 is not a candidate any more.
    const second = summarize(base({ keep: 0.5, random: draws(0.1, 0.1), previous: first.summary, folded: t2 }));
    expect([...second.summary.facts]).toEqual([
      ['kavya', 'Kavya'],
      ['kavya@old.example', 'kavya@old.example'],
    ]);
    // Third fold: Kavya drawn 0.7 → lost, the old e-mail 0.6 → lost, the new e-mail 0.1 → kept.
    const third = summarize(base({ keep: 0.5, random: draws(0.7, 0.6, 0.1), previous: second.summary, folded: t3 }));
    expect([...third.summary.facts]).toEqual([['kavya@new.example', 'kavya@new.example']]);
    const text = third.summary.message.content.toLowerCase();
    expect(text).toContain('known: kavya@new.example.');
    expect(text).not.toMatch(/kavya@old|se-10423|8 pm|known: kavya;/);
    expect(text).toContain('(turns 1-3)');
    // in: template 46 + old summary + folded turn 3 (8 + 2)
    expect(third.call.inputTokens).toBe(46 + tokens.text(second.summary.message.content) + 8 + 2);
  });

  it('does not decide that a new value replaces an old one: both e-mails stay while they are drawn and fit', () => {
    const second = summarize(base({ summaryTokens: 200, folded: t2 }));
    const third = summarize(base({ summaryTokens: 200, previous: second.summary, folded: t3 }));
    expect(third.summary.message.content).toContain('Known: kavya@old.example; kavya@new.example.');
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

  it('drops the entries that do not fit: the fewest-mentioned first, then the one mentioned longest ago (hand-worked, chars4)', () => {
    // Three IDs (one kind tier): ALPHA-100 in turns 1 and 3 (2 mentions), BRAVO-200 in turn 2, CHARLIE-300 in turn 3 (1 each).
    // Drop order: BRAVO-200 (1 mention, last in turn 2), CHARLIE-300 (1 mention, turn 3), ALPHA-100.
    const folded: Message[] = [
      { role: 'user', content: 'My code is ALPHA-100.', turn: 1 },
      { role: 'user', content: 'The room is BRAVO-200.', turn: 2 },
      { role: 'user', content: 'The desk is CHARLIE-300, and again ALPHA-100.', turn: 3 },
    ];
    const at = (summaryTokens: number) => summarize(base({ summaryTokens, folded }));
    // Header "Summary of the conversation so far (turns 1-3)." 47 chars → 11; the sentence sums " Known:" 7 → 1,
    // " ALPHA-100;" 11 → 2, " BRAVO-200;" 11 → 2, " CHARLIE-300;" 13 → 3 make 8: 19. The topic sentences (9+ tokens each) never fit here.
    // At 22 all three fit: 47 + 1 + 41 = 89 chars → 22.
    expect(at(22).summary.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: ALPHA-100; BRAVO-200; CHARLIE-300.');
    // At 19 the sums fit but the exact count (22) does not: BRAVO-200 is dropped: 78 chars → 19.
    const r19 = at(19);
    expect(r19.summary.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: ALPHA-100; CHARLIE-300.');
    expect(r19.call.outputTokens).toBe(19);
    expect([...r19.summary.facts.keys()]).toEqual(['alpha-100', 'charlie-300']);
    expect([...r19.summary.mentions]).toEqual([
      ['alpha-100', { count: 2, lastTurn: 3, tier: 2 }],
      ['charlie-300', { count: 1, lastTurn: 3, tier: 2 }],
    ]);
    // At 16: sums 19 > 16, BRAVO-200 goes (17), then CHARLIE-300 (14); ALPHA-100 (2 mentions) stays: 65 chars → 16.
    expect(at(16).summary.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: ALPHA-100.');
    // At 10 not even the header fits: the shorter "Summary of the conversation so far." (35 chars → 8) and nothing else
    // (every entry goes, and "Known: nothing specific yet." would take 7 more).
    expect(at(10).summary.message.content).toBe('Summary of the conversation so far.');
    expect(at(1).summary.message.content).toBe('Summary');
  });

  it('makes an entry mentioned again fresh again: a newer mention outlives an older single one', () => {
    const first = summarize(base({ summaryTokens: 200 }));
    // Turn 2 mentions Kavya again: Kavya has 2 mentions, SE-10423 1 (both IDs and names: tier 2), 8 pm 1 (a time: tier 1).
    const again: Message[] = [
      { role: 'user', content: 'Any news?', turn: 2 },
      { role: 'assistant', content: 'Not yet, Kavya.', turn: 2 },
    ];
    // At 16: header (turns 1-2) 11 + sums 1 + 1 + 2 + 1 = 16 fit, but the exact count of the 77 chars is 19: 8 pm goes (its tier),
    // 71 chars → 17 still too many: SE-10423 goes (1 mention against 2): "… Known: Kavya." 61 chars → 15.
    const second = summarize(base({ summaryTokens: 16, previous: first.summary, folded: again }));
    expect(second.summary.message.content).toBe('Summary of the conversation so far (turns 1-2). Known: Kavya.');
    expect([...second.summary.facts]).toEqual([['kavya', 'Kavya']]);
    expect(second.summary.mentions.get('kavya')).toEqual({ count: 2, lastTurn: 2, tier: 2 });
    // The order itself: the lower tier first whatever its mentions, then (same tier and count) the one mentioned longest ago.
    const mentions = new Map([
      ['kavya', { count: 1, lastTurn: 1, tier: 2 }],
      ['se-10423', { count: 1, lastTurn: 3, tier: 2 }],
      ['8 pm', { count: 5, lastTurn: 3, tier: 1 }],
    ]);
    expect(dropOrder(first.summary.facts, mentions)).toEqual(['8 pm', 'kavya', 'se-10423']);
  });

  it('reads a summary made without mentions (by a policy module written before them) as each entry mentioned once, of the top tier', () => {
    const first = summarize(base({ summaryTokens: 200 }));
    const { mentions: _, ...older } = first.summary;
    const r = summarize(base({ summaryTokens: 200, previous: older as typeof first.summary, folded: t2 }));
    expect([...r.summary.mentions]).toEqual([
      ['kavya', { count: 1, lastTurn: 1 }],
      ['se-10423', { count: 1, lastTurn: 1 }],
      ['8 pm', { count: 1, lastTurn: 1 }],
      ['kavya@old.example', { count: 1, lastTurn: 2, tier: 2 }],
    ]);
  });

  it('reads the text it is given: a span of an exchange not folded is not known, and draws nothing', () => {
    // Only turn 2 is folded: its one span, the e-mail, is the one candidate and takes the one draw (0.2 < 0.5);
    // Kavya, SE-10423 and 8 pm are in turn 1, which is not folded here (a second draw would throw).
    const r = summarize(base({ keep: 0.5, random: draws(0.2), summaryTokens: 200, folded: t2 }));
    expect([...r.summary.facts]).toEqual([['kavya@old.example', 'kavya@old.example']]);
    expect(r.summary.message.content).toContain('(turn 2). Known: kavya@old.example.');
  });
});
