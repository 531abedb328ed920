import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { studyDifferences } from '../src/gate/compare.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { loadStudy } from '../src/study/study.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { toolDefTokens } from '../src/tokens/tools.js';
import type { ToolDef } from '../src/types.js';
import { capture, asyncProblems, problems } from './_io.js';
import { variant } from './_policies.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Tool definitions are part of every call's prompt: counted by OpenAI's
 * published rule (the cookbook's tools example: 105 tokens on gpt-4 /
 * cl100k_base, 101 on gpt-4o / o200k_base, messages included), offered by a
 * scenario (`tool_defs`) or a study (`toolDefs`), first in the prefix a
 * provider caches, shown by explain, kept by the OpenAI importer.
 */

// The OpenAI cookbook's example (How_to_count_tokens_with_tiktoken.ipynb, MIT): one function, two messages.
const WEATHER: ToolDef = {
  name: 'get_current_weather',
  description: 'Get the current weather in a given location',
  parameters: {
    type: 'object',
    properties: {
      location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
      unit: { type: 'string', description: 'The unit of temperature to return', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['location'],
  },
};
const MESSAGES = [
  { role: 'system' as const, content: 'You are a helpful assistant that can answer to questions about the weather.' },
  { role: 'user' as const, content: "What's the weather like in San Francisco?" },
];

describe('the tokens of tool definitions', () => {
  it('are the cookbook’s: 105 with the messages on cl100k_base (gpt-4), 101 on o200k_base (gpt-4o)', () => {
    for (const [encoding, total] of [['cl100k_base', 105], ['o200k_base', 101]] as const) {
      const tokens = new TokenCounter(encoding);
      expect(tokens.prompt(MESSAGES) + toolDefTokens([WEATHER], tokens)).toBe(total);
    }
  });

  itShared('tiktoken_cookbook_example/example_counts.json', 'match the counts printed in the real cookbook data', (path) => {
    const d = JSON.parse(readFileSync(path, 'utf8')) as { num_tokens_for_tools: { tools: { function: ToolDef }[]; example_messages: typeof MESSAGES; printed_counts: { model: string; api: number }[] } };
    const t = d.num_tokens_for_tools;
    for (const { model, api } of t.printed_counts) {
      const tokens = new TokenCounter(model.startsWith('gpt-4o') ? 'o200k_base' : 'cl100k_base');
      expect(tokens.prompt(t.example_messages) + toolDefTokens(t.tools.map((x) => x.function), tokens), model).toBe(api);
    }
  });

  it('follow the rule’s parts: a function alone, a final period dropped, no definitions nothing', () => {
    const tokens = new TokenCounter('o200k_base');
    // 7 (function) + "ping:Check the server" + 12 (end).
    expect(toolDefTokens([{ name: 'ping', description: 'Check the server.' }], tokens)).toBe(7 + tokens.text('ping:Check the server') + 12);
    expect(toolDefTokens([], tokens)).toBe(0);
  });
});

const SCENARIO = (defs: string) => `id: tools
system: You are a weather assistant.
${defs}turns:
  - user: What's the weather like in San Francisco?
    tools:
      - {call: get_current_weather, args: {location: "San Francisco, CA"}, result: "18 C, fog"}
    assistant: Foggy, 18 C.
  - user: And tomorrow?
    assistant: Clearer.
`;
const DEFS = `tool_defs:
  - name: get_current_weather
    description: Get the current weather in a given location
    parameters:
      type: object
      properties:
        location: {type: string, description: "The city and state, e.g. San Francisco, CA"}
        unit: {type: string, description: The unit of temperature to return, enum: [celsius, fahrenheit]}
      required: [location]
`;

describe('tools offered with every call', () => {
  const ctx = replayContext({ model: 'gpt-4o-mini', tokenizer: 'auto', seed: 42 });
  const calls = (text: string, spec = 'full', c = ctx) => {
    const out: SentCall[] = [];
    const r = replay(scenarioFromText('tools.yaml', text), variant(spec), c, (_, call) => out.push(call));
    return { r, calls: out };
  };

  it('add their tokens to every call of the conversation, and to nothing else', () => {
    const without = calls(SCENARIO(''));
    const withDefs = calls(SCENARIO(DEFS));
    const n = toolDefTokens([WEATHER], ctx.tokens);
    expect(n).toBe(101 - ctx.tokens.prompt(MESSAGES));
    expect(withDefs.calls.map((c) => c.toolTokens)).toEqual([n, n, n]);
    expect(withDefs.calls.map((c) => c.promptTokens)).toEqual(without.calls.map((c) => c.promptTokens + n));
    expect(withDefs.r.turns.map((t) => t.inputTokens)).toEqual(without.r.turns.map((t, i) => t.inputTokens + n * [2, 1][i]!));
  });

  it('come first in the prefix a provider caches: a prompt whose messages change still finds them cached', () => {
    // Long definitions (over 1,024 tokens), and a one-exchange window, whose messages after the system prompt change each turn.
    const long = DEFS.replace('Get the current weather in a given location', 'Get the current weather in a given location. '.repeat(150).trim());
    const { calls: sent, r } = calls(SCENARIO(long), 'window-turns:turns=1');
    const head = sent[0]!.toolTokens + ctx.tokens.message(scenarioFromText('t.yaml', SCENARIO('')).system[0]!);
    expect(head).toBeGreaterThan(1024);
    // Turn 2's call shares only the definitions and the system prompt with the call before it.
    expect(r.turns[1]!.cachedTokens).toBe(Math.floor(head / 128) * 128);
  });

  it('may be written as OpenAI’s request sends them, {type: function, function: {…}}, and count the same', () => {
    // The cookbook's tools example, as its notebook passes it to the API: each entry {type: function, function: …}.
    const wire = `tool_defs:\n${JSON.stringify([{ type: 'function', function: WEATHER }])
      .replace(/^\[|\]$/g, '')
      .replace(/^/, '  - ')}\n`;
    const parsed = scenarioFromText('wire.yaml', SCENARIO(wire));
    expect(parsed.toolDefs).toEqual([WEATHER]);
    expect(calls(SCENARIO(wire)).calls.map((c) => c.promptTokens)).toEqual(calls(SCENARIO(DEFS)).calls.map((c) => c.promptTokens));
    expect(toolDefTokens(parsed.toolDefs!, ctx.tokens)).toBe(101 - ctx.tokens.prompt(MESSAGES));
  });

  it('of another shape are an error naming both accepted ones, at the entry', () => {
    const shapes = 'a tool is {name, description, parameters}, or as OpenAI sends it {type: function, function: {name, description, parameters}}';
    expect(problems(() => scenarioFromText('t.yaml', SCENARIO('tool_defs:\n  - {tool: ping}\n')))).toEqual([
      't.yaml:4:6 tool_defs[0].tool: unknown key "tool"',
      `t.yaml:4:5 tool_defs[0].name: expected the tool's name (${shapes}), got nothing`,
    ]);
    expect(problems(() => scenarioFromText('t.yaml', SCENARIO('tool_defs:\n  - {type: function}\n')))).toEqual([
      `t.yaml:4:5 tool_defs[0].function: expected the tool's {name, description, parameters} (${shapes}), got nothing`,
    ]);
    expect(problems(() => scenarioFromText('t.yaml', SCENARIO('tool_defs:\n  - {type: function, name: ping, function: {name: ping}}\n')))).toEqual([
      `t.yaml:4:5 tool_defs[0]: expected one shape: ${shapes}, got a mapping`,
    ]);
  });

  it('may be the study’s, a scenario’s of the same name replacing it; a name defined twice is an error at its place', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), SCENARIO(''));
    writeFileSync(join(dir, 'study.yaml'), `scenarios: [s.yaml]\npolicies: [full]\ntoolDefs:\n  - {name: ping, description: Check the server}\n  - {name: ping}\n`);
    expect(await asyncProblems(() => loadStudy(join(dir, 'study.yaml')))).toEqual([expect.stringMatching(/study\.yaml:5:12 toolDefs\[1\]\.name: tool ping is defined twice \(also toolDefs\[0\]\)$/)]);
    expect(problems(() => scenarioFromText('t.yaml', SCENARIO('tool_defs:\n  - {name: ping}\n  - {name: ping}\n')))).toEqual(['t.yaml:5:12 tool_defs[1].name: tool ping is defined twice (also tool_defs[0])']);
    const study = replayContext({ model: 'gpt-4o-mini', tokenizer: 'auto', seed: 42, toolDefs: [{ name: 'get_current_weather' }, { name: 'ping', description: 'Check the server' }] });
    const both = calls(SCENARIO(DEFS), 'full', study);
    expect(both.calls[0]!.toolTokens).toBe(toolDefTokens([{ name: 'ping', description: 'Check the server' }, WEATHER], ctx.tokens));
  });

  it('explain shows them as the first row, and the rows add up to the call', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'tools.yaml'), SCENARIO(DEFS));
    const io = capture();
    expect(await runMain(['explain', join(dir, 'tools.yaml'), '--policy', 'full', '--turn', '1'], io)).toBe(0);
    const table = io.stdout.split('\ncall 2')[0]!;
    const row = (name: string) => Number(new RegExp(`${name}\\s+(\\d+)`).exec(table)![1]);
    expect(row('tool definitions')).toBe(toolDefTokens([WEATHER], ctx.tokens));
    const messageRows = [...table.matchAll(/^\s*\d+\s+\S+\s+\S+\s+(\d+)/gm)].map((m) => Number(m[1]));
    expect(row('tool definitions') + messageRows.reduce((a, b) => a + b, 0) + row('reply priming')).toBe(row('total'));
  });

  it('the OpenAI importer keeps a conversation’s tools as its tool_defs', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'chat.jsonl'), `${JSON.stringify({ messages: [...MESSAGES, { role: 'assistant', content: 'Foggy.' }], tools: [{ type: 'function', function: WEATHER }] })}\n`);
    const [c] = importDataset('openai', { path: join(dir, 'chat.jsonl'), file: 'chat.jsonl', base: dir }).conversations;
    expect(c!.toolDefs).toEqual([WEATHER]);
  });

  it('the gate says when the study’s definitions changed', () => {
    const base = { model: 'm', tokenizer: 't', prices: 'p', cache: 'c', rules: 'r', seed: 1, policies: [], scenarios: {} };
    expect(studyDifferences(base, { ...base, toolDefs: 'a' })).toEqual(['tool definitions added']);
    expect(studyDifferences({ ...base, toolDefs: 'a' }, { ...base, toolDefs: 'b' })).toEqual(['tool definitions changed']);
  });
});
