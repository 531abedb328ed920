import { describe, expect, it } from 'vitest';
import { fixture, labels, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   system 6 · t1: u1 12, a1 15 (27) · t2: u2 9, a2 18 (27) · t3: u3 9, call3 7, tool3 4, a3 10 (30)
 *   t4: u4 11, a4 3 (14) · t5: u5 6, a5 3
 * Summarizer template at summaryTokens=60: 187 chars → 46 tokens.
 * Salient spans (what a summary's "Known:" list can carry; " entry;" after a space, chars4):
 *   t1: Kavya 1, SE-10423 2, 8 pm 1 · t2: DryFit 2, 3 0, Rs 249 2, CushionRun 3, Rs 199 2 · t3: DryFit, DRYFIT-3 2, 1 0
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
    // Out: header "Summary of the conversation so far (turns 1-2)." 47 chars → 11; the list costs 1 + 14 ≤ 60, all 8 spans stay:
    // " Known: Kavya; …; Rs 199." 69 → 17 (28); the turn-2 topic (its words without DryFit, 3, Rs, 249, CushionRun, 199)
    // 97 → 24 (52); the turn-1 topic 102 → 25 and the first padding sentence 43 → 10 do not fit. 213 chars → 53 tokens.
    const t3 = turns[2]!;
    expect(labels(t3.calls[0]!.messages)).toEqual(['system', 'summary', 'u3']);
    expect(t3.calls[0]!.upkeep).toEqual([{ kind: 'summary', model: 'gpt-4o-mini', inputTokens: 100, outputTokens: 53, sync: true }]);
    expect(t3.calls[0]!.messages[1]!.content).toBe(
      'Summary of the conversation so far (turns 1-2). Known: Kavya; SE-10423; 8 pm; DryFit; 3; Rs 249; CushionRun; Rs 199. ' +
        'In turn 2 the user asked about running socks, and the assistant answered about ankle socks pack.',
    );
    // The call after the tool results reuses the summary: no second summarization.
    expect(labels(t3.calls[1]!.messages)).toEqual(['system', 'summary', 'u3', 'call3', 'tool3']);
    expect(t3.calls[1]!.upkeep).toEqual([]);
    expect(t3.calls[0]!.stablePrefix).toBe(2);
  });

  it('folds again on top of the old summary, and the fact stays known', () => {
    // turn 4: t3 30 + u4 11 = 41 > 40 → fold t3. In: template 46 + old summary 53 + 30 = 129.
    // Out: header 11; the old entries and DRYFIT-3, 1 (DryFit is one entry, mentioned twice): " Known: …; DRYFIT-3; 1." 82 → 20 (31);
    // the newest topic, turn 3's, 121 → 30 would make 61 > 60, and the walk from the newest stops there: no topic is kept; padding 10 + 8 + 8 (57),
    // the fourth sentence (8) does not fit. 239 chars → 59 tokens.
    const t4 = turns[3]!;
    expect(labels(t4.calls[0]!.messages)).toEqual(['system', 'summary', 'u4']);
    expect(t4.calls[0]!.upkeep.map((u) => [u.inputTokens, u.outputTokens])).toEqual([[129, 59]]);
    expect(t4.calls[0]!.messages[1]!.content).toBe(
      'Summary of the conversation so far (turns 1-3). Known: Kavya; SE-10423; 8 pm; DryFit; 3; Rs 249; CushionRun; Rs 199; DRYFIT-3; 1. ' +
        'The conversation stayed polite throughout. Nothing else needed a follow-up. The user gave no further details.',
    );
    // turn 5: t4 14 + u5 6 = 20: no fold; the order number comes from the summary, the same message as at turn 4.
    const t5 = turns[4]!;
    expect(labels(t5.calls[0]!.messages)).toEqual(['system', 'summary', 'u4', 'a4', 'u5']);
    expect(t5.calls[0]!.messages[1]).toBe(t4.calls[0]!.messages[1]);
    expect(t5.calls[0]!.messages[1]!.content).toContain('SE-10423;');
    expect(turns.flatMap((t) => t.after)).toEqual([]);
  });

  it('starts a new session blank after sessionCap exchanges', () => {
    const capped = trace(conversation, 'summary:threshold=40,summaryTokens=60,sessionCap=3');
    // turn 4 starts a new session: no history, no summary.
    expect(labels(capped[3]!.calls[0]!.messages)).toEqual(['system', 'u4']);
    expect(labels(capped[4]!.calls[0]!.messages)).toEqual(['system', 'u4', 'a4', 'u5']);
  });
});
