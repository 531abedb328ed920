import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ageBucket, DigestBuilder, digestRecords, type TurnPoint } from '../src/records/digest.js';
import { divRound } from '../src/records/format.js';
import type { Pico } from '../src/types.js';
import type { ProbeRecord, TurnRecord } from '../src/records/registry.js';
import { probe, turn } from './fixtures/report/records.js';

/**
 * The digest a streamed run keeps instead of its records: fed in batches of
 * any size it gives the figures of all the records at once, and those equal
 * the figures computed the direct way (each conversation's rows side by side).
 */

/** Runs: per scenario, per policy, that many turns with these costs and tokens (scenario-major, policy-minor, like a run). */
const runs = fc.array(
  fc.array(fc.array(fc.record({ tokens: fc.nat(5000), cost: fc.bigInt(0n, 10n ** 12n), parts: fc.tuple(fc.bigInt(0n, 999n), fc.bigInt(0n, 999n)) }), { maxLength: 12 }), { minLength: 3, maxLength: 3 }),
  { minLength: 1, maxLength: 6 },
);

function records(shape: { tokens: number; cost: Pico; parts: [Pico, Pico] }[][][]): { turns: TurnRecord[]; probes: ProbeRecord[] } {
  const turns: TurnRecord[] = [];
  const probes: ProbeRecord[] = [];
  shape.forEach((policies, s) =>
    policies.forEach((rows, p) => {
      let cumulative = 0n;
      rows.forEach((r, i) => {
        cumulative += r.cost;
        const at = { scenario: `s${s}`, policy: `p${p}`, turn: i + 1 };
        turns.push(turn({ ...at, inputTokens: r.tokens, costInput: r.parts[0], costUpkeep: r.parts[1], cumulativeCost: cumulative }));
        // One probe a turn; its outcome, expectation and age vary with the numbers drawn.
        const outcomes = ['retained', 'stale', 'missing'] as const;
        probes.push(probe({ ...at, ageTurns: r.tokens % 130, outcome: outcomes[r.tokens % 3]!, expected: r.tokens % 7 === 0 ? 'missing' : 'retained' }));
      });
    }),
  );
  return { turns, probes };
}

/** The direct way: group rows by policy and conversation, then take each turn position across the conversations. */
function direct(turns: readonly TurnRecord[]): { input: Map<string, TurnPoint<number>[]>; cumulative: Map<string, TurnPoint<Pico>[]> } {
  const groups = new Map<string, Map<string, TurnRecord[]>>();
  for (const t of turns) {
    const byScenario = groups.get(t.policy) ?? groups.set(t.policy, new Map()).get(t.policy)!;
    (byScenario.get(t.scenario) ?? byScenario.set(t.scenario, []).get(t.scenario)!).push(t);
  }
  const input = new Map<string, TurnPoint<number>[]>();
  const cumulative = new Map<string, TurnPoint<Pico>[]>();
  for (const [policy, byScenario] of groups) {
    const convs = [...byScenario.values()];
    const longest = Math.max(...convs.map((c) => c.length));
    const inputs: TurnPoint<number>[] = [];
    const costs: TurnPoint<Pico>[] = [];
    for (let i = 0; i < longest; i++) {
      const reaching = convs.filter((c) => c.length > i);
      inputs.push({ turn: i + 1, value: Math.round(reaching.reduce((a, c) => a + c[i]!.inputTokens, 0) / reaching.length), conversations: reaching.length });
      // An ended conversation counts with its final total.
      const sum = convs.reduce((a, c) => a + c[Math.min(i, c.length - 1)]!.cumulativeCost, 0n);
      costs.push({ turn: i + 1, value: divRound(sum, BigInt(convs.length)), conversations: convs.length });
    }
    input.set(policy, inputs);
    cumulative.set(policy, costs);
  }
  return { input, cumulative };
}

describe('the report digest', () => {
  it('is the same fed in batches of any size as fed everything at once', () => {
    fc.assert(
      fc.property(runs, fc.array(fc.nat(40), { minLength: 1, maxLength: 10 }), (shape, cuts) => {
        const { turns, probes } = records(shape);
        const whole = digestRecords({ turns, probes });
        const builder = new DigestBuilder();
        // Batches cut at the drawn sizes (cycled), turns and probes cut apart.
        let t = 0;
        let q = 0;
        for (let k = 0; t < turns.length || q < probes.length; k++) {
          const n = cuts[k % cuts.length]!;
          builder.add({ turns: turns.slice(t, t + n), probes: probes.slice(q, q + n + 1) });
          t += n;
          q += n + 1;
        }
        expect(builder.finish()).toEqual(whole);
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('is the same merged from builders of whole scenarios (as worker threads send them), through a structured clone', () => {
    fc.assert(
      fc.property(runs, (shape) => {
        const { turns, probes } = records(shape);
        const merged = new DigestBuilder();
        for (let s = 0; s < shape.length; s++) {
          const scenario = `s${s}`;
          const part = new DigestBuilder().add({ turns: turns.filter((t) => t.scenario === scenario), probes: probes.filter((q) => q.scenario === scenario) }).part();
          merged.merge(structuredClone(part));
        }
        expect(merged.finish()).toEqual(digestRecords({ turns, probes }));
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('weighs costs and retention by age by the scenarios’ weights, the same fed whole or merged from scenarios', () => {
    fc.assert(
      fc.property(runs, fc.array(fc.constantFrom(1, 0.5, 2, 3), { minLength: 6, maxLength: 6 }), (shape, weights) => {
        const { turns, probes } = records(shape);
        const summary = shape.flatMap((policies, s) => policies.map((_, p) => ({ scenario: `s${s}`, policy: `p${p}`, model: 'gpt-4o-mini', weight: weights[s]! })));
        const whole = new DigestBuilder().add({ summary, turns, probes }).finish();
        const merged = new DigestBuilder();
        for (let s = 0; s < shape.length; s++) {
          const of = <T extends { scenario: string }>(rows: readonly T[]) => rows.filter((r) => r.scenario === `s${s}`);
          merged.merge(structuredClone(new DigestBuilder().add({ summary: of(summary), turns: of(turns), probes: of(probes) }).part()));
        }
        expect(merged.finish()).toEqual(whole);
        // The direct way, weights in millionths: each conversation's cumulative cost (its total once ended) and cost parts times its weight, over the weights.
        const units = (scenario: string) => BigInt(weights[Number(scenario.slice(1))]! * 1_000_000);
        for (const [policy, points] of whole.cumulativeCostByTurn) {
          const convs = [...new Set(turns.filter((t) => t.policy === policy).map((t) => t.scenario))].map((sc) => turns.filter((t) => t.policy === policy && t.scenario === sc));
          const total = convs.reduce((a, c) => a + units(c[0]!.scenario), 0n);
          expect(points.map((p) => p.value)).toEqual(points.map((_, i) => divRound(convs.reduce((a, c) => a + c[Math.min(i, c.length - 1)]!.cumulativeCost * units(c[0]!.scenario), 0n), total)));
          const input = divRound(convs.flat().reduce((a, t) => a + t.costInput * units(t.scenario), 0n), total);
          expect(whole.costParts.get(policy)!.input).toBe(input);
        }
        // Retention by age: counts stay plain; with a weight other than 1 among a cell's probes, its weighted counts sum each probe times its weight.
        for (const c of whole.retentionByAge) {
          const of = probes.filter((p) => p.policy === c.policy && p.expected !== 'missing' && ageBucket(p.ageTurns) === c.bucket);
          expect([c.probes, c.retained]).toEqual([of.length, of.filter((p) => p.outcome === 'retained').length]);
          if (of.every((p) => units(p.scenario) === 1_000_000n)) expect(c.weighted).toBeUndefined();
          else expect(c.weighted).toEqual({ probes: of.reduce((a, p) => a + units(p.scenario), 0n), retained: of.filter((p) => p.outcome === 'retained').reduce((a, p) => a + units(p.scenario), 0n) });
        }
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('sums each row’s model calls: calls, turns of several, prompt tokens, the calls’ cost (upkeep apart) and latency', () => {
    const d = digestRecords({
      turns: [
        turn({ scenario: 'a', policy: 'p', turn: 1, calls: 3, inputTokens: 30, costInput: 5n, costCached: 1n, costOutput: 2n, costUpkeep: 100n, latencyMs: 900 }),
        turn({ scenario: 'a', policy: 'p', turn: 2, calls: 1, inputTokens: 12, costInput: 3n, latencyMs: 200 }),
        turn({ scenario: 'b', policy: 'p', turn: 1, calls: 2, inputTokens: 20, costOutput: 4n, latencyMs: 500 }),
      ],
    });
    expect(d.calls.get('p')).toEqual({ turns: 3, calls: 6, multiCallTurns: 2, inputTokens: 62, cost: 15n, latencyMs: 1600 });
  });

  it('refuses to merge a conversation it has already summed', () => {
    const { turns } = records([[[{ tokens: 1, cost: 1n, parts: [0n, 0n] }], [], []]]);
    const part = new DigestBuilder().add({ turns }).part();
    expect(() => new DigestBuilder().add({ turns }).merge(part)).toThrow('digest: conversation s0 of p0 summed twice');
  });

  it('gives the per-turn means of each conversation taken side by side, ended ones keeping their total', () => {
    fc.assert(
      fc.property(runs, (shape) => {
        const { turns } = records(shape);
        const d = digestRecords({ turns });
        const want = direct(turns);
        expect(d.inputTokensByTurn).toEqual(want.input);
        expect(d.cumulativeCostByTurn).toEqual(want.cumulative);
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it('counts records and keeps the lost retention probes in record order', () => {
    const probes = [
      probe({ scenario: 'a', policy: 'p', turn: 1, ageTurns: 0, outcome: 'stale' }),
      probe({ scenario: 'a', policy: 'p', turn: 2, ageTurns: 1, outcome: 'missing', expected: 'missing' }),
      probe({ scenario: 'a', policy: 'p', turn: 3, ageTurns: 2, outcome: 'retained' }),
      probe({ scenario: 'b', policy: 'p', turn: 1, ageTurns: 2, outcome: 'missing' }),
    ];
    const d = new DigestBuilder().add({ probes: probes.slice(0, 2) }).add({ probes: probes.slice(2) }).finish();
    // 4 probes; the forgotten fact's (expected missing) is no retention probe: 3 count, 2 of them lost.
    expect(d.probes).toBe(4);
    expect(d.lost).toEqual([probes[0], probes[3]]);
    // Buckets: age 0 → '0' (1 probe, lost); ages 2, 2 → '1–2' (2 probes, 1 retained).
    expect(d.retentionByAge).toEqual([
      { policy: 'p', bucket: ageBucket(0), probes: 1, retained: 0 },
      { policy: 'p', bucket: ageBucket(2), probes: 2, retained: 1 },
    ]);
  });
});
