import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openTokenCounter, PromptTokens } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';

/** Distinct message objects with different token counts; a prompt is a list of indices into the pool. */
const POOL: Message[] = Array.from({ length: 8 }, (_, i) => ({ role: i % 3 ? 'assistant' : 'user', content: `message ${i} ${'word '.repeat(i * 3)}` }));

describe('prompt token sums', () => {
  it('equal TokenCounter.prompt for every prompt of a session, growing, shrinking or unrelated', () => {
    const tokens = openTokenCounter('o200k_base', false);
    const prompt = fc.array(fc.integer({ min: 0, max: POOL.length - 1 }), { maxLength: 30 });
    fc.assert(
      fc.property(fc.array(fc.tuple(prompt, fc.boolean()), { minLength: 1, maxLength: 15 }), (calls) => {
        const sums = new PromptTokens(tokens);
        let history: Message[] = [];
        for (const [indices, grow] of calls) {
          // Half the calls extend the previous prompt (the shortcut's case), half start afresh.
          const messages = grow ? (history = [...history, ...indices.map((i) => POOL[i]!)]) : (history = indices.map((i) => POOL[i]!));
          expect(sums.count(messages)).toBe(tokens.prompt(messages));
        }
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it('equal TokenCounter.prompt when a window slides: the same head, a later part of the previous prompt, new messages', () => {
    const tokens = openTokenCounter('o200k_base', false);
    const indices = fc.array(fc.integer({ min: 0, max: POOL.length - 1 }), { maxLength: 12 });
    const step = fc.record({ head: fc.integer({ min: 0, max: 3 }), drop: fc.nat(10), keep: fc.nat(30), added: indices, fresh: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 20 }), (steps) => {
        const sums = new PromptTokens(tokens);
        let previous: Message[] = [];
        for (const s of steps) {
          const head = previous.slice(0, s.head);
          const kept = s.fresh ? [] : previous.slice(s.head + s.drop, s.head + s.drop + s.keep);
          const messages = (previous = [...head, ...kept, ...s.added.map((i) => POOL[i]!)]);
          expect(sums.count(messages)).toBe(tokens.prompt(messages));
        }
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it('counts a slid window from the previous sums: only the messages new to it are looked up', () => {
    const tokens = openTokenCounter('o200k_base', false);
    const sums = new PromptTokens(tokens);
    const [system, ...rest] = POOL;
    sums.count([system!, ...rest.slice(0, 5)]);
    let looked = 0;
    const message = tokens.message.bind(tokens);
    tokens.message = (m) => (looked++, message(m));
    const slid = [system!, ...rest.slice(2, 7)];
    expect(sums.count(slid)).toBe(tokens.prompt(slid));
    // 2 looked up by the sums (rest[5], rest[6]), then 6 by the reference prompt() call.
    expect(looked).toBe(2 + 6);
  });

  it('counts a grown prompt from the previous sum: only the new messages are looked up', () => {
    const tokens = openTokenCounter('o200k_base', false);
    const sums = new PromptTokens(tokens);
    const first = POOL.slice(0, 5);
    sums.count(first);
    let looked = 0;
    const message = tokens.message.bind(tokens);
    tokens.message = (m) => (looked++, message(m));
    expect(sums.count([...first, POOL[5]!, POOL[6]!])).toBe(tokens.prompt([...first, POOL[5]!, POOL[6]!]));
    // 2 looked up by the sums, then 7 by the reference prompt() call.
    expect(looked).toBe(2 + 7);
  });
});

describe('a sentence after a space', () => {
  it('counts " " + sentence, joining and looking it up once per scenario', () => {
    const tokens = openTokenCounter('o200k_base', false);
    const sentences = ['The user gave no further details.', 'Known: name: Kavya.', 'x', ''];
    for (const s of sentences) expect(tokens.afterSpace(s)).toBe(tokens.text(` ${s}`));
    let looked = 0;
    const text = tokens.text.bind(tokens);
    tokens.text = (t) => (looked++, text(t));
    for (const s of sentences) tokens.afterSpace(s);
    expect(looked).toBe(0);
    // A new scenario starts afresh (the run still knows each count by key).
    tokens.forgetScenario();
    for (const s of sentences) tokens.afterSpace(s);
    expect(looked).toBe(sentences.length);
  });
});
