import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Cassette } from '../src/upkeep/cassette.js';
import { encodeVector, requestKey } from '../src/upkeep/request.js';
import { recordCli } from './_io.js';
import { serverForFile, type Answer } from './_openai-server.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * What a recording takes from an endpoint, through the command line and a
 * local server: an answer is checked by the rules of a cassette line (whole
 * token counts up to 1e9, finite vectors of one length per model, across
 * the cassette, the journal and new answers), and its body by a size limit;
 * a bad answer is exit 2 naming the endpoint, the request, the field and
 * the value, with the answers before it kept in the journal. A long
 * Retry-After is waited at most the timeout.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml');
const { server, url } = serverForFile();
beforeEach(() => {
  server.faults.length = 0;
});
afterEach(() => {
  server.tamper = undefined;
  vi.unstubAllEnvs();
});

/** A temp folder with the scenario and a study recording one request at a time through the server (`upkeep:` keys added; no retries unless they say). */
function project(policies: string[], upkeep = ', retries: 0'): string {
  const dir = tempDir();
  copyFileSync(SCENARIO, join(dir, 'scenario.yaml'));
  writeFileSync(
    join(dir, 'study.yaml'),
    ['scenarios: [scenario.yaml]', 'policies:', ...policies.map((p) => `  - ${p}`), `upkeep: {mode: record, baseURL: '${url()}', concurrency: 1${upkeep}}`, ''].join('\n'),
  );
  return dir;
}

/** The study run with \`more\` flags; recording unless they name another mode (a study file cannot open the network by itself). */
const record = (dir: string, ...more: string[]) => recordCli(['run', join(dir, 'study.yaml'), '--out', join(dir, 'out'), '--no-token-cache', '--quiet', ...(more.includes('--upkeep') ? [] : ['--upkeep', 'record']), ...more]);
const cassetteOf = (dir: string) => join(dir, 'upkeep.cassette.jsonl');
const journalOf = (dir: string) => `${cassetteOf(dir)}.journal`;
const lines = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n');
/** `url()` as a pattern. */
const at = () => url().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** An answer whose usage says `prompt_tokens` is `value`. */
const badUsage = (answer: Answer, value: unknown): Answer => ({ ...answer, usage: { ...(answer.usage as object), prompt_tokens: value } });

describe('an endpoint’s answer is checked as a cassette line is', () => {
  it.each([
    [1e308, 'expected a number ≤ 1000000000, got 1e\\+308'],
    [-4, 'expected a number ≥ 0, got -4'],
    [12.5, 'expected a whole number, got number 12\\.5'],
  ])('usage of %s tokens in the third answer: exit 2 naming the endpoint, the request, the field and the value; the two before are kept in the journal', async (value, message) => {
    const dir = project(['facts', 'retrieval: {topK: 2, recent: 1}']);
    const from = server.answered;
    server.tamper = (answer, n) => (n === from + 3 ? badUsage(answer, value) : answer);
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^ctxsim: upkeep endpoint ${at()}: (extract|embedding) by \\S+: usage\\.prompt_tokens: ${message}; the 2 responses received are kept in \\S*upkeep\\.cassette\\.jsonl\\.journal: run the same command again to carry on\\n$`),
    );
    expect(r.stdout + r.stderr).not.toContain('Infinity');
    expect(Cassette.parse('journal', readFileSync(journalOf(dir), 'utf8')).size).toBe(2);
    expect(existsSync(cassetteOf(dir))).toBe(false);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('a vector of another length than the model’s earlier answer: exit 2 naming data[0].embedding; one of another length than the cassette’s names its line', async () => {
    const dir = project(['retrieval: {topK: 2, recent: 1}']);
    let embeddings = 0;
    server.tamper = (answer) => (answer.data && ++embeddings === 2 ? { ...answer, data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 9 }, () => 1) }] } : answer);
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `^ctxsim: upkeep endpoint ${at()}: embedding by text-embedding-3-small: data\\[0\\]\\.embedding: 9 dimensions, but text-embedding-3-small's vector in an earlier response has 8 \\(a model's vectors are compared with each other\\); the response received is kept in \\S+\\.journal: run the same command again to carry on\\n$`,
      ),
    );
    expect(lines(journalOf(dir))).toHaveLength(1);

    // The cassette holds a vector of 5 values for the model: the first answer (8) is refused, naming the cassette's line; the cassette is as it was.
    const other = project(['retrieval: {topK: 2, recent: 1}']);
    const five = `${JSON.stringify({ key: requestKey({ kind: 'embed', model: 'text-embedding-3-small', input: 'elsewhere' }), kind: 'embed', model: 'text-embedding-3-small', vector: encodeVector([1, 2, 3, 4, 5]), usage: { input: 1, output: 0 } })}\n`;
    writeFileSync(cassetteOf(other), five);
    const refused = await record(other);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/: data\[0\]\.embedding: 8 dimensions, but text-embedding-3-small's vector on line 1 of \S*upkeep\.cassette\.jsonl has 5 \(a model's vectors are compared with each other\)\n$/);
    expect(readFileSync(cassetteOf(other), 'utf8')).toBe(five);
    expect(existsSync(journalOf(other))).toBe(false);
  });

  it('a cassette of NaN vectors is refused by replay at its line, never replayed', async () => {
    const dir = project(['retrieval: {topK: 2, recent: 1}']);
    const nan = Buffer.alloc(32);
    for (let i = 0; i < 8; i++) nan.writeFloatLE(Number.NaN, i * 4);
    const entry = { key: requestKey({ kind: 'embed', model: 'text-embedding-3-small', input: 'x' }), kind: 'embed', model: 'text-embedding-3-small', vector: nan.toString('base64'), usage: { input: 1, output: 0 } };
    writeFileSync(cassetteOf(dir), `${JSON.stringify(entry)}\n`);
    const r = await record(dir, '--upkeep', 'replay');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ctxsim: \S*upkeep\.cassette\.jsonl:1:1 vector\[0\]: NaN as float32: every value must be a finite number\n$/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});

describe('an answer’s size and the waits before a retry are bounded', () => {
  it('a 100 MB answer is exit 2 naming the endpoint and the limit (4000000 bytes by default), not exit 70; the answers before it are kept', async () => {
    const dir = project(['facts']);
    server.faults.push({ none: true }, { hugeBytes: 100_000_000 });
    const start = Date.now();
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^ctxsim: upkeep endpoint ${at()}: extract by gpt-4o-mini: the answer is larger than maxResponseBytes \\(4000000 bytes\\); the response received is kept in \\S+\\.journal: run the same command again to carry on\\n$`),
    );
    expect(Date.now() - start).toBeLessThan(60_000);
    expect(lines(journalOf(dir))).toHaveLength(1);
    expect(readdirSync(dir).sort()).toEqual(['scenario.yaml', 'study.yaml', 'upkeep.cassette.jsonl.journal']);
  });

  it('upkeep.maxResponseBytes sets the limit, and is checked at its key', async () => {
    const dir = project(['facts'], ', maxResponseBytes: 1000');
    server.faults.push({ hugeBytes: 5000, declared: true });
    const r = await record(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/: extract by gpt-4o-mini: the answer is larger than maxResponseBytes \(1000 bytes\)\n$/);
    for (const [value, message] of [
      ['999', 'expected a number ≥ 1000, got 999'],
      ['60000000', 'expected a number ≤ 50000000, got 60000000'],
    ] as const) {
      const bad = await record(project(['facts'], `, maxResponseBytes: ${value}`));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(new RegExp(`^ctxsim: \\S*study\\.yaml:\\d+:\\d+ upkeep\\.maxResponseBytes: ${message}\\n$`));
    }
  });

  it('Retry-After: 100000 is waited at most the timeout (1 s) before each retry: the recording completes within a minute', async () => {
    const dir = project(['facts'], ', timeout: 1, retries: 2');
    server.faults.push({ status: 429, headers: { 'Retry-After': '100000' } }, { status: 503, headers: { 'Retry-After': new Date(Date.now() + 86_400_000).toUTCString() } });
    const start = Date.now();
    const r = await record(dir);
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - start).toBeLessThan(60_000);
    expect(lines(cassetteOf(dir)).length).toBeGreaterThan(0);
    expect(existsSync(journalOf(dir))).toBe(false);
  });
});
