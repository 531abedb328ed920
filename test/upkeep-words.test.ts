import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contentWords, normalize, words } from '../src/text/normalize.js';

/** The rule `words` implements, as the regex it replaces. */
const reference = (text: string) => text.toLowerCase().replace(/’/g, "'").match(/[\p{L}\p{N}]+(?:['\-@.][\p{L}\p{N}]+)*/gu) ?? [];

describe('words', () => {
  it('keeps identifiers whole and drops punctuation (hand-worked)', () => {
    expect(words("Hi, I'm Kavya. Order SE-10423 → kavya@new.example… it’s 3.5x-ish!")).toEqual([
      'hi',
      "i'm",
      'kavya',
      'order',
      'se-10423',
      'kavya@new.example',
      "it's",
      '3.5x-ish',
    ]);
    // A joiner needs a letter or digit after it; non-ASCII letters and digits count, astral ones too.
    expect(words("end. -x 'quoted' a--b Ünïcode ½ 𝐀𝐁c")).toEqual(['end', 'x', 'quoted', 'a', 'b', 'ünïcode', '½', '𝐀𝐁c']);
    expect(contentWords('Can you check my order?')).toEqual(['check', 'order']);
    // The first 2 topic words without a digit; stopwords and rejected words do not count.
    expect(contentWords('The order SE-10423 for blue socks and a refund', 2, (w) => !/\d/.test(w))).toEqual(['order', 'blue']);
    expect(contentWords('order socks', 0)).toEqual([]);
  });

  it('finds the same words as the regex on any text', () => {
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      // ASCII and other letters side by side, so the ASCII shortcut and the code-point path meet mid-word;
      // astral non-letters (😀) and lone surrogates of either half must be stepped over whole.
      fc.constantFrom('.', '-', '@', "'", '’', ' ', 'a', 'Z', '9', 'é', 'İ', '½', '𝐀', '\ud835', '\udc00', '😀', '١', 'ß', 'Aé', '-x', 'x.', "It’s", 'x’y'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(words(text)).toEqual(reference(text));
      }),
      { seed: 42, numRuns: 2000 },
    );
  });

  it('normalizes as lower case with every whitespace run one space, trimmed', () => {
    expect(normalize('  Order\tSE-10423\n\nfor  Kavya ')).toBe('order se-10423 for kavya');
    const text = fc.array(fc.constantFrom('a', 'B', ' ', '  ', '\t', '\n', '\u00a0', 'İ', 'x y'), { maxLength: 20 }).map((p) => p.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(normalize(t)).toBe(t.toLowerCase().replace(/\s+/g, ' ').trim());
      }),
      { seed: 42, numRuns: 1000 },
    );
    // Every code point as whitespace (doubled between words, and at the end): the spelled-out class of `normalize` is \s.
    const wrong: string[] = [];
    for (let c = 0; c <= 0x10ffff; c += c < 0x10000 ? 1 : 0x101) {
      const t = `a${String.fromCodePoint(c).repeat(2)}b${String.fromCodePoint(c)}`;
      if (normalize(t) !== t.toLowerCase().replace(/\s+/g, ' ').trim()) wrong.push(c.toString(16));
    }
    expect(wrong).toEqual([]);
  });
});
