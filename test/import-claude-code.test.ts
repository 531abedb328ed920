import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import type { TurnOut } from '../src/scenario/docs.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import { policiesFromFlags } from '../src/study/study.js';
import { itShared } from './_shared.js';
import { counts, importFixture, roundsOf, writeInput } from './_import.js';
import { problems } from './_io.js';
import { tempDir } from './_tmp.js';

const session = importFixture('claude-code-session.jsonl');
const tmp = tempDir('ctxsim-claude-code-');





describe('Claude Code importer on its fixture', () => {
  const { docs, conversations, report } = importDataset('claude-code', session, { fact: ['ticket=DATE-42'], probe: ['last:ticket'] });
  const turns = docs[0]!.turns as TurnOut[];

  it('makes one response of the lines sharing a message.id (results between them), a round when it calls tools, else the reply', () => {
    expect(docs.map((d) => d.id)).toEqual(['claude-code-session']);
    expect(counts(turns)).toEqual({ turns: 2, rounds: 2, calls: 3, results: 3, usages: 4 });
    expect(turns[0]).toEqual({
      user: 'Find where parse_date is defined. My ticket is DATE-42.',
      facts: { ticket: 'DATE-42' },
      tools: [
        {
          assistant: 'Searching.',
          calls: [
            { call: 'Grep', args: { pattern: 'def parse_date' }, result: 'src/dates.py:14: def parse_date(text):' },
            { call: 'Glob', args: { pattern: '**/*dates*.py' }, result: 'src/dates.py\ntests/test_dates.py' },
          ],
          usage: { input: 105, cached: 0, written: 100, output: 2, output_partial: true },
        },
        { calls: [{ call: 'Read', args: { file_path: '/repo/src/dates.py' }, result: 'File content (300KB) exceeds maximum allowed size' }], usage: { input: 128, cached: 105, written: 20, output: 1, output_partial: true } },
      ],
      assistant: 'parse_date is defined in src/dates.py, line 14.',
      usage: { input: 137, cached: 125, written: 10, output: 4, output_partial: true },
    });
    expect(turns[1]).toEqual({ user: 'Which ticket was it?', probe: ['ticket'], assistant: 'DATE-42.', usage: { input: 146, cached: 140, written: 5, written1h: 5, output: 3, output_partial: true } });
  });

  it('replays each response as one model call, its billed usage on the message it wrote (its output marked partial)', () => {
    const t = conversations[0]!.turns[0]!;
    expect(t.tools.filter((m) => m.role === 'assistant').map((m) => m.billed)).toEqual([
      { input: 105, cached: 0, written: 100, output: 2, outputPartial: true },
      { input: 128, cached: 105, written: 20, output: 1, outputPartial: true },
    ]);
    expect(t.assistant?.billed).toEqual({ input: 137, cached: 125, written: 10, output: 4, outputPartial: true });
  });

  it('reports what it skipped or kept as it was', () => {
    expect(report).toMatchObject({ conversations: 1, turns: 2, facts: 1, probes: 1 });
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['other-line', 2],
      ['thinking', 1],
      ['error-result', 1],
      ['sidechain', 1],
      ['output-under-reported', 4],
      // The fixture's lines carry no timestamp: its second turn has the default gap.
      ['no-time', 1],
    ]);
  });
});

describe('Claude Code sessions of other shapes', () => {
  const user = (content: unknown, extra = {}) => ({ type: 'user', isSidechain: false, message: { role: 'user', content }, ...extra });
  const assistant = (id: string, content: unknown[], extra = {}) => ({ type: 'assistant', isSidechain: false, message: { id, role: 'assistant', content }, ...extra });

  it('keeps a sub-agent file (every line a sidechain) as its conversation; a response after the reply opens a turn', () => {
    const f = writeInput(tmp, 'agent-a1.jsonl', [
      user('Look around.', { isSidechain: true }),
      assistant('m1', [{ type: 'text', text: 'Done looking.' }], { isSidechain: true }),
      assistant('m2', [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }], { isSidechain: true }),
      user([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a.txt' }, { type: 'image', source: {} }] }], { isSidechain: true }),
    ]);
    const { docs, report } = importDataset('claude-code', f, { prefix: 'sub' });
    expect(docs[0]).toEqual({
      id: 'sub',
      turns: [
        { user: 'Look around.', assistant: 'Done looking.' },
        { user: '', tools: [{ call: 'Bash', args: { command: 'ls' }, result: 'a.txt' }] },
      ],
    });
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['subagent-session', 1],
      ['result-non-text', 1],
      ['response-after-reply', 1],
    ]);
  });
});

describe('the time between turns', () => {
  const at = (seconds: number) => new Date(Date.UTC(2026, 3, 10, 9, 0, 0) + seconds * 1000).toISOString();
  const user = (text: string, seconds?: number) => ({ type: 'user', isSidechain: false, message: { role: 'user', content: text }, ...(seconds !== undefined && { timestamp: at(seconds) }) });
  const reply = (id: string, seconds: number) => ({ type: 'assistant', isSidechain: false, timestamp: at(seconds), message: { id, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Noted.' }] } });

  it('a user message after a response opens its turn with the time since that response’s last line: a session left for two hours replays with its cache expired', () => {
    const long = 'The build log says the linker failed on the third target again. '.repeat(120);
    const f = writeInput(tmp, 'lunch.jsonl', [
      user(long, 0),
      { ...reply('m1', 4), message: { ...reply('m1', 4).message, content: [{ type: 'text', text: 'Looking.' }] } },
      reply('m1', 6),
      user('Back after lunch: where were we?', 7206),
      reply('m2', 7210),
      user('And the next step?', 7270),
      reply('m3', 7275),
      user('Thanks.'),
      reply('m4', 7290),
    ]);
    const { docs, conversations, report } = importDataset('claude-code', f);
    // The gap runs from the response's last line (6 s), not its first; a message without a time keeps the default (30s).
    expect((docs[0]!.turns as TurnOut[]).map((t) => t.gap)).toEqual([undefined, '2h', '1m', undefined]);
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([['no-time', 1]]);
    expect(conversations[0]!.turns.map((t) => t.gapSeconds)).toEqual([30, 7200, 60, 30]);
    const cached: number[] = [];
    replay(conversations[0]!, policiesFromFlags(['full'])[0]!, replayContext({ model: 'claude-sonnet-4-5', tokenizer: 'auto', seed: 42 }), (_, __, cost) => cached.push(cost.cachedTokens));
    // Anthropic's cache keeps an entry 5 minutes: two hours later the whole prompt is written again; a minute later it is read.
    expect(cached[0]).toBe(0);
    expect(cached[1]).toBe(0);
    expect(cached[2]).toBeGreaterThan(1024);
    expect(cached[3]).toBeGreaterThan(cached[2]!);
  });
});

describe('a compaction', () => {
  const user = (content: unknown, extra = {}) => ({ type: 'user', isSidechain: false, message: { role: 'user', content }, ...extra });
  const reply = (id: string, text: string) => ({ type: 'assistant', isSidechain: false, message: { id, role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text }] } });

  it('starts a conversation of its own from the summary: what Claude Code sent after it held none of what came before', () => {
    const before = 'The whole design discussion, at length. '.repeat(200);
    const f = writeInput(tmp, 'compacted.jsonl', [
      user(before),
      reply('m1', 'Understood, long answer. '.repeat(100)),
      { type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 155000 } },
      user('This session is being continued from a previous conversation. Summary: the design is settled.', { isCompactSummary: true }),
      reply('m2', 'Continuing.'),
      user('Next step?'),
      reply('m3', 'Tests.'),
    ]);
    const { docs, conversations, report } = importDataset('claude-code', f, { prefix: 'cc' });
    expect(docs.map((d) => [d.id, d.model, (d.turns as TurnOut[]).map((t) => t.user.slice(0, 30))])).toEqual([
      ['cc', 'claude-sonnet-4-5', [before.slice(0, 30)]],
      ['cc-compact-1', 'claude-sonnet-4-5', ['This session is being continue', 'Next step?']],
    ]);
    expect(report).toMatchObject({ conversations: 2, turns: 3 });
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['compacted', 1],
      ['no-time', 1],
    ]);
    // full after the compaction sends the summary and what follows, not the discussion before it.
    const prompts: number[] = [];
    replay(conversations[1]!, policiesFromFlags(['full'])[0]!, replayContext({ model: 'claude-sonnet-4-5', tokenizer: 'auto', seed: 42 }), (_, call) => prompts.push(call.promptTokens));
    expect(prompts).toHaveLength(2);
    expect(prompts[1]).toBeLessThan(100);
  });
});

describe('the model a session was on', () => {
  const line = (id: string, model: unknown, text = 'ok') => ({ type: 'assistant', isSidechain: false, message: { id, role: 'assistant', model, content: [{ type: 'text', text }] } });
  const user = (text: string) => ({ type: 'user', isSidechain: false, message: { role: 'user', content: text } });

  it('keeps message.model as the scenario’s model, and the report names it', () => {
    const { docs, report } = importDataset('claude-code', session);
    expect(docs[0]!.model).toBe('claude-sonnet-4-5');
    expect(report.models).toEqual([{ model: 'claude-sonnet-4-5', conversations: 1 }]);
  });

  it('of several, the one that wrote most responses (each response once, whatever its lines), the others counted; Claude Code’s own <synthetic> responses name none', () => {
    const f = writeInput(tmp, 'mixed.jsonl', [
      user('one'),
      line('m1', 'claude-haiku-4-5', 'a'),
      user('two'),
      line('m2', 'claude-opus-4-1', 'b'),
      line('m2', 'claude-opus-4-1', 'c'),
      line('m2', 'claude-opus-4-1', 'd'),
      user('three'),
      line('m3', '<synthetic>'),
      user('four'),
      line('m4', 'claude-opus-4-1'),
    ]);
    const { docs, report } = importDataset('claude-code', f);
    expect(docs[0]!.model).toBe('claude-opus-4-1');
    expect(report.quirks.filter((q) => q.key === 'other-model').map((q) => [q.count, q.examples])).toEqual([[1, ['claude-haiku-4-5']]]);
    expect(importDataset('claude-code', writeInput(tmp, 'none.jsonl', [user('hi'), line('m1', '<synthetic>')])).docs[0]!.model).toBeUndefined();
  });

  it('a <synthetic> message (an API error Claude Code wrote itself) keeps its text, and its zero usage is no bill: no call billed 0', () => {
    const usage = (input: number, output: number) => ({ input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output });
    const billed = (id: string, model: string, text: string, u: ReturnType<typeof usage>) => ({ ...line(id, model, text), message: { ...line(id, model, text).message, usage: u } });
    const f = writeInput(tmp, 'synthetic.jsonl', [
      user('one'),
      billed('m1', 'claude-opus-4-1', 'a', usage(900, 5)),
      user('two'),
      billed('s1', '<synthetic>', 'API Error: 529 Overloaded', usage(0, 0)),
      user('continue'),
      billed('m2', 'claude-opus-4-1', 'b', usage(950, 5)),
    ]);
    const { docs, report } = importDataset('claude-code', f);
    const turns = docs[0]!.turns as TurnOut[];
    expect(turns.map((t) => [t.assistant, t.usage?.input])).toEqual([
      ['a', 900],
      ['API Error: 529 Overloaded', undefined],
      ['b', 950],
    ]);
    expect(report.quirks.find((q) => q.key === 'synthetic')).toMatchObject({ count: 1, examples: ['line 4'] });
  });

  it('a model that is not a name is an error at its line', () => {
    expect(problems(() => importDataset('claude-code', writeInput(tmp, 'model.jsonl', [user('hi'), line('m1', 7)])))).toEqual(['model.jsonl:2:89 message.model: expected string, got number 7 (quote it)']);
  });
});

describe('malformed Claude Code data', () => {
  it('lists every problem with its line and path, and yields nothing', () => {
    const f = writeInput(tmp, 'bad.jsonl', [
      { type: 'user', message: { role: 'user', content: 'hi' } },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] } },
      { type: 'assistant', message: { id: 'm', content: [{ type: 'tool_use', id: 't', input: {} }] } },
      { message: { content: 'no type' } },
      { type: 'assistant', message: { id: 'm2', content: 'text, not blocks' } },
    ]);
    expect(problems(() => importDataset('claude-code', f))).toEqual([
      'bad.jsonl:2:88 message.content[0].tool_use_id: answers no tool call before it ("nope")',
      'bad.jsonl:3:52 message.content[0].name: required but missing',
      'bad.jsonl:4:1 type: required but missing',
      'bad.jsonl:5:52 message.content: expected list, got string "text, not blocks"',
    ]);
    expect(problems(() => importDataset('claude-code', writeInput(tmp, 'syntax.jsonl', ['{"type": "user"}', '{"type": }'])))[0]).toMatch(/^syntax\.jsonl:2:\d+: invalid JSON: /);
    expect(problems(() => importDataset('claude-code', writeInput(tmp, 'empty.jsonl', [{ type: 'summary', summary: 'x' }])))).toEqual(['empty.jsonl: no user or assistant messages in the file']);
  });
});

const SAMPLE = 'agent_transcripts_sample/claude-code_sonnet-4-5_subagent-a2898e3.jsonl';

itShared(SAMPLE, 'a real Claude Code sub-agent session: 12 responses (11 rounds and the reply), 33 calls each with its result, billed usage on every response', (path) => {
  const { docs, report } = importDataset('claude-code', { path, file: 'a.jsonl', base: dirname(path) });
  const turns = docs[0]!.turns as TurnOut[];
  expect(counts(turns)).toEqual({ turns: 1, rounds: 11, calls: 33, results: 33, usages: 12 });
  const billed = [...roundsOf(turns[0]!).map((r) => r.usage!), turns[0]!.usage!];
  // As in the derived .usage.json: input + cache creation + cache read per response.
  expect(billed.map((u) => u.input)).toEqual([13525, 25092, 25946, 65093, 66161, 66778, 66975, 67531, 68052, 68273, 70783, 71257]);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  expect([sum(billed.map((u) => u.input)), sum(billed.map((u) => u.cached!)), sum(billed.map((u) => u.output!))]).toEqual([675_466, 604_156, 136]);
  expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
    ['subagent-session', 1],
    ['other-line', 70],
    ['error-result', 8],
    ['output-under-reported', 12],
  ]);
});

itShared(SAMPLE, 'the same session replayed under full on claude-sonnet-4-5: every call counted below what was billed (no system prompt or tool definitions in the log, and o200k for Claude’s tokenizer)', (path) => {
  const { conversations } = importDataset('claude-code', { path, file: 'a.jsonl', base: dirname(path) });
  const ours: number[] = [];
  const billed: number[] = [];
  const ctx = replayContext({ model: 'claude-sonnet-4-5', tokenizer: 'auto', seed: 42 });
  replay(conversations[0]!, policiesFromFlags(['full'])[0]!, ctx, (_, call) => {
    ours.push(call.promptTokens);
    billed.push(call.output!.billed!.input);
  });
  expect(ours).toHaveLength(12);
  expect(ours.every((n, i) => n < billed[i]!)).toBe(true);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  expect(sum(billed)).toBe(675_466);
  // Claude Code's system prompt and tool definitions (about 13.5k tokens: the first call's cache write) are not in the log:
  // every call is short of its bill by at least what the first one is, and o200k's undercount of Claude's tokens only adds to that.
  const gap = ours.map((n, i) => billed[i]! - n);
  expect(gap[0]).toBeGreaterThan(13_000);
  expect(gap.every((g) => g >= gap[0]!)).toBe(true);
});

it('round trip: the session imported, written as YAML and loaded is the same conversation (the reply’s usage included)', () => {
  const { docs, conversations } = importDataset('claude-code', session);
  const back = scenarioFromText(`${docs[0]!.id}.yaml`, scenarioToYaml(docs[0]!, ['header']));
  expect({ ...back, source: '' }).toEqual({ ...conversations[0]!, source: '' });
  expect(back.turns.some((t) => t.assistant?.billed)).toBe(true);
});
