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
  it('fills the budget: recent exchanges, then tool calls with results, then older exchanges (hand-worked)', () => {
    const turns = trace(conversation, 'priority:budget=51,keepRecent=1');
    // turn 5: room 51 − 6 − 6 = 39. Recent t4 (14) → 25 left. Tool part of t3: u3 + call3 + tool3 = 20 → 5 left.
    // Older exchanges newest first: t3's reply (10) does not fit → stop. Sent in conversation order: 6 + 20 + 14 + 6 = 46.
    const t5 = turns[4]!.calls[0]!;
    expect(labels(t5.messages)).toEqual(['system', 'u3', 'call3', 'tool3', 'u4', 'a4', 'u5']);
    expect(t5.overBudget).toBe(false);
    // The same budget under window-tokens keeps only the newest messages: a4, u4, a3, tool3, call3 (35),
    // u3 does not fit (44 > 39), and the leading tool messages are dropped: the tool call is lost.
    expect(labels(trace(conversation, 'window-tokens:budget=51')[4]!.calls[0]!.messages)).toEqual(['system', 'u4', 'a4', 'u5']);
  });

  it('adds older exchanges newest-first while they fit, and upgrades a tool part to the whole exchange', () => {
    // budget 60, turn 5: room 48; t4 14 → 34; tool part t3 20 → 14; t3's reply 10 → 4; t2 (27) does not fit → stop.
    const t5 = trace(conversation, 'priority:budget=60,keepRecent=1')[4]!.calls[0]!;
    expect(labels(t5.messages)).toEqual(['system', 'u3', 'call3', 'tool3', 'a3', 'u4', 'a4', 'u5']);
    // turn 3, second call: room 60 − 6 − 20 = 34; recent t2 (27) → 7; t1 (27) does not fit.
    const t3 = trace(conversation, 'priority:budget=60,keepRecent=1')[2]!.calls[1]!;
    expect(labels(t3.messages)).toEqual(['system', 'u2', 'a2', 'u3', 'call3', 'tool3']);
  });
});

describe('priority on the shipped voice-assistant scenario', () => {
  const voice = shipped('voice-assistant-tasks.yaml');
  const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' });
  const created = voice.turns[0]!.tools; // create_task call and its result {task_id: T-481}

  it('still sends the tool call that created "that task" when turn 13 refers back to it', () => {
    for (const spec of ['priority', 'priority:budget=400']) {
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
    expect(outcome('priority:budget=400')).toEqual([
      [2, 'retained'],
      [13, 'retained'],
    ]);
    expect(outcome('window-tokens:budget=400')).toEqual([
      [2, 'retained'],
      [13, 'missing'],
    ]);
  });
});
