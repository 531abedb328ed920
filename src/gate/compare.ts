import { UsageError } from '../errors.js';
import type { Baseline, BaselineRow, StudyFingerprint } from './baseline.js';

/** Retention may drop by a number of probes (`1`) or by percentage points of retention (`2%`). */
export type RetentionLimit = { probes: number } | { points: number };

export interface GateLimits {
  /** Largest allowed relative cost increase, e.g. 0.05 for 5%. */
  maxCostIncrease: number;
  maxRetentionDrop: RetentionLimit;
}

export const DEFAULT_LIMITS: GateLimits = { maxCostIncrease: 0.05, maxRetentionDrop: { probes: 0 } };

export type Verdict = 'fail' | 'pass' | 'added' | 'removed';

export interface RowComparison {
  scenario: string;
  policy: string;
  verdict: Verdict;
  /** Why it failed, in words. */
  reasons: string[];
  before?: BaselineRow;
  after?: BaselineRow;
  /** Relative cost change (0.1 = +10%), null when it cannot be computed. */
  costChange: number | null;
  /** Change in probes not retained (positive = forgets more). */
  lostChange: number;
}

export interface GateResult {
  /** What differs between the baseline's study and this one, e.g. `model: gpt-4o-mini → gpt-4o`. */
  differences: string[];
  rows: RowComparison[];
  failed: boolean;
}

/** Parses `5%` or `0.05`-style cost limits (a bare number is a percentage). */
export function parsePercent(flag: string, value: string | number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*%?\s*$/.exec(String(value));
  if (!m) throw new UsageError(`${flag}: expected a percentage such as 5%, got ${JSON.stringify(value)}`);
  return Number(m[1]) / 100;
}

/** Parses a retention limit: `2%` (points of retention) or `1` (probes). */
export function parseRetentionLimit(flag: string, value: string | number): RetentionLimit {
  const s = String(value).trim();
  if (s.endsWith('%')) return { points: parsePercent(flag, s) };
  if (!/^\d+$/.test(s)) throw new UsageError(`${flag}: expected a number of probes (1) or a percentage (2%), got ${JSON.stringify(value)}`);
  return { probes: Number(s) };
}

const lost = (r: BaselineRow) => r.probes - r.retained;
const retention = (r: BaselineRow) => (r.probes ? r.retained / r.probes : 1);

function compareRow(before: BaselineRow, after: BaselineRow, limits: GateLimits): RowComparison {
  const reasons: string[] = [];
  const costChange = before.costMicroUsd > 0 ? after.costMicroUsd / before.costMicroUsd - 1 : after.costMicroUsd > 0 ? Infinity : 0;
  // A tiny epsilon keeps float noise from tripping an exact-threshold comparison.
  if (costChange > limits.maxCostIncrease + 1e-9) {
    reasons.push(`cost +${(costChange * 100).toFixed(1)}% > ${(limits.maxCostIncrease * 100).toFixed(1)}%`);
  }
  const lostChange = lost(after) - lost(before);
  const lim = limits.maxRetentionDrop;
  if ('probes' in lim && lostChange > lim.probes) {
    reasons.push(`retention: ${lostChange} more probe(s) not retained (limit ${lim.probes})`);
  }
  if ('points' in lim) {
    const drop = retention(before) - retention(after);
    if (drop > lim.points + 1e-9) reasons.push(`retention −${(drop * 100).toFixed(1)} points > ${(lim.points * 100).toFixed(1)}`);
  }
  if (after.overflowTurns > before.overflowTurns) reasons.push(`new overflows: ${before.overflowTurns} → ${after.overflowTurns} turns`);
  return {
    scenario: after.scenario,
    policy: after.policy,
    verdict: reasons.length ? 'fail' : 'pass',
    reasons,
    before,
    after,
    costChange,
    lostChange,
  };
}

/** What differs between two study fingerprints, one line per difference. */
export function studyDifferences(a: StudyFingerprint, b: StudyFingerprint): string[] {
  const out: string[] = [];
  for (const key of ['model', 'tokenizer', 'prices', 'cache', 'rules', 'seed'] as const) {
    if (a[key] !== b[key]) out.push(`${key}: ${a[key]} → ${b[key]}`);
  }
  const added = b.policies.filter((p) => !a.policies.includes(p));
  const removed = a.policies.filter((p) => !b.policies.includes(p));
  if (added.length) out.push(`policies added: ${added.join(', ')}`);
  if (removed.length) out.push(`policies removed: ${removed.join(', ')}`);
  for (const [id, hash] of Object.entries(b.scenarios)) {
    if (!(id in a.scenarios)) out.push(`scenario added: ${id}`);
    else if (a.scenarios[id] !== hash) out.push(`scenario changed: ${id}`);
  }
  for (const id of Object.keys(a.scenarios)) if (!(id in b.scenarios)) out.push(`scenario removed: ${id}`);
  return out;
}

const ORDER: Record<Verdict, number> = { fail: 0, pass: 1, added: 2, removed: 3 };

/**
 * Pairs rows left unmatched whose policy was re-parameterized: within a
 * scenario, one removed and one added variant of the same policy id.
 */
function pairRenamed(removed: BaselineRow[], added: BaselineRow[]): [BaselineRow, BaselineRow][] {
  const id = (r: BaselineRow) => r.policy.split(':')[0];
  const pairs: [BaselineRow, BaselineRow][] = [];
  for (const before of removed) {
    const same = (r: BaselineRow) => r.scenario === before.scenario && id(r) === id(before);
    const a = added.filter(same);
    if (a.length === 1 && removed.filter(same).length === 1) pairs.push([before, a[0]!]);
  }
  return pairs;
}

/**
 * Compares a run with a baseline, row by row (scenario × policy). A policy
 * whose parameters changed is compared with its old variant; other rows on
 * one side only are listed as added or removed, never failed. Worst first.
 */
export function compare(baseline: Baseline, current: Baseline, limits: GateLimits): GateResult {
  const key = (r: BaselineRow) => `${r.scenario}\0${r.policy}`;
  const now = new Map(current.rows.map((r) => [key(r), r]));
  const old = new Map(baseline.rows.map((r) => [key(r), r]));
  const rows: RowComparison[] = [];
  for (const after of current.rows) {
    const before = old.get(key(after));
    if (before) rows.push(compareRow(before, after, limits));
  }
  const removed = baseline.rows.filter((r) => !now.has(key(r)));
  const added = current.rows.filter((r) => !old.has(key(r)));
  const differences = studyDifferences(baseline.study, current.study);
  const paired = new Set<BaselineRow>();
  const renames = new Set<string>();
  for (const [before, after] of pairRenamed(removed, added)) {
    const rename = `${before.policy} → ${after.policy}`;
    rows.push({ ...compareRow(before, after, limits), policy: rename });
    paired.add(before).add(after);
    renames.add(`policy: ${rename}`);
  }
  differences.push(...renames);
  for (const after of added.filter((r) => !paired.has(r))) {
    rows.push({ scenario: after.scenario, policy: after.policy, verdict: 'added', reasons: [], after, costChange: null, lostChange: 0 });
  }
  for (const before of removed.filter((r) => !paired.has(r))) {
    rows.push({ scenario: before.scenario, policy: before.policy, verdict: 'removed', reasons: [], before, costChange: null, lostChange: 0 });
  }
  rows.sort(
    (a, b) =>
      ORDER[a.verdict] - ORDER[b.verdict] ||
      (b.costChange ?? -Infinity) - (a.costChange ?? -Infinity) ||
      b.lostChange - a.lostChange ||
      (a.scenario < b.scenario ? -1 : a.scenario > b.scenario ? 1 : 0) ||
      (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0),
  );
  return { differences, rows, failed: rows.some((r) => r.verdict === 'fail') };
}
