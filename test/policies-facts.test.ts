import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blocks } from '../src/policies/blocks.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { fixture, labels, longFactConversation, scenario, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   t1: u1 12, a1 15 · t2: u2 9, a2 18 · t3: u3 9, call3 7, tool3 4, a3 10 · t4: u4 11, a4 3 · t5: u5 6, a5 3
 *   Extraction template: 207 chars → 51 tokens.
 * The extractor reads the text only: each sentence that says something of the user, the assistant or the task is a
 * third-person statement (size after a space, chars4; salience by salienceOf; turn):
 *   S1 "The user is Kavya." 19 → 4, 5, t1 · S2 "The user’s order SE-10423 hasn't arrived." 42 → 10, 12, t1
 *   S3 "It is out for delivery and should arrive by 8 pm." 50 → 12, 10, t1 (the reply's "Sorry Kavya!" states nothing)
 *   S4 "DryFit ankle socks (pack of 3) for Rs 249." 43 → 10, 17, t2 · S5 "CushionRun for Rs 199." 23 → 5, 12, t2
 *     (the reply "Yes: … Rs 249 and CushionRun for Rs 199." is two statements, one per value; its "Yes:" is cut; the question states nothing)
 *   S6 "Add the DryFit ones to the user’s cart please." 47 → 11, 7, t3 · S7 "The assistant called add_to_cart with DRYFIT-3." 48 → 12, 12, t3
 *   S8 "Done, DryFit ankle socks are in the user’s cart." 49 → 12, 8, t3 (the tool result {cart_items: 1} has no error and no identifier)
 *   S9 "The user’s email is kavya@old.example if the assistant needs it." 65 → 16, 11, t4 ("you need" → "the assistant needs") · S10 "Order SE-10423." 16 → 4, 9, t5
 */
const conversation = fixture('late-order-tools.yaml');
const S1 = 'The user is Kavya.';
const S2 = "The user’s order SE-10423 hasn't arrived.";
const S3 = 'It is out for delivery and should arrive by 8 pm.';
const S4 = 'DryFit ankle socks (pack of 3) for Rs 249.';
const S5 = 'CushionRun for Rs 199.';
const S6 = 'Add the DryFit ones to the user’s cart please.';
const S7 = 'The assistant called add_to_cart with DRYFIT-3.';
const S8 = 'Done, DryFit ankle socks are in the user’s cart.';
const S9 = 'The user’s email is kavya@old.example if the assistant needs it.';

describe('facts policy', () => {
  const turns = trace(conversation, 'facts:recent=1');

  it('pins a fact sheet after the system prompt, plus the last exchanges (hand-worked)', () => {
    expect(labels(turns[0]!.calls[0]!.messages)).toEqual(['system', 'u1']);
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u1', 'a1', 'u2']);
    // The statements of turn 1, in the order read.
    expect(turns[1]!.calls[0]!.messages[1]).toEqual({ role: 'system', content: `Known facts: ${S1} ${S2} ${S3}`, origin: 'facts' });
    expect(turns[1]!.calls[0]!.stablePrefix).toBe(2);
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u4', 'a4', 'u5']);
    // Turns 1-4's statements in order of discovery: 3 + 4 + 10 + 12 + 10 + 5 + 11 + 12 + 12 + 16 = 95, within the default 500.
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe(`Known facts: ${[S1, S2, S3, S4, S5, S6, S7, S8, S9].join(' ')}`);
  });

  it('makes one extraction call after every turn: template + the turn in, the facts found out', () => {
    // in: 51 + turn; out: one statement a line: S1–S3 18 + 41 + 49 + 2 = 110 → 27, S4–S5 42 + 22 + 1 = 65 → 16,
    // S6–S8 46 + 47 + 48 + 2 = 143 → 35, S9 64 → 16, S10 15 → 3
    expect(turns.map((t) => t.after.map((u) => [u.kind, u.inputTokens, u.outputTokens, u.sync]))).toEqual([
      [['extract', 51 + 27, 27, false]],
      [['extract', 51 + 27, 16, false]],
      [['extract', 51 + 30, 35, false]],
      [['extract', 51 + 14, 16, false]],
      [['extract', 51 + 9, 3, false]],
    ]);
    expect(turns.flatMap((t) => t.calls.flatMap((c) => c.upkeep))).toEqual([]);
    expect(turns[0]!.after[0]!.model).toBe('gpt-4o-mini');
    expect(trace(conversation, 'facts:extractModel=gpt-4o')[0]!.after[0]!.model).toBe('gpt-4o');
  });

  it('keeps the sheet across a session restart', () => {
    const capped = trace(conversation, 'facts:recent=1,sessionCap=2');
    expect(labels(capped[2]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u3']);
  });

  it('misses facts at recall 0 and reuses one sheet object while nothing changes', () => {
    const missed = trace(conversation, 'facts:recall=0');
    expect(labels(missed[4]!.calls[0]!.messages)).not.toContain('facts');
    // Every extraction answers "none" (1 token).
    expect(missed.map((t) => t.after.map((u) => u.outputTokens))).toEqual([[1], [1], [1], [1], [1]]);
    // Turn 2 says the same sentence again (the replies state nothing): the extraction finds it again, the sheet does not change,
    // and turn 3 is sent the same object as turn 2 (count once, stable cache prefix).
    const restated = trace(
      scenario(`
id: restated
turns:
  - user: My order SE-10423 is late.
    assistant: Sorry about that.
  - user: My order SE-10423 is late.
    assistant: Not yet, sorry.
  - user: Thanks.
`),
      'facts',
    );
    // out: "The user’s order SE-10423 is late." 34 → 8 after turns 1 and 2, "none" → 1 after turn 3.
    expect(restated.map((t) => t.after.map((u) => u.outputTokens))).toEqual([[8], [8], [1]]);
    expect(restated[1]!.calls[0]!.messages[0]).toEqual({ role: 'system', content: 'Known facts: The user’s order SE-10423 is late.', origin: 'facts' });
    expect(restated[2]!.calls[0]!.messages[0]).toBe(restated[1]!.calls[0]!.messages[0]);
  });

  it('keeps the sheet within sheetTokens: the least salient, then the fewest-found, then the longest-unseen entry goes first (hand-worked)', () => {
    // Sizes and saliences of S1–S10 in the header comment; "Known facts:" 12 chars → 3.
    const at30 = trace(conversation, 'facts:recent=1,sheetTokens=30');
    // After turn 1: 3 + 4 + 10 + 12 = 29 ≤ 30, all stay.
    expect(at30[1]!.calls[0]!.messages[1]!.content).toBe(`Known facts: ${S1} ${S2} ${S3}`);
    // After turn 2: 29 + 10 + 5 = 44. Dropped by salience: S1 (5) → 40, S3 (10) → 28 ≤ 30.
    expect(at30[2]!.calls[0]!.messages[1]!.content).toBe(`Known facts: ${S2} ${S4} ${S5}`);
    // After turn 3: 28 + 11 + 12 + 12 = 63. Dropped: S6 (7) → 52, S8 (8) → 40; then of the three of salience 12, all found once,
    // the longest unseen: S2 (turn 1) → 30. The exact count of "Known facts: S4 S5 S7" is 126 chars → 31 > 30 (each entry's
    // sum rounds down): the next in the order, S5 (turn 2), goes too (103 chars → 25).
    expect(at30[3]!.calls[0]!.messages[1]!.content).toBe(`Known facts: ${S4} ${S7}`);
    // After turn 4: 25 + 16 = 41. Dropped: S9 (11) → 25.
    expect(at30[4]!.calls[0]!.messages[1]!.content).toBe(`Known facts: ${S4} ${S7}`);
    // At 6 no statement fits beside the header (3): the smallest, S1, needs 4 (after turn 1), and S5 5 (after turn 2). No sheet is ever sent.
    expect(trace(conversation, 'facts:sheetTokens=6').flatMap((t) => t.calls.flatMap((c) => labels(c.messages)))).not.toContain('facts');
    // At 13 one statement fits at a time. After turn 1: 29, drop S1 (5) → 25, S3 (10) → 13: S2 (54 chars → 13). After turn 2:
    // 3 + 10 + 10 + 5 = 28, drop of salience 12 the older S2 → 18, then S5 → 13: S4 (55 chars → 13). After turns 3 and 4 S4 (17) is
    // the most salient of all and stays alone.
    expect(trace(conversation, 'facts:sheetTokens=13').map((t) => t.calls[0]!.messages.find((m) => m.origin === 'facts')?.content)).toEqual([
      undefined,
      `Known facts: ${S2}`,
      `Known facts: ${S4}`,
      `Known facts: ${S4}`,
      `Known facts: ${S4}`,
    ]);
  });

  it('finds only what the messages it reads say: a fact stated elsewhere in the turn is missed', () => {
    // A turn whose fact is stated in the reply only; a sheet that reads the user message alone misses it
    // (the scenario's `facts:` annotation is not read: "my parcel" names an attribute, not a value).
    const c = scenario(`
id: partial
turns:
  - user: Where is my parcel?
    facts: {tracking: ZX-981}
    assistant: Your tracking number is ZX-981.
`);
    const turn = c.turns[0]!;
    const sheet = blocks.factSheet({ recall: 1 }, { tokens: new TokenCounter('chars4'), random: () => 0, model: 'gpt-4o-mini', blocks });
    // in: template 51 + "Where is my parcel?" 19 chars → 4; out: "none" → 1.
    const info = { turn: { index: turn.index, injection: turn.injection }, time: 0 };
    expect(sheet.read([turn.user], info)).toMatchObject({ inputTokens: 55, outputTokens: 1 });
    expect(sheet.messages()).toEqual([]);
    // in: 51 + 4 + "Your tracking number is ZX-981." 31 → 7 = 62; out: "The user’s tracking number is ZX-981." 37 → 9.
    expect(sheet.read([turn.user, turn.assistant!], info)).toMatchObject({ inputTokens: 62, outputTokens: 9 });
    expect(sheet.messages()[0]!.content).toBe('Known facts: The user’s tracking number is ZX-981.');
  });

  for (const encoding of ['chars4', 'o200k_base'] as const) {
    it(`never sends a sheet over sheetTokens, however long and many the facts (property, ${encoding})`, () => {
      const tokens = new TokenCounter(encoding);
      fc.assert(
        fc.property(longFactConversation, fc.integer({ min: 1, max: 600 }), (c, sheetTokens) => {
          for (const t of trace(c, `facts:sheetTokens=${sheetTokens}`, tokens)) {
            for (const m of t.calls[0]!.messages) if (m.origin === 'facts') expect(tokens.text(m.content)).toBeLessThanOrEqual(sheetTokens);
          }
        }),
        { seed: 42, numRuns: encoding === 'chars4' ? 150 : 40 },
      );
    });
  }
});

