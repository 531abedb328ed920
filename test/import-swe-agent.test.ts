import { readFileSync } from 'node:fs';
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

const fixture = importFixture;
const tmp = tempDir('ctxsim-swe-agent-');





describe('swe-agent importer: mini-swe-agent .traj.json', () => {
  const { docs, conversations, report } = importDataset('swe-agent', fixture('mini-swe-agent-sample.traj.json'), { fact: ['ticket=DATE-42'] });
  const doc = docs[0]!;
  const turns = doc.turns as TurnOut[];

  it('writes the bash tool mini-swe-agent offers with every call, which the trajectory does not hold, as tool_defs', () => {
    expect(doc.tool_defs).toEqual([
      { name: 'bash', description: 'Execute a bash command', parameters: { type: 'object', properties: { command: { type: 'string', description: 'The bash command to execute' } }, required: ['command'] } },
    ]);
    expect(report.quirks.find((q) => q.key === 'bash-tool')?.count).toBe(1);
    // A trajectory whose model calls another tool (or none) gets no definitions it did not offer.
    const other = JSON.parse(readFileSync(fixture('mini-swe-agent-sample.traj.json').path, 'utf8').replaceAll('"name": "bash"', '"name": "shell"')) as unknown;
    expect(importDataset('swe-agent', writeInput(tempDir(), 'other.traj.json', JSON.stringify(other))).docs[0]!.tool_defs).toBeUndefined();
  });

  it('opens with the system prompt and the task; each tool-calling response is a round with its billed usage; the exit entry ends the run', () => {
    expect([doc.id, doc.system]).toEqual(['mini-swe-agent-sample', 'You are a helpful assistant that can interact with a computer shell.']);
    expect(counts(turns)).toEqual({ turns: 1, rounds: 3, calls: 4, results: 3, usages: 3 });
    const t = turns[0]!;
    expect(t.user).toBe('<pr_description>parse_date crashes on 2024-02-29 (ticket DATE-42).</pr_description>');
    expect(t.facts).toEqual({ ticket: 'DATE-42' });
    expect(roundsOf(t).map((r) => [r.assistant, r.calls.map((c) => c.args!.command), r.usage])).toEqual([
      ['Let me find the parser.', ['grep -rn "def parse_date" src'], { input: 1200, output: 30 }],
      ['Reading it and running the test.', ['sed -n 10,20p src/dates.py', 'python -m pytest tests/test_dates.py -q'], { input: 1350, cached: 1152, output: 45 }],
      ['Submitting.', ['echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff'], { input: 1500, cached: 1280, output: 20 }],
    ]);
    expect(roundsOf(t)[1]!.calls[1]!.result).toBe('<returncode>0</returncode>\n<output>\n1 failed: test_leap_day\n</output>');
    expect(t.assistant).toBeUndefined();
    expect(conversations[0]!.turns[0]!.tools.filter((m) => m.role === 'assistant').map((m) => m.billed?.input)).toEqual([1200, 1350, 1500]);
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['exit', 1],
      ['no-result', 1],
      ['bash-tool', 1],
    ]);
  });
});

describe('mini-swe-agent usage in DeepSeek’s own words', () => {
  it('reads the cached tokens from prompt_cache_hit_tokens when prompt_tokens_details is not there; prompt_tokens_details first', () => {
    const text = readFileSync(fixture('mini-swe-agent-sample.traj.json').path, 'utf8');
    const hit = text.replace('"total_tokens": 1230', '"total_tokens": 1230, "prompt_cache_hit_tokens": 1024, "prompt_cache_miss_tokens": 176').replace('"total_tokens": 1395', '"total_tokens": 1395, "prompt_cache_hit_tokens": 7');
    const t = importDataset('swe-agent', writeInput(tempDir(), 'hit.traj.json', hit)).docs[0]!.turns as TurnOut[];
    expect(roundsOf(t[0]!).map((r) => r.usage)).toEqual([
      { input: 1200, cached: 1024, output: 30 },
      { input: 1350, cached: 1152, output: 45 },
      { input: 1500, cached: 1280, output: 20 },
    ]);
  });
});

describe('mini-swe-agent usage of an Anthropic model through LiteLLM', () => {
  it('reads cache_creation_input_tokens (or prompt_tokens_details.cache_creation_tokens) as the tokens written, part of prompt_tokens', () => {
    const text = readFileSync(fixture('mini-swe-agent-sample.traj.json').path, 'utf8');
    // As LiteLLM passes Anthropic's usage on: prompt_tokens counts the reads and the writes, which its own fields name.
    const litellm = text
      .replace('"total_tokens": 1230', '"total_tokens": 1230, "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 1190}, "cache_creation_input_tokens": 1190, "cache_read_input_tokens": 0')
      .replace('"total_tokens": 1395', '"total_tokens": 1395, "cache_creation_input_tokens": 190, "cache_read_input_tokens": 1152')
      .replace('"total_tokens": 1520', '"total_tokens": 1520, "cache_creation_input_tokens": null');
    const withDetails = litellm.replace('"cache_creation_input_tokens": 190, ', '').replace('"cached_tokens": 1152', '"cached_tokens": 1152, "cache_creation_tokens": 190');
    for (const t of [litellm, withDetails]) {
      const turns = importDataset('swe-agent', writeInput(tempDir(), 'litellm.traj.json', t)).docs[0]!.turns as TurnOut[];
      expect(roundsOf(turns[0]!).map((r) => r.usage)).toEqual([
        { input: 1200, cached: 0, written: 1190, output: 30 },
        { input: 1350, cached: 1152, written: 190, output: 45 },
        { input: 1500, cached: 1280, output: 20 },
      ]);
    }
  });
});

describe('mini-swe-agent refusals', () => {
  it("keeps a refusal (a content part, or the message's field) as the assistant's text, not as a dropped part", () => {
    const traj = {
      info: { exit_status: 'Submitted' },
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'Delete the production database.' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: "I can't help with that." }] },
        { role: 'user', content: 'Then list the tables.' },
        { role: 'assistant', content: null, refusal: "Sorry, I can't do that either." },
        { role: 'user', content: 'Fine.' },
        { role: 'assistant', content: 'OK.', refusal: null },
      ],
    };
    const { docs, report } = importDataset('swe-agent', writeInput(tempDir(), 'refusal.traj.json', JSON.stringify(traj)));
    expect((docs[0]!.turns as TurnOut[]).map((t) => t.assistant)).toEqual(["I can't help with that.", "Sorry, I can't do that either.", 'OK.']);
    expect(report.quirks.map((q) => q.key)).not.toContain('non-text-part');
  });
});

describe('swe-agent importer: SWE-agent .traj', () => {
  it('reads the history of a function-calling run: tool messages answer their tool_call_ids', () => {
    const { docs, report } = importDataset('swe-agent', fixture('swe-agent-fc-sample.traj'));
    const turns = docs[0]!.turns as TurnOut[];
    expect([docs[0]!.id, docs[0]!.system]).toEqual(['swe-agent-fc-sample', 'SETTING: You are an autonomous programmer.']);
    expect(counts(turns)).toEqual({ turns: 1, rounds: 2, calls: 2, results: 2, usages: 0 });
    expect(turns[0]!.user).toBe('ISSUE: parse_date crashes on leap days (DATE-42).');
    expect(roundsOf(turns[0]!).map((r) => [r.assistant, r.calls.map((c) => [c.call, c.args, c.result])])).toEqual([
      ['Find the file.', [['find_file', { file_name: 'dates.py' }, 'Found 1 matches: /testbed/src/dates.py\n(Open file: n/a)\nbash-$']]],
      ['Submit.', [['submit', undefined, 'diff --git a/src/dates.py\n(Open file: n/a)\nbash-$']]],
    ]);
    // Its config names no model: the import says so.
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([['no-model', 1]]);
  });

  it('reads the steps of a run without tool calls: thought, action (named by its first word), observation', () => {
    const { docs, report } = importDataset('swe-agent', fixture('swe-agent-steps-sample.traj'), { prefix: 'steps' });
    const turns = docs[0]!.turns as TurnOut[];
    expect([docs[0]!.id, docs[0]!.system]).toEqual(['steps', 'SETTING: You are an autonomous programmer.']);
    expect(counts(turns)).toEqual({ turns: 1, rounds: 2, calls: 2, results: 2, usages: 0 });
    expect(turns[0]).toEqual({
      user: 'ISSUE: parse_date crashes on leap days (DATE-42).',
      tools: [
        { assistant: 'DISCUSSION\nList the files.\n', calls: [{ call: 'ls', args: { command: 'ls -F' }, result: 'src/ tests/' }] },
        { assistant: 'Open it.\n', calls: [{ call: 'open', args: { command: 'open src/dates.py 14' }, result: '[File: src/dates.py (20 lines total)]\n14:def parse_date(text):' }] },
      ],
      assistant: 'I am done.',
    });
    // The second observation is neither in the history nor rebuildable (no template in the file): kept as recorded, and counted.
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['steps', 1],
      ['no-footer', 1],
      ['no-model', 1],
    ]);
  });
});

describe('malformed trajectories', () => {
  it('lists every problem at its line and path in the file, and yields nothing', () => {
    const f = writeInput(tmp, 
      'bad.traj.json',
      JSON.stringify(
        {
          messages: [
            { role: 'system', content: 'sys' },
            { role: 'user', content: 'task' },
            { role: 'assistant', content: 'x', tool_calls: [{ id: 'a', function: { name: 'bash', arguments: '[1]' } }] },
            { role: 'tool', tool_call_id: 'zzz', content: 'out' },
            { role: 'exit', content: '' },
            { role: 'robot', content: 'beep' },
          ],
        },
        null,
        2,
      ),
    );
    expect(problems(() => importDataset('swe-agent', f))).toEqual(['bad.traj.json:34:15 messages[5].role: expected one of system|user|assistant|tool|exit, got "robot"']);
    const g = writeInput(tmp, 'bad2.traj.json', JSON.stringify({ messages: [{ role: 'user', content: 'task' }, { role: 'assistant', content: 'x', tool_calls: [{ id: 'a', function: { name: 'bash', arguments: '[1]' } }] }, { role: 'tool', tool_call_id: 'zzz', content: 'out' }, { role: 'exit', content: '' }, { role: 'user', content: 'more' }] }, null, 1));
    expect(problems(() => importDataset('swe-agent', g))).toEqual([
      'bad2.traj.json:15:20 messages[1].tool_calls[0].function.arguments: expected a JSON object, got "[1]"',
      'bad2.traj.json:22:20 messages[2].tool_call_id: answers no tool call before it ("zzz")',
      'bad2.traj.json:26:12 messages[3].role: an exit entry before the last message',
    ]);
    expect(problems(() => importDataset('swe-agent', writeInput(tmp, 'other.json', '{"steps": []}')))).toEqual([
      'other.json:1:1: expected a mini-swe-agent .traj.json ({messages: [...]}) or a SWE-agent .traj ({history: [...], trajectory: [...]})',
    ]);
    expect(problems(() => importDataset('swe-agent', writeInput(tmp, 'syntax.traj', '{"history": [\n  {"role": }\n]}')))[0]).toMatch(/^syntax\.traj:2:\d+: invalid JSON: /);
  });
});

const MINI = 'agent_transcripts_sample/mini-swe-agent_deepseek-chat_django-15213.traj.json';
const FC = 'agent_transcripts_sample/swe-agent_fc-demo_marshmallow-1867.traj';
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

itShared(MINI, 'a real mini-swe-agent run: 124 responses, each a round of one bash call with its billed usage; 123 results (the run ended after the last call)', (path) => {
  const { docs, report } = importDataset('swe-agent', { path, file: 'mini.traj.json', base: dirname(path) });
  const turns = docs[0]!.turns as TurnOut[];
  expect(docs[0]!.system).toBe('You are a helpful assistant that can interact with a computer shell to solve programming tasks.');
  // The model of its config (its responses name deepseek-chat); the usage is per call, so no total.
  expect([docs[0]!.model, docs[0]!.billed, report.models]).toEqual(['deepseek/deepseek-chat', undefined, [{ model: 'deepseek/deepseek-chat', conversations: 1 }]]);
  expect(counts(turns)).toEqual({ turns: 1, rounds: 124, calls: 124, results: 123, usages: 124 });
  expect(new Set(roundsOf(turns[0]!).flatMap((r) => r.calls.map((c) => c.call)))).toEqual(new Set(['bash']));
  const usage = roundsOf(turns[0]!).map((r) => r.usage!);
  expect([sum(usage.map((u) => u.input)), sum(usage.map((u) => u.cached!)), sum(usage.map((u) => u.output!))]).toEqual([4_930_216, 4_892_096, 39_027]);
  expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
    ['exit', 1],
    ['no-result', 1],
    ['bash-tool', 1],
    ['warm-start', 1],
  ]);
});

itShared(MINI, 'the mini-swe-agent run replayed under full on deepseek-chat: counted in DeepSeek-V3.2’s format as billed, with o200k_base 8.6% under', (path) => {
  const { conversations } = importDataset('swe-agent', { path, file: 'mini.traj.json', base: dirname(path) });
  const counted = (tokenizer: string) => {
    const ours: number[] = [];
    const billed: number[] = [];
    const ctx = replayContext({ model: 'deepseek/deepseek-chat', tokenizer, seed: 42 });
    replay(conversations[0]!, policiesFromFlags(['full'])[0]!, ctx, (_, call) => {
      // The 125th call, after the last round, is the one the run ended before: it wrote nothing and was never billed.
      if (call.output?.billed) {
        ours.push(call.promptTokens);
        billed.push(call.output.billed.input);
      }
    });
    return { ours, billed };
  };
  const exact = counted('auto');
  expect([exact.ours.length, sum(exact.billed)]).toEqual([124, 4_930_216]);
  // docs/agents.md: every call as billed (test/agents-deepseek-v32.test.ts holds each call and its output to the bill).
  expect(exact.ours).toEqual(exact.billed);
  // The stand-in, o200k_base with OpenAI's rule, counts every call below its bill (−8.6% in all).
  const standIn = counted('o200k_base');
  expect(standIn.ours.every((n, i) => n < standIn.billed[i]!)).toBe(true);
  expect(sum(standIn.ours) / sum(standIn.billed)).toBeGreaterThan(0.9);
  expect(sum(standIn.ours) / sum(standIn.billed)).toBeLessThan(0.92);
});

itShared(FC, 'a real SWE-agent function-calling run: 13 rounds of one call each, every one with its result; no usage recorded, no model (a replay)', (path) => {
  const { docs, report } = importDataset('swe-agent', { path, file: 'fc.traj', base: dirname(path) });
  const turns = docs[0]!.turns as TurnOut[];
  expect(docs[0]!.system).toMatch(/^SETTING: You are an autonomous programmer/);
  expect(turns[0]!.user).toMatch(/^We're currently solving the following issue within our repository/);
  expect(counts(turns)).toEqual({ turns: 1, rounds: 13, calls: 13, results: 13, usages: 0 });
  expect(roundsOf(turns[0]!).map((r) => r.calls[0]!.call).at(-1)).toBe('submit');
  // A demonstration replayed: its model_stats record no tokens and its model is SWE-agent's `replay`.
  expect([docs[0]!.model, docs[0]!.billed]).toEqual([undefined, undefined]);
  expect(report.quirks.map((q) => q.key)).toEqual(['stand-in-model']);
});

it.each(['mini-swe-agent-sample.traj.json', 'swe-agent-fc-sample.traj', 'swe-agent-steps-sample.traj'])('round trip: %s imported, written as YAML and loaded is the same conversation (usage included)', (file) => {
  const { docs, conversations } = importDataset('swe-agent', fixture(file));
  const back = scenarioFromText(`${docs[0]!.id}.yaml`, scenarioToYaml(docs[0]!, ['header']));
  expect({ ...back, source: '' }).toEqual({ ...conversations[0]!, source: '' });
});
