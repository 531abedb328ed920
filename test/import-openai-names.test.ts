import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import type { Conversation } from '../src/types.js';
import { writeInput } from './_import.js';
import { variant } from './_policies.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

const tmp = tempDir('ctxsim-openai-names-');
const COOKBOOK = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/cookbook-messages.json'), 'utf8')).messages as { role: string; content: string; name?: string }[];

/** The prompt tokens of turn 1 of `full` on `model`. */
const firstCall = (c: Conversation, model: string) => replay(c, variant('full'), replayContext({ seed: 42, model, tokenizer: 'auto' })).turns[0]!.inputTokens;

/** What a conversation holds, without where it came from. */
const content = ({ source: _source, ...c }: Conversation) => c;

describe('OpenAI importer: every system message, and names', () => {
  it('keeps the cookbook’s five system messages, in order, with their names: its first call is 129 tokens on gpt-4, 124 on gpt-4o', () => {
    const { docs, conversations, report } = importDataset('openai', writeInput(tmp, 'cookbook.json', JSON.stringify(COOKBOOK)));
    expect(docs[0]!.system).toEqual(COOKBOOK.slice(0, 5).map(({ role: _role, ...m }) => m));
    expect(docs[0]!.turns).toEqual([{ user: COOKBOOK[5]!.content }]);
    expect(report.quirks).toEqual([]);
    expect(firstCall(conversations[0]!, 'gpt-4')).toBe(129);
    expect(firstCall(conversations[0]!, 'gpt-4o')).toBe(124);
    // As `ctxsim import` writes it: YAML that loads back to the same conversation.
    expect(content(scenarioFromText('cookbook.yaml', scenarioToYaml(docs[0]!)))).toEqual(content(conversations[0]!));
  });

  it('writes one unnamed system message as text, as before', () => {
    const { docs } = importDataset('openai', writeInput(tmp, 'one.json', JSON.stringify([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }])));
    expect(docs).toEqual([{ id: 'one-0001', system: 'Be brief.', turns: [{ user: 'hi' }] }]);
  });

  it('pins a system message from the middle of a conversation after the leading ones, and says so', () => {
    const messages = [
      { role: 'system', content: 'You are a support agent.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'developer', name: 'ops', content: 'The store closes at 6 pm today.' },
      { role: 'user', content: 'when do you close?' },
      { role: 'assistant', content: 'At 6 pm.' },
    ];
    const { docs, conversations, report } = importDataset('openai', writeInput(tmp, 'late.jsonl', [{ messages }]));
    expect(docs[0]!.system).toEqual([{ content: 'You are a support agent.' }, { content: 'The store closes at 6 pm today.', name: 'ops' }]);
    expect(docs[0]!.turns).toEqual([
      { user: 'hi', assistant: 'hello' },
      { user: 'when do you close?', assistant: 'At 6 pm.' },
    ]);
    expect(conversations[0]!.system.map((m) => [m.role, m.name ?? null])).toEqual([
      ['system', null],
      ['system', 'ops'],
    ]);
    expect(report.quirks).toEqual([
      { key: 'late-system', label: 'system messages after the conversation started (pinned after the leading ones: sent from the first call)', count: 1, examples: ['late-0001 message 4'] },
    ]);
  });

  it('the same from Responses API input items', () => {
    const input = [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: 'Answer in French.' },
      { role: 'user', content: 'merci' },
    ];
    const { docs, report } = importDataset('openai', writeInput(tmp, 'items.jsonl', [{ instructions: 'Be brief.', input }]));
    expect(docs[0]!.system).toEqual([{ content: 'Be brief.' }, { content: 'Answer in French.' }]);
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([['late-system', 1]]);
  });

  it('keeps names on user messages and replies (a merged message keeps the first); drops them on tool calls and results, and says so', () => {
    const messages = [
      { role: 'user', name: 'kavya', content: 'Hi.' },
      { role: 'user', name: 'someone', content: 'Where is SE-10423?' },
      { role: 'assistant', name: 'agent', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', name: 'lookup', tool_call_id: 'c1', content: 'late' },
      { role: 'assistant', name: 'agent', content: 'It is late.' },
      { role: 'user', content: 'Thanks.' },
      { role: 'assistant', name: '', content: 'Bye.' },
    ];
    const { docs, conversations, report } = importDataset('openai', writeInput(tmp, 'names.jsonl', [{ messages }]));
    expect(docs[0]!.turns).toEqual([
      { user: 'Hi.\nWhere is SE-10423?', tools: [{ call: 'lookup', result: 'late' }], assistant: 'It is late.', names: { user: 'kavya', assistant: 'agent' } },
      { user: 'Thanks.', assistant: 'Bye.' },
    ]);
    const [t1, t2] = conversations[0]!.turns;
    expect([t1!.user.name, t1!.assistant!.name, t1!.tools.map((m) => m.name ?? null), t2!.user.name, t2!.assistant!.name]).toEqual(['kavya', 'agent', [null, null], undefined, undefined]);
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['round-name', 1],
      ['tool-name', 1],
    ]);
    // The names are written to YAML and read back.
    expect(content(scenarioFromText('names.yaml', scenarioToYaml(docs[0]!)))).toEqual(content(conversations[0]!));
  });
});
