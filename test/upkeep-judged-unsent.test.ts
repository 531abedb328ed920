import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { csvRows, recordCli, recording, textFiles } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { recordingProject, upkeepLine } from './_recording.js';

/**
 * A judge that says yes to everything, over a policy that drops facts: the
 * chat model repeats its prompt, so it answers exactly what was sent, and
 * every probe whose value the window dropped goes to the judge, who says
 * yes. Those yeses are counted apart (`judged_unsent`) and stay unanswered,
 * so answered retention never rises above retention; the run's notes, its
 * stderr and the verdict say how many there were.
 */

const KEY = 'sk-test-judged-unsent-0123456789';
const JUDGE = 'gpt-4o';
const WINDOW = 'window-turns:turns=2';

const server = new FakeOpenAI();
server.judge = () => 'Yes.';
let url = '';
beforeAll(async () => {
  url = await server.start();
});
afterAll(async () => {
  await server.stop();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const ctxsim = (args: string[]) => recordCli([...recording(args), '--no-token-cache'], { CTXSIM_TEST_UNSENT_KEY: KEY });

describe('a judge’s yes on a value that was never sent', () => {
  it('is counted apart and left unanswered; the notes, a warning and the verdict say so', { timeout: 180_000 }, async () => {
    const dir = recordingProject(["scenarios: ['scenarios/*.yaml']", `policies: [full, '${WINDOW}']`, 'answers: true', `judge: ${JUDGE}`, upkeepLine(url, 'apiKeyEnv: CTXSIM_TEST_UNSENT_KEY')], 'shipped');
    const r = await ctxsim(['run', join(dir, 'study.yaml'), '--out', join(dir, 'out')]);
    expect(r.code, r.stderr).toBe(0);
    const out = textFiles(join(dir, 'out'));

    // Probe by probe: sent and answered, or not sent, judged yes and counted apart.
    const probes = csvRows(out.get('probes.csv')!, ['policy', 'scenario', 'turn', 'fact', 'outcome', 'expected', 'answer', 'judged', 'judged_unsent']);
    const unsent = probes.filter((p) => p.judged_unsent === 'true');
    for (const p of probes) {
      const at = `${p.policy} ${p.scenario} ${p.turn} ${p.fact}`;
      if (p.expected === 'missing') expect([p.answer, p.judged, p.judged_unsent], at).toEqual(['', '', '']);
      else if (p.outcome === 'retained') expect([p.answer, p.judged_unsent], at).toEqual(['answered', 'false']);
      else expect([p.answer, p.judged, p.judged_unsent], at).toEqual(['unanswered', 'false', 'true']);
    }
    const window = unsent.filter((p) => p.policy === WINDOW).length;
    expect(window).toBeGreaterThan(0);
    expect(unsent.every((p) => p.policy === WINDOW)).toBe(true);

    // Summary and policy rows count them, apart from `answered`, which stays at what was sent.
    for (const s of csvRows(out.get('summary.csv')!)) {
      const mine = unsent.filter((p) => p.policy === s.policy && p.scenario === s.scenario).length;
      expect([s.judged_unsent, s.answered], `${s.policy} ${s.scenario}`).toEqual([String(mine), s.retained]);
    }
    const policies = csvRows(out.get('policies.csv')!);
    expect(policies.map((p) => [p.policy, p.judged_unsent, p.answered === p.retained, p.answer_retention === p.retention])).toEqual([
      ['full', '0', true, true],
      [WINDOW, String(window), true, true],
    ]);
    const w = policies[1]!;
    const notRetained = Number(w.probes) - Number(w.retained);
    expect(window).toBe(notRetained);

    // The note under the table (stdout and report.md), the warning on stderr, the verdict.
    const said = `said yes on ${window} of the ${notRetained} probes whose value was not sent (${window} under ${WINDOW})`;
    const note = `Judged unsent: the judge ${JUDGE} ${said}; a yes counts as answered only when the prompt held the value, so these count as unanswered (judged_unsent)`;
    // Wrapped to the width, a note's next lines indented.
    expect(r.stdout.replace(/\n {2}/g, ' ').split('\n')).toContain(note);
    expect(out.get('report.md')).toContain(note);
    expect(r.stderr).toContain(`ctxsim: warning: the judge ${said}: counted as unanswered (judged_unsent); check the judge\n`);
    const verdict = r.stdout.split('\n\n')[1]!.replace(/\n/g, ' ');
    expect(verdict).toMatch(/^Verdict: Use full: no cheaper policy keeps at least 95% of probed facts in its answers[.;] .*On 5 conversations, with answered retention /);
    expect(verdict).toContain(
      ` Warning: the judge said yes on ${window} of the ${notRetained} probes whose value was never sent (judged_unsent); they count as unanswered, since no memory sent the value, and the judge’s other yeses are worth checking before these figures are trusted.`,
    );
    expect(out.get('report.md')).toContain('Warning: the judge said yes on');

    // The same cassette without answers (nor, then, the judge): the column empty, no warning.
    const plain = await ctxsim(['run', join(dir, 'study.yaml'), '--upkeep', 'replay', '--no-answers', '--out', join(dir, 'plain')]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toContain('judged_unsent');
    expect(csvRows(textFiles(join(dir, 'plain')).get('policies.csv')!).map((p) => p.judged_unsent)).toEqual(['', '']);
  });
});
