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
 * paths of 360 characters. Simulated upkeep reads only the text: a fact turn's "Remember fact A: <path>." is a
 * statement (it holds a path, a span of a fixed shape) and is written as it is; its salience is 8 (the path) + 2
 * (Remember, fact) = 10 for A ("a" is a function word), 14 for the others (a capital letter is a name). Two of them
 * are not the same fact: their letters differ. A probe turn states nothing ("What was fact A?" is a question, "Let me
 * check." → "Let the assistant check." tells too little: salience 2 < 3). The facts are A–H and J–M: a lone "I"
 * ("fact I") is read as the speaker (see the fixture's case below). Worked by hand:
 *
 * Sizes. system "You are a helpful assistant." 28 chars → 7. Fact turn: user "Remember fact A: <360>." 378 → 94,
 * reply "Noted." → 1: an exchange of 95. Probe turn: user "What was fact A?" 16 → 4, reply "Let me check."
 * 13 → 3: an exchange of 7. The summarizer's template at 200 tokens is 188 chars → 47.
 *
 * A summary. Header "Summary of the conversation so far (turns 1-6)." 47 chars → 11 (48 → 12 from "turns 1-10" on);
 * each statement " Remember fact X: <360>." 379 → 94, so 11 + 2 × 94 = 199 ≤ 200 by sentence sums; but the text
 * of header and two statements is 47 + 2 × 379 = 805 chars → 201 > 200 (806 → 201 later), and the exact count
 * drops one more in the drop order (the least salient, then the one stated longest ago): a summary of fact turns
 * holds one fact, the newest, 426 chars → 106 tokens (427 → 106 later), and no padding (laid out before the trim).
 *
 * summary-buffer (fixed part of a prompt: 7 + 94 = 101 on fact turns, 7 + 4 = 11 on probe turns):
 * - turns 1–5 send everything (101, 196, 291, 386, 481); turns 6–8 send the 4 newest exchanges that fit
 *   500 − 101 = 399 (481 each), e1… left unsent but not folded: 1, 2, 3 < batch 4 exchanges unsent.
 * - turn 9: 8 buffered = keepRecent + batch → fold. Next to a 200-token summary 500 − 101 − 200 = 199 holds
 *   2 exchanges: e1–e6 are folded, in 47 + 6 × 95 = 617; 11 + 6 × 94 = 575: A (10) → 481, then the oldest B, C,
 *   D → 199; the exact count drops E: out 106 (fact F). Sent 7 + 106 + 2 × 95 + 94 = 397; turns 10–12 send the
 *   3 newest exchanges that fit 500 − 101 − 106 = 293: 7 + 106 + 285 + 94 = 492.
 * - turn 13: 500 − 11 − 106 = 383 holds e9–e12 (380): sent 497. Turn 14: e13 joins, e10–e13 (292) sent: 409.
 * - turn 15: 8 buffered → fold e7–e10: in 47 + 106 + 4 × 95 = 533; F, G, H, J, K: 12 + 5 × 94 = 482, the oldest
 *   F, G, H go → 200, the exact count (806 chars → 201) drops J: out 106 (fact K). Sent 11 + 106 + 204 = 321,
 *   then 328, 335, 342.
 * - turn 19: fold e11–e14: in 47 + 106 + 95 + 95 + 7 + 7 = 357; K, L, M: K → 200, then L (exact): out 106
 *   (fact M). Sent 11 + 106 + 4 × 7 = 145, then 152, 159, 166.
 * - turn 23: fold e15–e18 (no statement): in 47 + 106 + 4 × 7 = 181; M alone, 12 + 94 = 106, leaves room for
 *   padding (10 + 8 + 8 + 8 + 10 + 6 + 10 + 8 + 8 + 10 = 92 → 198): out 198. Sent 11 + 198 + 28 = 237, then 244.
 * - retained: M (turn 24) from the summary; A–L missing (L left the summary at turn 19, before its probe at 23): 1/12.
 * - input 101 + 196 + 291 + 386 + 4 × 481 + 397 + 3 × 492 + 497 + 409 + 321 + 328 + 335 + 342 + 145 + 152 + 159 +
 *   166 + 237 + 244 = 8,106 (all under 1,024: nothing cached); output 12 × 1 + 12 × 3 = 48; upkeep
 *   617 + 533 + 357 + 181 = 1,688 in, 3 × 106 + 198 = 516 out.
 *   Cost: 8,106 × 0.15 + 48 × 0.60 + 1,688 × 0.15 + 516 × 0.60 = 1,215.9 + 28.8 + 253.2 + 309.6
 *   = 1,807.5 millionths of a dollar = $0.0018075.
 *
 * full: turn t ≤ 12 sends 7 + 95(t − 1) + 94 = 95t + 6; turn 12 + j sends 7 + 1,140 + 7(j − 1) + 4 = 1,144 + 7j:
 * 7,482 + 14,274 = 21,756 in. The previous prompt is the cached prefix, rounded down to 128s from 1,024
 * (turn 11: 1,051 → turns 12, 13, 14 cache 1,024; from 1,158 (turn 14) on, turns 15–24 cache 1,152):
 * 3 × 1,024 + 10 × 1,152 = 14,592 cached. Cost: 7,164 × 0.15 + 14,592 × 0.075 + 48 × 0.60 =
 * 1,074.6 + 1,094.4 + 28.8 = 2,197.8 millionths = $0.0021978; 12/12 retained.
 *
 * So summary-buffer costs less than full here, with 4 summarizer calls in 24 turns (at most one per
 * batch of 4 exchanges), and retains the 1 of 12 facts its bounded summary holds.
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
      [9, 617, 106],
      [15, 533, 106],
      [19, 357, 106],
      [23, 181, 198],
    ]);
    // The facts each turn's summary holds (the letters whose path it states).
    const summaries = turns.map((t) => {
      const summary = t.calls[0]!.messages.find((m) => m.origin === 'summary')?.content;
      return summary && LETTERS.filter((_, i) => summary.includes(paths[i]!)).join(' ');
    });
    expect(summaries).toEqual([...Array(8).fill(undefined), ...Array(6).fill('F'), ...Array(4).fill('K'), ...Array(6).fill('M')]);
  });

  it('costs less than full, and retains what a bounded summary can hold (exact)', () => {
    const r = study([longPaths], ['full', 'summary-buffer:budget=500'], { model: 'gpt-4o-mini' });
    const row = (policy: string) => r.summary.find((s) => s.policy === policy)!;
    const sb = row('summary-buffer:budget=500');
    const full = row('full');
    expect([sb.inputTokens, sb.cachedTokens, sb.outputTokens, sb.auxTokens, sb.totalCost, sb.retained, sb.probes]).toEqual([8106, 0, 48, 1688 + 516, 1_807_500_000n, 1, 12]);
    expect([full.inputTokens, full.cachedTokens, full.outputTokens, full.auxTokens, full.totalCost, full.retained]).toEqual([21756, 14592, 48, 0, 2_197_800_000n, 12]);
    expect(sb.totalCost < full.totalCost).toBe(true);
    const sbTurns = r.turns.filter((t) => t.policy === 'summary-buffer:budget=500');
    expect(sbTurns.map((t) => t.inputTokens)).toEqual([
      101, 196, 291, 386, 481, 481, 481, 481, 397, 492, 492, 492, 497, 409, 321, 328, 335, 342, 145, 152, 159, 166, 237, 244,
    ]);
    expect(sbTurns.filter((t) => t.auxInputTokens > 0).map((t) => t.turn)).toEqual([9, 15, 19, 23]);
    const retainedFacts = r.probes.filter((p) => p.policy === 'summary-buffer:budget=500' && p.outcome === 'retained').map((p) => [p.fact, p.source]);
    expect(retainedFacts).toEqual([['fact_m', 'summary']]);
  });
});

/*
 * The fixture itself, test/fixtures/long-facts.yaml: the same turns with each value 60 five-letter words
 * joined by spaces (user "Remember fact A: <359>." 377 chars → 94: every size above is the same). Such a
 * sentence is no statement (no span of a fixed shape, nothing said of a speaker), except turn 9's "Remember
 * fact I: …": the reader takes its lone "I" for the speaker ("Remember fact the user: <words>.", 384 chars
 * → 96 after a space), the one value a summary holds.
 * - turn 9 folds e1–e6 (in 617, as above): nothing to state, the header (11) and padding: 519 chars → 129.
 *   Sent 7 + 129 + 2 × 95 + 94 = 420 on turns 9–12 (e7 and on unsent, fewer than a batch); 425, 432 on 13, 14.
 * - turn 15: fold e7–e10: in 47 + 129 + 4 × 95 = 556: 12 + fact I's statement 96 + padding: 799 chars → 199.
 * - turn 19: fold e11–e14: in 47 + 199 + 95 + 95 + 7 + 7 = 450, out 199 (the same text, turns 1-14).
 * - turn 23: fold e15–e18: in 47 + 199 + 28 = 274, out 199.
 * - retained: fact I (probed at turn 21) from the summary; the others 0 (each fact's exchange has left the prompt
 *   before its probe): 1/12.
 * - upkeep 617 + 556 + 450 + 274 = 1,897 in, 129 + 3 × 199 = 726 out.
 */
describe('summary-buffer on long facts that are no span (the fixture as written)', () => {
  const words = fixture('long-facts.yaml');
  const values = words.turns.slice(0, 12).map((t) => Object.values(t.facts)[0]!);

  it('states none of them but the one whose lone "I" reads as the speaker, at the same bounded cost (exact)', () => {
    const turns = trace(words, 'summary-buffer:budget=500');
    const calls = turns.flatMap((t) => t.calls.flatMap((c) => c.upkeep.map((u) => [t.turn, u.inputTokens, u.outputTokens])));
    expect(calls).toEqual([
      [9, 617, 129],
      [15, 556, 199],
      [19, 450, 199],
      [23, 274, 199],
    ]);
    const summaries = turns.map((t) => t.calls[0]!.messages.find((m) => m.origin === 'summary')?.content ?? '');
    expect(summaries.map((s) => values.findIndex((v) => s.includes(v)))).toEqual([...Array(14).fill(-1), ...Array(10).fill(8)]);
    expect(summaries[14]).toContain(`Remember fact the user: ${values[8]}.`);

    const r = study([words], ['full', 'summary-buffer:budget=500'], { model: 'gpt-4o-mini' });
    const sb = r.summary.find((s) => s.policy === 'summary-buffer:budget=500')!;
    const full = r.summary.find((s) => s.policy === 'full')!;
    expect([sb.inputTokens, sb.cachedTokens, sb.outputTokens, sb.auxTokens, sb.totalCost, sb.retained, sb.probes]).toEqual([8610, 0, 48, 1897 + 726, 2_040_450_000n, 1, 12]);
    expect([full.totalCost, full.retained]).toEqual([2_197_800_000n, 12]);
    expect(r.turns.filter((t) => t.policy === 'summary-buffer:budget=500').map((t) => t.inputTokens)).toEqual([
      101, 196, 291, 386, 481, 481, 481, 481, 420, 420, 420, 420, 425, 432, 414, 421, 428, 435, 238, 245, 252, 259, 238, 245,
    ]);
  });
});
