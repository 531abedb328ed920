import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamFor } from '../src/engine/replay.js';
import { blocks } from '../src/policies/blocks.js';
import { SessionDriver } from '../src/policies/driver.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, UpkeepCall } from '../src/types.js';
import { longFactConversation, variant, withSafetyEvents } from './_policies.js';

/**
 * Drives a session as the replay engine does, forget events included; returns
 * every upkeep call (with where it came from) and every summary text sent.
 */
function drive(conversation: Conversation, spec: string, tokens: TokenCounter) {
  const v = variant(spec);
  const deps = { tokens, random: streamFor(42, conversation.id, v.name), model: 'gpt-4o-mini', blocks };
  const driver = new SessionDriver(conversation, (start) => v.policy.start(start, v.params, deps));
  const folds: UpkeepCall[] = [];
  const other: UpkeepCall[] = [];
  const sent: string[] = [];
  for (const turn of conversation.turns) {
    const info = driver.begin(turn);
    for (const { plan } of driver.prompt(turn, info)) {
      folds.push(...plan.upkeep);
      for (const m of plan.messages) if (m.origin === 'summary') sent.push(m.content);
    }
    other.push(...driver.commit(turn, info));
    for (const f of driver.forgetAfter(turn.index)) other.push(...f.upkeep);
  }
  const stored = driver.artifacts().find((a) => a.kind === 'summary')?.texts ?? [];
  return { folds, other, sent: [...sent, ...stored] };
}

const summarySpec = fc.oneof(
  fc
    .record({ threshold: fc.integer({ min: 20, max: 3000 }), size: fc.integer({ min: 1, max: 400 }), keep: fc.constantFrom(1, 0.7) })
    .map((p) => ({ spec: `summary:threshold=${p.threshold},summaryTokens=${p.size},keep=${p.keep}`, size: p.size })),
  fc
    .record({ budget: fc.integer({ min: 30, max: 3000 }), keepRecent: fc.integer({ min: 0, max: 6 }), size: fc.integer({ min: 1, max: 400 }), keep: fc.constantFrom(1, 0.7) })
    // summary-buffer refuses a summaryTokens of its budget or more.
    .map((p) => ({ spec: `summary-buffer:budget=${p.budget},keepRecent=${p.keepRecent},summaryTokens=${Math.min(p.size, p.budget - 1)},keep=${p.keep}`, size: Math.min(p.size, p.budget - 1) })),
);

describe('summary bounds (property)', () => {
  for (const encoding of ['chars4', 'o200k_base'] as const) {
    it(`a summary never exceeds summaryTokens, fact values included, counted as the run counts (${encoding})`, () => {
      const tokens = new TokenCounter(encoding);
      fc.assert(
        fc.property(longFactConversation, summarySpec, fc.nat(), fc.nat(), (c, { spec, size }, forgetAt, injectAt) => {
          const r = drive(withSafetyEvents(c, forgetAt, injectAt), spec, tokens);
          for (const u of [...r.folds, ...r.other]) if (u.kind === 'summary') expect(u.outputTokens).toBeLessThanOrEqual(size);
          for (const text of r.sent) expect(tokens.text(text)).toBeLessThanOrEqual(size);
        }),
        { seed: 42, numRuns: encoding === 'chars4' ? 150 : 40 },
      );
    });
  }

  it('summary-buffer makes at most one summarizer call per batch of exchanges, plus one per exchange that alone breaks the budget', () => {
    const tokens = new TokenCounter('chars4');
    const params = fc.record({
      budget: fc.integer({ min: 30, max: 2500 }),
      keepRecent: fc.integer({ min: 0, max: 6 }),
      batch: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
      size: fc.integer({ min: 1, max: 400 }),
    });
    fc.assert(
      fc.property(longFactConversation, params, (c, p) => {
        const spec = `summary-buffer:budget=${p.budget},keepRecent=${p.keepRecent},summaryTokens=${Math.min(p.size, p.budget - 1)}${p.batch ? `,batch=${p.batch}` : ''}`;
        const batch = p.batch ?? Math.max(1, p.keepRecent);
        const folds = drive(c, spec, tokens).folds.filter((u) => u.kind === 'summary');
        const head = blocks.fixedTokens(tokens, blocks.pinned(c));
        const alone = c.turns.filter((t) => head + blocks.sumTokens(tokens, [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])]) > p.budget).length;
        expect(folds.length).toBeLessThanOrEqual(Math.floor(c.turns.length / batch) + alone);
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
