import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * maxUpkeepCost stops a recording once its billed cost reaches the cap: no
 * request is sent after that (with concurrency above 1, only those already
 * in flight finish), and the stop message counts every response recorded and
 * their cost, as the recording's journal holds them (the cassette is written
 * when a recording completes). A local OpenAI-compatible server
 * bills every extraction 55,000 input tokens, $0.055 at the extractor's
 * price of $1 per million input tokens.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml');
const BILLED = 55_000;

let server: Server;
let url = '';
/** Requests the server received. */
let received = 0;
/** Answers wait until this many requests are in (or a while has passed): requests sent at once are all in flight together. */
let hold = 1;
/** Tokens of each request the server says it read from its cache (part of the BILLED input). */
let cachedTokens = 0;
const waiting: (() => void)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      received++;
      const answer = () => {
        if (res.headersSent) return;
        const body = JSON.parse(raw || '{}') as { model?: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${received}`,
            object: 'chat.completion',
            created: 0,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'none' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: BILLED, completion_tokens: 0, total_tokens: BILLED, ...(cachedTokens && { prompt_tokens_details: { cached_tokens: cachedTokens } }) },
          }),
        );
      };
      if (req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      if (received >= hold) {
        answer();
        for (const go of waiting.splice(0)) go();
      } else {
        waiting.push(answer);
        setTimeout(answer, 1500);
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));
beforeEach(() => {
  received = 0;
  hold = 1;
  cachedTokens = 0;
});
afterEach(() => vi.unstubAllEnvs());

/** A study recording the fixture's six extractions through the server. */
function project(upkeep: string): string {
  const dir = tempDir();
  copyFileSync(SCENARIO, join(dir, 'scenario.yaml'));
  writeFileSync(
    join(dir, 'prices.json'),
    JSON.stringify({ 'test-extractor': { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000001, max_input_tokens: 128000 } }),
  );
  writeFileSync(
    join(dir, 'study.yaml'),
    ['scenarios: [scenario.yaml]', 'prices: prices.json', 'policies:', '  - facts: {extractModel: test-extractor}', `upkeep: {mode: record, baseURL: '${url}', ${upkeep}}`, ''].join('\n'),
  );
  return dir;
}

/** Records; `lines` are the journal's when the recording stopped, else the cassette's (the journal gone). */
async function record(dir: string): Promise<{ code: number; stderr: string; lines: string[] }> {
  const io = capture();
  vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
  const code = await runMain(['run', join(dir, 'study.yaml'), '--upkeep', 'record', '--out', join(dir, 'out'), '--no-token-cache'], io);
  const cassette = join(dir, 'upkeep.cassette.jsonl');
  const journal = `${cassette}.journal`;
  expect(existsSync(code ? journal : cassette)).toBe(true);
  expect(existsSync(code ? cassette : journal)).toBe(false);
  const lines = readFileSync(code ? journal : cassette, 'utf8').trimEnd().split('\n');
  return { code, stderr: io.stderr, lines };
}

/** What a cassette's lines were billed, in USD at the extractor's price. */
const billed = (lines: string[]) => lines.reduce((n, l) => n + (JSON.parse(l) as { usage: { input: number } }).usage.input, 0) * 0.000001;

describe('maxUpkeepCost stops a recording once its billed cost reaches it', () => {
  it('sends nothing after the response that reaches the cap, and counts one response in the singular', async () => {
    const dir = project('concurrency: 1, maxUpkeepCost: 0.05');
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(received).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.stderr).toMatch(/^ctxsim: upkeep: the recording reached maxUpkeepCost \$0\.05 after 1 response \(\$0\.0550\); the response received is kept in \S*upkeep\.cassette\.jsonl\.journal: run the same command again to carry on\n$/m);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('counts every response recorded and their cost, as the journal holds them', async () => {
    const dir = project('concurrency: 1, maxUpkeepCost: 0.12');
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(received).toBe(3);
    expect(r.lines).toHaveLength(3);
    expect(billed(r.lines).toFixed(4)).toBe('0.1650');
    expect(r.stderr).toMatch(/^ctxsim: upkeep: the recording reached maxUpkeepCost \$0\.12 after 3 responses \(\$0\.1650\); the 3 responses received are kept in \S*upkeep\.cassette\.jsonl\.journal: run the same command again to carry on\n$/m);
  });

  it('stops when the cost equals the cap', async () => {
    const dir = project('concurrency: 1, maxUpkeepCost: 0.11');
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(received).toBe(2);
    expect(r.lines).toHaveLength(2);
    expect(r.stderr).toMatch(/after 2 responses \(\$0\.1100\); the 2 responses received are kept in \S+\.journal: run the same command again to carry on\n$/m);
  });

  it('with concurrency 3, lets the requests in flight finish, sends no other, and counts them all', async () => {
    hold = 3;
    const dir = project('concurrency: 3, maxUpkeepCost: 0.05');
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(received).toBe(3);
    expect(r.lines).toHaveLength(3);
    expect(r.stderr).toMatch(/^ctxsim: upkeep: the recording reached maxUpkeepCost \$0\.05 after 3 responses \(\$0\.1650\); the 3 responses received are kept in \S+\.journal: run the same command again to carry on\n$/m);
  });

  it('recording again carries on from the kept responses', async () => {
    const dir = project('concurrency: 1, maxUpkeepCost: 0.12');
    expect((await record(dir)).lines).toHaveLength(3);
    received = 0;
    const r = await record(dir);
    // The last three responses reach the cap again, but nothing is left to send: the recording is complete.
    expect(received).toBe(3);
    expect(r.lines).toHaveLength(6);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^upkeep: \S*upkeep\.cassette\.jsonl\.journal holds 3 responses of a recording that did not finish: carrying on from them$/m);
    expect(r.stderr).toMatch(/^upkeep: recorded 3 responses for \$0\.1650 into \S*upkeep\.cassette\.jsonl \(3 were there already\)$/m);
    expect(existsSync(join(dir, 'out'))).toBe(true);
  });

  it('counts the tokens the provider read from its cache at the cache-read price, as it bills them', async () => {
    // 5,000 uncached tokens at $1 per million and 50,000 cached at $0.10 per million: $0.01 a response, not $0.055.
    cachedTokens = 50_000;
    const dir = project('concurrency: 1, maxUpkeepCost: 0.05');
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(received).toBe(5);
    expect(JSON.parse(r.lines[0]!)).toMatchObject({ usage: { input: BILLED, cached: 50_000, output: 0 } });
    expect(r.stderr).toMatch(/after 5 responses \(\$0\.0500\); the 5 responses received are kept in \S+\.journal: run the same command again to carry on\n$/m);
  });
});
