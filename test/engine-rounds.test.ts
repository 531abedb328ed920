import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import type { Policy } from '../src/policies/types.js';
import { policiesFromFlags } from '../src/study/study.js';
import { turnsCsv } from '../src/records/csv.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { capture, csvRows, problems } from './_io.js';
import { study } from './_pricing.js';
import { IMPORT_FIXTURES, importFixture } from './_import.js';
import { tempDir } from './_tmp.js';

/**
 * A turn is a loop of model calls: one after the user message, then one after
 * each round of tool calls (the assistant's text and calls, their results),
 * each round's prompt holding every round before it. Scenario files write
 * rounds under `tools:`; importers keep the rounds of a transcript; every
 * call is priced, checked and shown; a turn of one round is what it was.
 * (A real session counted call by call against its bill: import-swe-agent.test.ts.)
 */

/** An agent's task: one turn of three model calls (two rounds of tool calls, then the reply), then a question (one call). */
const AGENT = readFileSync('test/fixtures/agent-task.yaml', 'utf8');

const conversation = scenarioFromText('agent.yaml', AGENT);
const tokens = new TokenCounter('chars4');

describe('a scenario turn of several rounds', () => {
  it('is messages round by round: each round one assistant message with its text and calls, then its results; call ids run through the turn', () => {
    const t = conversation.turns[0]!;
    expect(t.tools.map((m) => [m.role, m.content.slice(0, 24), m.toolCalls?.map((c) => `${c.id} ${c.name}`) ?? m.toolCallId])).toEqual([
      ['assistant', 'Let me find the parser.', ['call_1_1 search']],
      ['tool', 'src/dates.py:14: def par', 'call_1_1'],
      ['assistant', '', ['call_1_2 read_file', 'call_1_3 run_tests']],
      ['tool', 'def parse_date(text):\n  ', 'call_1_2'],
      ['tool', 'FAILED test_leap_day - V', 'call_1_3'],
    ]);
  });

  it('gives every problem a place: mixed forms, an empty round, an unknown key', () => {
    const bad = (tools: string) => problems(() => scenarioFromText('bad.yaml', `id: bad\nturns:\n  - user: hi\n    tools:\n${tools}`));
    expect(bad('      - {call: a}\n      - calls: [{call: b}]\n')).toEqual(['bad.yaml:5:7 turns[0].tools: give tool calls ({call: …}) or rounds ({calls: […]}), not both']);
    expect(bad('      - calls: []\n')).toEqual(['bad.yaml:5:16 turns[0].tools[0].calls: expected at least 1 item(s)']);
    expect(bad('      - {calls: [{call: b}], say: hello}\n')).toEqual(['bad.yaml:5:30 turns[0].tools[0].say: unknown key "say"']);
  });

  it('is one model call per round plus one for the reply, each prompt holding the rounds before it', () => {
    const seen: number[] = [];
    const spy: Policy = {
      id: 'spy',
      describe: 'sends everything, records how long the pending turn is at each call',
      params: {},
      start: (c) => {
        const history: Message[] = [];
        return {
          prompt: (pending) => {
            seen.push(pending.length);
            return { messages: [...c.system, ...history, ...pending], overBudget: false, upkeep: [], stablePrefix: c.system.length };
          },
          commit: (exchange) => {
            history.push(...exchange);
            return [];
          },
          forget: () => [],
          artifacts: () => [],
        };
      },
    };
    const calls: SentCall[] = [];
    const ctx = replayContext({ model: 'gpt-4o-mini', tokenizer: 'chars4', seed: 42 });
    const r = replay(conversation, { name: 'spy', policy: spy, params: {} }, ctx, (turn, call) => {
      if (turn === 1) calls.push(call);
    });
    expect(seen).toEqual([1, 3, 6, 1]);
    const [user, a1, r1, a2, r2, r3] = [conversation.turns[0]!.user, ...conversation.turns[0]!.tools];
    const system = conversation.system[0]!;
    expect(calls.map((c) => c.plan.messages)).toEqual([
      [system, user],
      [system, user, a1, r1],
      [system, user, a1, r1, a2, r2, r3],
    ]);
    // Each call's output is the next round's assistant message, then the reply.
    expect(calls.map((c) => c.output)).toEqual([a1, a2, conversation.turns[0]!.assistant]);
    const expected = [[system, user], [system, user, a1!, r1!], [system, user, a1!, r1!, a2!, r2!, r3!]].map((m) => tokens.prompt(m));
    expect(calls.map((c) => c.promptTokens)).toEqual(expected);
    expect(r.turns.map((t) => [t.calls, t.inputTokens, t.outputTokens])).toEqual([
      [3, expected.reduce((a, b) => a + b, 0), tokens.output(a1!) + tokens.output(a2!) + tokens.output(conversation.turns[0]!.assistant!)],
      [1, r.turns[1]!.inputTokens, tokens.output(conversation.turns[1]!.assistant!)],
    ]);
  });

  it('is priced call by call, each call caching the prefix the one before it sent, and turns.csv counts the calls', () => {
    const long = scenarioFromText('long.yaml', AGENT.replace('You fix bugs.', 'You fix bugs. '.repeat(400).trim()));
    const r = study([long], ['full'], { model: 'gpt-4o-mini' });
    const t1 = r.turns[0]!;
    expect(t1.calls).toBe(3);
    // Calls 2 and 3 find the previous call's prompt cached (over 1,024 tokens, in 128-token steps).
    expect(t1.cachedTokens).toBeGreaterThan(2 * 1024);
    expect(csvRows(turnsCsv(r), ['calls']).slice(0, 2)).toEqual([{ calls: '3' }, { calls: '1' }]);
  });

  it('sees a window keep its budget inside a long turn: the pending rounds alone may break it', () => {
    const r = study([conversation], ['window-tokens:budget=60'], { model: 'gpt-4o-mini' });
    expect(r.turns[0]!.overBudget).toBe(true);
    expect(r.turns[1]!.overBudget).toBe(false);
  });

  it('explain shows what the provider billed for a call, from a transcript, beside what ctxsim counts', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'billed.yaml'), AGENT.replace('      - assistant: Let me find the parser.\n', '      - assistant: Let me find the parser.\n        usage: {input: 40, output: 12}\n'));
    const io = capture();
    expect(await runMain(['explain', join(dir, 'billed.yaml'), '--policy', 'full', '--turn', '1', '--tokenizer', 'chars4'], io)).toBe(0);
    const counted = Number(/^\s+total\s+(\d+)/m.exec(io.stdout)![1]);
    expect(io.stdout).toContain(`  billed by the provider: 40 prompt tokens (ctxsim counts ${counted}, ${counted >= 40 ? '+' : '−'}${Math.abs((counted / 40 - 1) * 100).toFixed(1)}%)\n`);
    expect(io.stdout.match(/billed by the provider/g)).toHaveLength(1);
  });

  it('run prints, for a transcript that records what the provider billed, ctxsim’s count of those calls under full against the bill, on the model the transcript names', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), `scenarios:\n  - import: {format: swe-agent, path: ${JSON.stringify(join(IMPORT_FIXTURES, 'mini-swe-agent-sample.traj.json'))}}\npolicies: [window-turns]\n`);
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', join(dir, 'out'), '--no-token-cache'], io)).toBe(0);
    // The same count by hand: every call under full, those whose output carries a bill, on the model the responses name (the study's is gpt-4o-mini).
    const [c] = importDataset('swe-agent', importFixture('mini-swe-agent-sample.traj.json')).conversations;
    expect(c!.model).toBe('deepseek-chat');
    let counted = 0;
    let billed = 0;
    let calls = 0;
    const r = replay(c!, policiesFromFlags(['full'])[0]!, replayContext({ model: 'deepseek-chat', tokenizer: 'auto', seed: 42 }), (_, call) => {
      if (!call.output?.billed) return;
      calls++;
      counted += call.promptTokens;
      billed += call.output.billed.input;
    });
    expect(calls).toBeGreaterThan(1);
    const diff = counted / billed - 1;
    expect(io.stderr).toContain(
      // The first call read nothing from the cache: the replay starts cold.
      `billed: ${c!.id} (full on deepseek-chat, ${calls} calls, cold start): ctxsim counts ${counted.toLocaleString('en-US')} prompt tokens, the provider billed ${billed.toLocaleString('en-US')} (${diff >= 0 ? '+' : '−'}${Math.abs(diff * 100).toFixed(1)}%); `,
    );
    // Every call was billed: the cached share and the cost are compared too. The bill by hand, at deepseek-chat's
    // $0.28/M input, $0.028/M cached, $0.42/M output: 4,050 prompt tokens of which 1,152 + 1,280 = 2,432 cached
    // (60.0%), 30 + 45 + 20 = 95 output: 1,618 × 280,000 + 2,432 × 28,000 + 95 × 420,000 = 561,036,000 pico-dollars.
    const cost = r.turns.reduce((n, t) => n + t.costInput + t.costCached + t.costOutput, 0n);
    const cached = r.turns.reduce((n, t) => n + t.cachedTokens, 0);
    const change = Number(cost) / 561_036_000 - 1;
    expect(io.stderr).toContain(
      `; cached ${((cached / counted) * 100).toFixed(1)}% (billed 60.0%); cost $${(Number(cost) / 1e12).toFixed(6)}, billed $0.000561 (${change >= 0 ? '+' : '−'}${Math.abs(change * 100).toFixed(1)}%); `,
    );
    // The prompts alone: the bill less its 95 output tokens, 561,036,000 − 39,900,000 = 521,136,000 pico-dollars.
    const prompts = r.turns.reduce((n, t) => n + t.costInput + t.costCached, 0n);
    const promptChange = Number(prompts) / 521_136_000 - 1;
    expect(io.stderr).toContain(`; prompts $${(Number(prompts) / 1e12).toFixed(6)}, billed $0.000521 (${promptChange >= 0 ? '+' : '−'}${Math.abs(promptChange * 100).toFixed(1)}%)\n`);
  });

  it('explain shows every call', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agent.yaml'), AGENT);
    const io = capture();
    expect(await runMain(['explain', join(dir, 'agent.yaml'), '--policy', 'full', '--turn', '1', '--tokenizer', 'chars4'], io)).toBe(0);
    expect(io.stdout.match(/^call \d of \d/gm)).toEqual(['call 1 of 3', 'call 2 of 3', 'call 3 of 3']);
  });
});

describe('importers keep the rounds', () => {
  it('openai: each assistant message with calls is a round, its text kept with them', () => {
    const dir = tempDir();
    const messages = [
      { role: 'user', content: 'Fix the leap-day bug.' },
      { role: 'assistant', content: 'Searching.', tool_calls: [{ id: 'a', type: 'function', function: { name: 'search', arguments: '{"q":"parse_date"}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'src/dates.py' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'b', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/dates.py"}' } }] },
      { role: 'tool', tool_call_id: 'b', content: 'def parse_date' },
      { role: 'assistant', content: 'Done.' },
    ];
    writeFileSync(join(dir, 'agent.json'), JSON.stringify({ messages }));
    const [c] = importDataset('openai', { path: join(dir, 'agent.json'), file: 'agent.json', base: dir }).conversations;
    expect(c!.turns).toHaveLength(1);
    expect(c!.turns[0]!.tools.map((m) => (m.toolCalls ? `${m.content}|${m.toolCalls.map((x) => x.name).join(',')}` : `→ ${m.content}`))).toEqual([
      'Searching.|search',
      '→ src/dates.py',
      '|read_file',
      '→ def parse_date',
    ]);
    expect(c!.turns[0]!.assistant?.content).toBe('Done.');
    expect(study([c!], ['full'], { model: 'gpt-4o-mini' }).turns[0]!.calls).toBe(3);
  });
});
