import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { csvRows, expectShardsMergeToRun, recordCli, recording, textFiles } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { recordingProject, upkeepLine } from './_recording.js';
import { ROOT } from './_shared.js';

/**
 * A judge for free-form answers, end to end through the command line and a
 * local OpenAI-compatible server: a chat model that states values in other
 * words (each line's words reversed) leaves multi-word values unanswered by
 * exact matching; the judge (yes when every word of the value is in the
 * reply) makes them answered, and says so (`judged`). Replays are offline
 * and byte-identical; a missing verdict is exit 2 naming the record
 * command; a judge without answers is exit 2; a dry run counts verdicts.
 */

const KEY = 'sk-test-judge-secret-0123456789';
const JUDGE = 'gpt-4o';
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const NO_NETWORK = join(ROOT, 'test', 'fixtures', 'upkeep', 'no-network.mjs');
const built = existsSync(MAIN) && statSync(MAIN).mtimeMs >= statSync(join(ROOT, 'src', 'engine', 'replay.ts')).mtimeMs;

const server = new FakeOpenAI();
server.answerStyle = 'reversed';
let url = '';
beforeAll(async () => {
  url = await server.start();
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** A temp folder with a study of the shipped scenarios recording through the server, with answers (the judge comes from the flag, or `extra`). */
function project(policies: readonly string[], extra: readonly string[] = ['answers: true']): string {
  return recordingProject(["scenarios: ['scenarios/*.yaml']", `policies: [${policies.join(', ')}]`, ...extra, upkeepLine(url, 'apiKeyEnv: CTXSIM_TEST_JUDGE_KEY')], 'shipped');
}

const ctxsim = (args: string[]) => recordCli([...recording(args), '--no-token-cache'], { CTXSIM_TEST_JUDGE_KEY: KEY });



const kinds = (cassette: string) => cassette.trimEnd().split('\n').map((l) => (JSON.parse(l) as { kind: string }).kind);

describe('a judge for free-form answers', () => {
  it('makes answers stated in other words answered (judged), retention rising by as many; costs unchanged; a replay with the server stopped is byte-identical', { timeout: 180_000 }, async () => {
    const dir = project(['full', 'summary']);
    const study = join(dir, 'study.yaml');
    const rec = await ctxsim(['run', study, '--judge', JUDGE, '--out', join(dir, 'rec')]);
    expect(rec.code, rec.stderr).toBe(0);
    expect(rec.stderr).toMatch(/verdicts? of the judge/);
    const out = textFiles(join(dir, 'rec'));
    const cassette = readFileSync(join(dir, 'upkeep.cassette.jsonl'), 'utf8');
    expect(kinds(cassette).filter((k) => k === 'judge').length).toBeGreaterThan(0);
    expect(server.seen.filter((s) => s.body.model === JUDGE).every((s) => s.body.max_tokens === 10 && s.body.messages?.length === 1)).toBe(true);

    // The same cassette scored by exact matching alone: what the judge adds is exactly the judged probes.
    const exact = await ctxsim(['run', study, '--upkeep', 'replay', '--out', join(dir, 'exact')]);
    expect(exact.code, exact.stderr).toBe(0);
    const judged = csvRows(out.get('probes.csv')!);
    const plain = csvRows(textFiles(join(dir, 'exact')).get('probes.csv')!);
    for (const rows of [judged, plain]) expect(Object.keys(rows[0]!)).toEqual(expect.arrayContaining(['answer', 'judged', 'judged_unsent']));
    expect(judged).toHaveLength(plain.length);
    let raised = 0;
    judged.forEach((p, i) => {
      const q = plain[i]!;
      const at = `${p.policy} ${p.scenario} ${p.turn} ${p.fact}`;
      expect([q.judged, q.judged_unsent], at).toEqual(['', '']);
      expect({ ...p, answer: '', judged: '', judged_unsent: '' }, at).toEqual({ ...q, answer: '', judged: '', judged_unsent: '' });
      // A yes counts only on a value the prompt held.
      if (p.judged_unsent === 'true') expect([p.outcome === 'retained', p.answer, p.judged], at).toEqual([false, 'unanswered', 'false']);
      if (p.expected === 'missing') return expect([p.answer, p.judged], at).toEqual(['', '']);
      if (q.answer === 'answered') return expect([p.answer, p.judged], at).toEqual(['answered', 'false']);
      expect(p.judged, at).toBe(p.answer === 'answered' ? 'true' : 'false');
      if (p.judged === 'true') raised++;
      // A retained multi-word value is in the reply in other words: the judge says yes.
      if (p.outcome === 'retained') expect(p.answer, at).toBe('answered');
    });
    expect(raised).toBeGreaterThan(0);

    const withJudge = csvRows(out.get('policies.csv')!);
    const without = csvRows(textFiles(join(dir, 'exact')).get('policies.csv')!);
    const raisedBy = (policy: string) => judged.filter((p) => p.policy === policy && p.judged === 'true').length;
    withJudge.forEach((p, i) => {
      const q = without[i]!;
      expect(Number(p.answered), p.policy).toBe(Number(q.answered) + raisedBy(p.policy!));
      expect(Number(p.answer_retention), p.policy).toBeGreaterThanOrEqual(Number(q.answer_retention));
      expect(p.total_cost_usd, p.policy).toBe(q.total_cost_usd);
    });
    expect(withJudge.some((p, i) => Number(p.answer_retention) > Number(without[i]!.answer_retention))).toBe(true);
    // The verdicts are a measurement: no turn costs more.
    expect(textFiles(join(dir, 'exact')).get('turns.csv')).toBe(out.get('turns.csv'));
    expect(out.get('report.md')).toContain(`or the judge ${JUDGE} said it gave it`);

    // Replay with the server gone: no socket opened, the same bytes.
    await server.stop();
    const connect = vi.spyOn(Socket.prototype, 'connect');
    try {
      const rep = await ctxsim(['run', study, '--upkeep', 'replay', '--judge', JUDGE, '--out', join(dir, 'rep')]);
      expect(rep.code, rep.stderr).toBe(0);
      expect(connect).not.toHaveBeenCalled();
    } finally {
      url = await server.start();
    }
    expect(textFiles(join(dir, 'rep'))).toEqual(out);
    expect(cassette.includes(KEY)).toBe(false);
  });

  // One recording (of the policies both replays had) serves both: the shards' and the built command's.
  it(`shards replay the verdicts, and their merge is the unsharded run; the built command replays them on worker threads, with no connection, byte-identically${built ? '' : ' (that part skipped: dist/ is missing or stale)'}`, { timeout: 120_000 }, async () => {
    const dir = project(['full', 'summary-buffer', 'facts'], ['answers: true', `judge: ${JUDGE}`]);
    const study = join(dir, 'study.yaml');
    await expectShardsMergeToRun(study, dir, ctxsim);
    if (!built) return;
    const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };
    execFileSync(process.execPath, ['--import', NO_NETWORK, MAIN, 'run', study, '--upkeep', 'replay', '--jobs', '2', '--out', join(dir, 'rep'), '--no-token-cache', '--quiet'], { env, encoding: 'utf8' });
    const rec = textFiles(join(dir, 'rec'));
    expect(textFiles(join(dir, 'rep'))).toEqual(rec);
    expect(csvRows(rec.get('probes.csv')!).some((p) => p.judged === 'true')).toBe(true);
  });

  it('a verdict the cassette lacks is exit 2 naming where and the command that records it', { timeout: 120_000 }, async () => {
    const dir = project(['full']);
    const study = join(dir, 'study.yaml');
    // Recorded into one results file: the cassette is what the test reads.
    expect((await ctxsim(['run', study, '--judge', JUDGE, '--out', join(dir, 'rec.json'), '--quiet'])).code).toBe(0);
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const lines = readFileSync(cassette, 'utf8').trimEnd().split('\n');
    const drop = lines.findIndex((l) => (JSON.parse(l) as { kind: string }).kind === 'judge');
    expect(drop).toBeGreaterThanOrEqual(0);
    writeFileSync(cassette, `${lines.filter((_, i) => i !== drop).join('\n')}\n`);
    const r = await ctxsim(['run', study, '--upkeep', 'replay', '--judge', JUDGE, '--out', join(dir, 'rep'), '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^ctxsim: \S*upkeep\.cassette\.jsonl has no verdict of the judge by gpt-4o for scenario \S+, policy full, turn \d+: record it with `ctxsim run \S*study\.yaml --upkeep record --cassette \S*upkeep\.cassette\.jsonl --answers --judge gpt-4o`\n$/,
    );
  });

  it('a judge without answers is exit 2, from the flag or the study; a judge the price table lacks is exit 2', async () => {
    const dir = project(['full'], []);
    const study = join(dir, 'study.yaml');
    const flag = await ctxsim(['run', study, '--judge', JUDGE, '--out', join(dir, 'out')]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe("ctxsim: --judge: the judge grades the chat model's answers to probe turns, which this run does not measure: add --answers (or answers: true in the study)\n");
    const keyed = project(['full'], [`judge: ${JUDGE}`]);
    const key = await ctxsim(['run', join(keyed, 'study.yaml'), '--dry-run']);
    expect(key.code).toBe(2);
    expect(key.stderr).toBe(`ctxsim: ${join(keyed, 'study.yaml')}:3:8 judge: the judge grades the chat model's answers to probe turns, which this run does not measure: add --answers (or answers: true in the study)\n`);
    // --no-answers on a study with a judge measures neither.
    const off = project(['full'], ['answers: true', `judge: ${JUDGE}`]);
    expect((await ctxsim(['run', join(off, 'study.yaml'), '--no-answers', '--dry-run'])).code).toBe(0);

    const unknown = await ctxsim(['run', study, '--answers', '--judge', 'no-such-judge', '--dry-run']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^ctxsim: --judge: unknown model "no-such-judge"/);
    const badKey = project(['full'], ['answers: true', 'judge: no-such-judge']);
    const bad = await ctxsim(['run', join(badKey, 'study.yaml'), '--dry-run']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('judge');
    expect(bad.stderr).toContain('unknown model "no-such-judge"');
  });

  it('--dry-run counts the verdicts apart, at most one per probe; the recording sends no more', { timeout: 120_000 }, async () => {
    const dir = project(['full', 'window-turns:turns=2'], ['answers: true', `judge: ${JUDGE}`]);
    const study = join(dir, 'study.yaml');
    const before = server.seen.length;
    const dry = await ctxsim(['run', study, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(server.seen.length).toBe(before);
    const m =
      /^a recording would send (\d+) calls \((\d+) answers to probe turns, (\d+) verdicts of the judge\), \d+ input tokens and at most \d+ output tokens, at most \$\d+\.\d{4}; the \2 answers: \d+ input tokens and at most \d+ output tokens, at most \$\d+\.\d{4}; the \3 verdicts: (\d+) input tokens and at most (\d+) output tokens, at most \$(\d+\.\d{4}) to http/.exec(
        dry.stdout,
      );
    expect(m, dry.stdout).not.toBeNull();
    const [, calls, answers, verdicts, , verdictOutput] = m!.map(Number);
    expect(calls).toBe(answers! + verdicts!);
    expect(verdictOutput).toBe(verdicts! * 10);
    expect(Number(m![6])).toBeGreaterThan(0);

    const rec = await ctxsim(['run', study, '--out', join(dir, 'rec'), '--quiet']);
    expect(rec.code, rec.stderr).toBe(0);
    const sent = server.seen.slice(before);
    const judgeCalls = sent.filter((s) => s.body.model === JUDGE).length;
    expect(sent.length - judgeCalls).toBe(answers);
    expect(judgeCalls).toBeGreaterThan(0);
    expect(judgeCalls).toBeLessThanOrEqual(verdicts!);
    // One verdict per probe whose reply lacked the value as written: the judged column is set for every answered or unanswered probe.
    const probes = csvRows(textFiles(join(dir, 'rec')).get('probes.csv')!);
    expect(probes.filter((p) => p.answer !== '').every((p) => p.judged === 'true' || p.judged === 'false')).toBe(true);
    expect(kinds(readFileSync(join(dir, 'upkeep.cassette.jsonl'), 'utf8')).filter((k) => k === 'judge')).toHaveLength(judgeCalls);
  });
});
