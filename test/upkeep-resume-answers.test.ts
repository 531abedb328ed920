import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordCli } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { MEMORY_STUDY, recordingProject, upkeepLine } from './_recording.js';
import { ROOT } from './_shared.js';

/**
 * A recording that measures answers (`answers: true`, with a judge), stopped
 * at any point and run again, leaves a cassette byte-identical to one
 * recorded without a stop: a probe turn's answer is asked for only once the
 * summaries, extractions and embeddings before it are recorded, so no answer
 * is recorded for a prompt the finished recording never sends. Stopped in
 * this process by an error after each number of responses, one request at a
 * time (the journal then holds exactly those responses, as after a kill);
 * and by SIGKILL of the built CLI with four requests in flight.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const built = ['recording/upkeep', 'upkeep/journal', 'upkeep/endpoint', 'upkeep/cassette'].every((f) => {
  const js = join(ROOT, 'dist', `${f}.js`);
  return existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${f}.ts`)).mtimeMs;
});

const server = new FakeOpenAI();
let url = '';
/** The cassette an uninterrupted recording writes, and how many requests it sent. */
const reference = { text: '', sent: 0 };

/** A temp folder with the scenario and a study recording summaries, extractions, embeddings, answers and the judge's verdicts through the server. */
function project(concurrency: number): string {
  return recordingProject([
    ...MEMORY_STUDY,
    'answers: true',
    'judge: gpt-4o-mini',
    upkeepLine(url, `concurrency: ${concurrency}, retries: 0`),
  ]);
}

/**
 * The command that records `dir`. In this process its outputs go to stdout
 * (`--out -`): these tests read the cassette, and a recording resumed ~30
 * times would otherwise write ~30 report folders, charts and all. The built
 * CLI, killed, writes its reports into the folder (a staging folder in the
 * temp folder would outlive a kill); run again here, to stdout.
 */
const args = (dir: string, out: readonly string[] = ['--out', '-']) => ['run', join(dir, 'study.yaml'), '--no-token-cache', '--upkeep', 'record', '--quiet', ...out];
const cassetteOf = (dir: string) => join(dir, 'upkeep.cassette.jsonl');
const journalOf = (dir: string) => `${cassetteOf(dir)}.journal`;

/** Records `dir` in this process: its exit code, stderr, and the requests it sent. */
async function record(dir: string, out?: readonly string[]): Promise<{ code: number; stderr: string; sent: number }> {
  const before = server.seen.length;
  const r = await recordCli(args(dir, out));
  return { code: r.code, stderr: r.stderr, sent: server.seen.length - before };
}

beforeAll(async () => {
  url = await server.start();
  const dir = project(1);
  const r = await record(dir);
  expect(r.code, r.stderr).toBe(0);
  reference.text = readFileSync(cassetteOf(dir), 'utf8');
  reference.sent = r.sent;
  // Every request sent is a line of the cassette: none asked twice, none left out.
  expect(reference.text.trimEnd().split('\n')).toHaveLength(reference.sent);
  const kinds = new Set(reference.text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { kind: string }).kind));
  expect([...kinds].sort()).toEqual(['answer', 'embed', 'extract', 'judge', 'summary']);
  // Made before any test, so removed here rather than when a test finishes.
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => server.stop());
afterEach(() => {
  server.faults.length = 0;
  server.release();
  vi.unstubAllEnvs();
});

describe('a recording with answers, stopped and run again', () => {
  it('four requests at a time record the same cassette as one at a time', async () => {
    const dir = project(4);
    const r = await record(dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.sent).toBe(reference.sent);
    expect(readFileSync(cassetteOf(dir), 'utf8')).toBe(reference.text);
  });

  it('stopped after each number of responses: the same command again sends only the rest, and the cassette is byte-identical', { timeout: 600_000 }, async () => {
    const differ: number[] = [];
    for (let n = 1; n < reference.sent; n++) {
      const dir = project(1);
      // n answers, then an error that stops the recording with its journal.
      server.faults.push(...Array.from({ length: n }, () => ({ none: true }) as const), { status: 400 });
      const stopped = await record(dir);
      server.faults.length = 0;
      expect(stopped.code, stopped.stderr).toBe(2);
      expect(readFileSync(journalOf(dir), 'utf8').trimEnd().split('\n')).toHaveLength(n);
      const again = await record(dir);
      expect(again.code, again.stderr).toBe(0);
      if (readFileSync(cassetteOf(dir), 'utf8') !== reference.text || again.sent !== reference.sent - n) differ.push(n);
    }
    // The points where a resumed cassette differed (or sent other than the rest), if any.
    expect(differ).toEqual([]);
  });

  it.skipIf(!built)(`SIGKILL of the built CLI with four requests in flight, at several points${built ? '' : ' (skipped: dist/ is missing or stale; npm test builds it)'}`, { timeout: 300_000 }, async () => {
    for (const n of [2, 7, 13, 21]) {
      const dir = project(4);
      const held = server.holdAfter(n);
      const child = spawn(process.execPath, [MAIN, ...args(dir, [])], { env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' }, stdio: 'ignore' });
      const ended = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));
      await Promise.race([held, ended.then(() => Promise.reject(new Error(`the CLI ended before the server held request ${n + 1}`)))]);
      child.kill('SIGKILL');
      expect(await ended).toBe('SIGKILL');
      server.release();
      // The responses read before the kill, whole lines (a line cut short is dropped and its request sent again).
      const text = existsSync(journalOf(dir)) ? readFileSync(journalOf(dir), 'utf8') : '';
      const kept = text.slice(0, text.lastIndexOf('\n') + 1).split('\n').length - 1;
      expect(kept).toBeLessThanOrEqual(n);
      // Run again in this process: its reports to stdout, what it records the same.
      const again = await record(dir);
      expect(again.code, again.stderr).toBe(0);
      expect({ n, sent: again.sent }).toEqual({ n, sent: reference.sent - kept });
      expect(readFileSync(cassetteOf(dir), 'utf8'), `killed after ${n} responses`).toBe(reference.text);
      expect(existsSync(journalOf(dir))).toBe(false);
    }
  });
});
