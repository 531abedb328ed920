import type { ArtifactKind, MemoryKind, ProbeOutcome } from '../types.js';
import { aggregate, assemble } from '../records/columns.js';
import { POLICY_RECORD, SUMMARY_RECORD, type PolicyRecord, type ProbeRecord, type SummaryRecord, type TurnRecord } from '../records/registry.js';
import { weightUnits } from '../records/format.js';

/** What a conversation's memory holds once it is over. */
export interface ConversationEnd {
  /** Kinds of artifact still holding a forgotten value. */
  zombies: ArtifactKind[];
  /** Bytes the policy stores. */
  storedBytes: number;
}

const NOTHING_STORED: ConversationEnd = { zombies: [], storedBytes: 0 };

function ratio(a: number, b: number): number | null {
  return b ? a / b : null;
}

/** What a summary row tells of how it was measured: where the policy's memory came from, and whether answers were. */
export interface Measured {
  memory: MemoryKind;
  /** The probes were also scored on the chat model's replies (`ProbeRecord.answer`). */
  answers: boolean;
  /** A judge graded the replies that did not hold the value as written (`ProbeRecord.judged`, `judgedUnsent`). */
  judge?: boolean;
}

const NOT_MEASURED: Measured = { memory: 'none', answers: false };

/**
 * One row per scenario × policy, from its turn and probe records and what it
 * stores at the end. Retention counts the probes that expect the current
 * value; a probe on a call over the context window is one of them, not
 * retained, and counts apart as an overflow probe; probes of forgotten facts
 * count apart, as zombie probes when they found a value. `weight` is what
 * the scenario counts for, in real conversations, fractions allowed (see byPolicy); `model`
 * the run's chat model (by default the first turn's); `measured` where
 * its memory came from and whether answers were measured (answered probes
 * count as retained ones do; null when answers were not measured), and
 * whether a judge graded them (its yeses on values not sent count apart,
 * `judgedUnsent`; null without a judge).
 */
export function summaryOf(
  turns: readonly TurnRecord[],
  allProbes: readonly ProbeRecord[],
  end: ConversationEnd = NOTHING_STORED,
  weight = 1,
  model = turns[0]!.model,
  measured: Measured = NOT_MEASURED,
): SummaryRecord {
  const first = turns[0]!;
  const probes = allProbes.filter((p) => p.expected !== 'missing');
  const count = (o: ProbeOutcome) => probes.filter((p) => p.outcome === o).length;
  const lost = probes.find((p) => p.outcome !== 'retained');
  // The sums, peak and latency percentiles of the turns, as the registry declares them.
  const sums = aggregate(SUMMARY_RECORD, turns);
  const retained = count('retained');
  const answered = measured.answers ? probes.filter((p) => p.answer === 'answered').length : null;
  const judgedUnsent = measured.answers && measured.judge ? probes.filter((p) => p.judgedUnsent).length : null;
  return assemble(SUMMARY_RECORD, {
    ...sums,
    scenario: first.scenario,
    policy: first.policy,
    model,
    turns: turns.length,
    costPerTurn: sums.totalCost / BigInt(turns.length),
    probes: probes.length,
    retained,
    stale: count('stale'),
    missing: count('missing'),
    overflowProbes: count('overflow'),
    retention: ratio(retained, probes.length),
    firstLostTurn: lost ? lost.turn : null,
    zombieArtifacts: end.zombies.length,
    zombies: [...end.zombies],
    zombieProbes: allProbes.filter((p) => p.violation).length,
    storedBytes: end.storedBytes,
    weight,
    answered,
    answerRetention: answered === null ? null : ratio(answered, probes.length),
    memory: measured.memory,
    judgedUnsent,
  });
}

/**
 * Marks the Pareto frontier: a row is on it when no other row costs no more
 * and retains no less, with one of the two strictly better.
 */
export function markPareto<T extends { totalCost: bigint; retention: number | null }>(rows: readonly T[]): (T & { pareto: boolean })[] {
  const r = (x: T) => x.retention ?? 0;
  return rows.map((a) => ({
    ...a,
    pareto: !rows.some((b) => b !== a && b.totalCost <= a.totalCost && r(b) >= r(a) && (b.totalCost < a.totalCost || r(b) > r(a))),
  }));
}

/**
 * One row per policy × model over all scenarios, in the order they first appear, with the Pareto frontier marked over all rows.
 * Totals are plain sums; cost per conversation and retention are means weighted by the scenarios' weights.
 */
export function byPolicy(summary: readonly SummaryRecord[]): PolicyRecord[] {
  const totals = totalsByPolicy(summary);
  // The frontier is decided on Σ(wᵢ·costᵢ): every policy replays the same conversations, so it orders them as their weighted means do (and as their totals do without weights).
  const frontier = markPareto(totals.map((t) => ({ totalCost: t.weightedCost, retention: t.row.retention })));
  return totals.map((t, i) => assemble(POLICY_RECORD, { ...t.row, pareto: frontier[i]!.pareto }));
}

function totalsByPolicy(summary: readonly SummaryRecord[]): { row: Omit<PolicyRecord, 'pareto'>; weightedCost: bigint }[] {
  const groups = new Map<string, SummaryRecord[]>();
  for (const s of summary) {
    const key = `${s.policy}\0${s.model}`;
    const rows = groups.get(key);
    if (rows) rows.push(s);
    else groups.set(key, [s]);
  }
  return [...groups.values()].map((rows) => {
    const { policy, model } = rows[0]!;
    // The plain sums, mean and percentiles over the scenarios, as the registry declares them.
    const sums = aggregate(POLICY_RECORD, rows);
    const { turns, probes, totalCost, answered } = sums;
    // Weighted means: Σ(wᵢ·costᵢ) / Σwᵢ, and Σ(wᵢ·retainedᵢ) / Σ(wᵢ·probesᵢ). With every weight 1 they are the plain means.
    const weighted = rows.some((r) => r.weight !== 1);
    const w = rows.map((r) => weightUnits(r.weight));
    const weight = w.reduce((a, x) => a + x, 0n);
    const weightedCost = rows.reduce((a, r, i) => a + r.totalCost * w[i]!, 0n);
    const weightedProbes = rows.reduce((a, r, i) => a + BigInt(r.probes) * w[i]!, 0n);
    const weightedRetained = rows.reduce((a, r, i) => a + BigInt(r.retained) * w[i]!, 0n);
    // Rows read back from files written before answers were measured have no `answered` (the sum is null then).
    const weightedAnswered = rows.reduce((a, r, i) => a + BigInt(r.answered ?? 0) * w[i]!, 0n);
    const row: Omit<PolicyRecord, 'pareto'> = {
      ...sums,
      policy,
      model,
      scenarios: rows.length,
      // Rounded down, as the unweighted mean always was; the mean of 1,000 is rounded to nearest, as the tables round it.
      costPerConversation: weightedCost / weight,
      ...(weighted && { costPer1000: (weightedCost * 2000n + weight) / (2n * weight) }),
      costPerTurn: turns ? totalCost / BigInt(turns) : 0n,
      retention: weighted ? (weightedProbes ? Number(weightedRetained) / Number(weightedProbes) : null) : ratio(sums.retained, probes),
      answerRetention: answered === null ? null : weighted ? (weightedProbes ? Number(weightedAnswered) / Number(weightedProbes) : null) : ratio(answered, probes),
      memory: rows.find((r) => r.memory !== undefined && r.memory !== 'none')?.memory ?? 'none',
    };
    return { row, weightedCost };
  });
}
