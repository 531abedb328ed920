import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blocks } from '../src/policies/blocks.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { fixture, labels, longFactConversation, scenario, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   t1: u1 12, a1 15 · t2: u2 9, a2 18 · t3: u3 9, call3 7, tool3 4, a3 10 · t4: u4 11, a4 3 · t5: u5 6, a5 3
 *   Extraction template: 207 chars → 51 tokens.
 * The extractor reads the text only: each salient span of the turn's messages is an entry `kind: value`.
 *   t1: Kavya (name), SE-10423 (id), 8 pm (time) · t2: DryFit (name), 3 (number), Rs 249 (money), CushionRun (name), Rs 199 (money)
 *   t3: DryFit again, DRYFIT-3 (id, the tool call's argument), 1 (number, the tool result) · t4: kavya@old.example (email)
 *   t5: Order (name: wink reads the sentence-initial "Order" as a proper noun), SE-10423
 */
const conversation = fixture('late-order-tools.yaml');

describe('facts policy', () => {
  const turns = trace(conversation, 'facts:recent=1');

  it('pins a fact sheet after the system prompt, plus the last exchanges (hand-worked)', () => {
    expect(labels(turns[0]!.calls[0]!.messages)).toEqual(['system', 'u1']);
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u1', 'a1', 'u2']);
    // The spans of turn 1: "Known facts: name: Kavya; id: SE-10423; time: 8 pm" (50 chars → 12 tokens).
    expect(turns[1]!.calls[0]!.messages[1]).toEqual({ role: 'system', content: 'Known facts: name: Kavya; id: SE-10423; time: 8 pm', origin: 'facts' });
    expect(turns[1]!.calls[0]!.stablePrefix).toBe(2);
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u4', 'a4', 'u5']);
    // Turns 1-4's spans in order of discovery, DryFit once (found again in turn 3, same value); 174 chars → 43, within the default 500.
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe(
      'Known facts: name: Kavya; id: SE-10423; time: 8 pm; name: DryFit; number: 3; money: Rs 249; name: CushionRun; money: Rs 199; ' +
        'id: DRYFIT-3; number: 1; email: kavya@old.example',
    );
  });

  it('makes one extraction call after every turn: template + the turn in, the facts found out', () => {
    // in: 51 + turn; out: "name: Kavya; id: SE-10423; time: 8 pm" 37 → 9,
    // "name: DryFit; number: 3; money: Rs 249; name: CushionRun; money: Rs 199" 71 → 17, "name: DryFit; id: DRYFIT-3; number: 1" 37 → 9,
    // "email: kavya@old.example" 24 → 6, "name: Order; id: SE-10423" 25 → 6
    expect(turns.map((t) => t.after.map((u) => [u.kind, u.inputTokens, u.outputTokens, u.sync]))).toEqual([
      [['extract', 51 + 27, 9, false]],
      [['extract', 51 + 27, 17, false]],
      [['extract', 51 + 30, 9, false]],
      [['extract', 51 + 14, 6, false]],
      [['extract', 51 + 9, 6, false]],
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
    // Turn 2 restates the order number only: the extraction finds it again, the sheet does not change,
    // and turn 3 is sent the same object as turn 2 (count once, stable cache prefix).
    const restated = trace(
      scenario(`
id: restated
turns:
  - user: My order SE-10423 is late.
    assistant: Sorry about that.
  - user: Any news on SE-10423?
    assistant: Not yet, sorry.
  - user: Thanks.
`),
      'facts',
    );
    // out: "id: SE-10423" 12 → 3 after turns 1 and 2, "none" → 1 after turn 3.
    expect(restated.map((t) => t.after.map((u) => u.outputTokens))).toEqual([[3], [3], [1]]);
    expect(restated[1]!.calls[0]!.messages[0]).toEqual({ role: 'system', content: 'Known facts: id: SE-10423', origin: 'facts' });
    expect(restated[2]!.calls[0]!.messages[0]).toBe(restated[1]!.calls[0]!.messages[0]);
  });

  it('keeps the sheet within sheetTokens: the lowest kind, then the fewest-found, then the longest-unseen entry goes first (hand-worked)', () => {
    // Entry sizes (" kind: value;" after a space): "Known facts:" 12 chars → 3, " name: Kavya;" 13 → 3, " id: SE-10423;" 14 → 3,
    // " time: 8 pm;" 12 → 3, " name: DryFit;" 14 → 3, " number: 3;" 11 → 2, " money: Rs 249;" 15 → 3, " name: CushionRun;" 18 → 4,
    // " money: Rs 199;" 15 → 3, " id: DRYFIT-3;" 14 → 3, " number: 1;" 11 → 2, " email: kavya@old.example;" 26 → 6.
    const at14 = trace(conversation, 'facts:recent=1,sheetTokens=14');
    // After turn 1: 3 + 3 + 3 + 3 = 12 ≤ 14, all stay (50 chars → 12).
    expect(at14[1]!.calls[0]!.messages[1]!.content).toBe('Known facts: name: Kavya; id: SE-10423; time: 8 pm');
    // After turn 2: 12 + 15 = 27. Dropped: the number 3 (tier 0) → 25; the tier-1 entries, oldest first: 8 pm (turn 1) → 22,
    // Rs 249 → 19, Rs 199 → 16; then of the names and ids (all found once) the oldest, listed first: Kavya → 13 ≤ 14.
    expect(at14[2]!.calls[0]!.messages[1]!.content).toBe('Known facts: id: SE-10423; name: DryFit; name: CushionRun');
    // After turn 3 (DryFit found twice now): 3 + 3 + 3 + 4 + 3 + 2 = 18. Dropped: the number 1 → 16; then of those found once,
    // the oldest: SE-10423 (turn 1) → 13. The order number goes; DryFit, repeated, stays (57 chars → 14).
    expect(at14[3]!.calls[0]!.messages[1]!.content).toBe('Known facts: name: DryFit; name: CushionRun; id: DRYFIT-3');
    // After turn 4: 13 + 6 = 19. Dropped: CushionRun (found once, turn 2) → 15, DRYFIT-3 (once, turn 3) → 12 (51 chars → 12).
    expect(at14[4]!.calls[0]!.messages[1]!.content).toBe('Known facts: name: DryFit; email: kavya@old.example');
    // At 5 no entry fits beside the header (3): the only 2-token entries are numbers, which go first, and every other needs 3 or more.
    // No sheet is ever sent.
    expect(trace(conversation, 'facts:sheetTokens=5').flatMap((t) => t.calls.flatMap((c) => labels(c.messages)))).not.toContain('facts');
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
    // in: 51 + 4 + "Your tracking number is ZX-981." 31 → 7 = 62; out: "id: ZX-981" 10 → 2.
    expect(sheet.read([turn.user, turn.assistant!], info)).toMatchObject({ inputTokens: 62, outputTokens: 2 });
    expect(sheet.messages()[0]!.content).toBe('Known facts: id: ZX-981');
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

