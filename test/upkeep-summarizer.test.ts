import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { dropOrder } from '../src/upkeep/mentions.js';
import { summaryInstruction } from '../src/upkeep/prompts.js';
import { summarize, type SummarizeRequest } from '../src/upkeep/summarizer.js';

const tokens = new TokenCounter('chars4');
const t1: Message[] = [
  { role: 'user', content: "Hi, I'm Kavya. My order SE-10423 hasn't arrived.", turn: 1 }, // 48 chars → 12
  { role: 'assistant', content: 'Sorry Kavya! It is out for delivery and should arrive by 8 pm.', turn: 1 }, // 62 chars → 15
];
const t2: Message[] = [
  { role: 'user', content: 'My email is kavya@old.example.', turn: 2 },
  { role: 'assistant', content: 'Thanks, noted.', turn: 2 },
];
const t3: Message[] = [
  { role: 'user', content: 'Sorry, it is kavya@new.example now.', turn: 3 },
  { role: 'assistant', content: 'Updated.', turn: 3 },
];
const hidden = ['Kavya', 'SE-10423', 'kavya@old.example', 'kavya@new.example'];

/** A scripted stream: the draws a test wants, in order. */
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
  stated: [
    ['name', 'Kavya'],
    ['order_id', 'SE-10423'],
  ],
  hidden,
  ...over,
});

describe('simulated summarizer', () => {
  it('states the kept facts and pads to about summaryTokens (hand-worked, chars4)', () => {
    const r = summarize(base({}));
    // header "Summary of the conversation so far (turn 1)." 44 → 11; " Known: …SE-10423." 40 → 10: 21 used.
    // The turn-1 topic sentence (107 chars → 26) would make 47 > 40, so it is left out; padding
    // " The conversation stayed polite throughout." 43 → 10 (31) and " Nothing else needed a follow-up." 33 → 8 (39) fit,
    // the next (8) would not. Text: 44 + 40 + 43 + 33 = 160 chars → 40 tokens.
    expect(r.summary.message).toEqual({
      role: 'system',
      origin: 'summary',
      content:
        'Summary of the conversation so far (turn 1). Known: name: Kavya; order_id: SE-10423. ' +
        'The conversation stayed polite throughout. Nothing else needed a follow-up.',
    });
    // in: template (187 chars → 46) + 12 + 15 = 73; out: 40
    expect(summaryInstruction(40).content.length).toBe(187);
    expect(r.call).toEqual({ kind: 'summary', model: 'gpt-4o-mini', inputTokens: 73, outputTokens: 40, sync: true });
  });

  it('writes a sentence per exchange when there is room, without fact values in it', () => {
    const r = summarize(base({ summaryTokens: 60 }));
    // 21 + topic 26 = 47, + padding 10 = 57; next padding 8 → 65 > 60. 234 chars → 58 tokens.
    expect(r.summary.message.content).toBe(
      'Summary of the conversation so far (turn 1). Known: name: Kavya; order_id: SE-10423. ' +
        'In turn 1 the user asked about order arrived, and the assistant answered about sorry delivery arrive 8 pm. ' +
        'The conversation stayed polite throughout.',
    );
    expect(r.call.outputTokens).toBe(58);
    expect(r.summary.topics).toEqual(['In turn 1 the user asked about order arrived, and the assistant answered about sorry delivery arrive 8 pm.']);
  });

  it('leaves out a topic word only when it contains a fact value word, taken literally', () => {
    // Hidden word "v1.2": "v1x2" would match it as a pattern ("." = any character) but does not contain it.
    const folded: Message[] = [
      { role: 'user', content: 'Firmware v1.2 bricked, v1x2 works, also myv1.2copy', turn: 1 },
      { role: 'assistant', content: 'Noted.', turn: 1 },
    ];
    const r = summarize(base({ summaryTokens: 200, folded, stated: [], hidden: ['v1.2'] }));
    expect(r.summary.topics).toEqual(['In turn 1 the user asked about firmware bricked v1x2 works, and the assistant answered about noted.']);
  });

  it('keeps each fact with probability keep, and a lost fact appears nowhere in the text', () => {
    // draws: 0.2 < 0.5 keeps name; 0.8 loses order_id
    const r = summarize(base({ keep: 0.5, random: draws(0.2, 0.8), summaryTokens: 200 }));
    expect([...r.summary.facts]).toEqual([['name', 'Kavya']]);
    expect(r.summary.message.content).toContain('Known: name: Kavya.');
    expect(r.summary.message.content.toLowerCase()).not.toContain('se-10423');
    // keep 0: nothing known, and the folded text's values are scrubbed from the topic sentences.
    const none = summarize(base({ keep: 0, summaryTokens: 200 }));
    expect(none.summary.message.content).toContain('Known: nothing specific yet.');
    expect(none.summary.message.content.toLowerCase()).not.toMatch(/kavya|se-10423/);
    expect(none.summary.message.content).toContain('asked about order arrived');
  });

  it('compounds loss: a fact lost once is gone from every later summary', () => {
    const first = summarize(base({ keep: 0.5, random: draws(0.1, 0.9) })); // name kept, order_id lost
    // Second fold: candidates name (old) then email (new); draws 0.1 keep, 0.1 keep. order_id is not a candidate any more.
    const second = summarize(base({ keep: 0.5, random: draws(0.1, 0.1), previous: first.summary, folded: t2, stated: [['email', 'kavya@old.example']] }));
    expect([...second.summary.facts]).toEqual([
      ['name', 'Kavya'],
      ['email', 'kavya@old.example'],
    ]);
    // Third fold: name drawn 0.7 → lost; email replaced by its new value, drawn 0.1 → kept.
    const third = summarize(base({ keep: 0.5, random: draws(0.7, 0.1), previous: second.summary, folded: t3, stated: [['email', 'kavya@new.example']] }));
    expect([...third.summary.facts]).toEqual([['email', 'kavya@new.example']]);
    const text = third.summary.message.content.toLowerCase();
    expect(text).not.toMatch(/kavya@old|se-10423|name:/);
    expect(text).toContain('(turns 1-3)');
    // in: template 46 + old summary + folded turn 3 (35 chars → 8, "Updated." → 2)
    expect(third.call.inputTokens).toBe(46 + tokens.text(second.summary.message.content) + 8 + 2);
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

  it('drops the facts that do not fit: the fewest-mentioned first, then the one stated longest ago (hand-worked, chars4)', () => {
    // code stated in turns 1 and 3 (2 mentions), room in turn 2, desk in turn 3 (1 mention each): room goes first, then desk.
    const folded: Message[] = [
      { role: 'user', content: 'My code is alpha-one.', turn: 1 },
      { role: 'user', content: 'Room bravo-two.', turn: 2 },
      { role: 'user', content: 'Desk charlie-three, and again alpha-one.', turn: 3 },
    ];
    const stated = [['code', 'alpha-one', 1], ['room', 'bravo-two', 2], ['desk', 'charlie-three', 3], ['code', 'alpha-one', 3]] as const;
    const at = (summaryTokens: number) => summarize(base({ summaryTokens, folded, stated, hidden: ['alpha-one', 'bravo-two', 'charlie-three'] }));
    // Header "Summary of the conversation so far (turns 1-3)." 47 chars → 11; the sentence sums " Known:" 7 → 1,
    // " code: alpha-one;" 17 → 4, " room: bravo-two;" 17 → 4, " desk: charlie-three;" 21 → 5 make 25.
    // At 27 all three fit: 109 chars → 27.
    expect(at(27).summary.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: code: alpha-one; room: bravo-two; desk: charlie-three.');
    // At 25 the sums fit but the exact count (27) does not: room (1 mention, last stated in turn 2) is dropped: 92 chars → 23.
    const r25 = at(25);
    expect(r25.summary.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: code: alpha-one; desk: charlie-three.');
    expect(r25.call.outputTokens).toBe(23);
    expect([...r25.summary.facts.keys()]).toEqual(['code', 'desk']);
    expect([...r25.summary.mentions]).toEqual([
      ['code', { count: 2, lastTurn: 3 }],
      ['desk', { count: 1, lastTurn: 3 }],
    ]);
    // At 20: 11 + 1 + 4 + 5 = 21 > 20, so desk goes too; code (2 mentions) stays: 71 chars → 17.
    expect(at(20).summary.message.content).toBe('Summary of the conversation so far (turns 1-3). Known: code: alpha-one.');
    // At 10 not even the header fits: the shorter "Summary of the conversation so far." (35 chars → 8) and nothing else.
    expect(at(10).summary.message.content).toBe('Summary of the conversation so far.');
    expect(at(1).summary.message.content).toBe('Summary');
  });

  it('makes a fact stated again fresh again: a newer statement outlives an older single one', () => {
    const first = summarize(base({ summaryTokens: 200, folded: t1, stated: [['name', 'Kavya', 1], ['order_id', 'SE-10423', 1]] }));
    // Turn 2 states the name again: name has 2 mentions, order_id 1; at a size that holds one fact, order_id is dropped.
    const second = summarize(base({ summaryTokens: 16, previous: first.summary, folded: t2, stated: [['name', 'Kavya', 2]] }));
    expect([...second.summary.facts]).toEqual([['name', 'Kavya']]);
    expect(second.summary.mentions.get('name')).toEqual({ count: 2, lastTurn: 2 });
    expect(dropOrder(first.summary.facts, new Map([['name', { count: 1, lastTurn: 1 }], ['order_id', { count: 1, lastTurn: 3 }]]))).toEqual(['name', 'order_id']);
  });

  it('reads a summary made without mentions (by a policy module written before them) as each fact stated once', () => {
    const first = summarize(base({ summaryTokens: 200 }));
    const { mentions: _, ...older } = first.summary;
    const r = summarize(base({ summaryTokens: 200, previous: older as typeof first.summary, folded: t2, stated: [['email', 'kavya@old.example', 2]] }));
    expect([...r.summary.mentions]).toEqual([
      ['name', { count: 1, lastTurn: 1 }],
      ['order_id', { count: 1, lastTurn: 1 }],
      ['email', { count: 1, lastTurn: 2 }],
    ]);
  });

  it('reads the text it is given: a stated fact whose value is in none of the folded messages is not known, and draws nothing', () => {
    // t2 says kavya@old.example; the order number is in t1, which is not folded here. One draw (0.2 < 0.5) for the email only.
    const r = summarize(base({ keep: 0.5, random: draws(0.2), summaryTokens: 200, folded: t2, stated: [['order_id', 'SE-10423', 1], ['email', 'kavya@old.example', 2]] }));
    expect([...r.summary.facts]).toEqual([['email', 'kavya@old.example']]);
  });
});

