import { afterEach, describe, expect, it, vi } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext, replayContexts, runStudy } from '../src/engine/run.js';
import { RUN_SPEC, runSpecOf } from '../src/engine/spec.js';
import { policiesFromFlags } from '../src/study/study.js';
import { CassetteMissError } from '../src/upkeep/origin.js';
import { conversation } from './_policies.js';

/**
 * A run's settings are checked once (`runSpecOf`), and the contexts its
 * replays share carry them as checked (`ctx.spec`): not again per chat model,
 * nor copied field by field.
 */

const chat = conversation({
  id: 'chat',
  system: 'You are a support bot.',
  turns: Array.from({ length: 6 }, (_, i) => ({ user: `Question ${i}: where is order SE-${100 + i}?`, assistant: `Order SE-${100 + i} ships on day ${i}.` })),
});
const MODELS = ['gpt-4o-mini', 'gpt-4.1-mini', 'claude-haiku-4-5'];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the run spec is checked once', () => {
  it('a run on three chat models checks its settings once', () => {
    const parse = vi.spyOn(RUN_SPEC, 'safeParse');
    const r = runStudy({ conversations: [chat], policies: policiesFromFlags(['full']), seed: 3, models: MODELS, tokenizer: 'chars4' });
    expect(r.models.map((m) => m.model)).toEqual(MODELS);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('contexts of a checked spec check nothing again, and carry it whole', () => {
    const spec = runSpecOf({ seed: 3, models: MODELS, tokenizer: 'chars4', cacheBreakpoint: 'turn', toolDefs: [{ name: 'track' }] });
    const parse = vi.spyOn(RUN_SPEC, 'safeParse');
    const ctxs = replayContexts(spec);
    expect(parse).not.toHaveBeenCalled();
    expect(ctxs.map((c) => [c.model, c.spec])).toEqual(MODELS.map((m) => [m, spec]));
    for (const c of ctxs) expect(c.spec).toBe(spec);
  });

  it('only a spec runSpecOf made makes contexts: an object with its fields does not type-check', () => {
    const unchecked = { seed: 3, models: MODELS, tokenizer: 'chars4', prices: 'builtin', promptCache: 'auto' as const };
    // @ts-expect-error -- not checked by runSpecOf
    expect(replayContexts(unchecked)).toHaveLength(3);
  });
});

describe('replayContext: one model, its settings given as a run’s', () => {
  it('checks them, and resolves a recorded upkeep’s cassette: a response it lacks stops the replay naming the cassette', () => {
    const ctx = replayContext({ seed: 3, model: 'gpt-4o-mini', tokenizer: 'chars4', upkeep: { recorded: { entries: [] } }, cassette: { file: 'upkeep.cassette.jsonl', recordCommand: 'ctxsim run --upkeep record' } });
    expect(ctx.spec).toMatchObject({ seed: 3, models: ['gpt-4o-mini'], upkeep: { recorded: { entries: [] } } });
    expect(ctx.recorded?.cassette.entries()).toEqual([]);
    const [summary] = policiesFromFlags(['summary:threshold=60,summaryTokens=20']);
    expect(() => replay(chat, summary!, ctx)).toThrow(CassetteMissError);
    expect(() => replay(chat, summary!, ctx)).toThrow(/^upkeep\.cassette\.jsonl has no summary by gpt-4o-mini for scenario chat, policy summary/);
  });

  it('without a recorded upkeep, a context has no cassette and the replay simulates upkeep', () => {
    const ctx = replayContext({ seed: 3, model: 'gpt-4o-mini', tokenizer: 'chars4' });
    expect(ctx.recorded).toBeUndefined();
    const [summary] = policiesFromFlags(['summary:threshold=60,summaryTokens=20']);
    expect(replay(chat, summary!, ctx).turns.some((t) => t.auxInputTokens > 0)).toBe(true);
  });
});
