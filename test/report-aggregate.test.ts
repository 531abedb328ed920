import { describe, expect, it } from 'vitest';
import { AGE_BUCKETS, ageBucket, lostProbes, meanCostParts, meanCumulativeCostByTurn, meanInputTokensByTurn, retentionByAge } from '../src/records/digest.js';
import { probe, resultsOf, turn } from './fixtures/report/records.js';

// Conversation a: 3 turns costing 10, 20, 30 pico (cumulative 10, 30, 60); b: 2 turns costing 5, 0 (cumulative 5, 5).
const results = resultsOf([
  turn({ scenario: 'a', policy: 'p', turn: 1, inputTokens: 100, costInput: 4n, costCached: 6n }),
  turn({ scenario: 'a', policy: 'p', turn: 2, inputTokens: 200, costOutput: 20n }),
  turn({ scenario: 'a', policy: 'p', turn: 3, inputTokens: 300, costUpkeep: 30n }),
  turn({ scenario: 'b', policy: 'p', turn: 1, inputTokens: 51, costInput: 5n }),
  turn({ scenario: 'b', policy: 'p', turn: 2, inputTokens: 150 }),
]);

describe('per-turn series', () => {
  it('mean cumulative cost: an ended conversation keeps its total', () => {
    // turn 1: (10 + 5) / 2 = 7.5 → 8; turn 2: (30 + 5) / 2 = 17.5 → 18; turn 3: (60 + 5) / 2 = 32.5 → 33.
    expect(meanCumulativeCostByTurn(results.turns).get('p')!.map((p) => [p.turn, p.value, p.conversations])).toEqual([
      [1, 8n, 2],
      [2, 18n, 2],
      [3, 33n, 2],
    ]);
  });

  it('mean input tokens: over the conversations that reach the turn', () => {
    // turn 1: (100 + 51) / 2 = 75.5 → 76; turn 2: (200 + 150) / 2 = 175; turn 3: only a, 300.
    expect(meanInputTokensByTurn(results.turns).get('p')!.map((p) => [p.turn, p.value, p.conversations])).toEqual([
      [1, 76, 2],
      [2, 175, 2],
      [3, 300, 1],
    ]);
  });

  it('mean cost parts per conversation', () => {
    // input (4 + 5) / 2 = 4.5 → 5; cached 6 / 2 = 3; output 20 / 2 = 10; upkeep 30 / 2 = 15.
    expect(meanCostParts(results.turns).get('p')).toEqual({ input: 5n, cached: 3n, output: 10n, upkeep: 15n });
  });
});

describe('fact age', () => {
  it('buckets ages at their edges', () => {
    expect([0, 1, 2, 3, 5, 6, 10, 11, 20, 21, 50, 51, 100, 101, 5000].map((a) => AGE_BUCKETS[ageBucket(a)]!.label)).toEqual([
      '0', '1–2', '1–2', '3–5', '3–5', '6–10', '6–10', '11–20', '11–20', '21–50', '21–50', '51–100', '51–100', '101+', '101+',
    ]);
  });

  it('counts retention per policy and bucket, and lists the lost probes', () => {
    const probes = [
      probe({ scenario: 'a', policy: 'p', turn: 3, ageTurns: 2, outcome: 'retained' }),
      probe({ scenario: 'a', policy: 'p', turn: 3, ageTurns: 1, outcome: 'stale', source: 'summary' }),
      probe({ scenario: 'a', policy: 'q', turn: 3, ageTurns: 40, outcome: 'missing' }),
    ];
    expect(retentionByAge(probes)).toEqual([
      { policy: 'p', bucket: 1, probes: 2, retained: 1 },
      { policy: 'q', bucket: 5, probes: 1, retained: 0 },
    ]);
    expect(lostProbes(probes).map((p) => p.outcome)).toEqual(['stale', 'missing']);
  });
});
