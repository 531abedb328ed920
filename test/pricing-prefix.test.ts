import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PrefixCache, sameMessage } from '../src/pricing/prompt-cache.js';
import type { Message } from '../src/types.js';

/** A pool of messages: a prompt is a list of indices into it (equal index = same object; equal text too). */
const POOL: Message[] = Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i % 4}` }));
const size = (m: Message) => 100 + 37 * Number(m.content.slice(1));

/** How many leading messages two prompts share (the same role and text). */
function commonPrefix(a: readonly Message[], b: readonly Message[]): number {
  let i = 0;
  while (i < Math.min(a.length, b.length) && sameMessage(a[i]!, b[i]!)) i++;
  return i;
}

describe('automatic prefix cache', () => {
  it('caches the tokens of the prefix shared with the previous call, whatever the prompts (growing or not)', () => {
    const call = fc.record({ prompt: fc.array(fc.integer({ min: 0, max: POOL.length - 1 }), { maxLength: 40 }), gap: fc.integer({ min: 0, max: 400 }) });
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 12 }), fc.boolean(), (calls, grow) => {
        const cache = new PrefixCache({ minTokens: 1024, step: 128 }, 300);
        let time = 0;
        let previous: { messages: Message[]; time: number } | undefined;
        let history: Message[] = [];
        for (const c of calls) {
          time += c.gap;
          // Half the cases grow one transcript (the shortcut's case), half send unrelated prompts.
          const messages = grow ? (history = [...history, ...c.prompt.map((i) => POOL[i]!)]) : c.prompt.map((i) => POOL[i]!);
          // Definition: tokens of the shared leading messages, 0 under 1,024 or after 300 s, else down to a multiple of 128.
          let expected = 0;
          if (previous && time - previous.time <= 300) {
            const p = messages.slice(0, commonPrefix(messages, previous.messages)).reduce((a, m) => a + size(m), 0);
            expected = p < 1024 ? 0 : Math.floor(p / 128) * 128;
          }
          expect(cache.call(messages, time, size)).toBe(expected);
          previous = { messages, time };
        }
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
