import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTokenCounter, TokenCounter } from '../src/tokens/counter.js';
import { encodingForModel, textCounter, TOKENIZERS } from '../src/tokens/encoding.js';
import { UsageError } from '../src/errors.js';
import type { Message, Role } from '../src/types.js';
import { ROOT, sharedData, skipReason } from './_shared.js';

const fixture = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/cookbook-messages.json'), 'utf8')) as {
  messages: { role: Role; content: string; name?: string }[];
};
const messages: Message[] = fixture.messages;

describe('OpenAI cookbook token counts', () => {
  it('counts 129 with cl100k_base', () => {
    expect(new TokenCounter('cl100k_base').prompt(messages)).toBe(129);
  });

  it('counts 124 with o200k_base', () => {
    expect(new TokenCounter('o200k_base').prompt(messages)).toBe(124);
  });

  it('encodes "tiktoken is great!" to 6 cl100k tokens', () => {
    expect(textCounter('cl100k_base')('tiktoken is great!')).toBe(6);
  });

  it('textCounter refuses a name that is not an OpenAI encoding at once, naming what it takes (a JavaScript caller, or encodingForModel’s whole result)', () => {
    const message = 'textCounter: "llama3.1" is not an OpenAI encoding (o200k_base, cl100k_base, chars4): count an open-weight tokenizer with openTokenCounter(name)';
    expect(() => textCounter('llama3.1' as 'o200k_base')).toThrow(new UsageError(message));
    expect(() => textCounter(encodingForModel('gpt-4o-mini', 'auto') as unknown as 'o200k_base')).toThrow(/^textCounter: \{"name":"o200k_base","estimate":false\} is not an OpenAI encoding/);
  });

  it('openTokenCounter refuses what is not a tokenizer at once, saying where a name comes from', () => {
    expect(() => openTokenCounter(encodingForModel('gpt-4o-mini', 'auto') as unknown as 'o200k_base')).toThrow(
      new UsageError(`openTokenCounter: {"name":"o200k_base","estimate":false} is not a tokenizer (${TOKENIZERS.join(', ')}); encodingForModel(model, tokenizer).name is one`),
    );
    expect(openTokenCounter(encodingForModel('gpt-4o-mini', 'auto').name).text('tiktoken is great!')).toBe(6);
  });

  it('adds 3 per message, role, content, name + 1, and 3 reply priming', () => {
    const t = new TokenCounter('o200k_base');
    const sys: Message = { role: 'system', content: 'Be brief.' };
    const user: Message = { role: 'user', content: 'Hi', name: 'bob' };
    // 3 + role(system)=1 + "Be brief."=3  ;  3 + role(user)=1 + "Hi"=1 + name "bob"=1 + 1  ;  + 3 priming
    expect(t.text('system')).toBe(1);
    expect(t.text('Be brief.')).toBe(3);
    expect(t.prompt([sys, user])).toBe(3 + 1 + 3 + (3 + 1 + 1 + 1 + 1) + 3);
  });

  const real = sharedData('tiktoken_cookbook_example/example_counts.json');
  it.skipIf(!real)(real ? 'matches the counts printed in the real cookbook data' : skipReason('tiktoken_cookbook_example'), () => {
    const data = JSON.parse(readFileSync(real!, 'utf8'));
    const msgs: Message[] = data.num_tokens_from_messages.example_messages;
    for (const row of data.num_tokens_from_messages.printed_counts_current_version) {
      const enc = encodingForModel(row.model).name;
      expect(new TokenCounter(enc).prompt(msgs), row.model).toBe(row.api);
    }
  });
});

describe('model → encoding', () => {
  it.each([
    ['gpt-4o-mini', 'o200k_base', false],
    ['gpt-4.1', 'o200k_base', false],
    ['o3-mini', 'o200k_base', false],
    ['gpt-4', 'cl100k_base', false],
    ['gpt-3.5-turbo', 'cl100k_base', false],
    ['claude-3-5-haiku-20241022', 'o200k_base', true],
  ])('%s → %s (estimate: %s)', (model, name, estimate) => {
    expect(encodingForModel(model)).toEqual({ name, estimate });
  });

  it('an explicit tokenizer wins; an unknown one is a usage error', () => {
    expect(encodingForModel('gpt-4', 'chars4').name).toBe('chars4');
    expect(() => encodingForModel('gpt-4', 'p50k')).toThrow('tokenizer: unknown tokenizer "p50k"');
  });
});

describe('special-token strings are ordinary text', () => {
  it('counts <|endoftext|> as its seven ordinary tokens, never the one special token, without throwing', () => {
    // As text: "<", "|", "endo"/"end", … ">" — 7 tokens in both encodings; the special token would be 1.
    expect(new TokenCounter('cl100k_base').text('<|endoftext|>')).toBe(7);
    expect(new TokenCounter('o200k_base').text('<|endoftext|>')).toBe(7);
    expect(new TokenCounter('cl100k_base').text('before <|endoftext|> after')).toBe(8);
    expect(new TokenCounter('o200k_base').text('<|endoftext|><|im_start|>')).toBe(12);
  });
});

describe('chars4', () => {
  it('is max(1, floor(len/4)) with no overhead', () => {
    const t = new TokenCounter('chars4');
    expect(t.text('')).toBe(1);
    expect(t.text('abc')).toBe(1);
    expect(t.text('abcdefgh')).toBe(2);
    expect(t.prompt([{ role: 'user', content: 'abcdefghi' }])).toBe(2);
  });
});
