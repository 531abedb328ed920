import { describe, expect, it } from 'vitest';
import { runStudy } from '../src/engine/run.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { counterId, textMeasure } from '../src/tokens/encoding.js';
import { REFERENCE_UNICODE, runtimeUnicode, unicodeUnsure, unsurePattern } from '../src/tokens/unicode.js';
import { conversation, variant } from './_policies.js';

/** Which texts are flagged depends on the runtime's Unicode version: the exact expectations hold on Unicode 17.0 (Node 20.20). */
const UNICODE_17 = runtimeUnicode() === '17.0';

/** A Telugu letter of Unicode 17.0 (U+0C5C), unassigned in the reference's 16.0: 4 tokens in tiktoken, 3 in js-tiktoken. */
const TELUGU17 = '\u0C5C=W';

/**
 * Counts by OpenAI's tiktoken: the `tiktoken` npm package 1.0.22 (a WASM
 * build of OpenAI's Rust core, regex-syntax 0.8.5: Unicode 16.0), measured
 * with `encode(text, [], []).length`. Texts flagged unsure are counted by
 * js-tiktoken on this runtime (Unicode 17.0 on Node 20.20), which may differ.
 */
const REFERENCE: readonly { text: string; o200k: number; cl100k: number; unsure: boolean }[] = [
  { text: 'Hello, world! The year is 2024.', o200k: 11, cl100k: 11, unsure: false },
  { text: '中文字符测试，日本語のテキスト。', o200k: 10, cl100k: 14, unsure: false },
  { text: 'Emoji: 😀👍🏽 👨‍👩‍👧 🇫🇷', o200k: 18, cl100k: 27, unsure: false },
  { text: 'Café déjà vu — naïve façade, Ωμέγα, Привет', o200k: 15, cl100k: 21, unsure: false },
  { text: 'తెలుగు భాష', o200k: 4, cl100k: 18, unsure: false },
  // U+1CCF0, a digit of Unicode 16.0: known to the reference.
  { text: 'Hello\u{1CCF0}=W', o200k: 6, cl100k: 6, unsure: false },
  { text: TELUGU17, o200k: 4, cl100k: 4, unsure: true },
  // A byte-order mark: \s in JavaScript, not White_Space in the Rust engines (4 tokens in js-tiktoken for o200k_base).
  { text: '\uFEFF=W', o200k: 3, cl100k: 3, unsure: true },
  // U+0085 (NEL): White_Space in the Rust engines, not \s in JavaScript.
  { text: 'x\u0085 y', o200k: 4, cl100k: 4, unsure: true },
  // U+0295: Ll up to Unicode 16.0, Lo from 17.0.
  { text: 'ʕ•ᴥ•ʔ hi', o200k: 9, cl100k: 10, unsure: true },
];

describe('Unicode versions: texts the reference may split otherwise are flagged', () => {
  it.runIf(UNICODE_17)('flags code points the reference classes differently, and only those', () => {
    expect(REFERENCE_UNICODE).toBe('16.0');
    expect(unicodeUnsure(TELUGU17)).toBe(true);
    expect(unicodeUnsure('\uFEFF')).toBe(true);
    expect(unicodeUnsure('\u0085')).toBe(true);
    expect(unicodeUnsure('\u0295')).toBe(true);
    for (const text of ['', 'plain ASCII text, with digits 123 and\ttabs\n', '中文。日本語', '😀👍🏽🇫🇷', 'naïve Ωμέγα Привет', '\u00a0\u3000']) {
      expect(unicodeUnsure(text), JSON.stringify(text)).toBe(false);
    }
    // Unassigned in both the reference and the runtime: classed alike (neither letter, number nor space).
    expect(unicodeUnsure('\u0378\u{E0080}')).toBe(false);
  });

  it('the list shipped for this runtime’s version agrees with set operations on its own tables', () => {
    const listed = unsurePattern(runtimeUnicode());
    const general = unsurePattern('unknown');
    const onlyListed: string[] = [];
    const onlyGeneral: string[] = [];
    for (let c = 0; c <= 0x10ffff; c++) {
      const ch = String.fromCodePoint(c);
      const l = listed.test(ch);
      if (l !== general.test(ch)) (l ? onlyListed : onlyGeneral).push(c.toString(16));
    }
    expect(onlyListed).toEqual([]);
    // The general pattern also flags U+0295 on any version, and code points newly assigned to no class (a format character, say).
    if (UNICODE_17) expect(onlyGeneral).toEqual([]);
  });

  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    it(`${name}: counts equal the reference's unless flagged`, () => {
      const measure = textMeasure(name);
      const got = REFERENCE.map(({ text }) => measure(text));
      if (UNICODE_17) expect(got.map((c) => c.estimated)).toEqual(REFERENCE.map((r) => r.unsure));
      for (const [i, r] of REFERENCE.entries()) {
        if (!got[i]!.estimated) expect(got[i]!.tokens, r.text).toBe(name === 'o200k_base' ? r.o200k : r.cl100k);
      }
    });
  }

  it.runIf(UNICODE_17)('a Unicode 17 Telugu text: 3 tokens, flagged as an estimate (tiktoken counts 4)', () => {
    expect(textMeasure('o200k_base')(TELUGU17)).toEqual({ tokens: 3, estimated: true });
  });

  it.runIf(UNICODE_17)('a counter flags the messages that hold such a text, and a turn holding one has estimated tokens', () => {
    const t = new TokenCounter('o200k_base');
    const hi = { role: 'user' as const, content: 'Hi there' };
    const telugu = { role: 'user' as const, content: `Letter: ${TELUGU17}` };
    t.prompt([hi, telugu]);
    expect(t.estimated(telugu)).toBe(true);
    expect(t.estimated(hi)).toBe(false);
    expect(t.estimatedIn([hi])).toBe(false);

    const r = runStudy({
      conversations: [
        conversation({
          id: 'telugu',
          turns: [
            { user: 'Hi, a question about Telugu.', assistant: 'Sure.' },
            { user: `What is ${TELUGU17}?`, assistant: 'A letter of Unicode 17.' },
          ],
        }),
      ],
      policies: [variant('full')],
      seed: 1,
      models: ['gpt-4o-mini'],
      tokenizer: 'o200k_base',
    });
    expect(r.turns.map((x) => `${x.turn}:${x.estimatedTokens}`)).toEqual(['1:false', '2:true']);
  });

  it('the token cache key names the runtime’s and the reference’s Unicode versions', () => {
    const id = counterId('o200k_base');
    expect(id).toContain(`unicode@${process.versions.unicode}`);
    expect(id).toContain(`reference-unicode@${REFERENCE_UNICODE}`);
  });
});
