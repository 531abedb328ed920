import type { ArtifactKind, MemoryKind, PolicyRecord, ProbeOutcome, ProbeRecord, SummaryRecord, TurnRecord } from '../types.js';
import { weightUnits } from '../records/format.js';

/** What a conversation's memory holds once it is over. */
export interface ConversationEnd {
  /** Kinds of artifact still holding a forgotten value. */
  zombies: ArtifactKind[];
  /** Bytes the policy stores. */
  storedBytes: number;
}

const NOTHING_STORED: ConversationEnd = { zombies: [], storedBytes: 0 };

/** Nearest-rank percentile of unsorted numbers (0 for none). */
export function percentile(values: readonly number[], p: number): number {
  // A typed array sorts numbers by value without a comparator call per comparison: several times faster.
  return ranked(Float64Array.from(values).sort(), p);
}

/** Nearest-rank percentile of numbers sorted in ascending order (0 for none). */
function ranked(sorted: Float64Array, p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function ratio(a: number, b: number): number | null {
  return b ? a / b : null;
}

/** What a summary row tells of how it was measured: where the policy's memory came from, and whether answers were. */
export interface Measured {
  memory: MemoryKind;
  /** The probes were also scored on the chat model's replies (`ProbeRecord.answer`). */
  answers: boolean;
}

const NOT_MEASURED: Measured = { memory: 'none', answers: false };

/**
 * One row per scenario × policy, from its turn and probe records and what it
 * stores at the end. Retention counts the probes that expect the current
 * value; a probe on a call over the context window is one of them, not
 * retained, and counts apart as an overflow probe; probes of forgotten facts
 * count apart, as zombie probes when they found a value. `weight` is how
 * many real conversations the scenario stands for (see byPolicy); `model`
 * the run's chat model (by default the first turn's); `measured` where
 * its memory came from and whether answers were measured (answered probes
 * count as retained ones do; null when answers were not measured).
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
  const totalCost = turns[turns.length - 1]!.cumulativeCost;
  // Sorted once for both percentiles (from an array: Float64Array.from with a mapping function is several times slower).
  const latencies = Float64Array.from(turns.map((t) => t.latencyMs)).sort();
  const retained = count('retained');
  const answered = measured.answers ? probes.filter((p) => p.answer === 'answered').length : null;
  return {
    scenario: first.scenario,
    policy: first.policy,
    model,
    turns: turns.length,
    inputTokens: sumOf(turns, (t) => t.inputTokens),
    cachedTokens: sumOf(turns, (t) => t.cachedTokens),
    outputTokens: sumOf(turns, (t) => t.outputTokens),
    auxTokens: sumOf(turns, (t) => t.auxInputTokens + t.auxOutputTokens + t.embedTokens),
    totalCost,
    costPerTurn: totalCost / BigInt(turns.length),
    peakInputTokens: Math.max(...turns.map((t) => t.inputTokens)),
    overflowTurns: turns.filter((t) => t.overflow).length,
    overBudgetTurns: turns.filter((t) => t.overBudget).length,
    probes: probes.length,
    retained,
    stale: count('stale'),
    missing: count('missing'),
    overflowProbes: count('overflow'),
    retention: ratio(retained, probes.length),
    firstLostTurn: lost ? lost.turn : null,
    latencyP50Ms: ranked(latencies, 50),
    latencyP95Ms: ranked(latencies, 95),
    zombieArtifacts: end.zombies.length,
    zombies: [...end.zombies],
    zombiePromptTurns: turns.filter((t) => t.zombiePrompt).length,
    zombieProbes: allProbes.filter((p) => p.violation).length,
    injectionExposureTurns: turns.filter((t) => t.injectionExposed).length,
    violations: sumOf(turns, (t) => t.violations),
    storedBytes: end.storedBytes,
    weight,
    answered,
    answerRetention: answered === null ? null : ratio(answered, probes.length),
    memory: measured.memory,
  };
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
  return totals.map((t, i) => ({ ...t.row, pareto: frontier[i]!.pareto }));
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
    const totalCost = rows.reduce((a, r) => a + r.totalCost, 0n);
    const turns = sumOf(rows, (r) => r.turns);
    const probes = sumOf(rows, (r) => r.probes);
    const retained = sumOf(rows, (r) => r.retained);
    // Weighted means: Σ(wᵢ·costᵢ) / Σwᵢ, and Σ(wᵢ·retainedᵢ) / Σ(wᵢ·probesᵢ). With every weight 1 they are the plain means.
    const weighted = rows.some((r) => r.weight !== 1);
    const w = rows.map((r) => weightUnits(r.weight));
    const weight = w.reduce((a, x) => a + x, 0n);
    const weightedCost = rows.reduce((a, r, i) => a + r.totalCost * w[i]!, 0n);
    const weightedProbes = rows.reduce((a, r, i) => a + BigInt(r.probes) * w[i]!, 0n);
    const weightedRetained = rows.reduce((a, r, i) => a + BigInt(r.retained) * w[i]!, 0n);
    // Rows read back from files written before answers were measured have no `answered`.
    const answers = rows.some((r) => (r.answered ?? null) !== null);
    const answered = answers ? sumOf(rows, (r) => r.answered ?? 0) : null;
    const weightedAnswered = rows.reduce((a, r, i) => a + BigInt(r.answered ?? 0) * w[i]!, 0n);
    const row: Omit<PolicyRecord, 'pareto'> = {
      policy,
      model,
      scenarios: rows.length,
      turns,
      inputTokens: sumOf(rows, (r) => r.inputTokens),
      cachedTokens: sumOf(rows, (r) => r.cachedTokens),
      outputTokens: sumOf(rows, (r) => r.outputTokens),
      auxTokens: sumOf(rows, (r) => r.auxTokens),
      totalCost,
      // Rounded down, as the unweighted mean always was; the mean of 1,000 is rounded to nearest, as the tables round it.
      costPerConversation: weightedCost / weight,
      ...(weighted && { costPer1000: (weightedCost * 2000n + weight) / (2n * weight) }),
      costPerTurn: turns ? totalCost / BigInt(turns) : 0n,
      overflowTurns: sumOf(rows, (r) => r.overflowTurns),
      probes,
      retained,
      stale: sumOf(rows, (r) => r.stale),
      missing: sumOf(rows, (r) => r.missing),
      overflowProbes: sumOf(rows, (r) => r.overflowProbes),
      retention: weighted ? (weightedProbes ? Number(weightedRetained) / Number(weightedProbes) : null) : ratio(retained, probes),
      storedBytesMean: Math.round(sumOf(rows, (r) => r.storedBytes) / rows.length),
      storedBytesP95: percentile(rows.map((r) => r.storedBytes), 95),
      latencyP95Ms: percentile(rows.map((r) => r.latencyP95Ms), 95),
      zombieArtifacts: sumOf(rows, (r) => r.zombieArtifacts),
      zombiePromptTurns: sumOf(rows, (r) => r.zombiePromptTurns),
      zombieProbes: sumOf(rows, (r) => r.zombieProbes),
      injectionExposureTurns: sumOf(rows, (r) => r.injectionExposureTurns),
      violations: sumOf(rows, (r) => r.violations),
      answered,
      answerRetention: answered === null ? null : weighted ? (weightedProbes ? Number(weightedAnswered) / Number(weightedProbes) : null) : ratio(answered, probes),
      memory: rows.find((r) => r.memory !== undefined && r.memory !== 'none')?.memory ?? 'none',
    };
    return { row, weightedCost };
  });
}

function sumOf<T>(rows: readonly T[], f: (r: T) => number): number {
  let n = 0;
  for (const r of rows) n += f(r);
  return n;
}
