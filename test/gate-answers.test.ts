import { describe, expect, it } from 'vitest';
import type { Baseline, BaselineRow, StudyFingerprint } from '../src/gate/baseline.js';
import { compare } from '../src/gate/compare.js';
import { DEFAULT_LIMITS, limitsText } from '../src/gate/limits.js';
import { gateMarkdown } from '../src/report/gate.js';

/**
 * The gate judges what the chat model answered as it judges retention, on
 * the rows where the baseline and the run both measured answers: a probe
 * limit, a points limit, and nothing for rows without answers.
 */

const study: StudyFingerprint = { model: 'gpt-4o-mini', tokenizer: 'o200k_base', prices: 'builtin', cache: 'auto ttl=300s', rules: 'openai', seed: 42, policies: ['full'], scenarios: { s: 'h' } };

const row = (answered: number | undefined, retained = 4): BaselineRow => ({
  scenario: 's',
  policy: 'full',
  model: 'gpt-4o-mini',
  inputTokens: 100,
  cachedTokens: 0,
  outputTokens: 10,
  auxTokens: 0,
  costMicroUsd: 20,
  probes: 4,
  retained,
  overflowTurns: 0,
  latencyP95Ms: 100,
  ...(answered !== undefined && { answered }),
});

const baseline = (r: BaselineRow): Baseline => ({ schemaVersion: 1, studyHash: 'x', study, rows: [r] });

describe('the gate and answered probes', () => {
  it('fails a row that answers more probes fewer than the limit, with the counts, as a retention drop does', () => {
    const r = compare(baseline(row(3)), baseline(row(1)), DEFAULT_LIMITS);
    expect(r.failed).toBe(true);
    expect(r.rows[0]!.reasons).toEqual(['answered 3/4 → 1/4 (2 more probes unanswered, limit 0)']);
    expect(compare(baseline(row(3)), baseline(row(1)), { ...DEFAULT_LIMITS, maxAnswerDrop: { probes: 2 } }).failed).toBe(false);
    expect(compare(baseline(row(3)), baseline(row(4)), DEFAULT_LIMITS).failed).toBe(false);
  });

  it('takes a limit in points of answer retention', () => {
    const r = compare(baseline(row(4)), baseline(row(3)), { ...DEFAULT_LIMITS, maxAnswerDrop: { points: 0.25 } });
    expect(r.failed).toBe(false);
    const s = compare(baseline(row(4)), baseline(row(2)), { ...DEFAULT_LIMITS, maxAnswerDrop: { points: 0.25 } });
    expect(s.rows[0]!.reasons).toEqual(['answered 4/4 → 2/4 (100.0% → 50.0%, limit −25% points)']);
  });

  it('judges no answers when either run did not measure them, and says the limit only when both did', () => {
    expect(compare(baseline(row(4)), baseline(row(undefined)), DEFAULT_LIMITS).failed).toBe(false);
    expect(compare(baseline(row(undefined)), baseline(row(0)), DEFAULT_LIMITS).failed).toBe(false);
    expect(limitsText(DEFAULT_LIMITS)).toBe('cost up to +5%, up to 0 more probes lost');
    expect(limitsText({ ...DEFAULT_LIMITS, maxAnswerDrop: { points: 0.02 } }, true)).toBe('cost up to +5%, up to 0 more probes lost, answer retention down by up to 2% (points)');
    const passed = gateMarkdown(compare(baseline(row(3)), baseline(row(3)), DEFAULT_LIMITS));
    expect(passed).toContain('Limits per scenario × policy: cost up to +5%, up to 0 more probes lost, up to 0 more probes unanswered.');
    expect(passed).toContain('- full: cost $0.000020 → $0.000020 (+0.0%), retained 4/4 → 4/4, answered 3/4 → 3/4 (1 scenario)');
    const plain = gateMarkdown(compare(baseline(row(undefined)), baseline(row(undefined)), DEFAULT_LIMITS));
    expect(plain).toContain('Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.');
    expect(plain).toContain('- full: cost $0.000020 → $0.000020 (+0.0%), retained 4/4 → 4/4 (1 scenario)');
  });
});
