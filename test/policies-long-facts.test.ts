import { describe, expect, it } from 'vitest';
import { conversation, fixture, trace } from './_policies.js';
import { study } from './_pricing.js';

/*
 * The minimal case of long facts: 12 turns that each state one fact whose value is a long path, then 12
 * turns that each probe one of them, through `summary-buffer:budget=500` (keepRecent 4, batch 4,
 * summaryTokens 200) and `full`, on gpt-4o-mini ($0.15 / $0.075 cached / $0.60 per million input /
 * cached input / output tokens) under chars4 (tokens = floor(characters / 4), no chat overhead).
 *
 * The values are test/fixtures/long-facts.yaml's 60 five-letter words, joined by "/" after a leading "/":
 * paths of 360 characters. Simulated upkeep reads only the text, and a path is one salient span (a
 * `url`), so each value is one "Known:" entry; the fixture's words joined by spaces are no span at all
 * (a summary would hold none of them). The facts are A–H and J–M: a lone "I" ("fact I") would make its
 * sentence first-person, and its nouns would be spans (details) too. Worked by hand:
 *
 * Sizes. system "You are a helpful assistant." 28 chars → 7. Fact turn: user "Remember fact A: <360>." 378 → 94,
 * reply "Noted." → 1: an exchange of 95. Probe turn: user "What was fact A?" 16 → 4, reply "Let me check."
 * 13 → 3: an exchange of 7; neither has a span. The summarizer's template at 200 tokens is 188 chars → 47.
 *
 * A summary. Header "Summary of the conversation so far (turns 1-6)." 47 chars → 11 (48 → 12 from "turns 1-10" on);
 * the list is laid out by sentence sums: " Known:" 7 → 1, each entry " <360>;" 362 → 90, so 11 + 1 + 2 × 90
 * = 192 ≤ 200 holds two entries and a third does not fit. Every entry is a url (one tier), mentioned in
 * one turn: the one mentioned longest ago goes first, and a summary keeps the two newest facts it read.
 * Text: header + " Known: P; Q." (1 + 730): 778 chars → 194 tokens (779 → 194 later); the list's
 * " Known: P; Q." (731 → 182) leaves 7 or 6 tokens, less than any topic sentence (≥ 19) or the first
 * padding sentence (10).
 *
 * summary-buffer (fixed part of a prompt: 7 + 94 = 101 on fact turns, 7 + 4 = 11 on probe turns):
 * - turns 1–5 send everything (101, 196, 291, 386, 481); turns 6–8 send the 4 newest exchanges that fit
 *   500 − 101 = 399 (481 each), e1… left unsent but not folded: 1, 2, 3 < batch 4 exchanges unsent.
 * - turn 9: 8 buffered = keepRecent + batch → fold. Next to a 200-token summary 500 − 101 − 200 = 199 holds
 *   2 exchanges: e1–e6 are folded, in 47 + 6 × 95 = 617, out 194 (facts E, F). Sent 7 + 194 + 2 × 95 + 94 = 485,
 *   and 485 on turns 10–12 (e7… unsent, 1–3 of them).
 * - turn 13: room 500 − 11 − 194 = 295 holds e10–e12 (285): sent 490; 3 unsent. Probe A: missing.
 * - turn 14: e13 (7) joins; 295 holds e10–e13 (292): sent 497; e7–e9 unsent (3): no fold.
 * - turn 15: 8 buffered → fold. 500 − 11 − 200 = 289 keeps e11–e14 (204): e7–e10 are folded, in 47 + 194 +
 *   4 × 95 = 621, out 194 (of E, F, G, H, J, K: J, K). Sent 11 + 194 + 204 = 409, then 416, 423, 430.
 * - turn 19: 8 buffered → fold e11–e14: in 47 + 194 + 95 + 95 + 7 + 7 = 445, out 194 (facts L, M). Sent
 *   11 + 194 + 4 × 7 = 233, then 240, 247, 254.
 * - turn 23: 8 buffered → fold e15–e18: in 47 + 194 + 4 × 7 = 269, out 194 (still L, M). Sent 233, then 240.
 * - retained: L (turn 23) and M (turn 24) from the summary; A–K missing (E and F were in the summary until
 *   turn 15, before their probes at 17 and 18): 2/12.
 * - input 101 + 196 + 291 + 386 + 4 × 481 + 4 × 485 + 490 + 497 + 409 + 416 + 423 + 430 + 233 + 240 + 247
 *   + 254 + 233 + 240 = 8,950 (all under 1,024: nothing cached); output 12 × 1 + 12 × 3 = 48; upkeep
 *   617 + 621 + 445 + 269 = 1,952 in, 4 × 194 = 776 out.
 *   Cost: 8,950 × 0.15 + 48 × 0.60 + 1,952 × 0.15 + 776 × 0.60 = 1,342.5 + 28.8 + 292.8 + 465.6
 *   = 2,129.7 millionths of a dollar = $0.0021297.
 *
 * full: turn t ≤ 12 sends 7 + 95(t − 1) + 94 = 95t + 6; turn 12 + j sends 7 + 1,140 + 7(j − 1) + 4 = 1,144 + 7j:
 * 7,482 + 14,274 = 21,756 in. The previous prompt is the cached prefix, rounded down to 128s from 1,024
 * (turn 11: 1,051 → turns 12, 13, 14 cache 1,024; from 1,158 (turn 14) on, turns 15–24 cache 1,152):
 * 3 × 1,024 + 10 × 1,152 = 14,592 cached. Cost: 7,164 × 0.15 + 14,592 × 0.075 + 48 × 0.60 =
 * 1,074.6 + 1,094.4 + 28.8 = 2,197.8 millionths = $0.0021978; 12/12 retained.
 *
 * So summary-buffer costs less than full here, with 4 summarizer calls in 24 turns (at most one per
 * batch of 4 exchanges), and retains the 2 of 12 facts its bounded summary ranks first.
 */
const LETTERS = [...'ABCDEFGHJKLM'];
const paths = fixture('long-facts.yaml')
  .turns.slice(0, 12)
  .map((t) => `/${Object.values(t.facts)[0]!.split(' ').join('/')}`);
const name = (i: number) => `fact_${LETTERS[i]!.toLowerCase()}`;
const longPaths = conversation({
  id: 'long-paths',
  system: 'You are a helpful assistant.',
  turns: [
    ...paths.map((p, i) => ({ user: `Remember fact ${LETTERS[i]}: ${p}.`, facts: { [name(i)]: p }, assistant: 'Noted.' })),
    ...paths.map((_, i) => ({ user: `What was fact ${LETTERS[i]}?`, probe: [name(i)], assistant: 'Let me check.' })),
  ],
});

describe('summary-buffer on long facts (the minimal case)', () => {
  it('folds in batches and keeps a bounded summary: calls, prompts and retention worked by hand', () => {
    expect(paths.map((p) => p.length)).toEqual(Array(12).fill(360));
    const turns = trace(longPaths, 'summary-buffer:budget=500');
    const calls = turns.flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));
    expect(calls).toEqual([
      [9, 617, 194],
      [15, 621, 194],
      [19, 445, 194],
      [23, 269, 194],
    ]);
    // The facts each turn's summary holds (the letters whose path it states).
    const summaries = turns.map((t) => {
      const summary = t.calls[0]!.messages.find((m) => m.origin === 'summary')?.content;
      return summary && LETTERS.filter((_, i) => summary.includes(paths[i]!)).join(' ');
    });
    expect(summaries).toEqual([...Array(8).fill(undefined), ...Array(6).fill('E F'), ...Array(4).fill('J K'), ...Array(6).fill('L M')]);
  });

  it('costs less than full, and retains what a bounded summary can hold (exact)', () => {
    const r = study([longPaths], ['full', 'summary-buffer:budget=500'], { model: 'gpt-4o-mini' });
    const row = (policy: string) => r.summary.find((s) => s.policy === policy)!;
    const sb = row('summary-buffer:budget=500');
    const full = row('full');
    expect([sb.inputTokens, sb.cachedTokens, sb.outputTokens, sb.auxTokens, sb.totalCost, sb.retained, sb.probes]).toEqual([8950, 0, 48, 1952 + 776, 2_129_700_000n, 2, 12]);
    expect([full.inputTokens, full.cachedTokens, full.outputTokens, full.auxTokens, full.totalCost, full.retained]).toEqual([21756, 14592, 48, 0, 2_197_800_000n, 12]);
    expect(sb.totalCost < full.totalCost).toBe(true);
    const sbTurns = r.turns.filter((t) => t.policy === 'summary-buffer:budget=500');
    expect(sbTurns.map((t) => t.inputTokens)).toEqual([
      101, 196, 291, 386, 481, 481, 481, 481, 485, 485, 485, 485, 490, 497, 409, 416, 423, 430, 233, 240, 247, 254, 233, 240,
    ]);
    expect(sbTurns.filter((t) => t.auxInputTokens > 0).map((t) => t.turn)).toEqual([9, 15, 19, 23]);
    const retainedFacts = r.probes.filter((p) => p.policy === 'summary-buffer:budget=500' && p.outcome === 'retained').map((p) => [p.fact, p.source]);
    expect(retainedFacts).toEqual([
      ['fact_l', 'summary'],
      ['fact_m', 'summary'],
    ]);
  });
});

/*
 * The fixture itself, test/fixtures/long-facts.yaml: the same turns with each value 60 five-letter words
 * joined by spaces (user "Remember fact A: <359>." 377 chars → 94: every size above is the same). Those
 * words are no salient span, so no summary lists a value: its "Known:" list is "nothing specific yet."
 * (29 → 7 after a space) until turn 9's "Remember fact I:" (a lone "I" makes it first-person: its noun
 * `fact` is a detail) makes it "Known: fact." (13 → 3, the header then 48 → 12). The rest of a summary is
 * topic sentences, the newest that fit, then padding (10, 8, 8, …): a fact turn's names its first words
 * ("In turn 2 the user asked about remember fact b olive index bread house umber maple flute, and the
 * assistant answered about noted." 130 → 32 after a space; turn 1's 33, turn 9's 33, turns 10–12's 32),
 * a probe turn's is 19 (turn 13: "about fact") or 20 ("about fact b").
 * - turn 9 folds e1–e6 (in 617, as above): 11 + 7 + topics of turns 6…2 (5 × 32 = 160: 178; turn 1's 33
 *   does not fit) + padding 10 + 8 = 196; exact 802 chars → 200. Sent 7 + 200 + 2 × 95 + 94 = 491 on
 *   turns 9–12; turn 13: 489 − 200 = 289 holds e10–e12 (285): 496.
 * - turn 14: 289 holds e11–e13 (197) but not e10 (292): e7–e10 unsent = batch → fold them: in 47 + 200 +
 *   4 × 95 = 627; 12 + 3 + turns 10…6 (32 + 33 + 32 + 32 + 32: 176) + padding 10 + 8 = 194; 793 → 198.
 *   Sent 11 + 198 + 197 = 406, then 413, 420, 427, 434.
 * - turn 19: fold e11–e14: in 47 + 198 + 95 + 95 + 7 + 7 = 449; 15 + turns 14…9 (20 + 19 + 32 + 32 + 32 +
 *   33: 183; turn 8's 32 does not fit) + padding 10 = 193; 790 → 197. Sent 11 + 197 + 28 = 236, then 243,
 *   250, 257.
 * - turn 23: fold e15–e18: in 47 + 197 + 28 = 272; 15 + turns 18…11 (4 × 20 + 20 + 19 + 32 + 32: 198); 801 →
 *   200. Sent 11 + 200 + 28 = 239, then 246.
 * - retained: none (0/12): no summary holds a value, and each fact's exchange has left the prompt before
 *   its probe.
 * - input 1,455 + 3 × 481 + 4 × 491 + 496 + 406 + 413 + 420 + 427 + 434 + 236 + 243 + 250 + 257 + 239 +
 *   246 = 8,929; output 48; upkeep 617 + 627 + 449 + 272 = 1,965 in, 200 + 198 + 197 + 200 = 795 out.
 *   Cost: 8,929 × 0.15 + 48 × 0.60 + 1,965 × 0.15 + 795 × 0.60 = 1,339.35 + 28.8 + 294.75 + 477 = 2,139.9
 *   millionths = $0.0021399; full is as above.
 */
describe('summary-buffer on long facts that are no span (the fixture as written)', () => {
  const words = fixture('long-facts.yaml');
  const values = words.turns.slice(0, 12).map((t) => Object.values(t.facts)[0]!);

  it('lists none of them: the bounded summary carries topic words, not values, at the same bounded cost (exact)', () => {
    const turns = trace(words, 'summary-buffer:budget=500');
    const calls = turns.flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));
    expect(calls).toEqual([
      [9, 617, 200],
      [14, 627, 198],
      [19, 449, 197],
      [23, 272, 200],
    ]);
    const summaries = turns.map((t) => t.calls[0]!.messages.find((m) => m.origin === 'summary')?.content ?? '');
    expect(summaries.filter((s) => values.some((v) => s.includes(v)))).toEqual([]);
    expect(summaries.map((s) => /Known: [^.]*\./.exec(s)?.[0])).toEqual([
      ...Array(8).fill(undefined),
      ...Array(5).fill('Known: nothing specific yet.'),
      ...Array(11).fill('Known: fact.'),
    ]);
    expect(summaries[8]).toContain('In turn 2 the user asked about remember fact b olive index bread house umber maple flute, and the assistant answered about noted.');

    const r = study([words], ['full', 'summary-buffer:budget=500'], { model: 'gpt-4o-mini' });
    const sb = r.summary.find((s) => s.policy === 'summary-buffer:budget=500')!;
    const full = r.summary.find((s) => s.policy === 'full')!;
    expect([sb.inputTokens, sb.cachedTokens, sb.outputTokens, sb.auxTokens, sb.totalCost, sb.retained, sb.probes]).toEqual([8929, 0, 48, 1965 + 795, 2_139_900_000n, 0, 12]);
    expect([full.totalCost, full.retained]).toEqual([2_197_800_000n, 12]);
    expect(r.turns.filter((t) => t.policy === 'summary-buffer:budget=500').map((t) => t.inputTokens)).toEqual([
      101, 196, 291, 386, 481, 481, 481, 481, 491, 491, 491, 491, 496, 406, 413, 420, 427, 434, 236, 243, 250, 257, 239, 246,
    ]);
  });
});
