/**
 * DeepSeek's API renders deepseek-chat prompts in DeepSeek-V3.2's format
 * (src/tokens/deepseek-v32.ts): held to the bill of a real session, the
 * mini-swe-agent run on deepseek-chat of ../shared/data (124 billed calls,
 * recorded on 2026-04-10), call by call.
 */
import { dirname } from 'node:path';
import { expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { importDataset } from '../src/scenario/import/index.js';
import { addUnloggedPrefixes, billedChecks } from '../src/study/billed.js';
import { policiesFromFlags } from '../src/study/study.js';
import type { Conversation } from '../src/types.js';
import { scenarioFromValue } from '../src/scenario/load.js';
import type { RoundOut, TurnOut } from '../src/scenario/docs.js';
import { describeShared } from './_shared.js';

const MINI = 'agent_transcripts_sample/mini-swe-agent_deepseek-chat_django-15213.traj.json';

/** Each billed call of `full`: ctxsim's prompt and output tokens, and the bill's. */
function calls(c: Conversation, tokenizer = 'auto') {
  const ctx = replayContext({ seed: 42, model: c.model!, tokenizer, ...(c.recorded !== undefined && { recorded: c.recorded }) });
  const out: { prompt: number; billed: number; output: number; billedOutput: number }[] = [];
  replay(c, policiesFromFlags(['full'])[0]!, ctx, (_, call) => {
    const b = call.output?.billed;
    if (b) out.push({ prompt: call.promptTokens, billed: b.input, output: ctx.tokens.output(call.output!), billedOutput: b.output! });
  });
  return { ctx, out };
}

describeShared(MINI, 'mini-swe-agent on deepseek-chat, counted in DeepSeek-V3.2’s format', (path) => {
  const imported = () => importDataset('swe-agent', { path, file: 'mini.traj.json', base: dirname(path) });

  it('the log’s date picks DeepSeek-V3.2’s format: every billed call’s prompt tokens and output tokens are the bill’s (124 of 124)', () => {
    const [c] = imported().conversations;
    expect([c!.model, c!.recorded]).toEqual(['deepseek/deepseek-chat', '2026-04-10T09:33:31Z']);
    const { ctx, out } = calls(c!);
    expect([ctx.encoding.name, ctx.encoding.estimate]).toEqual(['deepseek-v3.2', false]);
    expect(out).toHaveLength(124);
    expect(out.filter((k) => k.prompt !== k.billed)).toEqual([]);
    // What the model wrote (its text and the DSML block of its calls), without the end of sentence DeepSeek does not bill.
    expect(out.filter((k) => k.output !== k.billedOutput)).toEqual([]);
    expect(out.reduce((n, k) => n + k.prompt, 0)).toBe(4_930_216);
    expect(out.reduce((n, k) => n + k.output, 0)).toBe(39_027);
  });

  it('the same session dated before 2025-12-01 is counted with DeepSeek V3’s template, as then served: no call as billed, the whole 1.2% under', () => {
    const [c] = imported().conversations;
    const { ctx, out } = calls({ ...c!, recorded: '2025-06-01' });
    expect(ctx.encoding.name).toBe('deepseek-v3');
    expect(out.filter((k) => k.prompt === k.billed)).toEqual([]);
    expect(out.reduce((n, k) => n + k.prompt, 0)).toBe(4_870_481);
  });

  it('no unlogged prefix is needed: the first call is counted as billed, and the billed check matches the bill’s count, cached share and cost', () => {
    const { docs, conversations } = imported();
    const [sized] = addUnloggedPrefixes(docs, conversations);
    expect(sized!.prefix).toEqual({ billed: 1533, counted: 1533, tokens: 0 });
    expect(docs[0]!.unlogged_prefix).toBeUndefined();
    const [check] = billedChecks(conversations, { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin' });
    expect([check!.model, check!.calls, check!.counted, check!.billed]).toEqual(['deepseek/deepseek-chat', 124, 4_930_216, 4_930_216]);
    const p = check!.priced!;
    expect(Math.abs(p.cached / check!.counted - p.billedCached / check!.billed)).toBeLessThan(0.001);
    expect(Math.abs(Number(p.promptCost) / Number(p.billedPromptCost) - 1)).toBeLessThan(0.001);
    expect(Math.abs(Number(p.cost) / Number(p.billedCost) - 1)).toBeLessThan(0.001);
  });

  it('each round keeps the gap before its call; every gap is 1.8 s or more, so the cache reads as if untimed; sent 0.5 s after each reply, each call would read no output of the one before', () => {
    const { docs } = imported();
    const rounds = (docs[0]!.turns[0] as TurnOut).tools as RoundOut[];
    const gaps = rounds.map((r) => r.gap);
    expect(gaps[0]).toBeUndefined();
    expect(gaps.slice(1).every((g) => g !== undefined && parseFloat(g) >= 1.8)).toBe(true);
    const cached = (doc: unknown) => billedChecks([scenarioFromValue('mini.yaml', doc)], { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin' })[0]!.priced!.cached;
    const withGaps = (gap: string | undefined) => ({ ...docs[0]!, turns: [{ ...(docs[0]!.turns[0] as TurnOut), tools: rounds.map(({ gap: _, ...r }, k) => (k && gap ? { ...r, gap } : r)) }] });
    const recorded = cached(docs[0]);
    expect(recorded).toBe(cached(withGaps(undefined)));
    // With the warm start the import records (the first call read 320 tokens written before it).
    expect(recorded).toBe(4_892_544);
    expect(cached(withGaps('0.5s'))).toBeLessThan(recorded - 30_000);
  });
});
