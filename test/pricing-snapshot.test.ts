import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { snapshot } from '../scripts/gen-prices.mjs';
import { itShared } from './_shared.js';

describe('scripts/gen-prices.mjs', () => {
  it('keeps chat and embedding models with an input price, and only the fields ctxsim uses', () => {
    const out = snapshot({
      sample_spec: { mode: 'chat', input_cost_per_token: 0 },
      last_updated: '2026-03-11T14:23:36.782104+00:00',
      'z-chat': {
        litellm_provider: 'openai',
        mode: 'chat',
        input_cost_per_token: 1e-6,
        output_cost_per_token: 2e-6,
        cache_read_input_token_cost: 5e-7,
        max_input_tokens: 1000,
        max_tokens: 10,
        supports_vision: true,
      },
      'a-embed': { litellm_provider: 'openai', mode: 'embedding', input_cost_per_token: 2e-8, output_cost_per_token: 0 },
      'image-model': { litellm_provider: 'openai', mode: 'image_generation', input_cost_per_token: 1 },
      'per-char': { litellm_provider: 'vertex', mode: 'chat', input_cost_per_character: 1e-7 },
    });
    expect(out.models).toBe(2);
    expect(out.date).toBe('2026-03-11');
    expect(out.text).toBe(
      [
        '{',
        '  "_meta": {"generatedBy":"scripts/gen-prices.mjs","source":"LiteLLM\'s model_prices_and_context_window.json","sourceDate":"2026-03-11","regenerate":"npm run gen:prices -- path/to/model_prices_and_context_window.json","content":"chat and embedding models with an input price; only the fields ctxsim uses. Do not edit by hand."},',
        '  "a-embed": {"litellm_provider":"openai","mode":"embedding","input_cost_per_token":2e-8,"output_cost_per_token":0},',
        '  "z-chat": {"litellm_provider":"openai","mode":"chat","input_cost_per_token":0.000001,"output_cost_per_token":0.000002,"cache_read_input_token_cost":5e-7,"max_input_tokens":1000}',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('needs a date', () => {
    expect(() => snapshot({})).toThrow('the source has no last_updated date: pass --date YYYY-MM-DD');
    expect(snapshot({}, '2026-01-02').date).toBe('2026-01-02');
  });

  itShared('litellm_prices/model_prices_and_context_window.json', 'the shipped snapshot is the generator’s output for the shared table', (path) => {
    const expected = snapshot(JSON.parse(readFileSync(path, 'utf8'))).text;
    expect(readFileSync(new URL('../src/pricing/builtin-prices.json', import.meta.url), 'utf8')).toBe(expected);
  });
});
