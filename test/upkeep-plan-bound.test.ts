import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import { recordCli, recording } from './_io.js';
import { serverForFile } from './_openai-server.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * What `--dry-run` says a recording costs at most is an upper bound on what
 * the recording is billed, whatever the price table charges. The plan counts
 * each chat answer at its `max_tokens`; a request made after a summary not
 * yet recorded holds a stand-in for it, and once output is cheap nothing
 * else covers a recorded summary longer than its stand-in. Here the local
 * server counts tokens as the run does (o200k_base) and answers a summary
 * with every line of the request that holds a digit, up to `max_tokens`: its
 * summaries grow with the conversation, past what the simulated stand-ins
 * say. Prices are $0.0001 a token, so every cost is exact at four decimals.
 */

const { server, url } = serverForFile();
beforeEach(() => {
  server.reportsUsage = true;
  server.count = (text) => text.split(/\s+/).filter(Boolean).length;
});
afterEach(() => vi.unstubAllEnvs());

const PRICE = 0.0001;

/** A study of sixteen turns that each state a dozen numbers and a shipped scenario, recording through the server with `prices`. */
function project(prices: Record<string, { input: number; output: number }>, policies: string[]): string {
  const dir = tempDir();
  const turns = Array.from({ length: 16 }, (_, i) => [
    `  - user: For day ${i + 1} desk 4 room 12 team 7 floor 3 slot 9 wing 2 gate 5 lane 8 dock 6 bay 11 pier 14 zone 16 and the lunch plan`,
    `    assistant: Noted for day ${i + 1}`,
  ]);
  writeFileSync(join(dir, 'plan.yaml'), ['id: day-plan', 'user: sam', 'turns:', ...turns.flat(), ''].join('\n'));
  copyFileSync(join(ROOT, 'scenarios', 'support-email-correction.yaml'), join(dir, 'support.yaml'));
  const table = Object.fromEntries(
    Object.entries(prices).map(([model, p]) => [model, { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: p.input, output_cost_per_token: p.output, max_input_tokens: 128000 }]),
  );
  writeFileSync(join(dir, 'prices.json'), JSON.stringify(table));
  writeFileSync(
    join(dir, 'study.yaml'),
    ['scenarios: [plan.yaml, support.yaml]', 'prices: prices.json', 'policies:', ...policies.map((p) => `  - ${p}`), `upkeep: {mode: record, baseURL: '${url()}'}`, ''].join(
      '\n',
    ),
  );
  return dir;
}

const ctxsim = (args: string[]) => recordCli(recording(args));

/** The dry run's calls and most cost, in ten-thousandths of a dollar; then the recording's calls and what they were billed at `prices`, likewise. */
async function plannedAndBilled(dir: string, prices: Record<string, { input: number; output: number }>) {
  const dry = await ctxsim(['run', join(dir, 'study.yaml'), '--dry-run', '--no-token-cache']);
  expect(dry.code, dry.stderr).toBe(0);
  const [, calls, atMost] = /^a recording would send (\d+) calls .* at most \$(\d+\.\d{4}) to /.exec(dry.stdout)!;
  // Its records in one file: the cassette is what is read.
  const rec = await ctxsim(['run', join(dir, 'study.yaml'), '--out', join(dir, 'results.json'), '--no-token-cache', '--quiet']);
  expect(rec.code, rec.stderr).toBe(0);
  const entries = readFileSync(join(dir, 'upkeep.cassette.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { model: string; usage: { input: number; output: number } });
  const billed = entries.reduce((n, e) => n + e.usage.input * (prices[e.model]!.input / PRICE) + e.usage.output * (prices[e.model]!.output / PRICE), 0);
  return { planned: { calls: Number(calls), cost: Math.round(Number(atMost) / PRICE) }, recorded: { calls: entries.length, cost: billed }, entries };
}

describe('the most a recording costs, as --dry-run tells it, bounds what the recording is billed', () => {
  it('for a summarizer that charges input only: a summary sent back in a later request is counted as long as it may be', async () => {
    const o200k = new TokenCounter('o200k_base');
    server.count = (text) => o200k.text(text);
    const prices = { reader: { input: PRICE, output: 0 } };
    const dir = project(prices, ['summary: {threshold: 60, summaryTokens: 2000, summaryModel: reader}', 'summary-buffer: {budget: 800, summaryTokens: 500, summaryModel: reader}']);
    const { planned, recorded } = await plannedAndBilled(dir, prices);
    // The summaries grow past their stand-ins: counting the stand-ins as they were simulated, the plan said 50 calls and $3.2742, and 51 were billed $4.3863.
    expect(recorded.cost).toBeGreaterThan(0);
    expect(recorded.cost).toBeLessThanOrEqual(planned.cost);
    expect(recorded.calls).toBeLessThanOrEqual(planned.calls);
  });

  it('for a summarizer that charges output only, on a server that reports no usage: an answer is counted at most its max_tokens', async () => {
    // The server keeps to max_tokens in words, in which the run's tokenizer counts more: counted so, the answers were billed $0.0690 against $0.0460 planned.
    server.reportsUsage = false;
    const prices = { writer: { input: 0, output: PRICE } };
    const dir = project(prices, ['summary: {threshold: 120, summaryTokens: 20, summaryModel: writer}']);
    const { planned, recorded, entries } = await plannedAndBilled(dir, prices);
    expect(recorded.cost).toBeLessThanOrEqual(planned.cost);
    expect(entries.every((e) => e.usage.output <= 20)).toBe(true);
    expect(entries.some((e) => e.usage.output === 20)).toBe(true);
  });
});
