import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { runStudy } from '../src/engine/run.js';
import { turnsCsv } from '../src/records/csv.js';
import { BoundedCounter, countByPieces, estimateTokens, LIMITS } from '../src/tokens/bounded.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { textMeasure, tokenizer } from '../src/tokens/encoding.js';
import { conversation, variant } from './_policies.js';
import { ROOT } from './_shared.js';
import { CASES, caseKey, caseText, KINDS } from './fixtures/tokens/long-inputs.mjs';

/** Exact counts computed offline by scripts/long-inputs-exact.mjs (minutes each). */
const exact = (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/tokens/long-inputs.json'), 'utf8')) as { counts: Record<string, { tokens: number }> })
  .counts;

/** Base64 and hex split into short pieces (digits come in threes at most), so they stay exact. */
const SPLIT_BY_THE_PATTERN = new Set(['base64', 'hex']);

describe('long inputs: estimates within 2% of the exact counts computed offline', () => {
  for (const c of CASES.filter((x) => x.use === 'test')) {
    const expected = exact[caseKey(c)]!.tokens;
    const flagged = !SPLIT_BY_THE_PATTERN.has(c.kind);
    it(`${c.encoding} ${c.name}: ${expected} tokens, ${flagged ? 'estimated' : 'exact'}`, () => {
      const text = caseText(c);
      const r = textMeasure(c.encoding)(text);
      expect(r.estimated).toBe(flagged);
      if (c.kind === 'dna') expect(textMeasure(c.encoding)(text), 'deterministic').toEqual(r);
      if (!r.estimated) expect(r.tokens).toBe(expected);
      expect(Math.abs(r.tokens - expected) / expected).toBeLessThan(0.02);
    });
  }
});

/** Characters that exercise every branch of both patterns: cases, digits, contractions, marks, CJK, emoji, whitespace kinds. */
const tricky = fc.constantFrom(
  ...['a', 'b', 'Z', 'Q', 'é', '\u0301', '1', '7', "'", 's', 'S', 't', 'l', 'd', 'm', 'r', 'e', 'v', ' ', ' ', '  ', '\n', '\r\n', '\t', '\u00a0', '\u3000'],
  ...['!', '?', '.', ',', '/', '-', '=', '(', ')', '"', '_', '#', '中', '文', '字', '。', '，', 'こ', 'ん', '😀', '🇫🇷', 'Ω', 'ß', '<|endoftext|>'],
);
const trickyText = fc.array(tricky, { maxLength: 120 }).map((a) => a.join(''));
/** Also long runs, so that long pieces and segment cuts happen with small limits. */
const withRuns = fc
  .array(fc.oneof(tricky, fc.tuple(fc.constantFrom('a', 'A', ' ', '\n', '=', '中', 'G'), fc.integer({ min: 2, max: 40 })).map(([ch, n]) => ch.repeat(n))), {
    maxLength: 60,
  })
  .map((a) => a.join(''));

describe('exact counting is js-tiktoken’s count', () => {
  for (const name of ['o200k_base', 'cl100k_base'] as const) {
    const { encodeLength, pattern } = tokenizer(name);

    it(`${name}: a text is the sum of its distinct pieces, each encoded alone (property)`, () => {
      fc.assert(
        fc.property(trickyText, (text) => {
          expect(countByPieces(encodeLength, pattern, text)).toBe(encodeLength(text));
        }),
        { seed: 42, numRuns: 300 },
      );
    });

    for (const segment of [1, 8]) {
      it(`${name}: with budget for everything, ${segment}-byte segments and long pieces add up to the exact count (property)`, () => {
        // Tiny segments and long-piece threshold: cuts after (nearly) every piece, many long pieces.
        const limits = { ...LIMITS, budget: Number.MAX_SAFE_INTEGER, longPiece: 6, segment };
        fc.assert(
          fc.property(withRuns, (text) => {
            expect(estimateTokens(encodeLength, pattern, text, limits)).toBe(encodeLength(text));
          }),
          { seed: 42, numRuns: 300 },
        );
      });
    }
  }

  it('ordinary prose too long for one call is counted exactly, each distinct piece once', () => {
    const { encodeLength, pattern } = tokenizer('o200k_base');
    // 300,000 characters: about 70,000 pieces, over the budget as one call; about 1,000 distinct, well within it.
    const prose = KINDS.prose!(seedrandom('prose'), 300_000);
    const seen: string[] = [];
    const counter = new BoundedCounter(() => ({
      encodeLength: (t) => {
        seen.push(t);
        return encodeLength(t);
      },
      pattern,
    }));
    expect(counter.count(prose)).toEqual({ tokens: encodeLength(prose), estimated: false });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeLessThan(2000);
  });

  it('short texts are counted piece by piece, each distinct piece through the tokenizer once across texts', () => {
    const { encodeLength, pattern } = tokenizer('o200k_base');
    const calls: string[] = [];
    const counter = new BoundedCounter(() => ({
      encodeLength: (t) => {
        calls.push(t);
        return encodeLength(t);
      },
      pattern,
    }));
    const texts = ['Hello world, my order is A-1234.', 'hello world again', 'Hello  world\n\nmy order is A-1234!', 'word '.repeat(60), `${'x'.repeat(70)} world`];
    for (const t of texts) expect(counter.count(t)).toEqual({ tokens: encodeLength(t), estimated: false });
    expect(new Set(calls).size).toBe(calls.length);
    // " world" was met in the first text: later texts do not send it again.
    expect(calls.filter((c) => c === ' world')).toHaveLength(1);
    // A piece longer than the memo's limit is encoded each time it is met.
    counter.count(`${'x'.repeat(70)}`);
    expect(calls.filter((c) => c === 'x'.repeat(70))).toHaveLength(2);
  });

  it('counts piece by piece equal js-tiktoken on whole texts, whatever was counted before (property)', () => {
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const { encodeLength } = tokenizer(name);
      const counter = new BoundedCounter(() => tokenizer(name));
      fc.assert(
        fc.property(fc.oneof(trickyText, withRuns), (text) => {
          expect(counter.count(text)).toEqual({ tokens: encodeLength(text), estimated: false });
        }),
        { seed: 7, numRuns: 400 },
      );
    }
  });
});

describe('estimated_tokens on turn rows', () => {
  const dna = KINDS.dna!(seedrandom('paste'), 20_000);
  const conv = conversation({
    id: 'paste',
    turns: [
      { user: 'Hi, can you look at a sequence?', assistant: 'Sure, paste it.' },
      { user: `Here it is:\n${dna}`, assistant: 'It is mostly GC-poor.' },
      { user: 'Thanks!', assistant: 'You are welcome.' },
    ],
  });

  it('flags the turns whose prompt holds an estimated message, in the rows and in turns.csv', () => {
    const r = runStudy({
      conversations: [conv],
      policies: [variant('full'), variant('window-turns:turns=1')],
      seed: 1,
      models: ['gpt-4o-mini'],
      tokenizer: 'o200k_base',
    });
    const flags = r.turns.map((t) => `${t.policy}:${t.turn}:${t.estimatedTokens}`);
    // full keeps the paste in every later prompt; window-turns:turns=1 keeps turn 2 in turn 3's prompt, not beyond.
    expect(flags).toEqual([
      'full:1:false',
      'full:2:true',
      'full:3:true',
      'window-turns:turns=1:1:false',
      'window-turns:turns=1:2:true',
      'window-turns:turns=1:3:true',
    ]);
    const csv = turnsCsv(r).trimEnd().split('\n');
    const column = csv[0]!.split(',').indexOf('estimated_tokens');
    expect(column).toBeGreaterThan(0);
    expect(csv.slice(1).map((l) => l.split(',')[column])).toEqual(['false', 'true', 'true', 'false', 'true', 'true']);
  });

  it('a counter knows which messages were estimated', () => {
    const t = new TokenCounter('o200k_base');
    const paste = conv.turns[1]!.user;
    const hi = conv.turns[0]!.user;
    t.prompt([hi, paste]);
    expect(t.estimated(paste)).toBe(true);
    expect(t.estimated(hi)).toBe(false);
    expect(t.estimatedIn([hi])).toBe(false);
    expect(t.estimatedIn([hi, paste])).toBe(true);
  });
});
