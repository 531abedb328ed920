import { describe, expect, it } from 'vitest';
import { fixture, trace } from './_policies.js';
import { study } from './_pricing.js';

/*
 * The minimal case of long facts: test/fixtures/long-facts.yaml, 12 turns that each state one fact
 * whose value is 60 five-letter words, then 12 turns that each probe one of them, through
 * `summary-buffer:budget=500` (keepRecent 4, batch 4, summaryTokens 200) and `full`, on gpt-4o-mini
 * ($0.15 / $0.075 cached / $0.60 per million input / cached input / output tokens) under chars4
 * (tokens = floor(characters / 4), no chat overhead). Worked by hand:
 *
 * Sizes. system "You are a helpful assistant." 28 chars → 7. Fact turn: user "Remember fact A: <359>." 377 → 94,
 * reply "Noted." → 1: an exchange of 95. Probe turn: user "What was fact A?" 16 → 4, reply "Let me check." 13 → 3:
 * an exchange of 7. The summarizer's template at 200 tokens is 188 chars → 47. A "Known:" entry
 * "fact_a: <359>" is 367 chars; with header "Summary of the conversation so far (turns 1-6)." (47 chars, 48
 * from "turns 1-10" on) a summary of two facts is 47 + 1 + "Known: " 7 + 367 + "; " 2 + 367 + "." 1 = 792
 * chars → 198 tokens (793 → 198 later); a third fact (≥ 92 more) does not fit 200. The facts were each
 * stated once, so the oldest go first: a summary keeps the two newest.
 *
 * summary-buffer (fixed part of a prompt: 7 + 94 = 101 on fact turns, 7 + 4 = 11 on probe turns):
 * - turns 1–5 send everything (101, 196, 291, 386, 481); turns 6–8 send the 4 newest exchanges that fit
 *   500 − 101 = 399 (481 each), e1… left unsent but not folded: 1, 2, 3 < batch 4 exchanges unsent.
 * - turn 9: 8 buffered = keepRecent + batch → fold. Next to a 200-token summary 500 − 101 − 200 = 199 holds
 *   2 exchanges: e1–e6 are folded, in 47 + 6 × 95 = 617, out 198 (facts e, f). Sent 7 + 198 + 2 × 95 + 94 = 489,
 *   and 489 on turns 10–12 (e7… unsent, 1–3 of them).
 * - turn 13: room 500 − 11 − 198 = 291 holds e10–e12 (285): sent 494; 3 unsent. Probe a: missing.
 * - turn 14: e13 (7) joins; 291 holds e11–e13 (197) → e7–e10 unsent = batch → fold them: in 47 + 198 + 4 × 95
 *   = 625, out 198 (facts i, j); 500 − 11 − 200 = 289 keeps e11–e13. Sent 7 + 198 + 197 + 4 = 406.
 * - turns 15–18: 7-token exchanges join; all fit: 413, 420, 427, 434.
 * - turn 19: 8 buffered → fold e11–e14: in 47 + 198 + 95 + 95 + 7 + 7 = 449, out 198 (facts k, l). Sent
 *   7 + 198 + 4 × 7 + 4 = 237, then 244, 251, 258.
 * - turn 23: 8 buffered → fold e15–e18: in 47 + 198 + 4 × 7 = 273, out 198 (still k, l). Sent 237, then 244.
 * - retained: k (turn 23) and l (turn 24) from the summary; a–j missing: 2/12.
 * - input 101 + 196 + 291 + 386 + 4 × 481 + 4 × 489 + 494 + 406 + 413 + 420 + 427 + 434 + 237 + 244 + 251
 *   + 258 + 237 + 244 = 8,919 (all under 1,024: nothing cached); output 12 × 1 + 12 × 3 = 48; upkeep
 *   617 + 625 + 449 + 273 = 1,964 in, 4 × 198 = 792 out.
 *   Cost: 8,919 × 0.15 + 48 × 0.60 + 1,964 × 0.15 + 792 × 0.60 = 1,337.85 + 28.8 + 294.6 + 475.2
 *   = 2,136.45 millionths of a dollar = $0.00213645.
 *
 * full: turn t ≤ 12 sends 7 + 95(t − 1) + 94 = 95t + 6; turn 12 + j sends 7 + 1,140 + 7(j − 1) + 4 = 1,144 + 7j:
 * 7,482 + 14,274 = 21,756 in. The previous prompt is the cached prefix, rounded down to 128s from 1,024
 * (turn 11: 1,051 → turns 12, 13, 14 cache 1,024; from 1,158 (turn 14) on, turns 15–24 cache 1,152):
 * 3 × 1,024 + 10 × 1,152 = 14,592 cached. Cost: 7,164 × 0.15 + 14,592 × 0.075 + 48 × 0.60 =
 * 1,074.6 + 1,094.4 + 28.8 = 2,197.8 millionths = $0.0021978; 12/12 retained.
 *
 * So summary-buffer costs less than full here, with 4 summarizer calls in 24 turns (at most one per
 * batch of 4 exchanges).
 */
describe('summary-buffer on long facts (the minimal case)', () => {
  const conversation = fixture('long-facts.yaml');

  it('folds in batches and keeps a bounded summary: calls, prompts and retention worked by hand', () => {
    const turns = trace(conversation, 'summary-buffer:budget=500');
    const calls = turns.flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));
    expect(calls).toEqual([
      [9, 617, 198],
      [14, 625, 198],
      [19, 449, 198],
      [23, 273, 198],
    ]);
    const summaries = turns.map((t) => t.calls[0]!.messages.find((m) => m.origin === 'summary')?.content.match(/fact_\w/g)?.join(' '));
    expect(summaries.slice(8, 24)).toEqual([...Array(5).fill('fact_e fact_f'), ...Array(5).fill('fact_i fact_j'), ...Array(6).fill('fact_k fact_l')]);
  });

  it('costs less than full, and retains what a bounded summary can hold (exact)', () => {
    const r = study([conversation], ['full', 'summary-buffer:budget=500'], { model: 'gpt-4o-mini' });
    const row = (policy: string) => r.summary.find((s) => s.policy === policy)!;
    const sb = row('summary-buffer:budget=500');
    const full = row('full');
    expect([sb.inputTokens, sb.cachedTokens, sb.outputTokens, sb.auxTokens, sb.totalCost, sb.retained, sb.probes]).toEqual([8919, 0, 48, 1964 + 792, 2_136_450_000n, 2, 12]);
    expect([full.inputTokens, full.cachedTokens, full.outputTokens, full.auxTokens, full.totalCost, full.retained]).toEqual([21756, 14592, 48, 0, 2_197_800_000n, 12]);
    expect(sb.totalCost < full.totalCost).toBe(true);
    const upkeepTurns = r.turns.filter((t) => t.policy === 'summary-buffer:budget=500' && t.auxInputTokens > 0).map((t) => t.turn);
    expect(upkeepTurns).toEqual([9, 14, 19, 23]);
    const retainedFacts = r.probes.filter((p) => p.policy === 'summary-buffer:budget=500' && p.outcome === 'retained').map((p) => [p.fact, p.source]);
    expect(retainedFacts).toEqual([
      ['fact_k', 'summary'],
      ['fact_l', 'summary'],
    ]);
  });
});
