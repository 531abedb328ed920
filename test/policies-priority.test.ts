import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { fixture, labels, shipped, trace, variant } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   system 6 · t1: u1 12, a1 15 (27) · t2: u2 9, a2 18 (27) · t3: u3 9, call3 7, tool3 4, a3 10 (30)
 *   t4: u4 11, a4 3 (14) · t5: u5 6, a5 3
 */
const conversation = fixture('late-order-tools.yaml');

describe('priority policy', () => {
  it('puts an older tool exchange before more recent plain ones (hand-worked)', () => {
    // budget 50, keepRecent 0, turn 5: room 50 − 6 − 6 = 38. Tool exchange t3 (30) → 8 left.
    // Older exchanges newest first: t4 (14) does not fit → stop. Sent in conversation order: 6 + 30 + 6 = 42.
    const t5 = trace(conversation, 'priority:budget=50,keepRecent=0')[4]!.calls[0]!;
    expect(labels(t5.messages)).toEqual(['system', 'u3', 'call3', 'tool3', 'a3', 'u5']);
    expect(t5.overBudget).toBe(false);
    // The same budget under window-tokens keeps the newest messages: a4, u4, a3, tool3, call3 (35 of 38);
    // u3 does not fit, and the leading reply and tool messages are dropped: the tool call is lost.
    expect(labels(trace(conversation, 'window-tokens:budget=50')[4]!.calls[0]!.messages)).toEqual(['system', 'u4', 'a4', 'u5']);
  });

  it('keeps recent exchanges first, then tool exchanges, then older exchanges newest-first while they fit', () => {
    // budget 60, keepRecent 1, turn 5: room 48; t4 14 → 34; tool exchange t3 30 → 4; t2 (27) does not fit → stop.
    const t5 = trace(conversation, 'priority:budget=60,keepRecent=1')[4]!.calls[0]!;
    expect(labels(t5.messages)).toEqual(['system', 'u3', 'call3', 'tool3', 'a3', 'u4', 'a4', 'u5']);
    // turn 3, second call: room 60 − 6 − 20 = 34; recent t2 (27) → 7; t1 (27) does not fit.
    const t3 = trace(conversation, 'priority:budget=60,keepRecent=1')[2]!.calls[1]!;
    expect(labels(t3.messages)).toEqual(['system', 'u2', 'a2', 'u3', 'call3', 'tool3']);
    // budget 40, keepRecent 2, turn 5: room 28; t4 14 → 14; t3 (30) does not fit → stop the recent ones;
    // t3 is also the only tool exchange and still does not fit; older: t3 does not fit → stop.
    expect(labels(trace(conversation, 'priority:budget=40,keepRecent=2')[4]!.calls[0]!.messages)).toEqual(['system', 'u4', 'a4', 'u5']);
  });
});

describe('priority on the shipped voice-assistant scenario', () => {
  const voice = shipped('voice-assistant-tasks.yaml');
  const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' });
  const created = voice.turns[0]!.tools; // create_task call and its result {task_id: T-481}

  it('still sends the tool call that created "that task" when turn 13 refers back to it', () => {
    // Default budget: everything fits. Budget 500: the newer tool exchanges (turns 9, 5, 3, 2) come first, turn 1 still fits.
    for (const spec of ['priority', 'priority:budget=500']) {
      const sent: string[][] = [];
      replay(voice, variant(spec), ctx, (turn, call) => {
        if (turn === 13) sent.push(call.plan.messages.map((m) => (created.includes(m) ? 'created' : 'other')));
      });
      expect(sent[0]).toContain('created');
      expect(sent[0]!.filter((x) => x === 'created')).toHaveLength(2);
    }
  });

  it('keeps the task id at a budget where a token window loses it', () => {
    const outcome = (spec: string) =>
      replay(voice, variant(spec), ctx)
        .probes.filter((p) => p.fact === 'task_id')
        .map((p) => [p.turn, p.outcome]);
    // At 450 tokens priority keeps turn 2's update_task (which repeats T-481); window-tokens starts at turn 3.
    expect(outcome('priority:budget=450')).toEqual([
      [2, 'retained'],
      [13, 'retained'],
    ]);
    expect(outcome('window-tokens:budget=450')).toEqual([
      [2, 'retained'],
      [13, 'missing'],
    ]);
  });
});
