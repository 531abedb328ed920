import { describe, expect, it } from 'vitest';
import { fixture, labels, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   system 6 · t1: u1 12, a1 15 (27) · t2: u2 9, a2 18 (27) · t3: u3 9, call3 7, tool3 4, a3 10 (30)
 *   t4: u4 11, a4 3 (14) · t5: u5 6, a5 3
 * Summarizer template at summaryTokens=60: 187 chars → 46 tokens.
 * Statements (what a summary is made of: " sentence" after a space, chars4 · salience · turn):
 *   S1 "The user is Kavya." 4 · 5 · t1 · S2 "The user’s order SE-10423 hasn't arrived." 10 · 12 · t1
 *   S3 "It is out for delivery and should arrive by 8 pm." 12 · 10 · t1 · S4 "DryFit ankle socks (pack of 3) for Rs 249." 10 · 17 · t2
 *   S5 "CushionRun for Rs 199." 5 · 12 · t2 · S6 "Add the DryFit ones to the user’s cart please." 11 · 7 · t3
 *   S7 "The assistant called add_to_cart with DRYFIT-3." 12 · 12 · t3 · S8 "Done, DryFit ankle socks are in the user’s cart." 12 · 8 · t3
 */
const conversation = fixture('late-order-tools.yaml');

describe('summary policy', () => {
  const turns = trace(conversation, 'summary:threshold=40,summaryTokens=60');

  it('sends the history verbatim while it stays under the threshold', () => {
    expect(labels(turns[0]!.calls[0]!.messages)).toEqual(['system', 'u1']);
    // turn 2: t1 27 + u2 9 = 36 ≤ 40: no summarization
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2']);
    expect(turns[1]!.calls[0]!.upkeep).toEqual([]);
  });

  it('folds everything into the summary when the threshold is passed, keeping only the new user message', () => {
    // turn 3: t1 27 + t2 27 + u3 9 = 63 > 40 → fold t1, t2. In: template 46 + 54 = 100.
    // Out: header "Summary of the conversation so far (turns 1-2)." 47 chars → 11; S1–S5 4 + 10 + 12 + 10 + 5 = 41 (52 ≤ 60), all stay,
    // in the order made; the first padding sentence (10) does not fit. 47 + 19 + 42 + 50 + 43 + 23 = 224 chars → 56 tokens.
    const t3 = turns[2]!;
    expect(labels(t3.calls[0]!.messages)).toEqual(['system', 'summary', 'u3']);
    expect(t3.calls[0]!.upkeep).toEqual([{ kind: 'summary', model: 'gpt-4o-mini', inputTokens: 100, outputTokens: 56, sync: true }]);
    expect(t3.calls[0]!.messages[1]!.content).toBe(
      "Summary of the conversation so far (turns 1-2). The user is Kavya. The user’s order SE-10423 hasn't arrived. " +
        'It is out for delivery and should arrive by 8 pm. DryFit ankle socks (pack of 3) for Rs 249. CushionRun for Rs 199.',
    );
    // The call after the tool results reuses the summary: no second summarization.
    expect(labels(t3.calls[1]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3']);
    expect(t3.calls[1]!.upkeep).toEqual([]);
    expect(t3.calls[0]!.stablePrefix).toBe(2);
  });

  it('folds again on top of the old summary, and the fact stays known', () => {
    // turn 4: t3 30 + u4 11 = 41 > 40 → fold t3. In: template 46 + old summary 56 + 30 = 132.
    // Out: header 11 + S1–S8 76 = 87 > 60: the least salient go, S1 (5) → 83, S6 (7) → 72, S8 (8) → 60. The exact count of
    // header, S2, S3, S4, S5, S7 is 253 chars → 63 > 60 (each sentence's sum rounds down): the next in the order, S3 (10), goes too.
    // 203 chars → 50 tokens; no padding (it was laid out before the trim).
    const t4 = turns[3]!;
    expect(labels(t4.calls[0]!.messages)).toEqual(['system', 'summary', 'u4']);
    expect(t4.calls[0]!.upkeep.map((u) => [u.inputTokens, u.outputTokens])).toEqual([[132, 50]]);
    expect(t4.calls[0]!.messages[1]!.content).toBe(
      "Summary of the conversation so far (turns 1-3). The user’s order SE-10423 hasn't arrived. DryFit ankle socks (pack of 3) for Rs 249. " +
        'CushionRun for Rs 199. The assistant called add_to_cart with DRYFIT-3.',
    );
    // turn 5: t4 14 + u5 6 = 20: no fold; the order number comes from the summary, the same message as at turn 4.
    const t5 = turns[4]!;
    expect(labels(t5.calls[0]!.messages)).toEqual(['system', 'summary', 'u4', 'a4', 'u5']);
    expect(t5.calls[0]!.messages[1]).toBe(t4.calls[0]!.messages[1]);
    expect(t5.calls[0]!.messages[1]!.content).toContain('SE-10423');
    expect(turns.flatMap((t) => t.after)).toEqual([]);
  });

  it('starts a new session blank after sessionCap exchanges', () => {
    const capped = trace(conversation, 'summary:threshold=40,summaryTokens=60,sessionCap=3');
    // turn 4 starts a new session: no history, no summary.
    expect(labels(capped[3]!.calls[0]!.messages)).toEqual(['system', 'u4']);
    expect(labels(capped[4]!.calls[0]!.messages)).toEqual(['system', 'u4', 'a4', 'u5']);
  });
});
