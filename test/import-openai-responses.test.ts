import { describe, expect, it } from 'vitest';
import { importDataset } from '../src/scenario/import/index.js';
import { importFixture, writeInput } from './_import.js';
import { problems } from './_io.js';
import { tempDir } from './_tmp.js';

const responses = importFixture('openai-responses.jsonl');
const tmp = tempDir('ctxsim-responses-');



describe('OpenAI importer on Responses API requests (input items)', () => {
  const { docs, report } = importDataset('openai', responses);

  it('reads messages, function calls (with the text before them, one response) and their outputs; instructions and function tools', () => {
    expect(docs).toEqual([
      {
        id: 'openai-responses-0001',
        system: 'You are a support agent for Brightcart.',
        tool_defs: [{ name: 'lookup_order', description: 'Look up an order by id.', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } }],
        turns: [
          {
            user: "Hi, I'm Kavya. Where is order SE-10423?",
            tools: [{ assistant: 'Let me check.', calls: [{ call: 'lookup_order', args: { order_id: 'SE-10423' }, result: '{"status": "out for delivery"}' }] }],
            assistant: 'It is out for delivery today.',
          },
          { user: 'Thanks!' },
        ],
      },
      { id: 'openai-responses-0002', turns: [{ user: 'Set a timer for ten minutes.' }] },
      {
        id: 'openai-responses-0003',
        turns: [
          {
            user: 'Set a timer and notify me.',
            // Consecutive function calls are one response (a round); a call after their outputs is the next.
            tools: [
              {
                calls: [
                  { call: 'start_timer', args: { minutes: 10 }, result: 'started' },
                  { call: 'notify', result: 'ok' },
                ],
              },
              { calls: [{ call: 'check_timer', result: '9:59 left' }] },
            ],
            assistant: 'Your timer is running.',
          },
        ],
      },
    ]);
    expect(report).toMatchObject({ conversations: 3, turns: 4 });
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['responses-item', 1],
      ['builtin-tool', 1],
    ]);
  });

  it('reads a JSON array of input items as one conversation', () => {
    const f = writeInput(tmp, 'items.json', JSON.stringify([{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 'x', name: 'ping', arguments: '{}' }, { type: 'function_call_output', call_id: 'x', output: 'pong' }, { type: 'message', role: 'assistant', content: 'done' }]));
    expect(importDataset('openai', f).docs).toEqual([{ id: 'items-0001', turns: [{ user: 'hi', tools: [{ call: 'ping', result: 'pong' }], assistant: 'done' }] }]);
  });

  it('names the item of each problem', () => {
    const f = writeInput(tmp, 
      'bad.jsonl',
      [
        JSON.stringify({ input: [{ role: 'user', content: 'a' }, { type: 'function_call_output', call_id: 'zzz', output: 'x' }] }),
        JSON.stringify({ input: [{ role: 'user', content: 'b' }, { type: 'function_call', call_id: 'q', name: 'f', arguments: '[1]' }] }),
        JSON.stringify({ input: [{ type: 'function_call', call_id: 'q', arguments: '{}' }] }),
      ].join('\n'),
    );
    expect(problems(() => importDataset('openai', f))).toEqual([
      'bad.jsonl:1:82 input[1].call_id: answers no function call before it ("zzz")',
      'bad.jsonl:2:102 input[1].arguments: expected a JSON object, got "[1]"',
      'bad.jsonl:3:11 input[0].name: required but missing',
    ]);
  });
});
