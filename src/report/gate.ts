import type { GateResult, RowComparison } from '../gate/compare.js';

const money = (micro: number | undefined) => (micro === undefined ? '–' : `$${(micro / 1e6).toFixed(6)}`);
const pct = (c: number | null) => (c === null ? '–' : c === Infinity ? '+∞' : `${c >= 0 ? '+' : ''}${(c * 100).toFixed(1)}%`);
const retained = (r: RowComparison['before']) => (r ? `${r.retained}/${r.probes}` : '–');
const overflows = (r: RowComparison['before']) => (r ? String(r.overflowTurns) : '–');
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The gate's table, worst first, as GitHub markdown (also what `check` prints). */
export function gateMarkdown(result: GateResult): string {
  const failed = result.rows.filter((r) => r.verdict === 'fail').length;
  const lines = [
    `### ctxsim check: ${result.failed ? `FAILED (${failed} regression${failed === 1 ? '' : 's'})` : 'passed'}`,
    '',
  ];
  if (result.differences.length) {
    lines.push('The study differs from the baseline\'s:', '', ...result.differences.map((d) => `- ${d}`), '');
  }
  lines.push(
    '| verdict | scenario | policy | cost before | cost after | Δ cost | retained before | retained after | overflows before | overflows after | why |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...result.rows.map((r) =>
      [
        r.verdict,
        r.scenario,
        r.policy,
        money(r.before?.costMicroUsd),
        money(r.after?.costMicroUsd),
        pct(r.costChange),
        retained(r.before),
        retained(r.after),
        overflows(r.before),
        overflows(r.after),
        r.reasons.join('; '),
      ]
        .map(cell)
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    ),
  );
  return `${lines.join('\n')}\n`;
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JUnit XML: one testcase per scenario × policy; regressions are failures, added/removed rows skipped. */
export function gateJunit(result: GateResult): string {
  const failures = result.rows.filter((r) => r.verdict === 'fail').length;
  const skipped = result.rows.filter((r) => r.verdict === 'added' || r.verdict === 'removed').length;
  const cases = result.rows.map((r) => {
    const open = `    <testcase classname="${xml(r.scenario)}" name="${xml(r.policy)}"`;
    if (r.verdict === 'fail') {
      const msg = xml(r.reasons.join('; '));
      return `${open}>\n      <failure message="${msg}">${msg}</failure>\n    </testcase>`;
    }
    if (r.verdict !== 'pass') return `${open}>\n      <skipped message="${r.verdict} since the baseline"/>\n    </testcase>`;
    return `${open}/>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="ctxsim" tests="${result.rows.length}" failures="${failures}" skipped="${skipped}">`,
    `  <testsuite name="ctxsim check" tests="${result.rows.length}" failures="${failures}" skipped="${skipped}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** Machine-readable gate result. */
export function gateJson(result: GateResult): string {
  return `${JSON.stringify(
    { failed: result.failed, differences: result.differences, rows: result.rows.map((r) => ({ ...r, costChange: r.costChange === Infinity ? 'Infinity' : r.costChange })) },
    null,
    2,
  )}\n`;
}
