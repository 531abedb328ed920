import { describe, expect, it } from 'vitest';
import { fixture, labels, trace } from './_policies.js';

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
});
