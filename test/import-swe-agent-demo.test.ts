import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { UsageError } from '../src/errors.js';
import type { TurnOut } from '../src/scenario/docs.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromValue } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import { billedChecks } from '../src/study/billed.js';
import { defaultStudy, policiesFromFlags } from '../src/study/study.js';
import type { Conversation } from '../src/types.js';
import { roundsOf, writeInput } from './_import.js';
import { cli } from './_io.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * SWE-agent as it ran: the demonstration it sends in every call (`is_demo`
 * history items) is part of every prompt, and a trajectory that names no
 * model says so, so that its bill is never priced on a model it did not run on.
 */

const tmp = tempDir('ctxsim-swe-agent-demo-');
const FULL = policiesFromFlags(['full'])[0]!;

const SYSTEM = 'SETTING: You are an autonomous programmer.';
const TASK = 'ISSUE: parse_date crashes on leap days.\n(Open file: n/a)\n(Current directory: /repo)\nbash-$';
/** SWE-agent 0.x's demonstration: its `demonstration_template` filled with an example run's messages, one user message. */
const DEMO = [
  'Here is a demonstration of how to correctly accomplish this task.',
  'It is included to show you how to correctly use the interface.',
  '--- DEMONSTRATION ---',
  'We need to list the files first.\n```\nls -F\n```\nsrc/ tests/ setup.py',
  'Now open the parser.\n```\nopen src/parse.py\n```\n[File: src/parse.py (3 lines total)]\n1:def parse(text):\n2:    return text.split()',
  '--- END OF DEMONSTRATION ---',
].join('\n');

/** A SWE-agent 0.x trajectory read from its steps, with `history` before the first response; `config` its replay_config (none: a bare .traj). */
function v0(history: unknown[], config?: unknown) {
  const state = JSON.stringify({ open_file: 'n/a', working_dir: '/repo' });
  return {
    environment: 'swe_main',
    trajectory: [
      { action: 'ls -F\n', observation: 'src/\ntests/\n', response: 'List the files.\n```\nls -F\n```', thought: 'List the files.\n', state },
      { action: 'submit\n', observation: 'diff --git a/src/dates.py\n', response: 'Submit.\n```\nsubmit\n```', thought: 'Submit.\n', state },
    ],
    history,
    info: { exit_status: 'submitted', model_stats: { total_cost: 0.1, instance_cost: 0.1, tokens_sent: 3000, tokens_received: 40, api_calls: 2 } },
    ...(config !== undefined && { replay_config: config }),
  };
}

const withDemo = [
  { role: 'system', content: SYSTEM, agent: 'primary' },
  { role: 'user', content: DEMO, agent: 'primary', is_demo: true },
  { role: 'user', content: TASK, agent: 'primary' },
];
const withoutDemo = withDemo.filter((m) => !m.is_demo);
const GPT4 = JSON.stringify({ agent: { model: { model_name: 'gpt4' } } });
const write = (name: string, traj: unknown) => writeInput(tmp, name, JSON.stringify(traj, null, 2));

/** Each call's prompt tokens under `full` on the model, and what the first user message holds in each. */
function calls(c: Conversation, model: string): { tokens: number; user: string }[] {
  const out: { tokens: number; user: string }[] = [];
  replay(c, FULL, replayContext({ seed: 0, model, tokenizer: 'auto' }), (_, call) => out.push({ tokens: call.promptTokens, user: call.plan.messages.find((m) => m.role === 'user')!.content }));
  return out;
}

describe('the demonstration SWE-agent sends in every call', () => {
  it('0.x: the demonstration message after the system prompt opens the first user message, before the task, a newline between them', () => {
    const { docs, report } = importDataset('swe-agent', write('demo.traj', v0(withDemo, GPT4)));
    expect(docs[0]!.system).toBe(SYSTEM);
    expect((docs[0]!.turns[0] as TurnOut).user).toBe(`${DEMO}\n${TASK}`);
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['demonstration', 1],
      ['steps', 1],
      ['no-footer', 1],
    ]);
    expect(report.quirks[0]!.label).toBe('demonstration messages in the history (an example run the agent sends in every call: kept before the task, in its user message)');
  });

  it('every call sends it: each prompt counts the demonstration’s tokens more than without it, exactly, and no call is added', () => {
    const model = 'gpt-4-1106-preview';
    const demo = importDataset('swe-agent', write('demo.traj', v0(withDemo, GPT4))).conversations[0]!;
    const plain = importDataset('swe-agent', write('plain.traj', v0(withoutDemo, GPT4))).conversations[0]!;
    const [a, b] = [calls(demo, model), calls(plain, model)];
    expect([a.length, b.length]).toEqual([2, 2]);
    const { tokens } = replayContext({ seed: 0, model, tokenizer: 'auto' });
    const more = tokens.text(`${DEMO}\n${TASK}`) - tokens.text(TASK);
    expect(more).toBeGreaterThan(100);
    expect(a.map((k, i) => k.tokens - b[i]!.tokens)).toEqual([more, more]);
    expect(a.every((k) => k.user.startsWith(`${DEMO}\n`))).toBe(true);
  });

  it('put in the history as messages of their own (put_demos_in_history): their texts, one per line, before the task; their responses make no call', () => {
    const history = [
      { role: 'system', content: SYSTEM, agent: 'primary' },
      { role: 'user', content: 'DEMO ISSUE: add a flag.', agent: 'primary', is_demo: true },
      { role: 'assistant', content: 'Look first.\n```\nls\n```', action: 'ls\n', agent: 'primary', is_demo: true },
      { role: 'user', content: 'setup.py src/', agent: 'primary', is_demo: true },
      { role: 'user', content: TASK, agent: 'primary' },
    ];
    const { docs, conversations, report } = importDataset('swe-agent', write('demos.traj', v0(history, GPT4)));
    expect((docs[0]!.turns[0] as TurnOut).user).toBe(`DEMO ISSUE: add a flag.\nLook first.\n\`\`\`\nls\n\`\`\`\nsetup.py src/\n${TASK}`);
    expect(roundsOf(docs[0]!.turns[0] as TurnOut).map((r) => r.calls[0]!.args!.command)).toEqual(['ls -F', 'submit']);
    expect(calls(conversations[0]!, 'gpt-4-1106-preview')).toHaveLength(2);
    expect(report.quirks.slice(0, 2).map((q) => [q.key, q.count, q.examples])).toEqual([
      ['demonstration', 3, ['demos', 'demos', 'demos']],
      ['demonstration-messages', 1, ['demos 3 messages']],
    ]);
  });

  it('a function-calling history: the demonstration’s tool calls are not the run’s rounds', () => {
    const call = (id: string, name: string, args: string) => [{ id, type: 'function', function: { name, arguments: args } }];
    const history = [
      { role: 'system', content: SYSTEM, agent: 'main' },
      { role: 'user', content: 'DEMO ISSUE: add a flag.', agent: 'main', is_demo: true },
      { role: 'assistant', content: 'Look first.', agent: 'main', is_demo: true, tool_calls: call('demo_1', 'bash', '{"command":"ls"}') },
      { role: 'tool', content: 'setup.py src/', agent: 'main', is_demo: true, tool_call_ids: ['demo_1'] },
      { role: 'user', content: TASK, agent: 'main' },
      { role: 'assistant', content: 'Find it.', agent: 'main', tool_calls: call('c1', 'find_file', '{"file_name":"dates.py"}') },
      { role: 'tool', content: 'Found 1 match.', agent: 'main', tool_call_ids: ['c1'] },
    ];
    const { docs } = importDataset('swe-agent', write('fc-demo.traj', { ...v0(history, { agent: { model: { name: 'gpt-4o' } } }), trajectory: [] }));
    const turn = docs[0]!.turns[0] as TurnOut;
    expect(turn.user).toBe(`DEMO ISSUE: add a flag.\nLook first.\nsetup.py src/\n${TASK}`);
    expect(roundsOf(turn).map((r) => [r.assistant, r.calls.map((c) => c.call)])).toEqual([['Find it.', ['find_file']]]);
  });
});

const FC = 'agent_transcripts_sample/swe-agent_fc-demo_marshmallow-1867.traj';
type Traj = { history: { role: string; content: string; agent?: string; is_demo?: boolean }[]; replay_config: { agent: { model: { name: string } } } };

itShared(FC, 'the real SWE-agent run with a demonstration as SWE-agent 0.x sends it (its template filled with a demonstration run’s messages, here this run’s own): all 13 calls send it, each counting it once more, exactly', (path) => {
  const traj = JSON.parse(readFileSync(path, 'utf8')) as Traj;
  traj.replay_config.agent.model.name = 'gpt-4o';
  // SWE-agent 0.x's demonstration: the example run's messages but the system prompt, one per line, in its demonstration_template.
  const run = traj.history.filter((m) => m.role !== 'system').map((m) => m.content);
  const demo = `Here is a demonstration of how to correctly accomplish this task.\n--- DEMONSTRATION ---\n${run.join('\n')}\n--- END OF DEMONSTRATION ---\n`;
  const plain = writeInput(tmp, 'fc-plain.traj', JSON.stringify(traj));
  const shown = writeInput(tmp, 'fc-shown.traj', JSON.stringify({ ...traj, history: [traj.history[0]!, { role: 'user', content: demo, agent: 'main', is_demo: true }, ...traj.history.slice(1)] }));
  const [a, b] = [shown, plain].map((f) => importDataset('swe-agent', { ...f, base: dirname(path) }).conversations[0]!);
  const [withIt, without] = [calls(a!, 'gpt-4o'), calls(b!, 'gpt-4o')];
  expect([withIt.length, without.length]).toEqual([13, 13]);
  const { tokens } = replayContext({ seed: 0, model: 'gpt-4o', tokenizer: 'auto' });
  const task = b!.turns[0]!.user.content;
  const more = tokens.text(`${demo}\n${task}`) - tokens.text(task);
  expect(more).toBeGreaterThan(5000);
  expect(withIt.map((k, i) => k.tokens - without[i]!.tokens)).toEqual(Array(13).fill(more));
});

describe('a trajectory that names no model', () => {
  const bare = () => write('bare.traj', v0(withDemo));

  it('is imported without one, and the import says so; --model names it, a shortcut resolved', async () => {
    const { docs, report } = importDataset('swe-agent', bare());
    expect(docs[0]!.model).toBeUndefined();
    expect(report.quirks.find((q) => q.key === 'no-model')).toEqual({
      key: 'no-model',
      label: 'trajectories that name no model (a SWE-agent 0.x .traj keeps it only in its run folder’s name, e.g. gpt4__…): give it with --model; a bill is not priced without one',
      count: 1,
      examples: ['bare'],
    });
    const named = importDataset('swe-agent', bare(), { model: 'gpt4' });
    expect([named.docs[0]!.model, named.report.models, named.report.quirks.some((q) => q.key === 'no-model')]).toEqual(['gpt-4-1106-preview', [{ model: 'gpt-4-1106-preview', alias: 'gpt4', conversations: 1 }], false]);
    // The user's model is the run's, over the trajectory's own.
    expect(importDataset('swe-agent', write('named.traj', v0(withDemo, GPT4)), { model: 'gpt-4o' }).docs[0]!.model).toBe('gpt-4o');
    const r = await cli('import', '--format', 'swe-agent', bare().path, '--model', 'gpt4');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^id: bare\nmodel: gpt-4-1106-preview\nbilled: \{ calls: 2, input: 3000, output: 40 \}\n/m);
    expect(r.err).toContain("  recorded on gpt-4-1106-preview (the log names it gpt4, a shortcut): name it in the study's models: to replay on it\n");
  });

  it('the billed check prices no default: a transcript without a model the price table knows, in a study that names none, is a usage error', () => {
    const c = (model?: string) => scenarioFromValue('bare.yaml', { id: 'bare', ...(model && { model }), billed: { calls: 1, input: 100 }, turns: [{ user: 'hi', assistant: 'hello' }] });
    const refused = (conversation: Conversation) => {
      try {
        billedChecks([conversation], defaultStudy());
      } catch (e) {
        expect(e).toBeInstanceOf(UsageError);
        return (e as Error).message;
      }
      return 'priced';
    };
    expect(refused(c())).toBe('bare.yaml: billed: names no model (model:), so its bill is not priced: give the model it ran on with --model, or model: in the study');
    expect(refused(c('my-finetune'))).toBe('bare.yaml: billed: model my-finetune is not in the price table, so its bill is not priced: give a table that has it with --prices, or the model to price it on with --model');
    expect(refused(c('gpt-4o'))).toBe('priced');
    // A study that names its model prices it there, even when it is the default's name.
    expect(billedChecks([c()], { ...defaultStudy(), models: ['gpt-4o-mini'] })[0]!.model).toBe('gpt-4o-mini');
    expect(billedChecks([c('my-finetune')], { ...defaultStudy(), models: ['gpt-4-1106-preview'] })[0]!.model).toBe('gpt-4-1106-preview');
  });

  it('run: one line and exit 2 before anything is written, unless --model names the model', async () => {
    const dir = tempDir();
    const yaml = join(dir, 'bare.yaml');
    writeFileSync(yaml, scenarioToYaml(importDataset('swe-agent', bare()).docs[0]!));
    const out = join(dir, 'out');
    const refused = await cli('run', '--scenario', yaml, '--policy', 'full', '--out', out, '--no-token-cache');
    expect(refused.code).toBe(2);
    expect(refused.out).toBe('');
    expect(refused.err).toMatch(/^ctxsim: \S*bare\.yaml: billed: names no model \(model:\), so its bill is not priced: give the model it ran on with --model, or model: in the study\n$/);
    expect(existsSync(out)).toBe(false);
    const priced = await cli('run', '--scenario', yaml, '--policy', 'full', '--out', out, '--no-token-cache', '--model', 'gpt-4-1106-preview');
    expect(priced.code, priced.err).toBe(0);
    expect(priced.err).toMatch(/^billed: bare \(full on gpt-4-1106-preview, 2 calls\): ctxsim counts [\d,]+ prompt tokens, the provider billed 3,000 /m);
  });
});
