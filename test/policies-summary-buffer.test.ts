import { describe, expect, it } from 'vitest';
import { fixture, labels, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   system 6 · t1: u1 12, a1 15 (27) · t2: u2 9, a2 18 (27) · t3: u3 9, call3 7, tool3 4, a3 10 (30)
 *   t4: u4 11, a4 3 (14) · t5: u5 6, a5 3
 * Summarizer template at summaryTokens=30: 187 chars → 46 tokens. A summary is its header
 * ("Summary of the conversation so far (turn 1)." 44 chars → 11, "(turns 1-2)." 47 → 11) and a "Known:" list of the folded
 * spans (t1: Kavya, SE-10423, 8 pm · t2: DryFit, 3, Rs 249, CushionRun, Rs 199 · t3: DryFit, DRYFIT-3, 1); no topic
 * sentence fits 30 (the shortest, turn 2's, is 24 tokens after a list of 17).
 *   Folding t1: " Known: Kavya; SE-10423; 8 pm." 30 → 7 (18) + padding " The conversation stayed polite throughout." 43 → 10
 *     (28; the next, 8, does not fit): 117 chars → 29 tokens.
 *   Folding t1-t2: " Known: Kavya; SE-10423; 8 pm; DryFit; 3; Rs 249; CushionRun; Rs 199." 69 → 17 (28), no padding fits:
 *     116 chars → 29 tokens.
 *   Folding t1-t3: with DRYFIT-3 and 1 the list's sentence sums are 1 + 17 = 18 (29 with the header), but the text is
 *     129 chars → 32 > 30: the trim drops entries in drop order, the bare numbers first (3, the older, → 126 chars → 31;
 *     then 1 → 123 → 30): 30 tokens.
 */
const conversation = fixture('late-order-tools.yaml');
const summaryCalls = (spec: string) =>
  trace(conversation, spec).flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));

describe('summary-buffer policy', () => {
  it('folds what leaves a buffer of keepRecent exchanges (batch 1: every turn once full)', () => {
    const turns = trace(conversation, 'summary-buffer:budget=1000,keepRecent=1,summaryTokens=30');
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2']);
    // turn 3: buffer t1, t2 (2 ≥ keepRecent 1 + batch 1) → fold t1: in 46 + 27 = 73, out 29
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u2', 'a2', 'u3']);
    expect(turns[2]!.calls[0]!.messages[1]!.content).toBe('Summary of the conversation so far (turn 1). Known: Kavya; SE-10423; 8 pm. The conversation stayed polite throughout.');
    // turn 4: fold t2 into the summary: in 46 + 29 + 27 = 102, out 29; turn 5: fold t3: 46 + 29 + 30 = 105, out 30
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u4', 'a4', 'u5']);
    // The bounded summary drops the bare numbers 3 and 1 to stay within 30; the padding gave way to the list at turn 4.
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe(
      'Summary of the conversation so far (turns 1-3). Known: Kavya; SE-10423; 8 pm; DryFit; Rs 249; CushionRun; Rs 199; DRYFIT-3.',
    );
    expect(summaryCalls('summary-buffer:budget=1000,keepRecent=1,summaryTokens=30')).toEqual([
      [3, 73, 29],
      [4, 102, 29],
      [5, 105, 30],
    ]);
  });

  it('batches folds: with batch 2 the buffer grows to 3 exchanges before one call folds 2', () => {
    const spec = 'summary-buffer:budget=1000,keepRecent=1,batch=2,summaryTokens=30';
    const turns = trace(conversation, spec);
    // turn 3: buffer t1, t2 (2 < 1 + 2): no call, both sent verbatim
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3']);
    // turn 4: buffer t1..t3 (3) → fold t1, t2: in 46 + 27 + 27 = 100, out 29; keep t3
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    // turn 5: buffer t3, t4 (2 < 3): no call
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4', 'a4', 'u5']);
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe(
      'Summary of the conversation so far (turns 1-2). Known: Kavya; SE-10423; 8 pm; DryFit; 3; Rs 249; CushionRun; Rs 199.',
    );
    expect(summaryCalls(spec)).toEqual([[4, 100, 29]]);
  });

  it('keeps the budget: trims the buffer between folds, folds deeper when the budget demands', () => {
    const spec = 'summary-buffer:budget=70,keepRecent=2,summaryTokens=30';
    const turns = trace(conversation, spec);
    // turn 3, call 1: 6 + 27 + 27 + 9 = 69 ≤ 70, buffer of 2 = keepRecent: no fold.
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3']);
    // call 2: 6 + 20 pending leaves 44: t2 (27) fits, t1 does not → t1 is not sent (it is folded later).
    expect(labels(turns[2]!.calls[1]!.messages)).toEqual(['system', 'u2', 'a2', 'u3', 'call3', 'tool3']);
    // turn 4: 6 + 11 + 84 = 101 > 70 → fold. Room for the buffer next to a 30-token summary:
    // 70 − 17 − 30 = 23 < t3's 30, so all three exchanges are folded: in 46 + 27 + 27 + 30 = 130, out 30 (the t1-t3 summary).
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u4']);
    expect(turns[3]!.calls[0]!.messages[1]!.content).toBe(
      'Summary of the conversation so far (turns 1-3). Known: Kavya; SE-10423; 8 pm; DryFit; Rs 249; CushionRun; Rs 199; DRYFIT-3.',
    );
    expect(summaryCalls(spec)).toEqual([[4, 130, 30]]);
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
