import { describe, expect, it, vi } from 'vitest';
import { conversation } from './_policies.js';

// Every simulated embedding goes through this spy, so a test can count them. The engine is imported
// afresh after it (the suite shares modules between files, and another file may have loaded the real one).
vi.mock('../src/upkeep/embedder.js', async (original) => {
  const actual = await original<typeof import('../src/upkeep/embedder.js')>();
  return { ...actual, embed: vi.fn(actual.embed) };
});
vi.resetModules();
const { replay } = await import('../src/engine/replay.js');
const { replayContexts, replayScenario } = await import('../src/engine/run.js');
const { runSpecOf } = await import('../src/engine/spec.js');
const { policiesFromFlags } = await import('../src/study/study.js');
const { messageText } = await import('../src/tokens/counter.js');
const { embed } = await import('../src/upkeep/embedder.js');

const turns = Array.from({ length: 40 }, (_, i) => ({
  user: `Question ${i}: where is order SE-${1000 + i} and when does it ship?`,
  assistant: `Order SE-${1000 + i} ships on day ${i % 7} from the Leeds warehouse.`,
  ...(i % 10 === 3 && { tools: [{ call: 'track', args: { order: i }, result: { status: `in transit ${i}` } }] }),
}));
const conv = conversation({ id: 'orders', system: 'You are a support bot.', turns });

/** The texts retrieval embeds: every message it stores that has text, each once. */
const stored = new Set(
  conv.turns.flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])]).map(messageText).filter((text) => text.trim()),
);

describe('embedding once per scenario', () => {
  it('a sweep of retrieval variants on two models embeds each text of the scenario once, with the same records as replays that do not share', () => {
    const variants = policiesFromFlags(['retrieval:topK=1|3|5', 'full']);
    const ctxs = replayContexts(runSpecOf({ seed: 7, models: ['gpt-4o-mini', 'claude-3-5-haiku-latest'], tokenizer: 'chars4' }));
    vi.mocked(embed).mockClear();
    const shared = replayScenario(conv, 0, variants, ctxs);
    // 3 variants × 2 models would embed 6 times over without sharing; each query is a user message, stored too.
    expect(vi.mocked(embed).mock.calls.map(([text]) => text).sort()).toEqual([...stored].sort());

    vi.mocked(embed).mockClear();
    const alone = ctxs.flatMap((ctx) => variants.map((v) => replay(conv, v, ctx)));
    expect(vi.mocked(embed).mock.calls).toHaveLength(stored.size * 6);
    expect(shared.turns).toEqual(alone.flatMap((r) => r.turns));
    expect(shared.probes).toEqual(alone.flatMap((r) => r.probes));
  });
});
