import { describe, expect, it } from 'vitest';
import { replay, replaySteps, type Replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { POLICIES } from '../src/policies/index.js';
import { messageText } from '../src/tokens/counter.js';
import type { Conversation } from '../src/types.js';
import { conversation, fixture, variant } from './_policies.js';

/**
 * Two users' conversations replayed at the same time, turns alternating, in
 * one run context (shared token counter and presence memo, as in a run):
 * neither ever sees the other's facts, in a prompt or in what it stores, and
 * each replays exactly as it does alone.
 */

const ravi = fixture('safety/forget-and-inject.yaml');
// Mira's conversation reads like Ravi's, so a shared store or summary would surely leak across.
const mira = conversation({
  id: 'mira',
  user: 'mira',
  system: 'You are a support agent for an online store. Be brief.',
  turns: [
    { user: "Hi, I'm Mira. My email is mira.s@post.example and my order is SE-55120.", facts: { name: 'Mira', email: 'mira.s@post.example', order_id: 'SE-55120' }, assistant: 'Thanks Mira, I found order SE-55120.' },
    { user: 'The kettle arrived with a cracked lid.', assistant: 'Sorry! A replacement lid or a refund?' },
    { user: 'A refund please.', tools: [{ call: 'start_refund', args: { order_id: 'SE-55120' }, result: { refund_id: 'RF-1204' } }], facts: { refund_id: 'RF-1204' }, assistant: 'Refund RF-1204 is on its way.' },
    { user: 'Which email and order do you have for me?', probe: ['email', 'order_id'], assistant: 'mira.s@post.example, order SE-55120.' },
    { user: 'And my phone? It is 91234 56789.', facts: { phone: '91234 56789' }, assistant: 'Noted.' },
    { user: 'When will the refund arrive?', probe: ['refund_id'], assistant: 'RF-1204: in 3 to 5 days.' },
  ],
});

const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'chars4' });

/** Every fact value a conversation states, lower case. */
const values = (c: Conversation) => [...new Set(c.turns.flatMap((t) => Object.values(t.facts)))].map((v) => v.toLowerCase());

/** Replays both conversations turn by turn, alternating; returns what each sent and its replay. */
function interleaved(spec: string): Map<Conversation, { sent: string[]; replay: Replay }> {
  const out = new Map<Conversation, { sent: string[]; replay?: Replay }>();
  const steps = [ravi, mira].map((c) => {
    const entry = { sent: [] as string[] };
    out.set(c, entry);
    return { c, entry, it: replaySteps(c, variant(spec), ctx, (_, call) => entry.sent.push(call.plan.messages.map(messageText).join('\n').toLowerCase())) };
  });
  let live = steps;
  while (live.length) {
    live = live.filter((s) => {
      const r = s.it.next();
      if (r.done) out.get(s.c)!.replay = r.value;
      return !r.done;
    });
  }
  return out as Map<Conversation, { sent: string[]; replay: Replay }>;
}

const SPECS = [
  'full',
  'window-turns:turns=2',
  'window-tokens:budget=200',
  'window:turns=3,budget=300',
  'priority:budget=300',
  'summary:threshold=40',
  'summary-buffer:budget=300,keepRecent=1',
  'retrieval:recent=0,minScore=0',
  'facts:recent=1',
];

describe('session isolation', () => {
  it('covers every policy', () => {
    expect(new Set(SPECS.map((s) => s.split(':')[0]))).toEqual(new Set(POLICIES.map((p) => p.id)));
  });

  for (const spec of SPECS) {
    it(`${spec}: interleaved users never see each other's facts`, () => {
      const runs = interleaved(spec);
      for (const [self, other] of [[ravi, mira], [mira, ravi]] as const) {
        const { sent, replay: r } = runs.get(self)!;
        const foreign = values(other);
        expect(sent.length).toBeGreaterThan(0);
        for (const text of sent) for (const v of foreign) expect(text, `${self.id} sent ${v}`).not.toContain(v);
        for (const a of r.artifacts) for (const t of a.texts) for (const v of foreign) expect(t.toLowerCase(), `${self.id} stores ${v}`).not.toContain(v);
        // Interleaving changes nothing: the same records as a replay on its own.
        const alone = replay(self, variant(spec), ctx);
        expect(r.turns).toEqual(alone.turns);
        expect(r.probes).toEqual(alone.probes);
        expect(r.end).toEqual(alone.end);
      }
      // Mira's own facts do reach her prompts (the check above is not vacuous).
      expect(runs.get(mira)!.sent.some((t) => t.includes('se-55120'))).toBe(true);
    });
  }
});
