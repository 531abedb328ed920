import { describe, expect, it } from 'vitest';
import type { TurnOut } from '../src/scenario/docs.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import { importFixture, writeInput } from './_import.js';
import { problems } from './_io.js';
import { tempDir } from './_tmp.js';

const requests = importFixture('anthropic-requests.jsonl');
const tmp = tempDir('ctxsim-anthropic-');



describe('Anthropic importer on its fixture (JSONL of Messages API requests, one a Message Batches entry)', () => {
  const { docs, conversations, report } = importDataset('anthropic', requests, { fact: ['order=SE-10423'], probe: ['last:order'] });

  it('keeps the system blocks, the tools as tool definitions, each assistant message with tool_use blocks as a round', () => {
    expect(docs.map((d) => d.id)).toEqual(['anthropic-requests-0001', 'anthropic-requests-0002']);
    expect(docs[0]).toEqual({
      id: 'anthropic-requests-0001',
      system: 'You are a support agent for Brightcart.',
      tool_defs: [{ name: 'lookup_order', description: 'Look up an order by id.', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } }],
      turns: [
        {
          user: "Hi, I'm Kavya. Where is order SE-10423?",
          facts: { order: 'SE-10423' },
          tools: [{ assistant: 'Let me check.', calls: [{ call: 'lookup_order', args: { order_id: 'SE-10423' }, result: '{"status": "out for delivery"}' }] }],
          assistant: 'It is out for delivery today.',
        },
        { user: 'Here is the label.', probe: ['order'] },
      ],
    });
    // One round of two calls; an empty input means no arguments.
    expect((docs[1]!.turns as TurnOut[])[0]).toEqual({
      user: 'Set a timer for ten minutes.',
      tools: [
        { call: 'start_timer', args: { minutes: 10 }, result: 'started' },
        { call: 'notify', result: 'ok' },
      ],
      assistant: 'Your timer is running.',
    });
    expect(conversations[0]!.toolDefs?.map((t) => t.name)).toEqual(['lookup_order']);
    expect(report).toMatchObject({ conversations: 2, turns: 3, facts: 1, probes: 1 });
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['thinking', 1],
      ['non-text-block', 1],
      ['server-tool', 1],
      ['fact-not-found', 1],
      ['probe-before-fact', 1],
    ]);
  });

  it('reads one request as a JSON object, and positions its problems in the file', () => {
    const one = writeInput(tmp, 'one.json', JSON.stringify({ system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }));
    expect(importDataset('anthropic', one).docs).toEqual([{ id: 'one-0001', system: 'Be brief.', turns: [{ user: 'hi', assistant: 'hello' }] }]);
    const bad = writeInput(tmp, 
      'bad.json',
      JSON.stringify(
        {
          messages: [
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', input: {} }] },
            { role: 'robot', content: 'beep' },
          ],
        },
        null,
        2,
      ),
    );
    expect(problems(() => importDataset('anthropic', bad))).toEqual(['bad.json:24:15 messages[2].role: expected one of user|assistant, got "robot"']);
    const bad2 = writeInput(tmp, 'bad2.json', JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', input: {} }] }] }, null, 1));
    expect(problems(() => importDataset('anthropic', bad2))).toEqual([
      'bad2.json:8:21 messages[0].content[0].tool_use_id: answers no tool call before it ("nope")',
      'bad2.json:16:5 messages[1].content[0]: expected a tool_use block with id, name and input',
    ]);
  });

  it('names the line of each bad JSONL request', () => {
    const f = writeInput(tmp, 'bad.jsonl', [JSON.stringify({ messages: [{ role: 'user', content: 'ok' }] }), JSON.stringify({ messages: [] }), JSON.stringify({ params: { messages: [{ role: 'user', content: 7 }] } })].join('\n'));
    expect(problems(() => importDataset('anthropic', f))).toEqual([
      'bad.jsonl:2:13 messages: expected at least 1 item(s)',
      'bad.jsonl:3:49 params.messages[0].content: expected string or list, got number 7',
    ]);
  });
});

it.each([
  ['anthropic', 'anthropic-requests.jsonl'],
  ['openai', 'openai-responses.jsonl'],
])('round trip: %s %s imported, written as YAML and loaded is the same conversations (tool definitions included)', (format, file) => {
  const { docs, conversations } = importDataset(format, importFixture(file));
  docs.forEach((doc, i) => {
    const back = scenarioFromText(`${doc.id}.yaml`, scenarioToYaml(doc, ['header']));
    expect({ ...back, source: '' }).toEqual({ ...conversations[i]!, source: '' });
  });
});
