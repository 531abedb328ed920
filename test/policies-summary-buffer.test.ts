import { describe, expect, it } from 'vitest';
import { fixture, labels, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   system 6 · t1: u1 12, a1 15 (27) · t2: u2 9, a2 18 (27) · t3: u3 9, call3 7, tool3 4, a3 10 (30)
 *   t4: u4 11, a4 3 (14) · t5: u5 6, a5 3
 * Summarizer template at summaryTokens=30: 187 chars → 46 tokens. Every summary here is
 * header 11 + " Known: name: Kavya; order_id: SE-10423." 10 = 87 chars → 21 tokens (no topic or padding fits 30).
 */
const conversation = fixture('late-order-tools.yaml');
const summaryCalls = (spec: string) =>
  trace(conversation, spec).flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));

describe('summary-buffer policy', () => {
  it('folds what leaves a buffer of keepRecent exchanges (batch 1: every turn once full)', () => {
    const turns = trace(conversation, 'summary-buffer:budget=1000,keepRecent=1,summaryTokens=30');
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2']);
    // turn 3: buffer t1, t2 (2 ≥ keepRecent 1 + batch 1) → fold t1: in 46 + 27 = 73
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u2', 'a2', 'u3']);
    // turn 4: fold t2 into the summary: in 46 + 21 + 27 = 94; turn 5: fold t3: 46 + 21 + 30 = 97
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u4', 'a4', 'u5']);
    expect(summaryCalls('summary-buffer:budget=1000,keepRecent=1,summaryTokens=30')).toEqual([
      [3, 73, 21],
      [4, 94, 21],
      [5, 97, 21],
    ]);
  });

  it('batches folds: with batch 2 the buffer grows to 3 exchanges before one call folds 2', () => {
    const spec = 'summary-buffer:budget=1000,keepRecent=1,batch=2,summaryTokens=30';
    const turns = trace(conversation, spec);
    // turn 3: buffer t1, t2 (2 < 1 + 2): no call, both sent verbatim
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3']);
    // turn 4: buffer t1..t3 (3) → fold t1, t2: in 46 + 27 + 27 = 100; keep t3
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    // turn 5: buffer t3, t4 (2 < 3): no call
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4', 'a4', 'u5']);
    expect(summaryCalls(spec)).toEqual([[4, 100, 21]]);
  });

  it('keeps the budget: trims the buffer between folds, folds deeper when the budget demands', () => {
    const spec = 'summary-buffer:budget=70,keepRecent=2,summaryTokens=30';
    const turns = trace(conversation, spec);
    // turn 3, call 1: 6 + 27 + 27 + 9 = 69 ≤ 70, buffer of 2 = keepRecent: no fold.
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3']);
    // call 2: 6 + 20 pending leaves 44: t2 (27) fits, t1 does not → t1 is not sent (it is folded later).
    expect(labels(turns[2]!.calls[1]!.messages)).toEqual(['system', 'u2', 'a2', 'u3', 'call3', 'tool3']);
    // turn 4: 6 + 11 + 84 = 101 > 70 → fold. Room for the buffer next to a 30-token summary:
    // 70 − 17 − 30 = 23 < t3's 30, so all three exchanges are folded: in 46 + 27 + 27 + 30 = 130.
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u4']);
    expect(summaryCalls(spec)).toEqual([[4, 130, 21]]);
    for (const t of turns) for (const c of t.calls) expect(c.overBudget).toBe(false);
  });

  it('flags over budget when the system prompt and the new turn alone break it', () => {
    // budget 20: turn 3 call 2 needs 6 + 20 = 26 > 20 → only system + pending, flagged
    const turns = trace(conversation, 'summary-buffer:budget=20,keepRecent=1,summaryTokens=19');
    expect(labels(turns[2]!.calls[1]!.messages)).toEqual(['system', 'u3', 'call3', 'tool3']);
    expect(turns[2]!.calls[1]!.overBudget).toBe(true);
    // turn 1: 6 + 12 = 18 ≤ 20
    expect(turns[0]!.calls[0]!.overBudget).toBe(false);
  });
});
