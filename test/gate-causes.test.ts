import { describe, expect, it } from 'vitest';
import type { Baseline, BaselineRow, StudyFingerprint } from '../src/gate/baseline.js';
import { DEFAULT_LIMITS } from '../src/gate/limits.js';
import { compare, type Change, type GateResult } from '../src/gate/compare.js';
import { gateAnnotations, MAX_ANNOTATIONS, type Placer } from '../src/report/gate.js';
import { COMMENT_BYTES, gateComment, gateSummary, STEP_SUMMARY_BYTES, STEP_SUMMARY_LIMIT } from '../src/report/gate-summary.js';

/**
 * The gate speaks once per cause: failing rows are grouped by what moved
 * them (a model or a setting of the run, else a policy, else a scenario),
 * one GitHub annotation per cause and at most 10, each at the place of its
 * change; the step summary and the pull request comment list each cause's
 * rows under `<details>` and stay under GitHub's limits at any study size.
 * Large studies are built as baselines (no replay): 10,000 rows in
 * milliseconds.
 */

const fingerprint = (over: Partial<StudyFingerprint> = {}, scenarios = 2): StudyFingerprint => ({
  model: 'gpt-4o-mini',
  tokenizer: 'o200k_base',
  prices: 'builtin 2026-03-11',
  cache: 'auto ttl=default breakpoints=call',
  rules: 'openai',
  seed: 42,
  policies: ['full', 'window-turns:turns=2'],
  scenarios: Object.fromEntries(Array.from({ length: scenarios }, (_, i) => [`s${i}`, `h${i}`])),
  ...over,
});

const row = (scenario: string, policy: string, costMicroUsd: number, model = 'gpt-4o-mini'): BaselineRow => ({ scenario, policy, model, inputTokens: 100, cachedTokens: 0, outputTokens: 10, auxTokens: 0, costMicroUsd, probes: 1, retained: 1, overflowTurns: 0, latencyP95Ms: 100 });

/** A baseline of every scenario × policy of `study`, each row costing `cost(scenario, policy)`. */
function baseline(study: StudyFingerprint, cost: (scenario: string, policy: string) => number, model = study.model): Baseline {
  return { schemaVersion: 1, studyHash: 'x', study, rows: Object.keys(study.scenarios).flatMap((s) => study.policies.map((p) => row(s, p, cost(s, p), model))) };
}

const texts = (r: GateResult): [string[], string[]][] => r.causes.map((c) => [c.changes.map((ch) => ch.text), c.rows.map((x) => `${x.scenario} ${x.policy}`)]);

describe('causes', () => {
  it('a changed model is one cause for every row it moved', () => {
    const r = compare(baseline(fingerprint(), () => 10), baseline(fingerprint({ model: 'gpt-4o', scenarios: { s0: 'h0', s1: 'changed' } }), () => 100, 'gpt-4o'), DEFAULT_LIMITS);
    // The changed scenario s1 moved too, but the model moves every row: one cause.
    expect(texts(r)).toEqual([[['model: gpt-4o-mini → gpt-4o'], ['s0 full', 's0 window-turns:turns=2', 's1 full', 's1 window-turns:turns=2']]]);
  });

  it('changed scenarios are a cause each; a setting of the run is one cause with every change of the run', () => {
    const before = fingerprint({}, 3);
    const scenarios = compare(baseline(before, () => 10), baseline({ ...before, scenarios: { s0: 'x', s1: 'h1', s2: 'y' } }, (s) => (s === 's1' ? 10 : 20)), DEFAULT_LIMITS);
    expect(texts(scenarios)).toEqual([
      [['scenario changed: s0'], ['s0 full', 's0 window-turns:turns=2']],
      [['scenario changed: s2'], ['s2 full', 's2 window-turns:turns=2']],
    ]);
    const prices = compare(baseline(before, () => 10), baseline({ ...before, prices: 'my.json sha256:1', settings: { latency: 'a' } }, () => 20), DEFAULT_LIMITS);
    expect(texts(prices).map(([c, rows]) => [c, rows.length])).toEqual([[['prices: builtin 2026-03-11 → my.json sha256:1', 'latency: set'], 6]]);
  });

  it('a re-parameterized policy and a policy module whose file changed are a cause each; a row nothing explains is a cause without changes', () => {
    const before = fingerprint({ policies: ['full', 'window-turns:turns=2', 'keep:n=1'], modules: { keep: 'a' } }, 1);
    const after = { ...before, policies: ['full', 'window-turns:turns=4', 'keep:n=1'], modules: { keep: 'b' } };
    const r = compare(baseline(before, () => 10), baseline(after, (_, p) => (p === 'window-turns:turns=4' ? 30 : p === 'keep:n=1' ? 25 : 20)), DEFAULT_LIMITS);
    expect(texts(r)).toEqual([
      [['policy: window-turns:turns=2 → window-turns:turns=4'], ['s0 window-turns:turns=2 → window-turns:turns=4']],
      [['policy implementation changed: keep'], ['s0 keep:n=1']],
      [[], ['s0 full']],
    ]);
  });
});

describe('a sweep whose values moved', () => {
  it('adds and removes variants, never compares one value with another; a policy of one variant on each side is still paired', () => {
    const before = fingerprint({ policies: ['full', 'keep:n=1', 'keep:n=2'] }, 1);
    const cost = (_: string, p: string) => (p === 'keep:n=3' ? 30 : 10);
    const moved = compare(baseline(before, () => 10), baseline({ ...before, policies: ['full', 'keep:n=2', 'keep:n=3'] }, cost), DEFAULT_LIMITS);
    expect(moved.failed).toBe(false);
    expect(moved.differences).toEqual(['policies added: keep:n=3', 'policies removed: keep:n=1']);
    expect(moved.rows.map((r) => `${r.verdict} ${r.policy}`)).toEqual(['pass full', 'pass keep:n=2', 'added keep:n=3', 'removed keep:n=1']);
    const single = fingerprint({ policies: ['full', 'keep:n=1'] }, 1);
    const reparameterized = compare(baseline(single, () => 10), baseline({ ...single, policies: ['full', 'keep:n=3'] }, cost), DEFAULT_LIMITS);
    expect(texts(reparameterized)).toEqual([[['policy: keep:n=1 → keep:n=3'], ['s0 keep:n=1 → keep:n=3']]]);
  });
});

describe('a policy module whose imports changed', () => {
  it('is a change of the module, the file it imports named; a baseline that recorded no imports names none', () => {
    const before = fingerprint({ policies: ['full', 'keep:n=1'], modules: { keep: 'a' }, moduleImports: { keep: 'i' } }, 1);
    const cost = (_: string, p: string) => (p === 'keep:n=1' ? 20 : 10);
    const r = compare(baseline(before, () => 10), baseline({ ...before, moduleImports: { keep: 'j' } }, cost), DEFAULT_LIMITS);
    expect(r.differences).toEqual(['policy implementation changed: keep (a file it imports)']);
    expect(texts(r)).toEqual([[['policy implementation changed: keep (a file it imports)'], ['s0 keep:n=1']]]);
    const { moduleImports: _, ...older } = before;
    expect(compare(baseline(older, () => 10), baseline({ ...before, moduleImports: { keep: 'j' } }, cost), DEFAULT_LIMITS).differences).toEqual([]);
  });
});

describe('the annotations', () => {
  const placed: Placer = (c: Change) => (c.kind === 'scenario' ? { file: `scenarios/${c.scenario}.yaml`, line: 3 } : c.kind === 'model' ? { file: 'study.yaml', line: 2 } : undefined);

  it('are one per cause, at the place of its change (the study file when it has none)', () => {
    const before = fingerprint({}, 3);
    const r = compare(baseline(before, () => 10), baseline({ ...before, scenarios: { s0: 'x', s1: 'h1', s2: 'h2' } }, (s) => (s === 's0' ? 20 : 10)), DEFAULT_LIMITS);
    expect(gateAnnotations(r, { study: 'study.yaml', places: placed })).toBe(
      '::error file=scenarios/s0.yaml,line=3,title=ctxsim check%3A scenario changed%3A s0::2 regressions; the worst, s0 × full: cost $0.000010 → $0.000020 (+100.0%25, limit +5%25); the 1 other in the job summary\n',
    );
    // As before causes: a study file alone.
    expect(gateAnnotations(r, 'study.yaml')).toMatch(/^::error file=study\.yaml,title=ctxsim check%3A scenario changed%3A s0::2 regressions; /);
  });

  it('are at most 10 (GitHub shows no more): past it, the last counts the other causes and rows', () => {
    const before = fingerprint({}, 15);
    const changed = Object.fromEntries(Object.keys(before.scenarios).map((s) => [s, 'changed']));
    const r = compare(baseline(before, () => 10), baseline({ ...before, scenarios: changed }, () => 20), DEFAULT_LIMITS);
    expect(r.causes).toHaveLength(15);
    const lines = gateAnnotations(r, { study: 'study.yaml', places: placed }).split('\n').slice(0, -1);
    expect(lines).toHaveLength(MAX_ANNOTATIONS);
    expect(lines.slice(0, 9).every((l) => /^::error file=scenarios\/s\d+\.yaml,line=3,title=ctxsim check%3A scenario changed%3A s\d+::2 regressions; /.test(l))).toBe(true);
    expect(lines[9]).toBe('::error file=study.yaml,title=ctxsim check%3A 6 more causes::12 regressions from 6 other changes; every one is in the job summary');
  });
});

describe('the step summary and the comment of a large study', () => {
  const ROWS = 10_000;
  /** `n` scenarios × one policy, every row twice as dear; `changed`: each scenario changed (a cause each), else the model (one cause). */
  function large(changed: boolean, name = (i: number) => `s${i}`): GateResult {
    const ids = Array.from({ length: ROWS }, (_, i) => name(i));
    const study = { ...fingerprint(), policies: ['full'], scenarios: Object.fromEntries(ids.map((s) => [s, 'h'])) };
    const after = changed ? { ...study, scenarios: Object.fromEntries(ids.map((s) => [s, 'changed'])) } : { ...study, model: 'gpt-4o' };
    const b = (s: StudyFingerprint, cost: number, model: string): Baseline => ({ schemaVersion: 1, studyHash: 'x', study: s, rows: ids.map((id) => row(id, 'full', cost, model)) });
    return compare(b(study, 10, 'gpt-4o-mini'), b(after, 20, changed ? 'gpt-4o-mini' : 'gpt-4o'), DEFAULT_LIMITS);
  }
  const size = (s: string) => Buffer.byteLength(s, 'utf8');
  const balanced = (s: string) => (s.match(/<details>/g) ?? []).length === (s.match(/<\/details>/g) ?? []).length;
  const accept = 'npx ctxsim run study.yaml --save-baseline ctxsim-baseline.json --force';

  it('one cause of 10,000 rows: every row fits the 1 MiB summary; the comment lists what fits its 65,536 characters and counts the rest', () => {
    const r = large(false);
    const summary = gateSummary(r, { accept });
    expect(size(summary)).toBeLessThanOrEqual(STEP_SUMMARY_BYTES);
    expect(summary.match(/^\| s\d+ \| full \|/gm)).toHaveLength(ROWS);
    expect(balanced(summary)).toBe(true);
    expect(summary.endsWith(`To accept the change, save the new baseline:\n\n    ${accept}\n`)).toBe(true);
    const comment = gateComment(r, { accept, verdict: 'Verdict: …' });
    expect(size(comment)).toBeLessThanOrEqual(COMMENT_BYTES);
    const listed = comment.match(/^\| s\d+ \| full \|/gm)!.length;
    expect(listed).toBeGreaterThan(100);
    expect(comment).toContain(`\n${ROWS - listed} more rows not listed here: every row is in \`--json\` and \`--junit\`.\n`);
    expect(balanced(comment)).toBe(true);
  });

  it('10,000 causes with names of 300 characters: sections for the first 50 (10 in the comment), the rest counted, under both limits', () => {
    const r = large(true, (i) => `${'x'.repeat(290)}-${String(i).padStart(5, '0')}`);
    expect(r.causes).toHaveLength(ROWS);
    const summary = gateSummary(r, { accept });
    expect(size(summary)).toBeLessThanOrEqual(STEP_SUMMARY_BYTES);
    expect(size(summary)).toBeLessThan(STEP_SUMMARY_LIMIT);
    expect(summary.match(/^#### \d+\. /gm)).toHaveLength(50);
    // The other causes' rows in one table, each with its cause, while there is room; the rest counted.
    expect(summary).toContain(`\n#### ${ROWS - 50} more causes: ${ROWS - 50} regressions\n\n<details><summary>Their rows</summary>\n\n| cause | scenario | policy | Δ cost | retained | why |\n`);
    const more = summary.match(/^\| scenario changed: x+… \| x+… \| full \|/gm)!.length;
    expect(more).toBeGreaterThan(1000);
    expect(summary).toContain(`\n${ROWS - 50 - more} more rows not listed here: every row is in \`--json\` and \`--junit\`.\n`);
    expect(summary).toContain(`- and ${ROWS - 20} more differences\n`);
    expect(balanced(summary)).toBe(true);
    const comment = gateComment(r, { accept });
    expect(size(comment)).toBeLessThanOrEqual(COMMENT_BYTES);
    expect(comment.match(/^#### \d+\. /gm)).toHaveLength(10);
    expect(balanced(comment)).toBe(true);
  });

  it('rows whose names and reasons are long are cut, not the page: a study of 10,000 such rows stays under 1 MiB', () => {
    const r = large(false, (i) => `${'y'.repeat(5000)}${i}`);
    const summary = gateSummary(r, { accept });
    expect(size(summary)).toBeLessThanOrEqual(STEP_SUMMARY_BYTES);
    const listed = summary.match(/^\| y+… \| full \|/gm)!.length;
    expect(listed).toBeGreaterThan(500);
    expect(summary).toContain(`\n${ROWS - listed} more rows not listed here`);
    expect(balanced(summary)).toBe(true);
  });

  it('a name cannot open or close a block of the page, nor start a line', () => {
    const r = large(false, (i) => (i === 0 ? 'a</details><script>\n::error::x' : `s${i}`));
    const summary = gateSummary(r, { accept });
    expect(summary).toContain('a&lt;/details&gt;&lt;script&gt;\\x0a::error::x');
    expect(summary.split('\n').filter((l) => l.startsWith('::'))).toEqual([]);
    expect(balanced(summary)).toBe(true);
  });
});
