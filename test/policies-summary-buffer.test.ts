import { describe, expect, it } from 'vitest';
import { fixture, labels, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   system 6 · t1: u1 12, a1 15 (27) · t2: u2 9, a2 18 (27) · t3: u3 9, call3 7, tool3 4, a3 10 (30)
 *   t4: u4 11, a4 3 (14) · t5: u5 6, a5 3
 * Summarizer template at summaryTokens=30: 187 chars → 46 tokens. A summary is its header
 * ("Summary of the conversation so far (turn 1)." 44 chars → 11, "(turns 1-2)." 47 → 11) and the statements of what it folded
 * (" sentence" after a space, chars4 · salience · turn):
 *   S1 "The user is Kavya." 4 · 5 · t1 · S2 "The user’s order SE-10423 hasn't arrived." 10 · 12 · t1
 *   S3 "It is out for delivery and should arrive by 8 pm." 12 · 10 · t1 · S4 "DryFit ankle socks (pack of 3) for Rs 249." 10 · 17 · t2
 *   S5 "CushionRun for Rs 199." 5 · 12 · t2 · S6 "Add the DryFit ones to the user’s cart please." 11 · 7 · t3
 *   S7 "The assistant called add_to_cart with DRYFIT-3." 12 · 12 · t3 · S8 "Done, DryFit ankle socks are in the user’s cart." 12 · 8 · t3
 * What a full summary drops first: the least salient, then the one stated in the fewest turns, then the one stated longest ago.
 *   Folding t1: 11 + 4 + 10 + 12 = 37 > 30: S1 → 33, S3 → 21; no padding fits (10): "… (turn 1). S2" 86 chars → 21 tokens.
 *   Folding t2 onto it, or t1-t2 at once: 11 + S2 10 + S4 10 + S5 5 = 36 (t1-t2 at once: 52, S1 → 48, S3 → 36): of salience 12
 *     the older S2 → 26: "… (turns 1-2). S4 S5" 113 chars → 28 tokens.
 *   Folding t3 onto that: 11 + 10 + 5 + 11 + 12 + 12 = 61: S6 → 50, S8 → 38, S5 (turn 2) → 33, S7 → 21; or t1-t3 at once:
 *     87, S1 → 83, S6 → 72, S8 → 60, S3 → 48, S2 → 38, S5 → 33, S7 → 21: "… (turns 1-3). S4" 90 chars → 22 tokens.
 */
const conversation = fixture('late-order-tools.yaml');
const summaryCalls = (spec: string) =>
  trace(conversation, spec).flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));

describe('summary-buffer policy', () => {
  it('folds what leaves a buffer of keepRecent exchanges (batch 1: every turn once full)', () => {
    const turns = trace(conversation, 'summary-buffer:budget=1000,keepRecent=1,summaryTokens=30');
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2']);
    // turn 3: buffer t1, t2 (2 ≥ keepRecent 1 + batch 1) → fold t1: in 46 + 27 = 73, out 21
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u2', 'a2', 'u3']);
    expect(turns[2]!.calls[0]!.messages[1]!.content).toBe("Summary of the conversation so far (turn 1). The user’s order SE-10423 hasn't arrived.");
    // turn 4: fold t2 into the summary: in 46 + 21 + 27 = 94, out 28; turn 5: fold t3: 46 + 28 + 30 = 104, out 22
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u4', 'a4', 'u5']);
    // The bounded summary keeps its most salient statement.
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe('Summary of the conversation so far (turns 1-3). DryFit ankle socks (pack of 3) for Rs 249.');
    expect(summaryCalls('summary-buffer:budget=1000,keepRecent=1,summaryTokens=30')).toEqual([
      [3, 73, 21],
      [4, 94, 28],
      [5, 104, 22],
    ]);
  });

  it('batches folds: with batch 2 the buffer grows to 3 exchanges before one call folds 2', () => {
    const spec = 'summary-buffer:budget=1000,keepRecent=1,batch=2,summaryTokens=30';
    const turns = trace(conversation, spec);
    // turn 3: buffer t1, t2 (2 < 1 + 2): no call, both sent verbatim
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3']);
    // turn 4: buffer t1..t3 (3) → fold t1, t2: in 46 + 27 + 27 = 100, out 28; keep t3
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    // turn 5: buffer t3, t4 (2 < 3): no call
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3', 'a3', 'u4', 'a4', 'u5']);
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe(
      'Summary of the conversation so far (turns 1-2). DryFit ankle socks (pack of 3) for Rs 249. CushionRun for Rs 199.',
    );
    expect(summaryCalls(spec)).toEqual([[4, 100, 28]]);
  });

  it('keeps the budget: trims the buffer between folds, folds deeper when the budget demands', () => {
    const spec = 'summary-buffer:budget=70,keepRecent=2,summaryTokens=30';
    const turns = trace(conversation, spec);
    // turn 3, call 1: 6 + 27 + 27 + 9 = 69 ≤ 70, buffer of 2 = keepRecent: no fold.
    expect(labels(turns[2]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3']);
    // call 2: 6 + 20 pending leaves 44: t2 (27) fits, t1 does not → t1 is not sent (it is folded later).
    expect(labels(turns[2]!.calls[1]!.messages)).toEqual(['system', 'u2', 'a2', 'u3', 'call3', 'tool3']);
    // turn 4: 6 + 11 + 84 = 101 > 70 → fold. Room for the buffer next to a 30-token summary:
    // 70 − 17 − 30 = 23 < t3's 30, so all three exchanges are folded: in 46 + 27 + 27 + 30 = 130, out 22 (the t1-t3 summary).
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'summary', 'u4']);
    expect(turns[3]!.calls[0]!.messages[1]!.content).toBe('Summary of the conversation so far (turns 1-3). DryFit ankle socks (pack of 3) for Rs 249.');
    expect(summaryCalls(spec)).toEqual([[4, 130, 22]]);
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
