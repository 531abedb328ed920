import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { ScenarioError } from '../src/errors.js';
import { importDataset } from '../src/scenario/import/index.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const chats = { path: join(FIXTURES, 'openai-chats.jsonl'), file: 'openai-chats.jsonl', base: FIXTURES };
const tmp = mkdtempSync(join(tmpdir(), 'ctxsim-openai-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function write(name: string, text: string) {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return { path, file: name, base: tmp };
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  throw new Error('expected a ScenarioError');
}

describe('OpenAI importer on its fixture (JSONL, fine-tuning format)', () => {
  const { conversations: [a, b], report } = importDataset('openai', chats, { annotations: 'openai-chats.facts.yaml' });

  it('folds messages into turns: consecutive user messages merge, tool calls and results join their turn', () => {
    expect([a!.id, b!.id]).toEqual(['openai-chats-0001', 'openai-chats-0002']);
    expect(a!.system).toEqual([{ role: 'system', content: 'You are a support agent for Brightcart.' }]);
    expect(a!.turns.map((t) => [t.user.content, t.assistant?.content])).toEqual([
      ["Hi, I'm Kavya. My order SE-10423 is late.", 'Sorry Kavya, let me check.'],
      ['Thanks.\nMy email is kavya@old.example by the way.', 'It is out for delivery today.'],
      ['Sorry, my email is actually kavya@new.example.', 'Updated.'],
      ['Which order was late again?', 'Order SE-10423.'],
    ]);
    expect(a!.turns[1]!.tools).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_2_1', name: 'lookup_order', arguments: '{"order_id":"SE-10423"}' }], turn: 2 },
      { role: 'tool', content: '{"status": "out for delivery"}', toolCallId: 'call_2_1', turn: 2 },
    ]);
    // Text sent alongside tool calls stays with them, in their round; arguments "" mean no arguments.
    expect(b!.turns.map((t) => [t.user.content, t.tools.map((m) => (m.toolCalls ? [m.content, ...m.toolCalls.map((c) => `${c.name}(${c.arguments})`)] : m.content)), t.assistant?.content])).toEqual([
      ['Set a timer for ten minutes.', [['Starting it now.', 'start_timer({"minutes":10})', 'notify({})'], 'started', 'ok'], 'Your timer is running.'],
    ]);
  });

  it('places side-file facts where the user says them (a list is a correction) and probes on the named turns', () => {
    expect(a!.turns.map((t) => t.facts)).toEqual([{ name: 'Kavya', order_id: 'SE-10423' }, { email: 'kavya@old.example' }, { email: 'kavya@new.example' }, {}]);
    expect(a!.turns.map((t) => t.probe)).toEqual([[], [], [], ['order_id', 'email']]);
    expect(b!.turns[0]!.facts).toEqual({});
    expect(report).toMatchObject({ conversations: 2, turns: 5, facts: 4, probes: 2 });
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([['non-text-part', 1]]);
  });

  it('takes facts and probes for every conversation from flags, skipping where they do not apply', () => {
    const r = importDataset('openai', chats, { fact: ['order_id=SE-10423'], probe: ['last:order_id', '3:order_id'] });
    expect(r.conversations[0]!.turns.map((t) => t.probe)).toEqual([[], [], ['order_id'], ['order_id']]);
    expect(r.report.quirks.map((q) => [q.key, q.count, q.examples])).toEqual([
      ['non-text-part', 1, ['openai-chats-0001']],
      ['fact-not-found', 1, ['openai-chats-0002 order_id']],
      ['probe-before-fact', 1, ['openai-chats-0002 order_id']],
      ['probe-out-of-range', 1, ['openai-chats-0002 3']],
    ]);
  });

  it('positions side-file mistakes in the side file', () => {
    const side = write(
      'side.yaml',
      ['openai-chats-0001:', '  facts: {name: Zed}', '  probe: {9: [name]}', 'chat-9:', '  facts: {a: b}', ''].join('\n'),
    );
    expect(problems(() => importDataset('openai', chats, { annotations: side.path }))).toEqual([
      `${side.path}:4:1 chat-9: no imported conversation has id "chat-9" (ids: openai-chats-0001, openai-chats-0002)`,
      `${side.path}:2:17 openai-chats-0001.facts.name: no user message of openai-chats-0001 contains "Zed"`,
      `${side.path}:3:11 openai-chats-0001.probe[9]: openai-chats-0001 has 4 turns`,
    ]);
  });
});

describe('other OpenAI layouts', () => {
  it('reads a JSON array of messages as one conversation named after the file', () => {
    const f = write('single.json', JSON.stringify([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]));
    const { conversations } = importDataset('openai', f);
    expect(conversations.map((c) => [c.id, c.turns.length])).toEqual([['single-0001', 1]]);
  });

  it('reads a JSON array of {messages} objects, and an assistant-first chat opens with an empty user message', () => {
    const f = write('many.json', JSON.stringify([{ messages: [{ role: 'assistant', content: 'Welcome!' }, { role: 'user', content: 'hi' }] }, { messages: [{ role: 'user', content: 'yo' }] }]));
    const { conversations, report } = importDataset('openai', f, { prefix: 'chat' });
    expect(conversations.map((c) => [c.id, c.turns.map((t) => [t.user.content, t.assistant?.content])])).toEqual([
      ['chat-0001', [['', 'Welcome!'], ['hi', undefined]]],
      ['chat-0002', [['yo', undefined]]],
    ]);
    expect(report.quirks.map((q) => q.key)).toEqual(['assistant-first']);
  });

  it("keeps a refusal (a content part, or the message's field) as the assistant's text, not as media", () => {
    const f = write(
      'refusal.json',
      JSON.stringify([
        { role: 'user', content: 'How do I pick a lock?' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: "I can't help with that." }] },
        { role: 'user', content: 'A joke, then.' },
        { role: 'assistant', content: null, refusal: "Sorry, I can't help with that either.", audio: null },
        { role: 'user', content: 'Fine.' },
        { role: 'assistant', content: 'OK.', refusal: null },
      ]),
    );
    const { conversations, report } = importDataset('openai', f);
    expect(conversations[0]!.turns.map((t) => t.assistant?.content)).toEqual(["I can't help with that.", "Sorry, I can't help with that either.", 'OK.']);
    expect(report.quirks).toEqual([]);
    // A Responses API output message says it in a content part.
    const items = [
      { type: 'message', role: 'user', content: 'How do I pick a lock?' },
      { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: "I can't help with that." }] },
    ];
    const responses = importDataset('openai', write('refusal-responses.json', JSON.stringify(items)));
    expect([responses.conversations[0]!.turns[0]!.assistant?.content, responses.report.quirks]).toEqual(["I can't help with that.", []]);
  });
});

describe('malformed OpenAI data', () => {
  it('lists every problem with its line and path, and yields nothing', () => {
    const f = write(
      'bad.jsonl',
      [
        JSON.stringify({ messages: [{ role: 'user', content: 'a' }, { role: 'tool', tool_call_id: 'zzz', content: 'x' }] }),
        JSON.stringify({ messages: [{ role: 'user', content: 'b' }, { role: 'tool', content: 'x' }] }),
        JSON.stringify({ messages: [{ role: 'user', content: 'c' }, { role: 'assistant', tool_calls: [{ id: 'q', function: { name: 'f', arguments: '[1]' } }] }] }),
        JSON.stringify({ conversation: [] }),
        JSON.stringify({ messages: [{ role: 'robot', content: 'c' }] }),
      ].join('\n'),
    );
    expect(problems(() => importDataset('openai', f))).toEqual([
      'bad.jsonl:1:74 messages[1].tool_call_id: answers no tool call of this turn ("zzz")',
      'bad.jsonl:2:44 messages[1].tool_call_id: answers no tool call of this turn (null)',
      'bad.jsonl:3:123 messages[1].tool_calls[0].function.arguments: expected a JSON object, got "[1]"',
      'bad.jsonl:4:1 messages: required but missing',
      'bad.jsonl:5:22 messages[0].role: expected one of system|developer|user|assistant|tool|function, got "robot"',
    ]);
    expect(problems(() => importDataset('openai', write('syntax.jsonl', '{"messages": []}\n{"messages": [}\n')))[0]).toMatch(/^syntax\.jsonl:2:\d+: invalid JSON: /);
  });

  it('rejects options of another format, from the CLI, with exit 2', async () => {
    const o = { out: '', err: '' };
    const io = { out: (t: string) => void (o.out += t), err: (t: string) => void (o.err += t), isTTY: false };
    expect(await runMain(['import', '--format', 'openai', chats.path, '--user', 'speaker_b'], io)).toBe(2);
    expect(o.err).toBe('ctxsim: --user: not an option of the openai format\n');
    expect(await runMain(['import', '--format', 'parquet', chats.path], io)).toBe(2);
    expect(o.err.split('\n')[1]).toBe('ctxsim: unknown import format "parquet"; expected one of openai, locomo, abcd, multiwoz, claude-code, swe-agent, anthropic, sgd');
    expect(o.out).toBe('');
  });
});
