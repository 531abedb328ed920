import type { Results } from '../types.js';
import { fraction, usd } from '../records/format.js';

/** Aligns rows into columns; numbers right-aligned. */
export function align(rows: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n')
    .concat('\n');
}

/** The per-policy table `ctxsim run` prints. */
export function policyTable(results: Pick<Results, 'policies'>): string {
  const rows = [
    ['policy', 'scenarios', 'input tokens', 'cached', 'output', 'upkeep', 'cost/conv USD', 'retained', 'retention'],
    ...results.policies.map((p) => [
      p.policy,
      String(p.scenarios),
      String(p.inputTokens),
      String(p.cachedTokens),
      String(p.outputTokens),
      String(p.auxTokens),
      usd(p.costPerConversation, 6),
      `${p.retained}/${p.probes}`,
      p.retention === null ? '-' : `${fraction(p.retention * 100, 1)}%`,
    ]),
  ];
  return align(rows, new Set([1, 2, 3, 4, 5, 6, 7, 8]));
}
