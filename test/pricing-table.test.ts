import {readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import type { IO } from '../src/cli/_io.js';
import { ScenarioError, UsageError } from '../src/errors.js';
import { builtinPrices, BUILTIN_DATE, loadPrices } from '../src/pricing/load.js';
import { lookup } from '../src/pricing/prices.js';
import { explicitMinTokens } from '../src/pricing/cache-rules.js';
import { priceFile } from './_pricing.js';
import { tempDir } from './_tmp.js';

function capture(): IO & { stdout: string; stderr: string } {
  const io = { stdout: '', stderr: '', isTTY: false, out: (t: string) => void (io.stdout += t), err: (t: string) => void (io.stderr += t) };
  return io;
}

/** The one-line error a bad price file gives. */
function problem(text: string): string {
  const dir = tempDir('ctxsim-prices-');
  const file = join(dir, 'p.json');
  writeFileSync(file, text);
  try {
    loadPrices(file);
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.replaceAll(file, 'p.json');
    throw e;
  }
  return 'no error';
}

describe('the builtin table', () => {
  const t = builtinPrices();

  it('is dated from the LiteLLM snapshot and says how it was generated', () => {
    expect(BUILTIN_DATE).toBe('2026-03-11');
    expect(t.date).toBe('2026-03-11');
    const header = JSON.parse(readFileSync(new URL('../src/pricing/builtin-prices.json', import.meta.url), 'utf8'))._meta;
    expect(header.generatedBy).toBe('scripts/gen-prices.mjs');
    expect(header.sourceDate).toBe('2026-03-11');
    expect(header.regenerate).toMatch(/^npm run gen:prices/);
  });

  it('holds LiteLLM prices as exact pico-dollars per token', () => {
    // gpt-4o-mini: $0.15/M in = 1.5e-7 USD = 150,000 pico; $0.60/M out; cached $0.075/M.
    const m = lookup(t, 'gpt-4o-mini');
    expect([m.input, m.output, m.cacheRead, m.maxInputTokens, m.cacheRule.kind]).toEqual([150_000n, 600_000n, 75_000n, 128_000, 'automatic']);
    expect(lookup(t, 'gpt-3.5-turbo').maxInputTokens).toBe(16_385);
    expect(lookup(t, 'gpt-3.5-turbo').cacheRule.kind).toBe('none');
    expect(lookup(t, 'text-embedding-3-small').mode).toBe('embedding');
    // LiteLLM's 0 means "not known": no window is applied.
    expect(lookup(t, 'vercel_ai_gateway/openai/text-embedding-3-small').maxInputTokens).toBeUndefined();
  });

  it('selects the cache rule from the provider', () => {
    const rule = (m: string) => lookup(t, m).cacheRule;
    expect(rule('claude-sonnet-4-5')).toEqual({ kind: 'explicit', minTokens: 1024 });
    expect(rule('claude-3-5-haiku-20241022')).toEqual({ kind: 'explicit', minTokens: 2048 });
    expect(rule('claude-haiku-4-5')).toEqual({ kind: 'explicit', minTokens: 4096 });
    expect(rule('anthropic.claude-3-5-haiku-20241022-v1:0')).toEqual({ kind: 'explicit', minTokens: 2048 });
    expect(rule('vertex_ai/claude-opus-4-6')).toEqual({ kind: 'explicit', minTokens: 4096 });
    expect(rule('gemini/gemini-2.5-flash')).toEqual({ kind: 'automatic', minTokens: 1024, step: 128 });
    // Anthropic's listed prices: write $1.25/M (1.25×), read $0.10/M (0.1×), 1-hour write $2/M (2×).
    const h = lookup(t, 'claude-haiku-4-5');
    expect([h.input, h.cacheWrite, h.cacheRead, h.cacheWrite1h]).toEqual([1_000_000n, 1_250_000n, 100_000n, 2_000_000n]);
  });

  it('knows Anthropic’s minimum cacheable lengths', () => {
    expect(['claude-opus-4-1', 'claude-sonnet-4-6', 'claude-3-7-sonnet-latest'].map(explicitMinTokens)).toEqual([1024, 1024, 1024]);
    expect(['claude-3-haiku-20240307', 'openrouter/anthropic/claude-3.5-haiku'].map(explicitMinTokens)).toEqual([2048, 2048]);
    expect(['claude-opus-4-5', 'claude-opus-4.6', 'claude-haiku-4-5-20251001'].map(explicitMinTokens)).toEqual([4096, 4096, 4096]);
  });

  it('names the three closest models for an unknown one', () => {
    expect(() => lookup(t, 'gpt-4o-mni')).toThrow(new UsageError('unknown model "gpt-4o-mni" (closest: gpt-4o-mini, gpt-4.1-mini, gpt-5-mini)'));
  });
});

describe('a user price table', () => {
  it('overrides builtin models field by field and adds new ones', () => {
    const t = loadPrices(
      priceFile({
        'gpt-4o-mini': { max_input_tokens: 2000 },
        'my-model': { litellm_provider: 'custom', mode: 'chat', input_cost_per_token: 0.000003, output_cost_per_token: 0.000004 },
        sample_spec: { input_cost_per_token: 'ignored' },
      }),
    );
    const mini = lookup(t, 'gpt-4o-mini');
    expect([mini.input, mini.cacheRead, mini.maxInputTokens]).toEqual([150_000n, 75_000n, 2000]);
    expect(lookup(t, 'my-model').input).toBe(3_000_000n);
    expect(lookup(t, 'my-model').cacheRule.kind).toBe('none');
    expect(t.source).toMatch(/^builtin \+ .*prices\.json$/);
    expect(t.userModels).toEqual(['gpt-4o-mini', 'my-model']);
    expect(lookup(t, 'gpt-4o').input).toBe(2_500_000n);
  });

  it('a field written null is left out: a builtin model keeps its price, its cache rule and its window (not an output price of 0)', () => {
    const t = loadPrices(
      priceFile({
        'gpt-4o': { input_cost_per_token: 0.000003, output_cost_per_token: null, cache_read_input_token_cost: null, max_input_tokens: null },
        'my-model': { input_cost_per_token: null, output_cost_per_token: 0.000004 },
      }),
    );
    const g = lookup(t, 'gpt-4o');
    expect([g.input, g.output, g.cacheRule.kind, g.cacheRead, g.maxInputTokens]).toEqual([3_000_000n, 10_000_000n, 'automatic', 1_250_000n, 128_000]);
    expect(() => lookup(t, 'my-model')).toThrow(/^model "my-model": the price table \(builtin \+ .*prices\.json\) has no input_cost_per_token for it; add one with --prices FILE$/);
  });

  it('rejects a negative price, naming the file, line, model and field', () => {
    expect(problem('{\n  "bad": {"input_cost_per_token": -0.001, "output_cost_per_token": 0}\n}\n')).toBe(
      'p.json:2:35 bad.input_cost_per_token: expected a price in USD per token (a number ≥ 0), got -0.001',
    );
  });

  it('rejects NaN (as Python writes it) and text', () => {
    expect(problem('{"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": NaN}}')).toBe(
      'p.json:1:63 m.output_cost_per_token: expected a price in USD per token (a number ≥ 0), got "NaN"',
    );
    expect(problem('{"m": {"input_cost_per_token": "cheap"}}')).toBe(
      'p.json:1:32 m.input_cost_per_token: expected a price in USD per token (a number ≥ 0), got "cheap"',
    );
  });

  it('rejects a model name with a control or invisible format character (it is printed in every table, chart and log), escaped in the message', () => {
    expect(problem('{"m\\u001b[2J": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}, "n\\u202e": {}, "o\\n::error::x": {}}').split('\n')).toEqual([
      'p.json:1:16 m\\x1b[2J: a model name may not hold control or invisible format characters',
      'p.json:1:90 n\\u202e: a model name may not hold control or invisible format characters',
      'p.json:1:111 o\\x0a::error::x: a model name may not hold control or invisible format characters',
    ]);
  });

  it('rejects a cache read dearer than input', () => {
    expect(problem('{"gpt-4o": {"cache_read_input_token_cost": 0.00001}}')).toBe(
      'p.json:1:44 gpt-4o.cache_read_input_token_cost: cache read (0.00001) is dearer than input_cost_per_token (0.0000025)',
    );
  });

  it('rejects a bad context window and lists every problem', () => {
    const msg = problem('{"a": {"input_cost_per_token": -1, "max_input_tokens": 1.5}, "b": {"input_cost_per_token": 0, "output_cost_per_token": -2}}');
    expect(msg.split('\n')).toEqual([
      'p.json:1:32 a.input_cost_per_token: expected a price in USD per token (a number ≥ 0), got -1',
      'p.json:1:56 a.max_input_tokens: expected a whole number of tokens ≥ 0, got 1.5',
      'p.json:1:120 b.output_cost_per_token: expected a price in USD per token (a number ≥ 0), got -2',
    ]);
  });

  it('refuses a table of another shape, which would price nothing: the models one level down, or none', () => {
    const said = ': a LiteLLM-format table maps each model\'s name, at its top, to its entry {input_cost_per_token, output_cost_per_token, …}';
    expect(problem(JSON.stringify({ _source: { note: 'x' }, models: { 'gpt-4o-mini': { input_cost_per_token: 1e-6 } } }))).toBe(`p.json:1:1: holds no model's entry (its keys: _source, models)${said}`);
    expect(problem('{}')).toBe(`p.json:1:1: holds no model's entry${said}`);
  });

  it('says so when a listed model has no per-token price', () => {
    const t = loadPrices(priceFile({ 'per-char': { mode: 'chat', input_cost_per_character: 1e-7 } }));
    expect(() => lookup(t, 'per-char')).toThrow(/model "per-char": the price table \(builtin \+ .*\) has no input_cost_per_token for it/);
  });
});

describe('the CLI', () => {
  const out = () => tempDir('ctxsim-out-');

  it('exits 2 with the closest names for an unknown model', async () => {
    const io = capture();
    expect(await runMain(['run', '--quiet', '--model', 'gpt-4o-mni', '--out', out()], io)).toBe(2);
    expect(io.stderr).toBe('ctxsim: --model: unknown model "gpt-4o-mni" (closest: gpt-4o-mini, gpt-4.1-mini, gpt-5-mini)\n');
  });

  it('exits 2 on an impossible price, naming model and field', async () => {
    const io = capture();
    const file = priceFile({ 'gpt-4o-mini': { output_cost_per_token: -1 } });
    expect(await runMain(['run', '--quiet', '--prices', file, '--out', out()], io)).toBe(2);
    expect(io.stderr).toMatch(/^ctxsim: .*prices\.json:\d+:\d+ gpt-4o-mini\.output_cost_per_token: expected a price in USD per token \(a number ≥ 0\), got -1\n$/);
  });

  it('runs with --prices and prices every call from the user table', async () => {
    const io = capture();
    const dir = out();
    // Free input, $1 per output token: the cost is the output token count in dollars.
    const file = priceFile({ 'gpt-4o-mini': { input_cost_per_token: 0, output_cost_per_token: 1, cache_read_input_token_cost: 0 } });
    // turns.csv's content alone (no report folder's charts).
    expect(await runMain(['run', '--quiet', '--prices', file, '--policy', 'full', '--tokenizer', 'chars4', '--out', join(dir, 'turns.csv')], io)).toBe(0);
    const rows = readFileSync(join(dir, 'turns.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
    for (const r of rows) expect(r[10]).toBe(`${r[6]}.00000000`);
  });
});
