import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText, scenarioFromFile } from '../src/scenario/load.js';
import { billedChecks, billedLine } from '../src/study/billed.js';
import { calibrateTokenFactor } from '../src/study/calibrate.js';
import { policiesFromFlags } from '../src/study/study.js';
import type { Conversation } from '../src/types.js';
import { importFixture, writeInput } from './_import.js';
import { cli, csvRows, expectUsage } from './_io.js';
import { priceFile, study } from './_pricing.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

const full = () => policiesFromFlags(['full'])[0]!;

/** The prompt tokens of each billed call of `full` on `model`'s tokenizer, with the bill. */
function billedCalls(c: Conversation, model: string): { counted: number; billed: number; unlogged: number }[] {
  const out: { counted: number; billed: number; unlogged: number }[] = [];
  replay(c, full(), replayContext({ seed: 42, model, tokenizer: 'auto' }), (_, call) => {
    if (call.output?.billed) out.push({ counted: call.promptTokens, billed: call.output.billed.input, unlogged: call.unloggedTokens });
  });
  return out;
}

describe('import --unlogged-prefix billed', () => {
  const session = importFixture('claude-code-session.jsonl');

  it('adds a pinned stand-in sized from the first call’s bill, before the turns, and says so on stderr', async () => {
    const dir = tempDir();
    const r = await cli('import', '--format', 'claude-code', session.path, '--out', dir, '--unlogged-prefix', 'billed');
    expect(r.code, r.err).toBe(0);
    // The same size by hand: the first billed call's prompt as the log holds it, on claude-sonnet-4-5's tokenizer (o200k_base).
    const [plain] = importDataset('claude-code', session).conversations;
    const first = billedCalls(plain!, 'claude-sonnet-4-5')[0]!;
    const tokens = first.billed - first.counted;
    expect(tokens).toBeGreaterThan(0);
    const yaml = readFileSync(join(dir, 'claude-code-session.yaml'), 'utf8');
    expect(yaml).toContain(`unlogged_prefix:\n  tokens: ${tokens}\n  from: billed\nturns:\n`);
    expect(r.err).toContain(`unlogged prefix, estimated from the bill:\n  claude-code-session: ${tokens} tokens per call (first call billed ${first.billed}, the log holds ${first.counted})\n`);

    // Replayed, every call sends it first: the first call is the bill, every call is the log's count plus the prefix, every turn an estimate.
    const c = scenarioFromFile(join(dir, 'claude-code-session.yaml'));
    expect(c.unloggedTokens).toBe(tokens);
    const calls = billedCalls(c, 'claude-sonnet-4-5');
    expect(calls[0]!.counted).toBe(first.billed);
    expect(calls.map((k) => k.counted)).toEqual(billedCalls(plain!, 'claude-sonnet-4-5').map((k) => k.counted + tokens));
    expect(calls.every((k) => k.unlogged === tokens)).toBe(true);
    const r2 = replay(c, full(), replayContext({ seed: 42, model: 'claude-sonnet-4-5', tokenizer: 'auto' }));
    expect(r2.turns.every((t) => t.estimatedTokens)).toBe(true);

    // explain shows it as the first row of what is sent.
    const ex = await cli('explain', join(dir, 'claude-code-session.yaml'), '--policy', 'full', '--turn', '1', '--model', 'claude-sonnet-4-5');
    expect(ex.code, ex.err).toBe(0);
    expect(ex.out).toMatch(new RegExp(`unlogged prefix +${tokens} +what the log left out, sized from its bill \\(an estimate\\)`));
  });

  it('every table of a run says which prompts carry the estimated stand-in', async () => {
    const dir = tempDir();
    expect((await cli('import', '--format', 'claude-code', session.path, '--out', dir, '--unlogged-prefix', 'billed')).code).toBe(0);
    const tokens = scenarioFromFile(join(dir, 'claude-code-session.yaml')).unloggedTokens!;
    const r = await cli('run', '--scenario', join(dir, '*.yaml'), '--policy', 'full', '--model', 'claude-sonnet-4-5', '--out', join(dir, 'out'), '--no-token-cache');
    expect(r.code, r.err).toBe(0);
    const line = `Estimated: what the transcript logs left out of every prompt is a stand-in sized from their bills (unlogged_prefix, tokens a call: claude-code-session ${tokens})`;
    // On stdout wrapped to 100 columns, its next lines indented.
    expect(r.out.replace(/\n {2}/g, ' ')).toContain(`${line}\n`);
    expect(r.out.split('\n').find((l) => l.startsWith('Estimated: '))!.length).toBeLessThanOrEqual(100);
    expect(readFileSync(join(dir, 'out', 'report.md'), 'utf8')).toContain(line);
    expect(readFileSync(join(dir, 'out', 'report.html'), 'utf8')).toContain(`<p class="caption">${line}</p>`);
    const results = JSON.parse(readFileSync(join(dir, 'out', 'results.json'), 'utf8')) as { study: { scenarios: { unloggedTokens?: number }[] } };
    expect(results.study.scenarios[0]!.unloggedTokens).toBe(tokens);
  });

  it('a file whose log records no billed usage is one line, exit 2', async () => {
    await expectUsage(
      ['import', '--format', 'anthropic', importFixture('anthropic-requests.jsonl').path, '--unlogged-prefix', 'billed'],
      'ctxsim: --unlogged-prefix billed: no conversation in the file records billed usage (token usage per model call) to size it from',
    );
  });

  it('is refused in a scenario when it is not a whole number of tokens from the bill', () => {
    expect(() => scenarioFromText('x.yaml', 'id: x\nunlogged_prefix: {tokens: 0, from: billed}\nturns:\n  - user: hi\n')).toThrow(/unlogged_prefix\.tokens/);
    expect(() => scenarioFromText('x.yaml', 'id: x\nunlogged_prefix: {tokens: 10, from: guess}\nturns:\n  - user: hi\n')).toThrow(/unlogged_prefix\.from/);
  });
});

describe('cache writes a transcript recorded', () => {
  // $1/M input, Anthropic-style defaults: writes 1.25×, 1-hour writes 2×, reads 0.1×; 1,100-token system prompt (chars4).
  const file = priceFile({ 'test-claude': { litellm_provider: 'anthropic', input_cost_per_token: 0.000001, output_cost_per_token: 0 } });
  const system = 'S'.repeat(4400);
  const scenario = (usage: string) =>
    scenarioFromText('s.yaml', `id: s\nsystem: ${system}\nturns:\n  - user: ${'a'.repeat(400)}\n    assistant: ok\n    usage: ${usage}\n  - user: ${'b'.repeat(400)}\n    gap: 10m\n    assistant: ok\n`);

  it('1-hour writes replay with the 1-hour TTL (written at 2× input, alive after a 10-minute pause) unless the study sets cacheTtl', () => {
    const hour = scenario('{input: 1200, written: 1200, written1h: 1200}');
    const r = study([hour], ['full'], { model: 'test-claude', prices: file });
    // Turn 1: [system 1100, user 100] = 1200 written (both breakpoints ≥ 1024), at 2e6 pico a token.
    expect(r.turns[0]!.cacheWriteTokens).toBe(1200);
    expect(r.turns[0]!.cost).toBe(1200n * 2_000_000n);
    // Turn 2, ten minutes later: the whole first prompt is read back.
    expect(r.turns[1]!.cachedTokens).toBe(1200);
    const five = study([hour], ['full'], { model: 'test-claude', prices: file, promptCacheTtl: 300 });
    expect(five.turns[0]!.cost).toBe(1200n * 1_250_000n);
    expect(five.turns[1]!.cachedTokens).toBe(0);
    // A transcript whose writes were 5-minute ones keeps the default.
    const plain = study([scenario('{input: 1200, written: 1200}')], ['full'], { model: 'test-claude', prices: file });
    expect(plain.turns[0]!.cost).toBe(1200n * 1_250_000n);
  });
});

describe('DeepSeek’s cache: 64-token units, and the previous call’s output', () => {
  // $1/M input, reads $0.1/M; chars4: system 300, users 100, replies 50 tokens, no per-message overhead.
  const file = priceFile({ 'deepseek-test': { litellm_provider: 'deepseek', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000001 } });
  const conv = scenarioFromText(
    'd.yaml',
    `id: d\nsystem: ${'s'.repeat(1200)}\nturns:\n${['x', 'y', 'z'].map((c) => `  - user: ${c.repeat(400)}\n    assistant: ${c.toUpperCase().repeat(200)}\n`).join('')}`,
  );

  it('reads the previous prompt and its reply, rounded down to 64 tokens, from 64 tokens on', () => {
    const r = study([conv], ['full'], { model: 'deepseek-test', prices: file });
    const inputs = r.turns.map((t) => t.inputTokens);
    // Prompts: 400, 550, 700. Turn 2 holds turn 1's prompt (400) and its reply (50): 450 → 448; turn 3: 550 + 50 = 600 → 576.
    expect(inputs).toEqual([400, 550, 700]);
    expect(r.turns.map((t) => t.cachedTokens)).toEqual([0, 448, 576]);
    // OpenAI's rule on the same prompts caches nothing: every shared prefix is under 1,024 tokens.
    const openai = priceFile({ 'openai-test': { litellm_provider: 'openai', input_cost_per_token: 0.000001, output_cost_per_token: 0, cache_read_input_token_cost: 0.0000001 } });
    expect(study([conv], ['full'], { model: 'openai-test', prices: openai }).turns.map((t) => t.cachedTokens)).toEqual([0, 0, 0]);
  });
});

describe('agent sessions priced as billed, on the real transcripts', () => {
  const sample = 'agent_transcripts_sample';

  itShared(`${sample}/claude-code_sonnet-4-5_subagent-a2898e3.jsonl`, 'Claude Code on claude-sonnet-4-5 with its unlogged prefix: counts within 10% of the bill, cached share within 3 points, cost within 15%', async (path) => {
    const dir = tempDir();
    const r = await cli('import', '--format', 'claude-code', path, '--out', dir, '--unlogged-prefix', 'billed');
    expect(r.code, r.err).toBe(0);
    const conversations = [scenarioFromFile(join(dir, 'claude-code-sonnet-4-5-subagent-a2898e3.yaml'))];
    const [check] = billedChecks(conversations, { seed: 42, models: ['claude-sonnet-4-5'], tokenizer: 'auto', prices: 'builtin' });
    expect(check!.calls).toBe(12);
    expect(Math.abs(check!.counted / check!.billed - 1)).toBeLessThan(0.1);
    const p = check!.priced!;
    expect(Math.abs(p.cached / check!.counted - p.billedCached / check!.billed)).toBeLessThan(0.03);
    expect(Math.abs(Number(p.cost) / Number(p.billedCost) - 1)).toBeLessThan(0.15);
    // Calibrated (ctxsim calibrate's factor, on the model the transcript names): the prompts' cost within 3% of the bill's.
    // The whole cost is not compared: Claude Code logs output_tokens mid-stream, so the bill's output is under-reported.
    const fit = calibrateTokenFactor(conversations).models[0]!;
    expect(fit.rounded).toBeGreaterThan(1);
    const [calibrated] = billedChecks(conversations, { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin', tokenFactor: { [fit.model]: fit.rounded! } });
    expect(calibrated!.model).toBe(fit.model);
    expect(Math.abs(calibrated!.counted / calibrated!.billed - 1)).toBeLessThan(0.01);
    expect(Math.abs(Number(calibrated!.priced!.promptCost) / Number(calibrated!.priced!.billedPromptCost) - 1)).toBeLessThan(0.03);
    // Per turn, the calls of the long agent turn read nothing the earlier ones wrote: far from the bill.
    const [turn] = billedChecks(conversations, { seed: 42, models: ['claude-sonnet-4-5'], tokenizer: 'auto', prices: 'builtin', cacheBreakpoint: 'turn' });
    expect(turn!.priced!.cached / turn!.counted).toBeLessThan(0.5);
  });

  itShared(`${sample}/mini-swe-agent_deepseek-chat_django-15213.traj.json`, 'mini-swe-agent on deepseek-chat: the log holds the whole prompt (no prefix needed); counted as billed, the cached share and cost the bill’s', async (path) => {
    const dir = tempDir();
    const r = await cli('import', '--format', 'swe-agent', path, '--out', dir, '--unlogged-prefix', 'billed');
    expect(r.code, r.err).toBe(0);
    // DeepSeek-V3.2's format renders the bash tool in the system turn: ctxsim counts the first call's bill (1,533, the trajectory's own usage).
    expect(r.err).toContain(': ctxsim counts the first call as billed (1,533 tokens): the log holds the whole prompt, no prefix needed\n');
    const conversations = [scenarioFromFile(join(dir, 'mini-swe-agent-deepseek-chat-django-15213.yaml'))];
    expect(conversations[0]!.unloggedTokens).toBeUndefined();
    const [check] = billedChecks(conversations, { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin' });
    // Replayed on the model the transcript names, not the study's first.
    expect([check!.model, check!.calls, check!.counted, check!.billed]).toEqual(['deepseek/deepseek-chat', 124, 4_930_216, 4_930_216]);
    const p = check!.priced!;
    expect(Math.abs(p.cached / check!.counted - p.billedCached / check!.billed)).toBeLessThan(0.001);
    expect(Math.abs(Number(p.cost) / Number(p.billedCost) - 1)).toBeLessThan(0.01);
  });
});

describe('the billed line of a run', () => {
  it('prices the bill with the same table: 1-hour writes at their own rate', async () => {
    const dir = tempDir();
    const yaml = `id: t\nmodel: claude-sonnet-4-5\nturns:\n  - user: hello there\n    assistant: hi\n    usage: {input: 3000, cached: 1000, written: 1500, written1h: 500, output: 20}\n`;
    writeInput(dir, 't.yaml', yaml);
    writeFileSync(join(dir, 'study.yaml'), 'model: claude-sonnet-4-5\nscenarios: [t.yaml]\npolicies: [full]\n');
    // turns.csv's content alone: the billed line is said as with a report folder.
    const r = await cli('run', join(dir, 'study.yaml'), '--out', join(dir, 'turns.csv'), '--no-token-cache');
    expect(r.code, r.err).toBe(0);
    // claude-sonnet-4-5: $3/M input, $0.30/M reads, $3.75/M 5-minute writes, $6/M 1-hour writes, $15/M output:
    // 500 uncached × 3 + 1,000 × 0.3 + 1,000 × 3.75 + 500 × 6 + 20 × 15 = 1,500 + 300 + 3,750 + 3,000 + 300 = $8,850/M = $0.008850.
    const cost = csvRows(readFileSync(join(dir, 'turns.csv'), 'utf8')).reduce((n, row) => n + Number(row.cost_usd), 0);
    expect(r.err).toMatch(new RegExp(`; cost \\$${cost.toFixed(6)}, billed \\$0\\.008850 \\(`));
    // Its prompts alone: $8,850/M less 20 output tokens × $15/M = $8,550/M.
    expect(r.err).toMatch(/; prompts \$\d\.\d{6}, billed \$0\.008550 \(/);
  });
});

describe('the billed line: a warm start, and output counts the log left partial', () => {
  /** A Claude Code session of two calls whose first call read 5,000 tokens an earlier session had cached. */
  const log = (dir: string) =>
    writeInput(dir, 'warm.jsonl', [
      { type: 'user', message: { role: 'user', content: 'Fix the date bug.' } },
      { type: 'assistant', message: { id: 'm1', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'src/dates.py' } }], usage: { input_tokens: 3, cache_read_input_tokens: 5000, cache_creation_input_tokens: 200, output_tokens: 1 } } },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'def parse_date(text):\n    day, month, year = text.split("/")' }] } },
      { type: 'assistant', message: { id: 'm2', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Fixed: parse_date read the day before the month.' }], usage: { input_tokens: 3, cache_read_input_tokens: 5200, cache_creation_input_tokens: 150, output_tokens: 2 } } },
    ]);

  it('says the replay started warm, leads with the prompts’ cost and gives the whole cost with a note; --cold-start writes the warm prefix again', async () => {
    const dir = tempDir();
    const imported = await cli('import', '--format', 'claude-code', log(dir).path, '--out', dir, '--unlogged-prefix', 'billed');
    expect(imported.code, imported.err).toBe(0);
    const run = (...flags: string[]) => cli('run', '--scenario', join(dir, 'warm.yaml'), '--policy', 'full', '--model', 'claude-sonnet-4-5', '--out', join(dir, 'results.json'), '--no-token-cache', ...flags);
    const warm = (await run()).err.split('\n').find((l) => l.startsWith('billed: '))!;
    const note = '; the log counts output before each reply ends, so its bill is short)';
    expect(warm).toMatch(/^billed: warm \(full on claude-sonnet-4-5, 2 calls, warm start, 5,000 cached\): .*; cached [\d.]+% \(billed [\d.]+%\); prompts \$[\d.]+, billed \$[\d.]+ \([+−][\d.]+%\); cost \$[\d.]+, billed \$[\d.]+ \([+−][\d.]+%; /);
    expect(warm.endsWith(note)).toBe(true);
    const cold = (await run('--cold-start')).err.split('\n').find((l) => l.startsWith('billed: '))!;
    expect(cold).toContain("(full on claude-sonnet-4-5, 2 calls, cold start; the log's first call read 5,000 cached)");

    // The library's check: cold, the first call writes the 5,000 tokens it read warm ($3.75/M for a write, $0.30/M for a read).
    const conversations = [scenarioFromFile(join(dir, 'warm.yaml'))];
    const settings = { seed: 42, models: ['claude-sonnet-4-5'], tokenizer: 'auto', prices: 'builtin' } as const;
    const [w] = billedChecks(conversations, settings);
    const [c] = billedChecks(conversations, { ...settings, coldStart: true });
    expect([w!.start, c!.start, w!.outputPartial]).toEqual([{ cached: 5000, warm: true }, { cached: 5000, warm: false }, true]);
    expect(c!.priced!.promptCost - w!.priced!.promptCost).toBe(5000n * (3_750_000n - 300_000n));
    expect(c!.priced!.cached - w!.priced!.cached).toBe(-5000);
    // Warm, the first call is the bill's: 5,000 read, the rest (the log's 203 tokens, the unlogged prefix making up the difference) written.
    expect(w!.priced!.billedCached).toBe(5000 + 5200);

    // explain says it at the first call, and --cold-start there too.
    const explain = (...flags: string[]) => cli('explain', join(dir, 'warm.yaml'), '--policy', 'full', '--turn', '1', '--model', 'claude-sonnet-4-5', ...flags);
    const ex = await explain();
    expect(ex.out).toMatch(/\n {2}warm start: 5000 tokens of this prompt were in the cache before the call .*\n {2}cost on claude-sonnet-4-5: \d+ uncached, 5000 cache reads, /);
    const exCold = await explain('--cold-start');
    expect(exCold.out).toMatch(/\n {2}cold start: the transcript's first call read 5000 tokens from the cache, written before it; this replay starts with none \(--cold-start\)\n {2}cost on claude-sonnet-4-5: \d+ uncached, 0 cache reads, /);
  });

  it('a usage that says nothing of the cache is no bill of its cache reads: the cost is not compared on a model that caches', () => {
    const doc = (usage: string) => `id: t\nmodel: deepseek/deepseek-chat\nturns:\n  - user: hello there, this is a longer message\n    assistant: hi\n    usage: ${usage}\n  - user: and again\n    assistant: ok\n    usage: ${usage}\n`;
    const settings = { seed: 42, models: ['deepseek/deepseek-chat'], tokenizer: 'auto', prices: 'builtin' } as const;
    const [unsaid] = billedChecks([scenarioFromText('t.yaml', doc('{input: 3000, output: 20}'))], settings);
    expect([unsaid!.calls, unsaid!.billed, unsaid!.priced]).toEqual([2, 6000, undefined]);
    expect(billedLine(unsaid!)).toMatch(/^billed: t \(full on deepseek\/deepseek-chat, 2 calls, cold start\): ctxsim counts [\d,]+ prompt tokens, the provider billed 6,000 \([+−][\d.]+%\)$/);
    // Said, even as none, it is priced; and a model that caches nothing needs no word of it.
    const [said] = billedChecks([scenarioFromText('t.yaml', doc('{input: 3000, cached: 0, output: 20}'))], settings);
    expect(said!.priced).toMatchObject({ billedCached: 0 });
    const [off] = billedChecks([scenarioFromText('t.yaml', doc('{input: 3000, output: 20}'))], { ...settings, promptCache: 'off' });
    expect(off!.priced).toMatchObject({ cached: 0, billedCached: 0 });
  });

  it('a bill of no prompt tokens is compared with nothing, not +Infinity%', () => {
    const c = scenarioFromText('t.yaml', 'id: t\nmodel: gpt-4o-mini\nbilled: {calls: 1, input: 0}\nturns:\n  - user: hello there\n    assistant: hi\n');
    const [check] = billedChecks([c], { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin' });
    expect(billedLine(check!)).toMatch(/^billed: t \(full on gpt-4o-mini, 1 calls\): ctxsim counts \d+ prompt tokens, the provider billed 0 \(nothing to compare with\)$/);
  });

  it('explain shows a bill of no prompt tokens as it is, without a percentage of nothing (+Infinity%)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'zero.yaml'), 'id: zero\nturns:\n  - user: hello there\n    assistant: hi\n    usage: {input: 0, output: 0}\n');
    const ex = await cli('explain', join(dir, 'zero.yaml'), '--policy', 'full', '--turn', '1');
    expect(ex.code, ex.err).toBe(0);
    expect(ex.out).toMatch(/\n {2}billed by the provider: 0 prompt tokens \(ctxsim counts \d+\)\n/);
  });

  it('a log with whole output counts and a cold first call keeps the cost first, and says cold start', () => {
    const c = scenarioFromText('t.yaml', `id: t\nmodel: claude-sonnet-4-5\nturns:\n  - user: hello there\n    assistant: hi\n    usage: {input: 3000, cached: 0, written: 1500, output: 20}\n`);
    const [check] = billedChecks([c], { seed: 42, models: ['claude-sonnet-4-5'], tokenizer: 'auto', prices: 'builtin' });
    expect([check!.start, check!.outputPartial]).toEqual([{ cached: 0, warm: false }, undefined]);
    expect(billedLine(check!)).toMatch(/^billed: t \(full on claude-sonnet-4-5, 1 calls, cold start\): .*; cost \$[\d.]+, billed \$[\d.]+ \([+−][\d.]+%\); prompts \$[\d.]+, billed \$[\d.]+ \([+−][\d.]+%\)$/);
  });
});

