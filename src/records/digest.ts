import type { Pico } from '../types.js';
import type { PolicyRecord, ProbeRecord, Results, SummaryRecord, TurnRecord } from './registry.js';
import { divRound, weightUnits } from './format.js';

/**
 * Figures several reports share, computed once from the records. Every
 * policy replays the same conversations, so "over the conversations" means
 * the same set for each policy. A run that streams its records feeds them
 * to a `DigestBuilder` batch by batch; records held in memory go through the
 * same builder in one batch. Costs per conversation and retention by age are
 * weighted by the scenarios' weights (read from the summary rows), as the
 * tables' are; token figures and call counts are not.
 */

/**
 * A row's name in the reports: the policy's, with ` @ model` when the run
 * has several chat models (then a row is a policy on one model).
 */
export function seriesName(r: { policy: string; model: string }, byModel: boolean): string {
  return byModel ? `${r.policy} @ ${r.model}` : r.policy;
}

/** Whether the rows are of several chat models (each row then named with its model). */
export function severalModels(rows: readonly { model: string }[]): boolean {
  return rows.some((r) => r.model !== rows[0]!.model);
}

/** Row names in report order (the order of `results.policies`: the study's models, each with its policies). */
export function policyNames(results: Pick<Results, 'policies'>): string[] {
  const byModel = severalModels(results.policies);
  return results.policies.map((p) => seriesName(p, byModel));
}

/** One point of a per-turn series. */
export interface TurnPoint<V> {
  turn: number;
  value: V;
  /** How many conversations the value is taken over. */
  conversations: number;
}

/** Cost split of a mean conversation: uncached input, cached input, output, upkeep (pico-dollars). */
export interface CostParts {
  input: Pico;
  cached: Pico;
  output: Pico;
  upkeep: Pico;
}

/** Retention probes of one row (see `seriesName`) whose fact's age fell in one bucket, and how many were retained (an overflow probe is not). */
export interface RetentionCell {
  policy: string;
  bucket: number;
  probes: number;
  retained: number;
  /** How many the chat model's reply held, when answers were measured. */
  answered?: number;
  /**
   * The same counts, each probe times its scenario's weight (in millionths:
   * see `weightUnits`); only when a probe of the cell is of a scenario whose
   * weight is not 1 (else the plain counts give the same ratios).
   */
  weighted?: { probes: bigint; retained: bigint; answered?: bigint };
}

/** One row's model calls: what its turns sent and cost per call. */
export interface CallSums {
  /** Turn records. */
  turns: number;
  /** Model calls over those turns. */
  calls: number;
  /** Turns of more than one call (an agent's loop of calls). */
  multiCallTurns: number;
  /** Prompt tokens over the calls, cached included. */
  inputTokens: number;
  /** What the calls cost: uncached input, cached input and output (upkeep apart). */
  cost: Pico;
  /** The turns' latency (ms), synchronous upkeep included: per-call latencies are not recorded. */
  latencyMs: number;
}

/**
 * Every figure the reports take from the turn and probe records, so a run
 * that streams its records keeps this instead of them. Maps are keyed by
 * row name (`seriesName`: the policy, with its model when the run has
 * several) in the order rows first appear in the turn records.
 */
export interface Digest {
  /** How many turn records (scenario × policy × turn). */
  turns: number;
  /** How many probe records. */
  probes: number;
  /** Mean input tokens sent at each turn, over the conversations that reach it (rounded to a token). */
  inputTokensByTurn: Map<string, TurnPoint<number>[]>;
  /** Mean cumulative cost per conversation at each turn, weighted by the scenarios' weights; a conversation that has ended keeps its final total. */
  cumulativeCostByTurn: Map<string, TurnPoint<Pico>[]>;
  /** Mean cost parts per conversation, weighted by the scenarios' weights. */
  costParts: Map<string, CostParts>;
  /** Retention probes per (policy, age bucket), in first-seen order; buckets without probes are left out. */
  retentionByAge: RetentionCell[];
  /** Model calls, summed over every turn (not weighted). */
  calls: Map<string, CallSums>;
  /** Retention probes whose fact was not retained (stale, missing or overflow), in record order. */
  lost: ProbeRecord[];
  /** With answers measured: retention probes whose fact was sent (retained) but the chat model's reply did not hold it, in record order. */
  unanswered: ProbeRecord[];
}

/** Running sums of one policy's turn records. */
export interface PolicySums {
  /** Per conversation: its rows so far, the last one's cumulative cost, and its scenario's weight (millionths: `weightUnits`). */
  conversations: Map<string, { rows: number; last: Pico; weight: bigint }>;
  /** By row position in a conversation (0: its first turn): input tokens, conversations reaching it, cumulative cost times weight. */
  input: number[];
  reach: number[];
  cumulative: Pico[];
  /** Cost parts times weight. */
  parts: CostParts;
  calls: CallSums;
}

/**
 * What a `DigestBuilder` has summed: plain data (maps, arrays, bigints), so
 * a worker thread can sum its scenarios' records and send this instead.
 */
export interface DigestPart {
  turns: number;
  probes: number;
  policies: Map<string, PolicySums>;
  cells: Map<string, RetentionCell>;
  lost: ProbeRecord[];
  unanswered: ProbeRecord[];
}

/**
 * Builds a `Digest` from record batches fed in record order. A batch can be
 * any slice (a scenario, one record, everything): `finish` gives the same
 * figures however the records were sliced, as long as a conversation's
 * summary row (which holds its weight) comes with or before its turn and
 * probe records; without one it weighs 1. It keeps sums per turn position
 * and per conversation, and the lost probes — not the records. The sums of
 * other builders can be merged in, in record order, as long as each holds
 * whole conversations.
 */
export class DigestBuilder {
  private readonly sums: DigestPart = { turns: 0, probes: 0, policies: new Map(), cells: new Map(), lost: [], unanswered: [] };
  /** Scenario weights (millionths) by row name and scenario. */
  private readonly weights = new Map<string, bigint>();

  /**
   * `byModel`: the records are of several chat models, so rows are named
   * with theirs (`seriesName`). A turn's `model` is the one its calls went to,
   * which `route` may change: a run with `route` has one chat model.
   */
  constructor(private readonly byModel = false) {}

  /** Adds the next records; summary rows give the weights of their conversations. */
  add(batch: { turns?: readonly TurnRecord[]; probes?: readonly ProbeRecord[]; summary?: readonly Pick<SummaryRecord, 'scenario' | 'policy' | 'model' | 'weight'>[] }): this {
    for (const s of batch.summary ?? []) this.weights.set(`${seriesName(s, this.byModel)}\0${s.scenario}`, weightUnits(s.weight));
    for (const t of batch.turns ?? []) this.addTurn(t);
    for (const p of batch.probes ?? []) this.addProbe(p);
    return this;
  }

  /** What has been summed, to be merged into another builder. */
  part(): DigestPart {
    return this.sums;
  }

  /** Adds the sums of another builder, whose records come next and hold whole conversations (none of which this one has seen). */
  merge(part: DigestPart): this {
    const sums = this.sums;
    sums.turns += part.turns;
    sums.probes += part.probes;
    for (const [policy, p] of part.policies) {
      const s = this.policy(policy);
      for (const [scenario, c] of p.conversations) {
        if (s.conversations.has(scenario)) throw new Error(`digest: conversation ${scenario} of ${policy} summed twice`);
        s.conversations.set(scenario, { ...c });
      }
      for (let i = 0; i < p.input.length; i++) {
        s.input[i] = (s.input[i] ?? 0) + p.input[i]!;
        s.reach[i] = (s.reach[i] ?? 0) + p.reach[i]!;
        s.cumulative[i] = (s.cumulative[i] ?? 0n) + p.cumulative[i]!;
      }
      s.parts.input += p.parts.input;
      s.parts.cached += p.parts.cached;
      s.parts.output += p.parts.output;
      s.parts.upkeep += p.parts.upkeep;
      s.calls.turns += p.calls.turns;
      s.calls.calls += p.calls.calls;
      s.calls.multiCallTurns += p.calls.multiCallTurns;
      s.calls.inputTokens += p.calls.inputTokens;
      s.calls.cost += p.calls.cost;
      s.calls.latencyMs += p.calls.latencyMs;
    }
    for (const [key, c] of part.cells) {
      const mine = sums.cells.get(key);
      if (mine) {
        if (c.weighted) {
          const w = weightedCell(mine);
          w.probes += c.weighted.probes;
          w.retained += c.weighted.retained;
          if (c.weighted.answered !== undefined) w.answered = (w.answered ?? 0n) + c.weighted.answered;
        } else if (mine.weighted) addWeighted(mine.weighted, c, UNIT);
        mine.probes += c.probes;
        mine.retained += c.retained;
        if (c.answered !== undefined) mine.answered = (mine.answered ?? 0) + c.answered;
      } else sums.cells.set(key, { ...c, ...(c.weighted && { weighted: { ...c.weighted } }) });
    }
    for (const p of part.lost) sums.lost.push(p);
    for (const p of part.unanswered) sums.unanswered.push(p);
    return this;
  }

  private policy(policy: string): PolicySums {
    let s = this.sums.policies.get(policy);
    if (!s) {
      const calls: CallSums = { turns: 0, calls: 0, multiCallTurns: 0, inputTokens: 0, cost: 0n, latencyMs: 0 };
      this.sums.policies.set(policy, (s = { conversations: new Map(), input: [], reach: [], cumulative: [], parts: { input: 0n, cached: 0n, output: 0n, upkeep: 0n }, calls }));
    }
    return s;
  }

  private weight(row: string, scenario: string): bigint {
    return this.weights.get(`${row}\0${scenario}`) ?? UNIT;
  }

  private addTurn(t: TurnRecord): void {
    this.sums.turns++;
    const row = seriesName(t, this.byModel);
    const s = this.policy(row);
    let c = s.conversations.get(t.scenario);
    if (!c) s.conversations.set(t.scenario, (c = { rows: 0, last: 0n, weight: this.weight(row, t.scenario) }));
    const i = c.rows++;
    const w = c.weight;
    c.last = t.cumulativeCost;
    s.input[i] = (s.input[i] ?? 0) + t.inputTokens;
    s.reach[i] = (s.reach[i] ?? 0) + 1;
    s.cumulative[i] = (s.cumulative[i] ?? 0n) + t.cumulativeCost * w;
    s.parts.input += t.costInput * w;
    s.parts.cached += t.costCached * w;
    s.parts.output += t.costOutput * w;
    s.parts.upkeep += t.costUpkeep * w;
    // Records read back from files written before calls were counted have none: a turn was one call then.
    const calls = t.calls ?? 1;
    s.calls.turns++;
    s.calls.calls += calls;
    if (calls > 1) s.calls.multiCallTurns++;
    s.calls.inputTokens += t.inputTokens;
    s.calls.cost += t.costInput + t.costCached + t.costOutput;
    s.calls.latencyMs += t.latencyMs;
  }

  private addProbe(p: ProbeRecord): void {
    this.sums.probes++;
    // A probe of a forgotten fact expects nothing: it is not a retention probe.
    if (p.expected === 'missing') return;
    const bucket = ageBucket(p.ageTurns);
    const policy = seriesName(p, this.byModel);
    const key = `${policy}\0${bucket}`;
    let c = this.sums.cells.get(key);
    if (!c) this.sums.cells.set(key, (c = { policy, bucket, probes: 0, retained: 0 }));
    const w = this.weight(policy, p.scenario);
    // The cell's weighted counts start with the first probe of a weight other than 1, counting those before it at 1.
    if (c.weighted || w !== UNIT) {
      const probe: Pick<RetentionCell, 'probes' | 'retained' | 'answered'> = { probes: 1, retained: p.outcome === 'retained' ? 1 : 0 };
      if (p.answer !== undefined) probe.answered = p.answer === 'answered' ? 1 : 0;
      addWeighted(weightedCell(c), probe, w);
    }
    c.probes++;
    if (p.outcome === 'retained') c.retained++;
    if (p.answer !== undefined) c.answered = (c.answered ?? 0) + (p.answer === 'answered' ? 1 : 0);
    if (isLost(p)) this.sums.lost.push(p);
    else if (p.answer === 'unanswered') this.sums.unanswered.push(p);
  }

  /** The figures of the records added so far (adding may go on after). */
  finish(): Digest {
    const inputTokensByTurn = new Map<string, TurnPoint<number>[]>();
    const cumulativeCostByTurn = new Map<string, TurnPoint<Pico>[]>();
    const costParts = new Map<string, CostParts>();
    const calls = new Map<string, CallSums>();
    for (const [policy, s] of this.sums.policies) {
      const n = s.conversations.size;
      inputTokensByTurn.set(
        policy,
        s.input.map((sum, i) => ({ turn: i + 1, value: Math.round(sum / s.reach[i]!), conversations: s.reach[i]! })),
      );
      // Weighted means divide by the sum of the weights: with every weight 1, n millionths over n millionths, the plain mean exactly.
      let b = 0n;
      // A conversation of k rows counts its final total at every position from k on: sum those totals by k, then carry them forward.
      const ended: Pico[] = [];
      for (const c of s.conversations.values()) {
        ended[c.rows] = (ended[c.rows] ?? 0n) + c.last * c.weight;
        b += c.weight;
      }
      let carried = 0n;
      cumulativeCostByTurn.set(
        policy,
        s.cumulative.map((sum, i) => {
          carried += ended[i] ?? 0n;
          return { turn: i + 1, value: divRound(sum + carried, b), conversations: n };
        }),
      );
      costParts.set(policy, { input: divRound(s.parts.input, b), cached: divRound(s.parts.cached, b), output: divRound(s.parts.output, b), upkeep: divRound(s.parts.upkeep, b) });
      calls.set(policy, { ...s.calls });
    }
    return {
      turns: this.sums.turns,
      probes: this.sums.probes,
      inputTokensByTurn,
      cumulativeCostByTurn,
      costParts,
      retentionByAge: [...this.sums.cells.values()].map((c) => ({ ...c, ...(c.weighted && { weighted: { ...c.weighted } }) })),
      calls,
      lost: [...this.sums.lost],
      unanswered: [...this.sums.unanswered],
    };
  }
}

/** A weight of 1, in millionths. */
const UNIT = weightUnits(1);

/** A cell's weighted counts, started from its plain counts (each at weight 1) when it has none yet. */
function weightedCell(c: RetentionCell): NonNullable<RetentionCell['weighted']> {
  if (!c.weighted) {
    c.weighted = { probes: BigInt(c.probes) * UNIT, retained: BigInt(c.retained) * UNIT };
    if (c.answered !== undefined) c.weighted.answered = BigInt(c.answered) * UNIT;
  }
  return c.weighted;
}

/** Adds counts times a weight to weighted counts. */
function addWeighted(to: NonNullable<RetentionCell['weighted']>, counts: Pick<RetentionCell, 'probes' | 'retained' | 'answered'>, w: bigint): void {
  to.probes += BigInt(counts.probes) * w;
  to.retained += BigInt(counts.retained) * w;
  if (counts.answered !== undefined) to.answered = (to.answered ?? 0n) + BigInt(counts.answered) * w;
}

/** Whether the per-policy means are weighted: some scenario's weight is not 1 (`byPolicy` then gives `costPer1000`). */
export function weightedRun(policies: readonly Pick<PolicyRecord, 'costPer1000'>[]): boolean {
  return policies.some((p) => p.costPer1000 !== undefined);
}

/** The digest of records held in memory: the streaming builder, fed them in one batch (with the summary rows, for their weights). */
export function digestRecords(records: { turns?: readonly TurnRecord[]; probes?: readonly ProbeRecord[]; summary?: readonly SummaryRecord[] }, byModel = false): Digest {
  return new DigestBuilder(byModel).add(records).finish();
}

/** What reports read besides summaries: the records themselves, or their digest. */
export type Digested = { digest: Digest } | Pick<Results, 'turns' | 'probes'>;

/** The digest given, or the one of the records given. */
export function digestOf(r: Digested & Pick<Results, 'policies'> & Partial<Pick<Results, 'summary'>>): Digest {
  return 'digest' in r ? r.digest : digestRecords(r, severalModels(r.policies));
}

/** What every report is made from: the per-scenario and per-policy summaries and the digest of the other records. */
export interface Reported extends Pick<Results, 'summary' | 'policies'> {
  digest: Digest;
}

/** What a report takes: summaries, and the records or their digest. */
export type ReportInput = Pick<Results, 'summary' | 'policies'> & Digested;

/** A report's input as reports read it (records digested once, here). */
export function reported(r: ReportInput): Reported {
  return 'digest' in r ? r : { summary: r.summary, policies: r.policies, digest: digestRecords(r, severalModels(r.policies)) };
}

/** Mean input tokens sent at each turn, over the conversations that reach it (rounded to a token). */
export function meanInputTokensByTurn(turns: readonly TurnRecord[]): Map<string, TurnPoint<number>[]> {
  return digestRecords({ turns }).inputTokensByTurn;
}

/**
 * Mean cumulative cost per conversation at each turn. A conversation that has
 * ended keeps its final total, so the curve never falls and ends at the cost
 * per conversation of the budget table.
 */
export function meanCumulativeCostByTurn(turns: readonly TurnRecord[]): Map<string, TurnPoint<Pico>[]> {
  return digestRecords({ turns }).cumulativeCostByTurn;
}

/** Mean cost parts per conversation, by policy. */
export function meanCostParts(turns: readonly TurnRecord[]): Map<string, CostParts> {
  return digestRecords({ turns }).costParts;
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
export function retentionByAge(probes: readonly ProbeRecord[]): RetentionCell[] {
  return digestRecords({ probes }).retentionByAge;
}

/** Probes whose fact was not retained (stale, missing or overflow), in record order. */
export function lostProbes(probes: readonly ProbeRecord[]): ProbeRecord[] {
  return probes.filter(isLost);
}

/** A retention probe (its fact expected) whose fact was not retained. */
function isLost(p: ProbeRecord): boolean {
  return p.expected !== 'missing' && p.outcome !== 'retained';
}
