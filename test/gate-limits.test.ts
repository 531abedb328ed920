import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readBaseline, type Baseline, type BaselineRow } from '../src/gate/baseline.js';
import { compare } from '../src/gate/compare.js';
import { appliedLimits, DEFAULT_LIMITS, limitsOfWords, limitsWords, studyLimits, type GateLimits } from '../src/gate/limits.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

describe('the limits a check applies', () => {
  const limits = (cost: number, retention: GateLimits['maxRetentionDrop'], answers: GateLimits['maxAnswerDrop'] = { probes: 0 }): GateLimits => ({
    maxCostIncrease: cost,
    maxRetentionDrop: retention,
    maxAnswerDrop: answers,
  });

  it('the stricter of the study’s and the baseline’s, each limit on its own', () => {
    const recorded = limits(0.05, { probes: 1 }, { points: 0.02 });
    expect(appliedLimits(limits(0.5, { probes: 3 }, { points: 0.1 }), recorded)).toEqual(recorded);
    expect(appliedLimits(limits(0.01, { probes: 0 }, { points: 0.01 }), recorded)).toEqual(limits(0.01, { probes: 0 }, { points: 0.01 }));
    expect(appliedLimits(limits(0.5, { probes: 0 }, { points: 0.5 }), recorded)).toEqual(limits(0.05, { probes: 0 }, { points: 0.02 }));
  });

  it('of two kinds (probes, points), which have no order: the baseline’s', () => {
    expect(appliedLimits(limits(0.05, { points: 0 }), limits(0.05, { probes: 2 })).maxRetentionDrop).toEqual({ probes: 2 });
    expect(appliedLimits(limits(0.05, { probes: 0 }, { probes: 0 }), limits(0.05, { probes: 0 }, { points: 0.5 })).maxAnswerDrop).toEqual({ points: 0.5 });
  });

  it('a limit given on the command line applies as given, looser or not; a baseline that recorded none leaves the study’s', () => {
    expect(appliedLimits(limits(0.5, { probes: 3 }), limits(0.05, { probes: 0 }), { maxCostIncrease: 0.4 })).toEqual(limits(0.4, { probes: 0 }));
    expect(appliedLimits(limits(0.5, { probes: 3 }), limits(0.05, { probes: 0 }), { maxCostIncrease: undefined })).toEqual(limits(0.05, { probes: 0 }));
    expect(appliedLimits(studyLimits({ maxCostIncrease: 0.5 }), undefined)).toEqual(limits(0.5, { probes: 0 }));
  });

  it('a study that leaves a limit out has the default; the words a baseline records read back as the limits', () => {
    expect(studyLimits()).toEqual(DEFAULT_LIMITS);
    expect(limitsWords(DEFAULT_LIMITS)).toEqual({ maxCostIncrease: '5%', maxRetentionDrop: '0', maxAnswerDrop: '0' });
    const given = limits(0.125, { points: 0.025 }, { probes: 2 });
    expect(limitsWords(given)).toEqual({ maxCostIncrease: '12.5%', maxRetentionDrop: '2.5%', maxAnswerDrop: '2' });
    expect(limitsOfWords(limitsWords(given))).toEqual(given);
  });
});

describe('compare names a study’s limits that differ from its baseline’s, and which applied', () => {
  const row: BaselineRow = { scenario: 's', policy: 'full', model: 'gpt-4o-mini', inputTokens: 10, cachedTokens: 0, outputTokens: 1, auxTokens: 0, overflowTurns: 0, probes: 1, retained: 1, latencyP95Ms: 0, costMicroUsd: 1 };
  const fingerprint = { model: 'gpt-4o-mini', tokenizer: 'o200k_base', prices: 'builtin', cache: 'auto', rules: 'openai', seed: 1, policies: ['full'], scenarios: { s: 'h' } };
  const of = (gate: Baseline['study']['gate']): Baseline => ({ schemaVersion: 1, studyHash: 'x', study: { ...fingerprint, ...(gate && { gate }) }, rows: [row] });
  const words = (cost: string) => ({ maxCostIncrease: cost, maxRetentionDrop: '0', maxAnswerDrop: '0' });

  it('a looser study limit: the baseline’s applies, and the difference says so', () => {
    const [before, after] = [of(words('5%')), of(words('50%'))];
    const r = compare(before, after, appliedLimits(limitsOfWords(after.study.gate!), limitsOfWords(before.study.gate!)));
    expect(r.limits.maxCostIncrease).toBe(0.05);
    expect(r.differences).toEqual(["gate.maxCostIncrease: 5% → 50%; the baseline's 5% applies until a baseline saved with 50% is committed"]);
  });

  it('a stricter one applies and is named; one given on the command line is named as such; a baseline that recorded none names none', () => {
    const strict = compare(of(words('5%')), of(words('2.0%')), { ...DEFAULT_LIMITS, maxCostIncrease: 0.02 });
    expect(strict.differences).toEqual(['gate.maxCostIncrease: 5% → 2%']);
    expect(compare(of(words('5%')), of(words('50%')), { ...DEFAULT_LIMITS, maxCostIncrease: 0.3 }).differences).toEqual(['gate.maxCostIncrease: 5% → 50%; 30% applies, as the command line gives it']);
    expect(compare(of(undefined), of(words('50%')), { ...DEFAULT_LIMITS, maxCostIncrease: 0.5 }).differences).toEqual([]);
  });
});

describe('ctxsim check on a pull request that loosens its study’s gate', () => {
  let dir: string;
  const study = () => join(dir, 'study.yaml');
  const baseline = () => join(dir, 'baseline.json');
  const write = (gate: string) => writeFileSync(study(), ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies: [full]', `gate: {baseline: baseline.json${gate}}`, ''].join('\n'));

  beforeEach(async () => {
    dir = tempDir('ctxsim-limits-');
    for (const f of ['kavya-late-order.yaml', 'noah-amnesia.yaml']) cpSync(join(ROOT, 'scenarios', f), join(dir, 'scenarios', f));
    write('');
    const r = await cli('run', study(), '--save-baseline', baseline(), '--out', join(dir, 'turns.csv'), '--quiet');
    expect(r.code, r.err).toBe(0);
  });

  afterEach(() => {
    delete process.env.GITHUB_STEP_SUMMARY;
  });

  it('the baseline records the study’s limits, defaults given', () => {
    expect(readBaseline(baseline()).study.gate).toEqual({ maxCostIncrease: '5%', maxRetentionDrop: '0', maxAnswerDrop: '0' });
  });

  it('a raised limit and a regression in the same pull request: the gate fails, and every report names the raised limit', async () => {
    write(', maxCostIncrease: 5000%, maxRetentionDrop: 100%');
    const [junit, comment, summary] = ['j.xml', 'c.md', 's.md'].map((f) => join(dir, f)) as [string, string, string];
    process.env.GITHUB_STEP_SUMMARY = summary;
    const r = await cli('check', study(), '--model', 'gpt-4o', '--junit', junit, '--comment', comment, '--quiet');
    expect(r.code, r.err).toBe(1);
    const named = [
      "gate.maxCostIncrease: 5% → 5000%; the baseline's 5% applies until a baseline saved with 5000% is committed",
      "gate.maxRetentionDrop: 0 → 100%; the baseline's 0 applies until a baseline saved with 100% is committed",
    ];
    expect(r.out).toContain('Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.');
    for (const text of [r.out, readFileSync(comment, 'utf8'), readFileSync(summary, 'utf8')]) for (const n of named) expect(text).toContain(`- ${n}\n`);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('<property name="limits" value="cost up to +5%, up to 0 more probes lost"/>');
    for (const n of named) expect(xml).toContain(`<property name="difference" value="${n}"/>`);
  });

  it('limits given on the command line win (the workflow’s); saving the baseline with the raised limit accepts it', async () => {
    write(', maxCostIncrease: 5000%');
    expect((await cli('check', study(), '--model', 'gpt-4o', '--max-cost-increase', '5000%', '--quiet')).code).toBe(0);
    expect((await cli('run', study(), '--save-baseline', baseline(), '--force', '--out', join(dir, 'turns.csv'), '--quiet')).code).toBe(0);
    const r = await cli('check', study(), '--model', 'gpt-4o', '--quiet');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('Limits per scenario × policy: cost up to +5000%, up to 0 more probes lost.');
  });

  it('a baseline saved before it recorded limits applies the study’s, and one recording a limit it cannot read is refused at its place', async () => {
    const text = readFileSync(baseline(), 'utf8');
    const old = JSON.parse(text) as { study: Record<string, unknown> };
    delete old.study.gate;
    writeFileSync(baseline(), JSON.stringify(old, null, 2));
    write(', maxCostIncrease: 5000%');
    expect((await cli('check', study(), '--model', 'gpt-4o', '--quiet')).code).toBe(0);
    writeFileSync(baseline(), text.replace('"maxCostIncrease": "5%"', '"maxCostIncrease": "0.05"'));
    const bad = await cli('check', study(), '--quiet');
    expect(bad.code).toBe(2);
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes('"maxCostIncrease"'));
    expect(bad.err).toBe(`ctxsim: ${baseline()}:${at + 1}:${lines[at]!.indexOf('"5%"') + 1} study.gate.maxCostIncrease: write 5% or 0.05% (a bare number could be a fraction or a percentage), got 0.05\n`);
  });
});
