import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORRECTIONS, snapshot } from '../scripts/gen-prices.mjs';
import { builtinPrices } from '../src/pricing/load.js';
import { baseModel, outlierText, priceOutliers } from '../src/pricing/outliers.js';
import { compileTable, lookup, rawEntries, type PriceTable } from '../src/pricing/prices.js';
import { cli } from './_io.js';
import { ROOT, itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A price is held to the others of the same base model and to a sane
 * magnitude: one at least 100× the median of the same model elsewhere, or
 * above $1,000 per million tokens, is an outlier. The builtin snapshot
 * corrects the entries LiteLLM itself corrected (its pull request 38167),
 * which are exactly the outliers of the table it was made from.
 */

/** A price table of entries `model: [input, output]` (USD per million tokens). */
function table(entries: Record<string, [number, number]>): PriceTable {
  const raw = Object.fromEntries(Object.entries(entries).map(([m, [i, o]]) => [m, { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: i / 1e6, output_cost_per_token: o / 1e6 }]));
  return compileTable(rawEntries(raw), { date: 'd', source: 's' }, (model) => ({ file: 'f', path: model, message: '' }));
}

const outliers = (t: PriceTable, models?: string[]) => priceOutliers(t, models).map(outlierText);

describe('the same base model', () => {
  it('is the name without where it is served from: provider, publisher, Bedrock region and vendor, version suffixes', () => {
    const same = [
      ['wandb/Qwen/Qwen3-235B-A22B-Instruct-2507', 'qwen3-235b-a22b-instruct-2507'],
      ['deepinfra/Qwen/Qwen3-235B-A22B-Instruct-2507', 'qwen3-235b-a22b-instruct-2507'],
      ['us.anthropic.claude-3-haiku-20240307-v1:0', 'claude-3-haiku-20240307'],
      ['anthropic.claude-3-haiku-20240307-v1:0', 'claude-3-haiku-20240307'],
      ['claude-3-haiku-20240307', 'claude-3-haiku-20240307'],
      ['vertex_ai/claude-3-haiku@20240307', 'claude-3-haiku'],
      ['ai21.j2-mid-v1', 'j2-mid'],
      ['amazon.nova-pro-v1:0', 'nova-pro'],
      ['meta.llama3-70b-instruct-v1:0', 'llama3-70b-instruct'],
      ['gemini/gemini-1.5-flash', 'gemini-1.5-flash'],
    ];
    expect(same.map(([name]) => [name, baseModel(name!)])).toEqual(same);
  });

  it('keeps versions, sizes and variants apart: a distinct model is never held to another’s price', () => {
    const kept = ['qwen2.5-72b-instruct', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-3.5-turbo', 'qwen3-235b-a22b:free', 'llama3:70b', 'qwen3-235b-a22b-instruct-2507-tput'];
    expect(kept.map((n) => baseModel(`openrouter/qwen/${n}`))).toEqual(kept);
  });
});

describe('an outlier', () => {
  it('is at least 100× the median of the same model elsewhere (both figures said), or above $1,000 per million tokens', () => {
    const t = table({
      'a/m': [0.1, 0.4],
      'b/m': [0.2, 0.6],
      'c/m': [0.3, 0.8],
      // 100× the median of the three others ($0.20) in, 99× out.
      'd/m': [20, 59.4],
      'e/solo': [1200, 1000],
    });
    expect(outliers(t)).toEqual([
      'd/m: input $20 per million tokens, 100× the median of the same model elsewhere ($0.20, over 3 entries)',
      'e/solo: input $1,200 per million tokens, above $1,000 per million tokens',
    ]);
    // Just below: 99.9×; the magnitude rule is "above", so $1,000 itself is sane.
    expect(outliers(table({ 'a/m': [0.2, 1], 'd/m': [19.98, 1] }))).toEqual([]);
  });

  it('of two entries, only the dear one is; a price of 0 (free, or not known) is never one, and is no part of a median', () => {
    expect(outliers(table({ 'a/m': [0.5, 1], 'b/m': [500, 1] }))).toEqual(['b/m: input $500 per million tokens, 1,000× the median of the same model elsewhere ($0.50, over 1 entry)']);
    expect(outliers(table({ 'a/m': [0, 0], 'b/m': [0, 0], 'c/m': [0.5, 1] }))).toEqual([]);
  });

  it('is looked for among the models asked about, when they are named', () => {
    const t = table({ 'a/m': [0.5, 1], 'b/m': [500, 1], 'c/n': [1, 2] });
    expect(outliers(t, ['c/n', 'nope'])).toEqual([]);
    expect(outliers(t, ['b/m'])).toHaveLength(1);
  });
});

describe('the builtin snapshot', () => {
  it('has no outlier: the entries LiteLLM corrected are corrected, with their source in its header', () => {
    expect(priceOutliers(builtinPrices())).toEqual([]);
    const meta = JSON.parse(readFileSync(join(ROOT, 'src', 'pricing', 'builtin-prices.json'), 'utf8'))._meta;
    expect(meta.corrected).toBe(`16 entries as LiteLLM pull request 38167 (its issue 23503) corrected them: ${Object.keys(CORRECTIONS.entries).sort().join(', ')}`);
    // $0.10 per million tokens, as on the other providers, not $10,000.
    const q = lookup(builtinPrices(), 'wandb/Qwen/Qwen3-235B-A22B-Instruct-2507');
    expect([q.input, q.output]).toEqual([100_000n, 100_000n]);
    const j = lookup(builtinPrices(), 'azure_ai/jais-30b-chat');
    expect([j.input, j.output]).toEqual([3_200_000n, 9_710_000n]);
  });

  it('corrects an entry only while the source holds the wrong value', () => {
    const entry = (input: number) => ({ 'wandb/openai/gpt-oss-20b': { litellm_provider: 'wandb', mode: 'chat', input_cost_per_token: input, output_cost_per_token: 2e-7 } });
    const wrong = snapshot(entry(0.005), '2026-01-01');
    expect(wrong.corrected).toEqual(['wandb/openai/gpt-oss-20b']);
    expect(wrong.text).toContain('"wandb/openai/gpt-oss-20b": {"litellm_provider":"wandb","mode":"chat","input_cost_per_token":5e-8,"output_cost_per_token":2e-7}');
    const fixed = snapshot(entry(6e-8), '2026-01-01');
    expect(fixed.corrected).toEqual([]);
    expect(fixed.text).toContain('"input_cost_per_token":6e-8');
    expect(fixed.text).not.toContain('corrected');
  });

  itShared('litellm_prices/model_prices_and_context_window.json', 'the outliers of the LiteLLM table it was made from are exactly the entries LiteLLM corrected', (path) => {
    const upstream = compileTable(rawEntries(JSON.parse(readFileSync(path, 'utf8'))), { date: 'd', source: 's' }, (model) => ({ file: path, path: model, message: '' }));
    expect([...new Set(priceOutliers(upstream).map((o) => o.model))].sort()).toEqual(Object.keys(CORRECTIONS.entries).sort());
    expect(outlierText(priceOutliers(upstream, ['wandb/Qwen/Qwen3-235B-A22B-Instruct-2507'])[0]!)).toBe(
      'wandb/Qwen/Qwen3-235B-A22B-Instruct-2507: input $10,000 per million tokens, 64,516× the median of the same model elsewhere ($0.155, over 4 entries), and above $1,000 per million tokens',
    );
  });
});

describe('on the command line', () => {
  const file = () => {
    const f = join(tempDir('ctxsim-prices-'), 'p.json');
    writeFileSync(f, JSON.stringify({ 'our-finetune': { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: 0.0003, output_cost_per_token: 0.0012 }, 'gpt-4o-mini': { input_cost_per_token: 0.15 } }));
    return f;
  };

  it('ctxsim prices --check lists every outlier of the table in use', async () => {
    const builtin = await cli('prices', '--check');
    expect(builtin).toEqual({ code: 0, err: '', out: 'prices: builtin (LiteLLM table of 2026-03-11) · 2,068 entries checked\nno price looks wrong (at least 100× the median of the same model elsewhere, or above $1,000 per million tokens)\n' });
    const f = file();
    const r = await cli('prices', '--check', '--prices', f);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        `prices: builtin + ${f} (LiteLLM table of 2026-03-11) · 2,069 entries checked`,
        '2 prices look wrong (at least 100× the median of the same model elsewhere, or above $1,000 per million tokens):',
        'gpt-4o-mini: input $150,000 per million tokens, 1,000,000× the median of the same model elsewhere ($0.15, over 5 entries), and above $1,000 per million tokens',
        'our-finetune: output $1,200 per million tokens, above $1,000 per million tokens',
        '',
      ].join('\n'),
    );
  });

  it('a run warns of each outlier it would use before any work, one line each', async () => {
    const f = file();
    const out = join(tempDir('ctxsim-prices-'), 'turns.csv');
    const r = await cli('run', '--scenario', join(ROOT, 'scenarios', 'noah-amnesia.yaml'), '--policy', 'full', '--prices', f, '--out', out, '--quiet');
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      [
        'ctxsim: warning: price of gpt-4o-mini: input $150,000 per million tokens, 1,000,000× the median of the same model elsewhere ($0.15, over 5 entries), and above $1,000 per million tokens: a unit mistake in the price table? (ctxsim prices --check lists every such price)',
        'ctxsim: warning: price of our-finetune: output $1,200 per million tokens, above $1,000 per million tokens: a unit mistake in the price table? (ctxsim prices --check lists every such price)',
        '',
      ].join('\n'),
    );
  });
});
