import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importDataset } from '../src/scenario/import/index.js';
import { IMPORT_FIXTURES, writeInput } from './_import.js';
import { cli, problems } from './_io.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

/** The import command on `path`: exit code and stderr, with the folder left out of paths. */
async function importCli(path: string, ...args: string[]) {
  const { code, err } = await cli('import', path, ...args);
  return { code, err: err.replaceAll(`${join(path, '..')}/`, '') };
}

describe('a file that is not JSON Lines is one problem, not one per line', () => {
  it('a pretty-printed document given to a JSON Lines format: what it expects, and the format the document looks like', async () => {
    const dir = tempDir();
    const traj = join(dir, 'run.traj.json');
    writeFileSync(traj, readFileSync(join(IMPORT_FIXTURES, 'mini-swe-agent-sample.traj.json')));
    expect(await importCli(traj, '--format', 'claude-code')).toEqual({
      code: 2,
      err: 'ctxsim: run.traj.json:1:1: not JSON Lines: the file is one JSON document over several lines; the claude-code format expects one JSON object per line (it looks like the swe-agent format)\n',
    });
  });

  it('a broken pretty-printed document given to claude-code: one problem, at its first line', () => {
    const f = writeInput(tempDir(), 'doc.json', '{\n  "messages": [\n    {"role": "user", "content": "hi"},\n  ]\n}\n');
    expect(problems(() => importDataset('claude-code', f))).toEqual([
      'doc.json:1:1: not JSON Lines: line 1 opens a JSON value it does not close, as a document over several lines does; the claude-code format expects one JSON object per line',
    ]);
  });

  it.each(['openai', 'anthropic'])('%s also reads a JSON document: a broken pretty-printed one is its first syntax error', (format) => {
    const f = writeInput(tempDir(), 'doc.json', '{\n  "messages": [\n    {"role": "user", "content": "hi"},\n  ]\n}\n');
    expect(problems(() => importDataset(format, f))).toEqual(["doc.json:4:3: invalid JSON: Unexpected token ']'"]);
  });

  it.each(['openai', 'anthropic', 'claude-code'])('%s: of several bad JSON Lines, the first is the problem', (format) => {
    const f = writeInput(tempDir(), 'bad.jsonl', '{"messages": [{"role": "user", "content": "hi"}]}\n{"type": x}\n{"type": y}\n{\n');
    expect(problems(() => importDataset(format, f))).toEqual(["bad.jsonl:2:10: invalid JSON: Unexpected token 'x'"]);
  });

  it('a long line: the reason only, not the excerpt of the text JSON.parse quotes (cut with ...)', () => {
    const f = writeInput(tempDir(), 'long.jsonl', `{"messages": [${'1, '.repeat(40)}x]}\n`);
    expect(problems(() => importDataset('openai', f))).toEqual(["long.jsonl:1:135: invalid JSON: Unexpected token 'x'"]);
  });

  itShared('agent_transcripts_sample/mini-swe-agent_deepseek-chat_django-15213.traj.json', 'the real mini-swe-agent run given as claude-code: one stderr line, exit 2', async (path) => {
    const { code, err } = await importCli(path, '--format', 'claude-code');
    expect(code).toBe(2);
    expect(err.split('\n')).toEqual([expect.stringMatching(/traj\.json:1:1: not JSON Lines: .* \(it looks like the swe-agent format\)$/), '']);
  });
});

describe('OpenAI SDK dumps write absent fields as null', () => {
  it('an assistant message with refusal, function_call, tool_calls, audio and annotations null is a reply', async () => {
    const dir = tempDir();
    const line = '{"messages":[{"role":"user","content":"My order is SE-10423"},{"role":"assistant","content":"Thanks","refusal":null,"function_call":null,"tool_calls":null,"audio":null,"annotations":null,"name":null}]}';
    writeFileSync(join(dir, 'oa.jsonl'), line + '\n');
    const { code, err } = await importCli(join(dir, 'oa.jsonl'), '--format', 'openai');
    expect({ code, err }).toEqual({ code: 0, err: 'openai oa.jsonl: 1 conversations, 1 turns, 0 facts, 0 probes\n' });
  });

  it('a message that calls tools with content null, a tool result naming it, and tools with a null description', () => {
    const f = writeInput(tempDir(), 'calls.jsonl', [
      {
        messages: [
          { role: 'user', content: 'Where is SE-10423?', name: null, tool_calls: null },
          { role: 'assistant', content: null, refusal: null, function_call: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'track', arguments: '{"id":"SE-10423"}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'in transit', name: null },
          { role: 'assistant', content: 'It is in transit.', tool_calls: null, function_call: null },
        ],
        tools: [{ type: 'function', function: { name: 'track', description: null, parameters: null } }],
      },
      { messages: [{ role: 'user', content: 'hi' }], tools: null },
    ]);
    const { docs } = importDataset('openai', f);
    expect(docs[0]!.tool_defs).toEqual([{ name: 'track' }]);
    expect(docs[0]!.turns).toEqual([{ user: 'Where is SE-10423?', tools: [{ call: 'track', args: { id: 'SE-10423' }, result: 'in transit' }], assistant: 'It is in transit.' }]);
    expect(docs[1]!.tool_defs).toBeUndefined();
  });

  it('Responses API items with type null are messages', () => {
    const f = writeInput(tempDir(), 'resp.jsonl', [{ input: [{ type: null, role: 'user', content: 'hi' }], instructions: null, tools: null }]);
    expect(importDataset('openai', f).docs[0]!.turns).toEqual([{ user: 'hi' }]);
  });

  it('a null where a value is needed says null once', () => {
    const f = writeInput(tempDir(), 'bad.jsonl', [{ messages: null }, { messages: [{ role: 'user', content: 'hi', tool_calls: [null] }] }, { messages: [{ role: 'user', content: 'hi', name: ['a'] }] }]);
    expect(problems(() => importDataset('openai', f))).toEqual([
      'bad.jsonl:1:13 messages: expected list, got null',
      'bad.jsonl:2:58 messages[0].tool_calls[0]: expected mapping, got null',
      'bad.jsonl:3:51 messages[0].name: expected string, got a list',
    ]);
  });
});

describe('Anthropic SDK models write absent fields as null', () => {
  it('system, tools, a tool type and description null; a dumped response message with stop_sequence null', () => {
    const f = writeInput(tempDir(), 'req.jsonl', [
      {
        system: null,
        tools: [{ name: 'track', type: null, description: null, input_schema: { type: 'object' } }],
        messages: [
          { role: 'user', content: 'Where is SE-10423?' },
          { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', stop_reason: 'tool_use', stop_sequence: null, content: [{ type: 'tool_use', id: 't1', name: 'track', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'in transit', is_error: null }] },
          { role: 'assistant', stop_sequence: null, content: [{ type: 'text', text: 'In transit.', citations: null }] },
        ],
      },
      { messages: [{ role: 'user', content: 'hi' }], tools: null },
    ]);
    const { docs } = importDataset('anthropic', f);
    expect(docs[0]!.tool_defs).toEqual([{ name: 'track', parameters: { type: 'object' } }]);
    expect(docs[0]!.system).toBeUndefined();
    expect(docs[0]!.turns).toEqual([{ user: 'Where is SE-10423?', tools: [{ call: 'track', result: 'in transit' }], assistant: 'In transit.' }]);
  });
});

describe('a UTF-8 byte order mark', () => {
  const BOM = '\uFEFF';
  const cases: [string, string, Record<string, unknown>?][] = [
    ['openai', 'openai-chats.jsonl', { annotations: 'facts.yaml' }],
    ['openai', 'openai-responses.jsonl'],
    ['locomo', 'locomo-sample.json'],
    ['abcd', 'abcd-sample.json'],
    ['multiwoz', 'multiwoz-sample.json'],
    ['claude-code', 'claude-code-session.jsonl'],
    ['swe-agent', 'mini-swe-agent-sample.traj.json'],
    ['swe-agent', 'swe-agent-steps-sample.traj'],
    ['anthropic', 'anthropic-requests.jsonl'],
    ['sgd', 'sgd-sample.json'],
  ];

  it.each(cases)('%s %s: leading the file, it is no part of the data', (format, name, options = {}) => {
    const dir = tempDir();
    const facts = readFileSync(join(IMPORT_FIXTURES, 'openai-chats.facts.yaml'), 'utf8');
    writeFileSync(join(dir, 'facts.yaml'), facts);
    const plain = importDataset(format, writeInput(dir, name, readFileSync(join(IMPORT_FIXTURES, name), 'utf8')), options);
    writeFileSync(join(dir, 'facts.yaml'), BOM + facts);
    const marked = importDataset(format, writeInput(dir, name, BOM + readFileSync(join(IMPORT_FIXTURES, name), 'utf8')), options);
    expect(marked.docs).toEqual(plain.docs);
    expect(marked.docs.length).toBeGreaterThan(0);
  });

  it('anywhere else it is an error, shown escaped, never raw', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'twice.jsonl'), `${BOM}{"messages": [{"role": "user", "content": "a"}]}\n${BOM}{"messages": [{"role": "user", "content": "b"}]}\n`);
    const { code, err } = await importCli(join(dir, 'twice.jsonl'), '--format', 'openai');
    expect({ code, err }).toEqual({ code: 2, err: "ctxsim: twice.jsonl:2:1: invalid JSON: Unexpected token '\\ufeff'\n" });
  });

  it('other invisible characters in a value are escaped too (zero-width space, word joiner, tag characters)', () => {
    const f = writeInput(tempDir(), 'role.jsonl', [{ messages: [{ role: 'user\u200b\u2060\u{e0041}', content: 'a' }] }]);
    expect(problems(() => importDataset('openai', f))).toEqual([
      'role.jsonl:1:22 messages[0].role: expected one of system|developer|user|assistant|tool|function, got "user\\u200b\\u2060\\u{e0041}"',
    ]);
  });
});

describe('import flags are named as they were given', () => {
  it('--no-ask of another format is --no-ask, --ask is --ask', async () => {
    const abcd = join(IMPORT_FIXTURES, 'abcd-sample.json');
    expect(await cli('import', '--format', 'abcd', abcd, '--no-ask')).toMatchObject({ code: 2, err: 'ctxsim: --no-ask: not an option of the abcd format\n' });
    expect(await cli('import', '--format', 'abcd', abcd, '--ask')).toMatchObject({ code: 2, err: 'ctxsim: --ask: not an option of the abcd format\n' });
  });
});

describe('a dataset or side file a study names that cannot be read is at its key in the study', () => {
  it('missing, a folder, a missing side file: file, line and column, and the key', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'chats.jsonl'), readFileSync(join(IMPORT_FIXTURES, 'openai-chats.jsonl')));
    const study = join(dir, 's5.yaml');
    writeFileSync(
      study,
      [
        'scenarios:',
        '  - import: {format: abcd, path: missing.json}',
        '  - import: {format: abcd, path: .}',
        '  - import: {format: openai, path: chats.jsonl, annotations: none.yaml}',
        'policies: [full]',
        '',
      ].join('\n'),
    );
    const { code, err } = await cli('run', study, '--out', '-', '--no-token-cache', '--quiet');
    expect(code).toBe(2);
    expect(err.replaceAll(`${dir}/`, '').replaceAll(dir, '<dir>')).toBe(
      [
        'ctxsim: s5.yaml:2:34 scenarios[0].import.path: missing.json: cannot read file (ENOENT)',
        'ctxsim: s5.yaml:3:34 scenarios[1].import.path: <dir>: is a folder, not a regular file',
        'ctxsim: s5.yaml:4:62 scenarios[2].import.annotations: none.yaml: cannot read file (ENOENT)',
        '',
      ].join('\n'),
    );
  });
});

describe('two conversations of a dataset whose ids come out the same', () => {
  /** The fixture with `set` applied to its conversations, written pretty-printed to a temporary folder; `at(key, n)`: where the value of its `n`th (from 0) `"key":` starts, `[line, column]`. */
  function sameIds(fixture: string, set: (c: Record<string, unknown>, i: number) => void) {
    const data = JSON.parse(readFileSync(join(IMPORT_FIXTURES, fixture), 'utf8')) as Record<string, unknown>[];
    data.forEach(set);
    const text = JSON.stringify(data, null, 2) + '\n';
    const at = (key: string, n: number): [number, number] => {
      let i = -1;
      for (let k = 0; k <= n; k++) i = text.indexOf(`"${key}": `, i + 1);
      const lines = text.slice(0, i + key.length + 4).split('\n');
      return [lines.length, lines.at(-1)!.length + 1];
    };
    return Object.assign(writeInput(tempDir(), fixture, text), { at });
  }
  /** The problem of the second conversation's id, `key`, as the first's. */
  const twice = (input: { at(key: string, n: number): [number, number] }, file: string, key: string, id: string) => {
    const [[l0, c0], [l1, c1]] = [input.at(key, 0), input.at(key, 1)];
    return `${file}:${l1}:${c1} [1].${key}: gives the conversation id "${id}", as the conversation at line ${l0}, column ${c0} does: ids must be unique`;
  };

  it('each dataset with its own ids: an error at the second id, naming the first', () => {
    const abcd = sameIds('abcd-sample.json', (c, i) => (c.convo_id = i ? -7 : 7));
    expect(problems(() => importDataset('abcd', abcd))).toEqual([twice(abcd, 'abcd-sample.json', 'convo_id', 'abcd-7')]);
    const locomo = sameIds('locomo-sample.json', (c) => (c.sample_id = 'conv_1'));
    expect(problems(() => importDataset('locomo', locomo, { prefix: 'lc' }))).toEqual([twice(locomo, 'locomo-sample.json', 'sample_id', 'lc-conv-1')]);
    const multiwoz = sameIds('multiwoz-sample.json', (c) => (c.original_id = 'SNG1.json'));
    expect(problems(() => importDataset('multiwoz', multiwoz))).toEqual([twice(multiwoz, 'multiwoz-sample.json', 'original_id', 'multiwoz-sng1')]);
    const sgd = sameIds('sgd-sample.json', (c, i) => (c.dialogue_id = i ? '1_00.A' : '1_00_a'));
    expect(problems(() => importDataset('sgd', sgd))).toEqual([twice(sgd, 'sgd-sample.json', 'dialogue_id', 'sgd-1-00-a')]);
  });

  it('ctxsim import --out: exit 2 with the place, and no folder written (not a failed write)', async () => {
    const abcd = sameIds('abcd-sample.json', (c) => (c.convo_id = 7));
    const dup = abcd.path;
    const out = join(dup, '..', 'out');
    const { code, err } = await importCli(dup, '--format', 'abcd', '--out', out);
    expect({ code, last: err.trimEnd().split('\n').at(-1) }).toEqual({ code: 2, last: `ctxsim: ${twice(abcd, 'abcd-sample.json', 'convo_id', 'abcd-7')}` });
    expect(existsSync(out)).toBe(false);
  });
});

describe('a dataset nested deeper than its checks can walk', () => {
  const abcd = readFileSync(join(IMPORT_FIXTURES, 'abcd-sample.json'), 'utf8');

  it('30,000 levels: one located problem, not an internal error', async () => {
    const f = writeInput(tempDir(), 'deep.json', abcd.replace('"convo_id": 501', `"convo_id": 501, "extra": ${'['.repeat(30_000)}${']'.repeat(30_000)}`));
    expect(await importCli(f.path, '--format', 'abcd')).toEqual({ code: 2, err: expect.stringMatching(/^ctxsim: deep\.json:3:\d+: lists and mappings nested too deep to parse\n$/) });
    const line = `{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": ${JSON.stringify(`{"a": ${'['.repeat(30_000)}${']'.repeat(30_000)}}`)}}}]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}\n`;
    const chats = writeInput(tempDir(), 'deep.jsonl', line);
    expect(await importCli(chats.path, '--format', 'openai')).toEqual({ code: 2, err: 'ctxsim: deep.jsonl#deep-0001 turns[0].tools[0].args.a: lists and mappings nested more than 256 deep\n' });
  });

  it('300 levels: at the key that holds them', () => {
    const f = writeInput(tempDir(), 'deep.json', abcd.replace('"convo_id": 501', `"convo_id": 501, "extra": ${'['.repeat(300)}${']'.repeat(300)}`));
    expect(problems(() => importDataset('abcd', f))).toEqual(['deep.json:3:29 [0].extra: lists and mappings nested more than 256 deep']);
  });
});

describe('a probe at turn 0 (turns count from 1)', () => {
  const chats = join(IMPORT_FIXTURES, 'openai-chats.jsonl');

  it('in an annotation file: an error at the key, shown as the key (not "past the last turn", nor "Invalid key in record, got a list")', () => {
    const dir = tempDir();
    const side = (text: string) => {
      writeFileSync(join(dir, 'a.yaml'), text);
      return problems(() => importDataset('openai', { path: chats, file: 'openai-chats.jsonl', base: dir }, { annotations: 'a.yaml' }));
    };
    expect(side('"*":\n  facts: {a: b}\n  probe: {0: [a]}\n')).toEqual(['a.yaml:3:10 *.probe.0: expected a turn number from 1, or last, got "0"']);
    expect(side('openai-chats-0001:\n  facts: {a: b}\n  probe: {-1: [a]}\n')).toEqual(['a.yaml:3:10 openai-chats-0001.probe.-1: expected a turn number from 1, or last, got "-1"']);
  });

  it('in --probe: a usage error', async () => {
    expect(await importCli(chats, '--format', 'openai', '--fact', 'a=b', '--probe', '0:a')).toEqual({
      code: 2,
      err: 'ctxsim: --probe: expected TURN:name[,name…] (TURN a number from 1, or last), got "0:a"\n',
    });
  });
});
