import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { POLICIES } from '../src/policies/index.js';
import { csvRows, expectShardsMergeToRun, recordCli, recording, textFiles } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';
import { builtSince } from './_built.js';

/**
 * Answered probes, end to end through the command line and a local
 * OpenAI-compatible server: each probe turn's first prompt goes to the chat
 * model, its reply is recorded in the cassette (kind `answer`), and each
 * probe is scored on it. A model that repeats its prompt answers exactly
 * what was available; one that reads only the last user message answers
 * less; a replay is offline and byte-identical; a missing answer is exit 2;
 * the key is nowhere; simulated upkeep cannot answer; a dry run counts the
 * answers.
 */

const KEY = 'sk-test-answers-secret-0123456789';
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const NO_NETWORK = join(ROOT, 'test', 'fixtures', 'upkeep', 'no-network.mjs');
const built = builtSince('engine/replay.ts');
const SHIPPED = join(ROOT, 'scenarios');
const SCENARIOS = join(SHIPPED, '*.yaml');

const parrot = new FakeOpenAI();
const forgetful = new FakeOpenAI();
forgetful.answerStyle = 'forgetful';
const urls = { parrot: '', forgetful: '' };
beforeAll(async () => {
  urls.parrot = await parrot.start();
  urls.forgetful = await forgetful.start();
});
afterAll(async () => {
  await parrot.stop();
  await forgetful.stop();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** A temp folder with a study of the shipped scenarios recording through `url`, with answers. */
function project(url: string, policies: readonly string[]): string {
  const dir = tempDir();
  cpSync(SHIPPED, join(dir, 'scenarios'), { recursive: true });
  writeFileSync(
    join(dir, 'study.yaml'),
    [
      "scenarios: ['scenarios/*.yaml']",
      `policies: [${policies.join(', ')}]`,
      'answers: true',
      `upkeep: {mode: record, baseURL: '${url}', apiKeyEnv: CTXSIM_TEST_ANSWERS_KEY}`,
      '',
    ].join('\n'),
  );
  return dir;
}

const ctxsim = (args: string[]) => recordCli([...recording(args), '--no-token-cache'], { CTXSIM_TEST_ANSWERS_KEY: KEY });



const ALL = POLICIES.map((p) => p.id);

describe('answered probes', () => {
  it('a model that repeats its prompt answers exactly what was available, for every built-in policy; a replay with the server stopped is byte-identical', { timeout: 240_000 }, async () => {
    const dir = project(urls.parrot, ALL);
    const study = join(dir, 'study.yaml');
    const rec = await ctxsim(['run', study, '--out', join(dir, 'rec')]);
    expect(rec.code, rec.stderr).toBe(0);
    const out = textFiles(join(dir, 'rec'));

    // Probe by probe: answered exactly when retained; forgotten facts have no answer.
    const probes = csvRows(out.get('probes.csv')!);
    expect(probes.length).toBeGreaterThan(0);
    for (const p of probes) {
      if (p.expected === 'missing') expect(p.answer, `${p.policy} ${p.scenario} ${p.turn} ${p.fact}`).toBe('');
      else expect(p.answer, `${p.policy} ${p.scenario} ${p.turn} ${p.fact}`).toBe(p.outcome === 'retained' ? 'answered' : 'unanswered');
    }
    const policies = csvRows(out.get('policies.csv')!);
    expect(policies.map((p) => p.policy!.split(':')[0])).toEqual(ALL);
    for (const p of policies) {
      expect([p.policy, p.answered, p.answer_retention]).toEqual([p.policy, p.retained, p.retention]);
      // Recorded where upkeep made a memory: a remembering policy that made none in any conversation (compact, which these never fill) sent the messages themselves.
      const remembers = ['summary', 'summary-buffer', 'retrieval', 'facts', 'compact', 'pipeline'].includes(p.policy!.split(':')[0]!);
      expect(p.memory, p.policy).toBe(remembers && p.aux_tokens !== '0' ? 'recorded' : 'none');
    }
    expect(policies.filter((p) => p.memory === 'recorded').map((p) => p.policy!.split(':')[0])).toEqual(['summary', 'summary-buffer', 'retrieval', 'facts', 'pipeline']);
    for (const s of csvRows(out.get('summary.csv')!)) expect(s.answered, `${s.policy} ${s.scenario}`).toBe(s.retained);

    // The answers are in the cassette as their own kind, one line per distinct prompt.
    const cassette = readFileSync(join(dir, 'upkeep.cassette.jsonl'), 'utf8');
    const kinds = cassette.trimEnd().split('\n').map((l) => (JSON.parse(l) as { kind: string }).kind);
    expect(kinds.filter((k) => k === 'answer').length).toBeGreaterThan(0);
    expect(rec.stderr).toMatch(/answers? to probe turns?/);

    // The reports show both figures, side by side.
    expect(rec.stdout).toMatch(/ retention +answered +pareto/);
    // The verdict is drawn on the answers, and says so.
    expect(rec.stdout.split('\n\n')[1]!.replace(/\n/g, ' ')).toMatch(/^Verdict: .* On \d+ conversations?, with answered retention \(a real model’s reply to the probe held the fact\)/);
    expect(out.get('report.md')).toContain('answer retention');
    expect(out.get('report.html')).toContain('answer retention');
    expect(out.get('retention-vs-cost.vl.json')).toContain('answered');
    expect(out.get('retention-by-age.vl.json')).toContain('"answered":');

    // The measurement is not the policies' cost: a replay without answers costs the same.
    const plain = await ctxsim(['run', study, '--upkeep', 'replay', '--no-answers', '--out', join(dir, 'plain')]);
    expect(plain.code, plain.stderr).toBe(0);
    const without = csvRows(textFiles(join(dir, 'plain')).get('policies.csv')!);
    expect(without.map((p) => [p.total_cost_usd, p.answered, p.answer_retention, p.memory])).toEqual(policies.map((p) => [p.total_cost_usd, '', '', p.memory]));
    expect(textFiles(join(dir, 'plain')).get('turns.csv')).toBe(out.get('turns.csv'));

    // Replay with the server gone: no socket opened, the same bytes.
    await parrot.stop();
    const connect = vi.spyOn(Socket.prototype, 'connect');
    try {
      const rep = await ctxsim(['run', study, '--upkeep', 'replay', '--out', join(dir, 'rep')]);
      expect(rep.code, rep.stderr).toBe(0);
      expect(connect).not.toHaveBeenCalled();
    } finally {
      urls.parrot = await parrot.start();
    }
    expect(textFiles(join(dir, 'rep'))).toEqual(out);

    // The key was sent, and is in no file written nor in the cassette.
    expect(parrot.seen.every((s) => s.authorization === `Bearer ${KEY}`)).toBe(true);
    for (const [name, content] of [...out, ['upkeep.cassette.jsonl', cassette] as const]) expect(content.includes(KEY), name).toBe(false);
    expect(rec.stdout + rec.stderr).not.toContain(KEY);
  });

  it('a model that reads only the last user message answers less than was available', { timeout: 120_000 }, async () => {
    const dir = project(urls.forgetful, ['full', 'summary', 'summary-buffer', 'facts', 'retrieval']);
    const r = await ctxsim(['run', join(dir, 'study.yaml'), '--out', join(dir, 'rec')]);
    expect(r.code, r.stderr).toBe(0);
    const out = textFiles(join(dir, 'rec'));
    const policies = csvRows(out.get('policies.csv')!);
    for (const p of policies) {
      expect(Number(p.answered), p.policy).toBeLessThan(Number(p.retained));
      expect(Number(p.answer_retention), p.policy).toBeLessThan(Number(p.retention));
    }
    // report.html lists the facts that were sent but not answered, one row each, beside those not retained.
    const unanswered = csvRows(out.get('probes.csv')!).filter((p) => p.outcome === 'retained' && p.answer === 'unanswered');
    const html = out.get('report.html')!;
    expect(html).toMatch(new RegExp(`<p>${unanswered.length} of \\d+ probes were retained but not answered \\(`));
    const section = html.slice(html.indexOf('probes were retained but not answered'));
    const rows = section.slice(0, section.indexOf('</table>')).split('<tr>').slice(2);
    expect(rows.map((r) => /<td>([^<]*)<\/td>/.exec(r)![1])).toEqual(unanswered.map((p) => p.scenario));
  });

  it('an answer the cassette lacks is exit 2 naming where and the command that records it', { timeout: 120_000 }, async () => {
    const dir = project(urls.parrot, ['full']);
    const study = join(dir, 'study.yaml');
    // Recorded into one results file: the cassette is what the test reads.
    expect((await ctxsim(['run', study, '--out', join(dir, 'rec.json')])).code).toBe(0);
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const lines = readFileSync(cassette, 'utf8').trimEnd().split('\n');
    writeFileSync(cassette, `${lines.slice(1).join('\n')}\n`);
    const r = await ctxsim(['run', study, '--upkeep', 'replay', '--out', join(dir, 'rep'), '--quiet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ctxsim: \S*upkeep\.cassette\.jsonl has no answer to a probe turn by gpt-4o-mini for scenario \S+, policy full, turn \d+: record it with `ctxsim run \S*study\.yaml --upkeep record --cassette \S*upkeep\.cassette\.jsonl --answers`\n$/);
  });

  it('the gate fails a change that answers fewer, as it fails one that retains fewer; --max-answer-drop allows it', { timeout: 120_000 }, async () => {
    const dir = project(urls.parrot, ['full']);
    const study = join(dir, 'study.yaml');
    const baseline = join(dir, 'baseline.json');
    expect((await ctxsim(['run', study, '--out', join(dir, 'rec.json'), '--save-baseline', baseline, '--quiet'])).code).toBe(0);
    expect(readFileSync(baseline, 'utf8')).toMatch(/"retained":\d+,"overflowTurns":0,"latencyP95Ms":\d+,"answered":\d+/);
    // The model now answers nothing useful: what is sent is unchanged, what is answered is not.
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const lines = readFileSync(cassette, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { kind: string; text?: string });
    writeFileSync(cassette, lines.map((e) => `${JSON.stringify(e.kind === 'answer' ? { ...e, text: 'I could not say.' } : e)}\n`).join(''));
    const failed = await ctxsim(['check', study, '--baseline', baseline, '--upkeep', 'replay', '--quiet']);
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    expect(failed.stdout).toContain('up to 0 more probes lost, up to 0 more probes unanswered.');
    expect(failed.stdout).toMatch(/answered (\d+)\/\1 → 0\/\1 \(\1 more probes unanswered, limit 0\)/);
    expect(failed.stdout).not.toMatch(/retained \d+\/\d+ → /);
    const allowed = await ctxsim(['check', study, '--baseline', baseline, '--upkeep', 'replay', '--max-answer-drop', '100%', '--quiet']);
    expect(allowed.code, allowed.stdout).toBe(0);
  });

  // One recording serves both replays: the shards' and the built command's.
  it(`shards replay the answers, and their merge is the unsharded run; the built command replays them on worker threads, with no connection, byte-identically${built ? '' : ' (that part skipped: dist/ is missing or stale)'}`, { timeout: 120_000 }, async () => {
    const dir = project(urls.parrot, ['full', 'summary-buffer', 'facts']);
    const study = join(dir, 'study.yaml');
    await expectShardsMergeToRun(study, dir, ctxsim);
    if (!built) return;
    const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };
    execFileSync(process.execPath, ['--import', NO_NETWORK, MAIN, 'run', study, '--upkeep', 'replay', '--jobs', '2', '--out', join(dir, 'rep'), '--no-token-cache', '--quiet'], { env, encoding: 'utf8' });
    expect(textFiles(join(dir, 'rep'))).toEqual(textFiles(join(dir, 'rec')));
  });

  it('--answers with simulated upkeep is exit 2 saying to record', async () => {
    const r = await ctxsim(['run', '--scenario', SCENARIOS, '--policy', 'full', '--answers', '--out', join(tempDir(), 'out')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('ctxsim: --answers: the probe turns go to the chat model through the upkeep endpoint, which simulated upkeep has not: add --upkeep record (or replay, live)\n');
    const dir = project(urls.parrot, ['full']);
    const s = await ctxsim(['run', join(dir, 'study.yaml'), '--upkeep', 'simulate', '--dry-run']);
    expect(s.code).toBe(2);
    expect(s.stderr).toBe(`ctxsim: ${join(dir, 'study.yaml')}:3:10 answers: the probe turns go to the chat model through the upkeep endpoint, which simulated upkeep has not: add --upkeep record (or replay, live)\n`);
  });

  it('--dry-run counts the answers to probe turns, their tokens and their cost at most, apart; a recording then sends that many', { timeout: 120_000 }, async () => {
    const dir = project(urls.parrot, ['full', 'window-turns:turns=2']);
    const study = join(dir, 'study.yaml');
    const before = parrot.seen.length;
    const dry = await ctxsim(['run', study, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(parrot.seen.length).toBe(before);
    const m = /^a recording would send (\d+) calls \((\d+) answers to probe turns\), (\d+) input tokens and at most (\d+) output tokens, at most \$\d+\.\d{4}; the (\d+) answers: (\d+) input tokens and at most (\d+) output tokens, at most \$\d+\.\d{4} to http/.exec(dry.stdout);
    expect(m, dry.stdout).not.toBeNull();
    const [, calls, answers, input, output, apart, apartInput, apartOutput] = m!.map(Number);
    expect([answers, apart, apartInput, apartOutput]).toEqual([calls, calls, input, output]);
    expect(output).toBe(calls! * 500);
    expect((await ctxsim(['run', study, '--out', join(dir, 'rec.json'), '--quiet'])).code).toBe(0);
    expect(parrot.seen.length - before).toBe(calls);
    const cassette = readFileSync(join(dir, 'upkeep.cassette.jsonl'), 'utf8').trimEnd().split('\n');
    expect(cassette.every((l) => (JSON.parse(l) as { kind: string }).kind === 'answer')).toBe(true);
    expect(cassette).toHaveLength(calls!);
  });
});
