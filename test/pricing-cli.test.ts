import {writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import type { IO } from '../src/cli/_io.js';
import { perMillion } from '../src/report/prices.js';
import { tempDir } from './_tmp.js';

function capture(): IO & { stdout: string; stderr: string } {
  const io = { stdout: '', stderr: '', isTTY: false, out: (t: string) => void (io.stdout += t), err: (t: string) => void (io.stderr += t) };
  return io;
}

describe('ctxsim prices', () => {
  it('prints prices per million tokens, context window, cache rule, latency and the table date', async () => {
    const io = capture();
    expect(await runMain(['prices', 'gpt-4o-mini', 'claude-haiku-4-5', 'gpt-3.5-turbo', 'text-embedding-3-small'], io)).toBe(0);
    expect(io.stdout).toBe(
      [
        'prices: builtin (LiteLLM table of 2026-03-11) · cache: auto, ttl 5m',
        'model                   provider   mode       input $/1M  cached $/1M  write $/1M  output $/1M  context  cache rule                                  ttft ms  prefill tok/s  decode tok/s  tokenizer    counts',
        'gpt-4o-mini             openai     chat             0.15        0.075           -         0.60   128000  auto prefix ≥1024, 128-token steps, ttl 5m      300           8000           100  o200k_base   exact',
        'claude-haiku-4-5        anthropic  chat             1.00         0.10        1.25         5.00   200000  breakpoints per call ≥4096, ttl 5m              300           8000           100  o200k_base   estimate',
        'gpt-3.5-turbo           openai     chat             0.50            -           -         1.50    16385  none                                            500           4000            50  cl100k_base  exact',
        'text-embedding-3-small  openai     embedding        0.02            -           -         0.00     8191  none                                             50          20000             -  -            -',
        '',
      ].join('\n'),
    );
  });

  it('shows the models, cache settings and latency overrides of a study', async () => {
    const dir = tempDir('ctxsim-study-');
    writeFileSync(join(dir, 'p.json'), JSON.stringify({ 'my-model': { litellm_provider: 'custom', input_cost_per_token: 0.000001, output_cost_per_token: 0.000002 } }));
    writeFileSync(
      join(dir, 'study.yaml'),
      [
        'model: gpt-4o-mini',
        'prices: p.json',
        'cacheTtl: 1h',
        'route: {light: gpt-4o-mini, strong: claude-haiku-4-5, strongWhen: {userTokensOver: 60}}',
        'fallback: {model: gpt-4o, rate: 0.01}',
        'latency: {gpt-4o: {ttftMs: 900}}',
        '',
      ].join('\n'),
    );
    const io = capture();
    expect(await runMain(['prices', '--study', join(dir, 'study.yaml')], io)).toBe(0);
    const lines = io.stdout.split('\n');
    expect(lines[0]).toMatch(/^prices: builtin \+ .*p\.json \(LiteLLM table of 2026-03-11\) · cache: auto, ttl 1h$/);
    expect(lines.slice(2, -1).map((l) => l.split(/ {2,}/)[0])).toEqual(['gpt-4o-mini', 'claude-haiku-4-5', 'gpt-4o', 'text-embedding-3-small', 'my-model']);
    // A TTL above five minutes takes Anthropic's 1-hour tier: writes at $2/M.
    expect(lines[3]).toMatch(/^claude-haiku-4-5 +anthropic +chat +1\.00 +0\.10 +2\.00 +5\.00 +200000 +breakpoints per call ≥4096, ttl 1h \(1h writes\) /);
    expect(lines[4]).toMatch(/^gpt-4o +openai .* ttl 1h +900 +4000 +50 +o200k_base +exact$/);
  });

  it('checks the study’s cost keys, listing every problem', async () => {
    const dir = tempDir('ctxsim-study-');
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'cacheTtl: soon\nfallback: {model: gpt-4o, rate: 2}\nroute: {light: a, strong: b}\nlatency: {gpt-4o: {ttft: 3}}\n');
    const io = capture();
    expect(await runMain(['prices', '--study', file], io)).toBe(2);
    expect(io.stderr.replaceAll(file, 'bad.yaml').split('\n')).toEqual([
      'ctxsim: bad.yaml:1:11 cacheTtl: expected a duration such as 300s or 5m, got "soon"',
      'ctxsim: bad.yaml:3:8 route.strongWhen: required but missing',
      'ctxsim: bad.yaml:2:33 fallback.rate: expected a number ≤ 1, got 2',
      'ctxsim: bad.yaml:4:20 latency.gpt-4o.ttft: unknown key "ttft"',
      '',
    ]);
  });

  it('exits 2 for a name nothing matches, naming the closest ones', async () => {
    const io = capture();
    expect(await runMain(['prices', 'claude-haiku-4.7'], io)).toBe(2);
    expect(io.stderr).toBe('ctxsim: no model matches "claude-haiku-4.7" (closest: claude-haiku-4-5, openrouter/anthropic/claude-haiku-4.5, vercel_ai_gateway/anthropic/claude-haiku-4.5)\n');
    expect(io.stdout).toBe('');
  });

  /** The model column of a prices table. */
  const models = (stdout: string) => stdout.split('\n').slice(2, -1).map((l) => l.split(' ')[0]!);

  it('a part of a name shows every model that holds it, case ignored, sorted', async () => {
    const io = capture();
    expect(await runMain(['prices', 'Claude-Haiku-4.5'], io)).toBe(0);
    expect(models(io.stdout)).toEqual(['openrouter/anthropic/claude-haiku-4.5', 'vercel_ai_gateway/anthropic/claude-haiku-4.5']);
  });

  it('a glob matches whole names, * across slashes; an exact name is that model only', async () => {
    const io = capture();
    expect(await runMain(['prices', 'groq/*', 'gpt-4o'], io)).toBe(0);
    const shown = models(io.stdout);
    expect(shown.at(-1)).toBe('gpt-4o');
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.slice(0, -1).every((m) => m.startsWith('groq/'))).toBe(true);
    expect(shown).toContain('groq/meta-llama/llama-4-scout-17b-16e-instruct');
    const none = capture();
    expect(await runMain(['prices', 'groq/*zzz'], none)).toBe(2);
    expect(none.stderr).toBe('ctxsim: no model matches "groq/*zzz"\n');
  });

  it('an unknown model suggests the names that hold it, not short unrelated ones', async () => {
    const io = capture();
    expect(await runMain(['run', '--model', 'llama', '--no-token-cache', '--out', '-'], io)).toBe(2);
    expect(io.stderr).toBe('ctxsim: --model: unknown model "llama" (closest: ollama/llama2, ollama/llama3, ollama/llama3.1)\n');
  });

  it('formats $ per million tokens with at least two decimals', () => {
    expect([perMillion(150_000n), perMillion(75_000n), perMillion(10_000_000n), perMillion(20_000n), perMillion(1n)]).toEqual([
      '0.15',
      '0.075',
      '10.00',
      '0.02',
      '0.000001',
    ]);
  });
});
