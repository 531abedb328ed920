import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { STAGING_PREFIX } from '../src/output/files.js';
import { Cassette } from '../src/upkeep/cassette.js';
import { recordCli } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { MEMORY_STUDY, recordingProject, upkeepLine } from './_recording.js';
import { ROOT } from './_shared.js';

/**
 * A recording stopped by Ctrl-C (SIGINT), SIGTERM or SIGKILL keeps every
 * response it received, in its journal beside the cassette; running the
 * same command again sends only the requests neither holds, and leaves a
 * cassette byte-identical to one recorded without a stop, and no journal.
 * The built CLI (dist/) records from a local server that answers a known
 * number of requests and then holds the next: the signal goes when that
 * request arrives, not after a sleep.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** Whether dist/ holds the compiled recording: each file built after its source was changed. */
const built = ['recording/upkeep', 'upkeep/journal', 'upkeep/endpoint', 'upkeep/cassette', 'cli/_output'].every((f) => {
  const js = join(ROOT, 'dist', `${f}.js`);
  return existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${f}.ts`)).mtimeMs;
});
/** Responses the server sends before it holds the next request. */
const ANSWERED = 5;

const server = new FakeOpenAI();
let url = '';
/** The cassette an uninterrupted recording of the study writes, and how many requests it sent. */
let reference = { text: '', sent: 0 };

/** A temp folder with the scenario and a study recording through the server (summaries, extractions, embeddings). */
function project(concurrency = 1): string {
  return recordingProject([
    ...MEMORY_STUDY,
    upkeepLine(url, `concurrency: ${concurrency}, retries: 0`),
  ]);
}

/** The command that records (or replays) `dir` into its folder `out`, or with `out` `-` onto stdout. */
const args = (dir: string, out = 'out', mode = 'record') => ['run', join(dir, 'study.yaml'), '--out', out === '-' ? out : join(dir, out), '--no-token-cache', '--upkeep', mode];
const cassetteOf = (dir: string) => join(dir, 'upkeep.cassette.jsonl');
const journalOf = (dir: string) => `${cassetteOf(dir)}.journal`;

/** How a process ended, and what it printed on stderr. */
interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Starts the built CLI on `dir` and waits until the server holds a request
 * (after `answered` answers): returns the process and how it ends. A CLI
 * that ends before fails the test with what it printed.
 */
async function startHeld(dir: string, answered: number): Promise<{ child: ReturnType<typeof spawn>; ended: Promise<Ended> }> {
  const held = server.holdAfter(answered);
  const child = spawn(process.execPath, [MAIN, ...args(dir)], { env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const ended = new Promise<Ended>((r) => child.on('exit', (code, signal) => r({ code, signal, stderr })));
  await Promise.race([held, ended.then((e) => Promise.reject(new Error(`the CLI ended before the server held a request (${e.code ?? e.signal}): ${e.stderr}`)))]);
  return { child, ended };
}

/** Records `dir` again in this process: its exit code, stderr, and the requests it sent. */
async function resume(dir: string): Promise<{ code: number; stderr: string; sent: number }> {
  const before = server.seen.length;
  const r = await recordCli([...args(dir, 'resumed')]);
  return { code: r.code, stderr: r.stderr, sent: server.seen.length - before };
}

beforeAll(async () => {
  url = await server.start();
  const dir = project();
  const before = server.seen.length;
  // Its outputs on stdout: only its cassette is kept.
  const r = await recordCli(args(dir, '-'));
  expect(r.code, r.stderr).toBe(0);
  reference = { text: readFileSync(cassetteOf(dir), 'utf8'), sent: server.seen.length - before };
  expect(reference.sent).toBeGreaterThan(ANSWERED + 5);
  expect(existsSync(journalOf(dir))).toBe(false);
  // Made before any test, so removed here rather than when a test finishes.
  rmSync(dir, { recursive: true, force: true });
  // A whole recording: as generous as a test.
}, 120_000);
afterAll(() => server.stop());
afterEach(() => {
  server.release();
  vi.unstubAllEnvs();
});

describe('a recording stopped by a signal', () => {
  it.skipIf(!built).each(['SIGINT', 'SIGTERM', 'SIGKILL'] as const)(
    `%s: keeps every response received in the journal, no cassette and no reports; the same command again sends only the rest, and the cassette is byte-identical${built ? '' : ' (skipped: dist/ is missing or stale; npm test builds it)'}`,
    async (signal) => {
      const dir = project();
      const { child, ended } = await startHeld(dir, ANSWERED);
      child.kill(signal);
      const end = await ended;
      // Ended by the signal itself (a shell says 130, 143 or 137), with no error printed.
      expect({ code: end.code, signal: end.signal }).toEqual({ code: null, signal });
      expect(end.stderr).not.toContain('ctxsim:');
      // With one request at a time, the held request went out after the ANSWERED responses were journaled.
      const journal = readFileSync(journalOf(dir), 'utf8');
      expect(journal.endsWith('\n')).toBe(true);
      const kept = Cassette.parse('journal', journal);
      expect(kept.size).toBe(ANSWERED);
      // Each kept line is a line of the uninterrupted cassette.
      for (const line of journal.trimEnd().split('\n')) expect(reference.text.split('\n')).toContain(line);
      expect(existsSync(cassetteOf(dir))).toBe(false);
      // No report: Ctrl-C and SIGTERM remove the output's staging folder; a kill leaves it for the next run to remove.
      const out = existsSync(join(dir, 'out')) ? readdirSync(join(dir, 'out')) : [];
      expect(out.filter((f) => !f.startsWith(STAGING_PREFIX))).toEqual([]);
      if (signal !== 'SIGKILL') expect(out).toEqual([]);

      server.release();
      const again = await resume(dir);
      expect(again.code, again.stderr).toBe(0);
      expect(again.sent).toBe(reference.sent - ANSWERED);
      expect(again.stderr).toMatch(new RegExp(`^upkeep: \\S*upkeep\\.cassette\\.jsonl\\.journal holds ${ANSWERED} responses of a recording that did not finish: carrying on from them$`, 'm'));
      expect(readFileSync(cassetteOf(dir), 'utf8')).toBe(reference.text);
      expect(existsSync(journalOf(dir))).toBe(false);
      expect(existsSync(join(dir, 'resumed', 'report.md'))).toBe(true);
    },
  );

  it.skipIf(!built)('SIGKILL with three requests in flight: the journal’s whole lines are kept (a line cut short is dropped), and the rest is sent', async () => {
    const dir = project(3);
    const { child, ended } = await startHeld(dir, ANSWERED);
    child.kill('SIGKILL');
    expect((await ended).signal).toBe('SIGKILL');
    const text = readFileSync(journalOf(dir), 'utf8');
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    const kept = Cassette.parse('journal', whole).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(ANSWERED);

    server.release();
    const again = await resume(dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.sent).toBe(reference.sent - kept);
    expect(readFileSync(cassetteOf(dir), 'utf8')).toBe(reference.text);
    expect(existsSync(journalOf(dir))).toBe(false);
  });
});

describe('the journal when recording again', () => {
  it('a last line cut short (a kill mid-write) is dropped and its request sent again; the next line appended starts on a line of its own', async () => {
    const dir = project();
    const lines = reference.text.trimEnd().split('\n');
    // Three whole responses of the recording, in another order than the cassette's, then half of a fourth.
    writeFileSync(journalOf(dir), `${lines[5]}\n${lines[0]}\n${lines[3]}\n${lines[1]!.slice(0, 40)}`);
    // The third response of this recording breaks a rule: it stops there, its journal holding what came before it.
    const from = server.answered;
    server.tamper = (answer, n) => (n === from + 3 ? { ...answer, usage: { prompt_tokens: -1, completion_tokens: 0 } } : answer);
    let stopped: Awaited<ReturnType<typeof resume>>;
    try {
      stopped = await resume(dir);
    } finally {
      server.tamper = undefined;
    }
    expect(stopped.code).toBe(2);
    expect(stopped.stderr).toMatch(/usage\.prompt_tokens: expected a number ≥ 0, got -1; the 5 responses received are kept in \S+\.journal: run the same command again to carry on\n$/);
    const journal = readFileSync(journalOf(dir), 'utf8').split('\n');
    expect(journal.slice(0, 3)).toEqual([lines[5], lines[0], lines[3]]);
    expect(journal).toHaveLength(6);
    expect(Cassette.parse('journal', journal.join('\n')).size).toBe(5);

    const again = await resume(dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.sent).toBe(reference.sent - 5);
    expect(readFileSync(cassetteOf(dir), 'utf8')).toBe(reference.text);
    expect(existsSync(journalOf(dir))).toBe(false);
  });

  it('a whole line that is not a response is an error at its line; replay refuses a cassette whose recording did not finish', async () => {
    const dir = project();
    const lines = reference.text.trimEnd().split('\n');
    writeFileSync(journalOf(dir), `${lines[0]}\n${lines[1]!.replace(/"usage":\{"input":\d+/, '"usage":{"input":1e308')}\n`);
    const before = server.seen.length;
    const bad = await recordCli(args(dir));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^ctxsim: \S*upkeep\.cassette\.jsonl\.journal:2:1 usage\.input: expected a number ≤ 1000000000, got 1e\+308\n$/);
    expect(server.seen.length).toBe(before);

    writeFileSync(journalOf(dir), `${lines[0]}\n`);
    writeFileSync(cassetteOf(dir), `${lines[1]}\n`);
    const replay = await recordCli(args(dir, 'out', 'replay'));
    expect(replay.code).toBe(2);
    expect(replay.stderr).toMatch(
      /^ctxsim: upkeep: the recording into (\S*upkeep\.cassette\.jsonl) did not finish: \1\.journal holds the responses it received; finish it with `ctxsim run \S*study\.yaml --upkeep record --cassette \1` \(or delete \1\.journal to drop them\)\n$/,
    );
    expect(existsSync(join(dir, 'out'))).toBe(false);
    // The inputs are as they were.
    expect(readFileSync(journalOf(dir), 'utf8')).toBe(`${lines[0]}\n`);
    expect(readFileSync(cassetteOf(dir), 'utf8')).toBe(`${lines[1]}\n`);
  });

  it('a journal whose responses are all in the cassette already (a kill after the cassette was written) is folded in and removed, nothing sent', async () => {
    const dir = project();
    writeFileSync(cassetteOf(dir), reference.text);
    writeFileSync(journalOf(dir), reference.text.split('\n').slice(0, 4).join('\n') + '\n');
    const again = await resume(dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.sent).toBe(0);
    expect(readFileSync(cassetteOf(dir), 'utf8')).toBe(reference.text);
    expect(existsSync(journalOf(dir))).toBe(false);
  });
});
