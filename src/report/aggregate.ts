import type { Pico, ProbeRecord, Results, TurnRecord } from '../types.js';
import { divRound } from './format.js';

/**
 * Figures several reports share, computed once from the records. Every
 * policy replays the same conversations, so "over the conversations" means
 * the same set for each policy.
 */

/** Policy names in report order (the order of `results.policies`, i.e. of the study). */
export function policyNames(results: Pick<Results, 'policies'>): string[] {
  return results.policies.map((p) => p.policy);
}

/** Turn records grouped by policy, then by scenario, in record order. */
export function byPolicyAndScenario(turns: readonly TurnRecord[]): Map<string, TurnRecord[][]> {
  const out = new Map<string, Map<string, TurnRecord[]>>();
  for (const t of turns) {
    let scenarios = out.get(t.policy);
    if (!scenarios) out.set(t.policy, (scenarios = new Map()));
    let rows = scenarios.get(t.scenario);
    if (!rows) scenarios.set(t.scenario, (rows = []));
    rows.push(t);
  }
  return new Map([...out].map(([p, s]) => [p, [...s.values()]]));
}

/** One point of a per-turn series. */
export interface TurnPoint<V> {
  turn: number;
  value: V;
  /** How many conversations the value is taken over. */
  conversations: number;
}

/** Mean input tokens sent at each turn, over the conversations that reach it (rounded to a token). */
export function meanInputTokensByTurn(turns: readonly TurnRecord[]): Map<string, TurnPoint<number>[]> {
  const out = new Map<string, TurnPoint<number>[]>();
  for (const [policy, scenarios] of byPolicyAndScenario(turns)) {
    const sums: number[] = [];
    const counts: number[] = [];
    for (const rows of scenarios) {
      rows.forEach((r, i) => {
        sums[i] = (sums[i] ?? 0) + r.inputTokens;
        counts[i] = (counts[i] ?? 0) + 1;
      });
    }
    out.set(
      policy,
      sums.map((s, i) => ({ turn: i + 1, value: Math.round(s / counts[i]!), conversations: counts[i]! })),
    );
  }
  return out;
}

/**
 * Mean cumulative cost per conversation at each turn. A conversation that has
 * ended keeps its final total, so the curve never falls and ends at the cost
 * per conversation of the budget table.
 */
export function meanCumulativeCostByTurn(turns: readonly TurnRecord[]): Map<string, TurnPoint<Pico>[]> {
  const out = new Map<string, TurnPoint<Pico>[]>();
  for (const [policy, scenarios] of byPolicyAndScenario(turns)) {
    const longest = Math.max(...scenarios.map((s) => s.length));
    const points: TurnPoint<Pico>[] = [];
    for (let i = 0; i < longest; i++) {
      let sum = 0n;
      for (const rows of scenarios) sum += rows[Math.min(i, rows.length - 1)]!.cumulativeCost;
      points.push({ turn: i + 1, value: divRound(sum, BigInt(scenarios.length)), conversations: scenarios.length });
    }
    out.set(policy, points);
  }
  return out;
}

/** Cost split of a mean conversation: uncached input, cached input, output, upkeep (pico-dollars). */
export interface CostParts {
  input: Pico;
  cached: Pico;
  output: Pico;
  upkeep: Pico;
}

/** Mean cost parts per conversation, by policy. */
export function meanCostParts(turns: readonly TurnRecord[]): Map<string, CostParts> {
  const out = new Map<string, CostParts>();
  for (const [policy, scenarios] of byPolicyAndScenario(turns)) {
    const sum: CostParts = { input: 0n, cached: 0n, output: 0n, upkeep: 0n };
    for (const rows of scenarios) {
      for (const r of rows) {
        sum.input += r.costInput;
        sum.cached += r.costCached;
        sum.output += r.costOutput;
        sum.upkeep += r.costUpkeep;
      }
    }
    const n = BigInt(scenarios.length);
    out.set(policy, { input: divRound(sum.input, n), cached: divRound(sum.cached, n), output: divRound(sum.output, n), upkeep: divRound(sum.upkeep, n) });
  }
  return out;
}

/** Fact-age buckets (turns since the fact was stated), widening as facts get older. */
export const AGE_BUCKETS: readonly { label: string; min: number; max: number }[] = [
  { label: '0', min: 0, max: 0 },
  { label: '1–2', min: 1, max: 2 },
  { label: '3–5', min: 3, max: 5 },
  { label: '6–10', min: 6, max: 10 },
  { label: '11–20', min: 11, max: 20 },
  { label: '21–50', min: 21, max: 50 },
  { label: '51–100', min: 51, max: 100 },
  { label: '101+', min: 101, max: Infinity },
];

/** The bucket index of an age in turns. */
export function ageBucket(ageTurns: number): number {
  return AGE_BUCKETS.findIndex((b) => ageTurns >= b.min && ageTurns <= b.max);
}

/** Probes per (policy, age bucket): how many, how many retained. Buckets without probes are left out. */
export function retentionByAge(probes: readonly ProbeRecord[]): { policy: string; bucket: number; probes: number; retained: number }[] {
  const cells = new Map<string, { policy: string; bucket: number; probes: number; retained: number }>();
  // A probe of a forgotten fact expects nothing: it is not a retention probe.
  for (const p of probes.filter((x) => x.expected !== 'missing')) {
    const bucket = ageBucket(p.ageTurns);
    const key = `${p.policy}\0${bucket}`;
    let c = cells.get(key);
    if (!c) cells.set(key, (c = { policy: p.policy, bucket, probes: 0, retained: 0 }));
    c.probes++;
    if (p.outcome === 'retained') c.retained++;
  }
  return [...cells.values()];
}

/** Probes whose fact was not retained (stale or missing), in record order. */
export function lostProbes(probes: readonly ProbeRecord[]): ProbeRecord[] {
  return probes.filter((p) => p.outcome !== 'retained' && p.expected !== 'missing');
}
