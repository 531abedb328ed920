import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { messageText } from '../src/tokens/counter.js';
import { fixture, labels, randomConversation, scenario, trace, variant } from './_policies.js';

/*
 * test/fixtures/late-order-tools.yaml under chars4 (tokens = floor(chars / 4), no overhead):
 *   t1: u1 12, a1 15 · t2: u2 9, a2 18 · t3: u3 9, call3 7, tool3 4, a3 10 · t4: u4 11, a4 3 · t5: u5 6, a5 3
 *   Turns are 30 s apart: turn 5 is at 120 s.
 */
const conversation = fixture('late-order-tools.yaml');
const embeds = (turns: ReturnType<typeof trace>) =>
  turns.map((t) => [t.turn, ...t.calls.flatMap((c) => c.upkeep.map((u) => `q${u.inputTokens}`)), ...t.after.map((u) => `s${u.inputTokens}`)]);

describe('retrieval policy', () => {
  it('retrieves the most similar past message and keeps the recent ones (hand-worked)', () => {
    const turns = trace(conversation, 'retrieval:recent=2,topK=2');
    // Turns 1-4: no stored message scores ≥ 0.2 against the new user message → fallback to the last 10 messages.
    expect(labels(turns[3]!.calls[0]!.messages)).toEqual(['system', 'u1', 'a1', 'u2', 'a2', 'u3', 'call3', 'tool3', 'a3', 'u4']);
    // Turn 5 "Which order was late again?" → order, late, "order late"(½): |q| = 1.5. u1: |d| = sqrt(4.75); shared "order":
    // 1 / (1.5 × 2.17945) = 0.3059 ≥ 0.2. Recent 2 messages: u4, a4.
    const t5 = turns[4]!.calls[0]!;
    expect(labels(t5.messages)).toEqual(['system', 'r:u1', 'u4', 'a4', 'u5']);
    expect(t5.messages[1]).toEqual({
      role: 'system',
      content: "Earlier (turn 1, user): Hi, I'm Kavya. My order SE-10423 hasn't arrived.",
      origin: 'retrieved',
      score: 0.3059,
      turn: 1,
    });
  });

  it('embeds each query before the call (the user waits) and each stored message after the turn', () => {
    // q = the new user message (reused as its stored embedding), s = the turn's other messages.
    expect(embeds(trace(conversation, 'retrieval:recent=2,topK=2'))).toEqual([
      [1, 'q12', 's15'],
      [2, 'q9', 's18'],
      [3, 'q9', 's21'], // call3 7 + tool3 4 + a3 10; nothing more on the call after the tool results
      [4, 'q11', 's3'],
      [5, 'q6', 's3'],
    ]);
    const t1 = trace(conversation, 'retrieval')[0]!;
    expect(t1.calls[0]!.upkeep).toEqual([{ kind: 'embed', model: 'text-embedding-3-small', inputTokens: 12, outputTokens: 0, sync: true }]);
    expect(t1.after).toEqual([{ kind: 'embed', model: 'text-embedding-3-small', inputTokens: 15, outputTokens: 0, sync: false }]);
  });

  it('caps the store by maxItems and maxAge, and the store survives a session restart', () => {
    // 3 items kept: by turn 5 the store holds tool3, a3 … u4, a4 only; u1 is gone → fallback.
    expect(labels(trace(conversation, 'retrieval:recent=2,maxItems=3')[4]!.calls[0]!.messages)).not.toContain('r:u1');
    // u1 was stored at 0 s; at turn 5 (120 s) it is older than 1m but not than 5m.
    expect(labels(trace(conversation, 'retrieval:recent=2,maxAge=1m')[4]!.calls[0]!.messages)).not.toContain('r:u1');
    expect(labels(trace(conversation, 'retrieval:recent=2,maxAge=5m')[4]!.calls[0]!.messages)).toContain('r:u1');
    // sessionCap 2: the transcript restarts after turns 2 and 4, the store does not.
    expect(labels(trace(conversation, 'retrieval:recent=2,sessionCap=2')[4]!.calls[0]!.messages)).toEqual(['system', 'r:u1', 'u5']);
  });

  it('brings a retrieved tool result with its call, in the conversation order', () => {
    const c = scenario(`
id: tool-pair
turns:
  - user: Where is my parcel?
    tools:
      - {call: lookup_order, args: {customer: me}, result: {parcel: PX-77, status: held at customs}}
    assistant: It is waiting for clearance.
  - user: Thanks.
    assistant: You're welcome.
  - user: Why is it held at customs?
`);
    const t3 = trace(c, 'retrieval:recent=0,topK=1')[2]!.calls[0]!;
    // Only the tool result matches (held, customs); its call, which shares no word with the query, comes with it.
    expect(labels(t3.messages)).toEqual(['r:call1', 'r:tool1', 'u3']);
    expect(t3.messages[0]!.content).toBe('Earlier (turn 1, tool call): lookup_order({"customer":"me"})');
    // Stored in order u1, call1, tool1, a1, u2, a2; maxItems 4 evicts u1 and call1. tool1 is still the best
    // match, but a result without its call is not sent: nothing is retrieved (and no fallback: the score was high).
    expect(labels(trace(c, 'retrieval:recent=0,topK=1,maxItems=4')[2]!.calls[0]!.messages)).toEqual(['u3']);
  });
});

describe('retrieval in a 40-turn conversation', () => {
  const long = fixture('order-40-turns.yaml');
  const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' });

  it('finds SE-10423 for "What was my order number?" at turn 40', () => {
    const sent: string[][] = [];
    const r = replay(long, variant('retrieval'), ctx, (turn, call) => {
      if (turn === 40) sent.push(labels(call.plan.messages));
    });
    // Retrieved: u1 (0.3059) and the only other match, a35 "…your phone number." (0.2722); recent 3 messages widened to u38.
    expect(sent[0]).toEqual(['system', 'r:u1', 'r:a35', 'u38', 'a38', 'u39', 'a39', 'u40']);
    expect(r.probes).toMatchObject([{ scenario: 'order-40-turns', policy: 'retrieval', model: 'gpt-4o-mini', turn: 40, fact: 'order_id', outcome: 'retained', ageTurns: 39, source: 'retrieved', expected: 'retained', violation: false }]);
    // A window of the same recent messages forgets it.
    expect(replay(long, variant('window-turns:turns=5'), ctx).probes[0]!.outcome).toBe('missing');
  });

  it('falls back to the last fallbackRecent messages for "Can you repeat that?"', () => {
    const sent: string[][] = [];
    replay(long, variant('retrieval'), ctx, (turn, call) => {
      if (turn === 39) sent.push(labels(call.plan.messages));
    });
    // "repeat" matches nothing stored → the last 10 messages: turns 34-38.
    expect(sent[0]).toEqual(['system', 'u34', 'a34', 'u35', 'a35', 'u36', 'a36', 'u37', 'a37', 'u38', 'a38', 'u39']);
  });
});

describe('retrieved memories on random conversations', () => {
  const SPECS = ['retrieval:recent=3,topK=3,minScore=0.1', 'retrieval:recent=0,topK=4,minScore=0,fallbackRecent=2,maxItems=5,maxAge=30m'];

  it('come from earlier turns, in the conversation’s order; a tool call with all its results, a result with its call', () => {
    fc.assert(
      fc.property(randomConversation, (c) => {
        for (const spec of SPECS) {
          for (const t of trace(c, spec)) {
            for (const plan of t.calls) {
              const memories = plan.messages.filter((m) => m.origin === 'retrieved');
              for (let j = 1; j < memories.length; j++) if (memories[j]!.turn! < memories[j - 1]!.turn!) throw new Error(`turn ${t.turn}: retrieved memories out of order`);
              for (const turn of new Set(memories.map((m) => m.turn!))) {
                if (turn >= t.turn) throw new Error(`turn ${t.turn}: memory of turn ${turn} retrieved`);
                // Each retrieved call message (a round of the turn) comes with every one of its results, and no result without its call.
                const own = memories.filter((m) => m.turn === turn).map((m) => /^Earlier \(turn \d+, ([^)]+)\): ([\s\S]*)$/.exec(m.content)!);
                const rounds = c.turns[turn - 1]!.tools.filter((m) => m.toolCalls?.length);
                const calls = own.filter((k) => k[1] === 'tool call').map((k) => rounds.find((r) => messageText(r) === k[2])!);
                const results = own.filter((k) => k[1] === 'tool result').length;
                const expected = calls.reduce((n, r) => n + r.toolCalls!.length, 0);
                if (results !== expected) throw new Error(`turn ${t.turn}: tool pair of turn ${turn} split: ${calls.length} call message(s) with ${expected} calls, ${results} results`);
              }
            }
          }
        }
      }),
      { seed: 42, numRuns: 60 },
    );
  });
});
