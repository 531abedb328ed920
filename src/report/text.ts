import type { PolicyRecord, Results } from '../types.js';
import { costPer1000, fraction, grouped, usd } from '../records/format.js';
import { caption, type ReportInfo } from '../records/info.js';

/** Aligns rows into columns; numbers right-aligned. */
export function align(rows: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n')
    .concat('\n');
}

/**
 * The per-policy table `ctxsim run` and `ctxsim merge` print, under a caption
 * (model, price-table date, tokenizer): tokens, the mean cost of a
 * conversation and of 1,000 (exact, rounded once), retention, turns and
 * probes over the model's context window, the 95th-percentile turn latency
 * and whether the policy is on the Pareto frontier of cost and retention.
 */
export function policyTable(results: Pick<Results, 'policies'>, info: Pick<ReportInfo, 'model' | 'priceDate' | 'encoding' | 'encodingEstimate'>): string {
  const rows = [
    ['policy', 'scenarios', 'input tokens', 'cached', 'output', 'upkeep', 'cost/conv USD', 'cost/1k conv USD', 'retained', 'retention', 'overflow turns', 'overflow probes', 'p95 ms', 'pareto'],
    ...results.policies.map((p) => [
      p.policy,
      String(p.scenarios),
      String(p.inputTokens),
      String(p.cachedTokens),
      String(p.outputTokens),
      String(p.auxTokens),
      usd(p.costPerConversation, 6),
      usd(costPer1000(p), 4),
      `${p.retained}/${p.probes}`,
      p.retention === null ? '-' : `${fraction(p.retention * 100, 1)}%`,
      String(p.overflowTurns),
      String(p.overflowProbes),
      String(p.latencyP95Ms),
      p.pareto ? 'yes' : '-',
    ]),
  ];
  return `${caption(info)}\n${align(rows, new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))}`;
}

/**
 * One warning line per policy that went over the model's context window:
 * on how many of its turns, and that a real backend would have rejected
 * those calls (their probes count as `overflow`, not retained).
 */
export function overflowWarnings(policies: readonly PolicyRecord[], info: Pick<ReportInfo, 'model'>): string[] {
  return policies
    .filter((p) => p.overflowTurns > 0)
    .map((p) => `${p.policy} overflowed ${info.model}'s context window on ${grouped(p.overflowTurns)} of ${grouped(p.turns)} turns: those calls would be rejected`);
}
