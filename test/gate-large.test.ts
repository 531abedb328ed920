import { describe, expect, it } from 'vitest';
import type { Baseline, BaselineRow, StudyFingerprint } from '../src/gate/baseline.js';
import { DEFAULT_LIMITS } from '../src/gate/limits.js';
import { compare } from '../src/gate/compare.js';
import { gateMarkdown } from '../src/report/gate.js';
import { align } from '../src/report/text.js';

/** A study of 150,000 scenario × policy rows: more lines than a call's arguments can hold. */
const ROWS = 150_000;

const study: StudyFingerprint = { model: 'gpt-4o-mini', tokenizer: 'o200k_base', prices: 'builtin', cache: 'auto ttl=300s', rules: 'openai', seed: 42, policies: ['full'], scenarios: {} };
const row = (i: number, costMicroUsd: number): BaselineRow => ({ scenario: `s${i}`, policy: 'full', model: 'gpt-4o-mini', inputTokens: 100, cachedTokens: 0, outputTokens: 10, auxTokens: 0, costMicroUsd, probes: 4, retained: 4, overflowTurns: 0, latencyP95Ms: 100 });
const baseline = (cost: (i: number) => number): Baseline => ({ schemaVersion: 1, studyHash: 'x', study, rows: Array.from({ length: ROWS }, (_, i) => row(i, cost(i))) });

describe('the gate’s report of a large study', () => {
  it('lists every row, verbose or failing, one line each', () => {
    const verbose = gateMarkdown(compare(baseline(() => 20), baseline(() => 20), DEFAULT_LIMITS), { verbose: true });
    expect(verbose.split('\n').filter((l) => l.startsWith('| pass | s')).length).toBe(ROWS);
    // Every row costs twice as much: every row fails, and is listed.
    const failing = gateMarkdown(compare(baseline(() => 20), baseline(() => 40), DEFAULT_LIMITS));
    expect(failing.split('\n').filter((l) => l.startsWith('| fail | s')).length).toBe(ROWS);
  });

  it('says the rows on one side only in a line per policy and side, however many scenarios they are in', () => {
    // The baseline has 150,000 scenarios of `full`; the run has the first 4 of them and a new policy on 5.
    const now: Baseline = { ...baseline(() => 20), rows: [...baseline(() => 20).rows.slice(0, 4), ...Array.from({ length: 5 }, (_, i) => ({ ...row(i, 20), policy: 'window' }))] };
    const text = gateMarkdown(compare(baseline(() => 20), now, DEFAULT_LIMITS));
    const aside = text.split('\n').filter((l) => / for /.test(l));
    expect(aside).toEqual([`- window: added for 5 scenarios: s0, s1, s2, …`, `- full: removed for ${ROWS - 4} scenarios: s10, s100, s1000, …`]); // in the order of the rows (by scenario id)
    const two: Baseline = { ...now, rows: [...now.rows.slice(0, 4), ...now.rows.slice(4, 6)] };
    expect(gateMarkdown(compare(baseline(() => 20), two, DEFAULT_LIMITS)).split('\n').filter((l) => / added for /.test(l))).toEqual(['- window: added for s0 and s1']);
  });

  it('aligns a table of as many rows (its column widths by a loop, not a spread)', () => {
    const rows = Array.from({ length: ROWS }, (_, i) => [`s${i}`, String(i)]);
    const lines = align(rows, new Set([1])).trimEnd().split('\n');
    // The widest cells: `s149999` (7 characters) and `149999` (6), numbers right-aligned.
    expect([lines.length, lines[0], lines.at(-1)]).toEqual([ROWS, 's0            0', 's149999  149999']);
  });
});
