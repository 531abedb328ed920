/**
 * `TokenCounter.joined` counts a text made of a head and parts joined by
 * spaces (a fact sheet, a summary) as the sum of the parts under OpenAI's
 * encodings: that sum must be the joined text's own count, for any parts —
 * prose, numbers, contractions, punctuation at the edges, other scripts,
 * and parts with white space at their edges (which are counted whole).
 * `joinedTokens` is the same count without the text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';

const WORDS = ['hello', 'The user', "Caroline's", "it's", "'s", 'SE-10423', '12345', '1,250.75', 'iPhone 15', 'e.g.', '(see)', '"quoted"', '—', '…', 'émoji 🙂', '日本語の文', 'Ünïcödé', '/path/to', 'a/b', "don't", '!!', '?', ':', '-', "'", '\u00a0'];
const EDGES = [' leading', 'trailing ', '\n\nnewlines around\n', '\ttab', 'a\n', '\nb', '  ', '\r\n', ''];
const fragment = fc.oneof({ arbitrary: fc.constantFrom(...WORDS), weight: 12 }, { arbitrary: fc.constantFrom(...EDGES), weight: 2 });
const part = fc.tuple(fc.array(fragment, { minLength: 1, maxLength: 4 }), fc.constantFrom('', ' ', '. ')).map(([xs, glue]) => xs.join(glue));

describe.each(['o200k_base', 'cl100k_base'] as const)('joined under %s', (encoding) => {
  it('is the count of the joined text, for any head and parts', () => {
    fc.assert(
      fc.property(part, fc.array(part, { maxLength: 8 }), (head, parts) => {
        const text = [head, ...parts].join(' ');
        const tokens = new TokenCounter(encoding).text(text);
        expect(new TokenCounter(encoding).joined(head, parts)).toEqual({ text, tokens });
        expect(new TokenCounter(encoding).joinedTokens(head, parts)).toBe(tokens);
      }),
      { numRuns: 400, seed: 44 },
    );
  });

  it('remembers the joined text with its count: a prompt sending it tokenizes nothing more', () => {
    const tokens = new TokenCounter(encoding);
    const parts = ['The user is Kavya.', 'The user ordered SE-10423 on 7 May 2023.', 'Caroline attended an LGBTQ support group.'];
    const { text, tokens: n } = tokens.joined('Known facts:', parts);
    const calls = tokens.tokenizerCalls;
    expect(tokens.message({ role: 'system', content: text })).toBe(n + 3 + 1);
    expect(tokens.tokenizerCalls).toBe(calls + 1); // the role's word alone
  });
});

describe.each(['o200k_base', 'llama3'] as const)('a counted message under %s', (encoding) => {
  it('counts as the same message counted from its text, and is not looked up', () => {
    const parts = ['The user is Kavya.', 'The user ordered SE-10423 on 7 May 2023.'];
    const tokens = new TokenCounter(encoding);
    const n = tokens.joinedTokens('Known facts:', parts);
    const sheet = { role: 'system' as const, content: ['Known facts:', ...parts].join(' '), name: 'memory' };
    const fresh = new TokenCounter(encoding);
    // Told a wrong count, the counter keeps it: the message is not counted from its text.
    expect(tokens.message(tokens.counted({ ...sheet }, n + 100))).toBe(fresh.message(sheet) + 100);
    expect(tokens.message(tokens.counted(sheet, n))).toBe(fresh.message(sheet));
  });
});

describe('joined where sums are not exact', () => {
  it('counts the joined text whole under chars4 and with a factor', () => {
    const parts = ['abc', 'de', 'f'];
    expect(new TokenCounter('chars4').joined('x', parts).tokens).toBe(new TokenCounter('chars4').text('x abc de f'));
    expect(new TokenCounter('chars4').joinedTokens('x', parts)).toBe(new TokenCounter('chars4').text('x abc de f'));
    const scaled = new TokenCounter('o200k_base', undefined, undefined, undefined, 1.3);
    expect(scaled.joined('Known facts:', ['The user is Kavya.', 'The order is SE-1.']).tokens).toBe(
      new TokenCounter('o200k_base', undefined, undefined, undefined, 1.3).text('Known facts: The user is Kavya. The order is SE-1.'),
    );
  });
});
