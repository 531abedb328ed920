import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { blocks } from '../src/policies/blocks.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { fixture, labels, longFactConversation, scenario, trace } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   t1: u1 12, a1 15 · t2: u2 9, a2 18 · t3: u3 9, call3 7, tool3 4, a3 10 · t4: u4 11, a4 3 · t5: u5 6, a5 3
 *   Extraction template: 207 chars → 51 tokens.
 */
const conversation = fixture('late-order-tools.yaml');

describe('facts policy', () => {
  const turns = trace(conversation, 'facts:recent=1');

  it('pins a fact sheet after the system prompt, plus the last exchanges (hand-worked)', () => {
    expect(labels(turns[0]!.calls[0]!.messages)).toEqual(['system', 'u1']);
    expect(labels(turns[1]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u1', 'a1', 'u2']);
    expect(turns[1]!.calls[0]!.messages[1]).toEqual({ role: 'system', content: 'Known facts: name: Kavya; order_id: SE-10423', origin: 'facts' });
    expect(turns[1]!.calls[0]!.stablePrefix).toBe(2);
    expect(labels(turns[4]!.calls[0]!.messages)).toEqual(['system', 'facts', 'u4', 'a4', 'u5']);
    expect(turns[4]!.calls[0]!.messages[1]!.content).toBe('Known facts: name: Kavya; order_id: SE-10423; email: kavya@old.example');
  });

  it('makes one extraction call after every turn: template + the turn in, the facts found out', () => {
    // in: 51 + turn; out: "name: Kavya; order_id: SE-10423" 31 → 7, "none" → 1, "email: kavya@old.example" 24 → 6
    expect(turns.map((t) => t.after.map((u) => [u.kind, u.inputTokens, u.outputTokens, u.sync]))).toEqual([
      [['extract', 51 + 27, 7, false]],
      [['extract', 51 + 27, 1, false]],
      [['extract', 51 + 30, 1, false]],
      [['extract', 51 + 14, 6, false]],
      [['extract', 51 + 9, 1, false]],
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
    expect(labels(trace(conversation, 'facts:recall=0')[4]!.calls[0]!.messages)).not.toContain('facts');
    // The sheet is the same object from turn 2 to 4 (count once, stable cache prefix).
    expect(turns[1]!.calls[0]!.messages[1]).toBe(turns[3]!.calls[0]!.messages[1]);
  });

  it('keeps the sheet within sheetTokens: the fewest-found, then the longest-unseen fact goes first (hand-worked)', () => {
    // After turn 4 the sheet would be name (found in turn 1), order_id (turn 1), email (turn 4), each found once:
    // "Known facts:" 12 chars → 3, " name: Kavya;" 13 → 3, " order_id: SE-10423;" 20 → 5, " email: kavya@old.example;" 26 → 6 = 17.
    // At 14 name (listed first of the two oldest) is dropped: "Known facts: order_id: SE-10423; email: kavya@old.example" 57 → 14.
    const at14 = trace(conversation, 'facts:recent=1,sheetTokens=14');
    expect(at14[4]!.calls[0]!.messages[1]!.content).toBe('Known facts: order_id: SE-10423; email: kavya@old.example');
    // At 12 order_id goes too (14 > 12): "Known facts: email: kavya@old.example" 37 → 9.
    const at12 = trace(conversation, 'facts:recent=1,sheetTokens=12');
    expect(at12[4]!.calls[0]!.messages[1]!.content).toBe('Known facts: email: kavya@old.example');
    // Before turn 4 both fit 12: "Known facts: name: Kavya; order_id: SE-10423" 44 → 11.
    expect(at12[3]!.calls[0]!.messages[1]!.content).toBe('Known facts: name: Kavya; order_id: SE-10423');
    // At 5 no fact fits: no sheet is sent.
    expect(labels(trace(conversation, 'facts:sheetTokens=5')[4]!.calls[0]!.messages)).not.toContain('facts');
  });

  it('finds only what the messages it reads say: a fact stated elsewhere in the turn is missed', () => {
    // A turn whose fact is stated in the reply only; a sheet that reads the user message alone misses it.
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
    expect(sheet.read([turn.user], { turn, time: 0 })).toMatchObject({ inputTokens: 55, outputTokens: 1 });
    expect(sheet.messages()).toEqual([]);
    sheet.read([turn.user, turn.assistant!], { turn, time: 0 });
    expect(sheet.messages()[0]!.content).toBe('Known facts: tracking: ZX-981');
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

