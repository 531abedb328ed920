import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { TokenizerName } from '../src/tokens/encoding.js';
import { padTo } from '../src/upkeep/pad.js';

/**
 * A recorded upkeep's stand-in for a missing response is padded with filler
 * words to the response's most tokens. `padTo` guesses the number of words
 * and checks the guess; the reference below is the search it replaced
 * (halving from 4 × the room, one count of the whole padded text each step),
 * which it must match on every text, target and tokenizer.
 */
function reference(tokens: TokenCounter, text: string, target: number): string {
  const padded = (n: number) => text + ' x'.repeat(n);
  let lo = 0;
  let hi = Math.max(0, target - tokens.text(text)) * 4;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (tokens.text(padded(mid)) <= target) lo = mid;
    else hi = mid - 1;
  }
  return padded(lo);
}

/** Pieces texts are made of: words, the filler itself, endings that join the next piece or not (spaces, newlines, apostrophes, digits), other scripts. */
const PIECES = ['the', ' summary', ' x', 'x', ' ', '  ', '\n', '\r\n', '\t', "'", "'s", ' 42', '7', '.', ',', '-', ' (', ')', 'É', ' Σ', 'ς', ' 日本語', '🙂', ' ', 'SE-10423', ' kavya@new.example'];

const textArb = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((p) => p.join('')),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
);

const counters = new Map<string, TokenCounter>();
/** One counter per tokenizer and factor, shared by the runs (counts do not depend on what was counted before). */
function counter(name: TokenizerName, factor: number): TokenCounter {
  const key = `${name} ${factor}`;
  let c = counters.get(key);
  if (!c) counters.set(key, (c = new TokenCounter(name, undefined, undefined, undefined, factor)));
  return c;
}

describe('padTo', () => {
  it('gives what the halving search gave, for OpenAI encodings and chars4, with and without a token factor (property)', () => {
    fc.assert(
      fc.property(
        textArb,
        fc.integer({ min: 0, max: 400 }),
        fc.constantFrom<TokenizerName>('o200k_base', 'cl100k_base', 'chars4'),
        fc.constantFrom(1, 0.7, 1.3),
        (text, target, name, factor) => {
          const tokens = counter(name, factor);
          expect(padTo(tokens, text, target)).toBe(reference(tokens, text, target));
        },
      ),
      { seed: 42, numRuns: 600 },
    );
  });

  it('gives what the halving search gave for larger targets, as stand-ins of summaries are (property)', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 400, max: 2500 }), fc.constantFrom<TokenizerName>('o200k_base', 'chars4'), (text, target, name) => {
        const tokens = counter(name, 1);
        expect(padTo(tokens, text, target)).toBe(reference(tokens, text, target));
      }),
      { seed: 7, numRuns: 60 },
    );
  });

  it('gives what the halving search gave with open-weight tokenizers (property)', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 0, max: 300 }), fc.constantFrom<TokenizerName>('llama3.1', 'gemma3', 'mistral-v3'), (text, target, name) => {
        const tokens = counter(name, 1);
        expect(padTo(tokens, text, target)).toBe(reference(tokens, text, target));
      }),
      { seed: 42, numRuns: 150 },
    );
  });

  it('pads to the target with two counts of padded text when the guess is right (o200k_base)', () => {
    const tokens = new TokenCounter('o200k_base');
    const text = vi.spyOn(tokens, 'text');
    // "Hello world" is 2 tokens and each " x" one more: 8 words make 10.
    expect(padTo(tokens, 'Hello world', 10)).toBe(`Hello world${' x'.repeat(8)}`);
    // The text, 64 words alone, then 8 words (fit) and 9 (do not).
    expect(text.mock.calls.map(([t]) => t)).toEqual(['Hello world', ' x'.repeat(64), `Hello world${' x'.repeat(8)}`, `Hello world${' x'.repeat(9)}`]);
  });

  it('counts a word as half a token with chars4, and leaves a text at or over the target as it is', () => {
    const tokens = new TokenCounter('chars4');
    // floor((8 + 2n) / 4) ≤ 5 up to n = 7 (22 characters, 5 tokens); n = 8 makes 6.
    expect(padTo(tokens, 'abcdefgh', 5)).toBe(`abcdefgh${' x'.repeat(7)}`);
    expect(padTo(tokens, 'abcdefgh', 2)).toBe('abcdefgh');
    expect(padTo(tokens, 'abcdefgh', 1)).toBe('abcdefgh');
  });
});
