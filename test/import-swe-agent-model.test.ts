import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnOut } from '../src/scenario/docs.js';
import { formatImportReport, importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import { importFixture, roundsOf, writeInput } from './_import.js';
import { cli, problems } from './_io.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * What the swe-agent importer keeps of how a run was made: the model (a
 * SWE-agent shortcut resolved), each observation as the model was sent it
 * (with SWE-agent's footer), and the run's billed totals, which `ctxsim run`
 * compares with its count of `full`'s calls.
 */

const tmp = tempDir('ctxsim-swe-agent-model-');

const FOOTER = (file: string) => `\n(Open file: ${file})\n(Current directory: /repo)\nbash-$`;
const NO_OUTPUT = 'Your command ran successfully and did not produce any output.';

/** A SWE-agent 0.x trajectory: steps with their state as JSON text (the state before each response), the config as JSON text with Python-format templates. */
function v0Trajectory(over: { model?: unknown; stats?: Record<string, unknown>; history?: unknown[]; config?: unknown } = {}) {
  const state = (file: string) => JSON.stringify({ open_file: file, working_dir: '/repo' });
  return {
    environment: 'swe_main',
    trajectory: [
      { action: 'ls -F\n', observation: 'src/\ntests/\n', response: 'List the files.\n```\nls -F\n```', thought: 'List the files.\n', state: state('n/a') },
      { action: 'open src/dates.py\n', observation: '[File: /repo/src/dates.py (2 lines total)]\n1:import re\n2:def parse_date(text):\n', response: 'Open it.\n```\nopen src/dates.py\n```', thought: 'Open it.\n', state: state('n/a') },
      { action: 'rm reproduce.py\n', observation: '', response: 'Clean up.\n```\nrm reproduce.py\n```', thought: 'Clean up.\n', state: state('/repo/src/dates.py') },
      { action: 'submit\n', observation: 'diff --git a/src/dates.py b/src/dates.py\n', response: 'Submit.\n```\nsubmit\n```', thought: 'Submit.\n', state: state('/repo/src/dates.py') },
    ],
    history: over.history ?? [
      { role: 'system', content: 'SETTING: You are an autonomous programmer.', agent: 'primary' },
      { role: 'user', content: `ISSUE: parse_date crashes on leap days.${FOOTER('n/a')}`, agent: 'primary' },
    ],
    info: { exit_status: 'submitted', model_stats: over.stats ?? { total_cost: 0.9, instance_cost: 0.05, tokens_sent: 4321, tokens_received: 210, api_calls: 4 } },
    replay_config:
      over.config ??
      JSON.stringify({
        agent: {
          model: { model_name: over.model ?? 'gpt4', temperature: 0, top_p: 0.95 },
          config: {
            next_step_template: '{observation}\n(Open file: {open_file})\n(Current directory: {working_dir})\nbash-$',
            next_step_no_output_template: `${NO_OUTPUT}\n(Open file: {open_file})\n(Current directory: {working_dir})\nbash-$`,
          },
        },
      }),
  };
}

const v0 = (name: string, over: Parameters<typeof v0Trajectory>[0] = {}) => writeInput(tmp, name, JSON.stringify(v0Trajectory(over), null, 2));
const results = (docs: { turns: unknown[] }[]) => roundsOf(docs[0]!.turns[0] as TurnOut).map((r) => r.calls[0]!.result);

describe('the model a run was on', () => {
  it('SWE-agent 0.x: the config’s shortcut gpt4 is kept as the model it stood for, gpt-4-1106-preview, and the report says so', () => {
    const { docs, report } = importDataset('swe-agent', v0('gpt4-run.traj'));
    expect(docs[0]!.model).toBe('gpt-4-1106-preview');
    expect(report.models).toEqual([{ model: 'gpt-4-1106-preview', alias: 'gpt4', conversations: 1 }]);
    expect(formatImportReport(report)[1]).toBe("  recorded on gpt-4-1106-preview (the log names it gpt4, a shortcut): name it in the study's models: to replay on it");
  });

  it.each([
    ['claude-sonnet-3.5', 'claude-3-5-sonnet-20240620'],
    ['gpt4o', 'gpt-4o-2024-05-13'],
    ['claude-opus', 'claude-3-opus-20240229'],
    ['mixtral8x7b', 'mistralai/Mixtral-8x7B-Instruct-v0.1'],
  ])('SWE-agent 1.x (the config an object, agent.model.name): %s is %s', (name, model) => {
    const traj = { ...v0Trajectory(), replay_config: { agent: { model: { name } } } };
    const { docs, report } = importDataset('swe-agent', writeInput(tmp, 'v1.traj', JSON.stringify(traj)));
    expect([docs[0]!.model, report.models[0]!.alias]).toEqual([model, name]);
  });

  it('a name that is no shortcut is kept as written, a model name of its own included (o1, gpt-4o-mini); SWE-agent’s stand-ins name no model', () => {
    for (const name of ['my-org/llama-3-ft', 'o1', 'gpt-4o-mini', 'azure:gpt4']) {
      const { docs, report } = importDataset('swe-agent', v0('named.traj', { model: name }));
      expect([docs[0]!.model, report.models]).toEqual([name, [{ model: name, conversations: 1 }]]);
    }
    const { docs, report } = importDataset('swe-agent', v0('replayed.traj', { model: 'replay' }));
    expect(docs[0]!.model).toBeUndefined();
    expect(report.models).toEqual([]);
    expect(report.quirks.map((q) => [q.key, q.examples])).toEqual([
      ['steps', ['replayed']],
      ['stand-in-model', ['replayed replay']],
    ]);
  });

  it('mini-swe-agent: the config’s model_name, else the model its responses name', () => {
    const mini = JSON.parse(readFileSync(importFixture('mini-swe-agent-sample.traj.json').path, 'utf8')) as { info: Record<string, unknown> };
    expect(importDataset('swe-agent', importFixture('mini-swe-agent-sample.traj.json')).docs[0]!.model).toBe('deepseek-chat');
    mini.info.config = { model: { model_name: 'deepseek/deepseek-chat' } };
    expect(importDataset('swe-agent', writeInput(tmp, 'mini.traj.json', JSON.stringify(mini))).docs[0]!.model).toBe('deepseek/deepseek-chat');
  });

  it('keeps the model through YAML: written after the id, loaded as the conversation’s', () => {
    const { docs, conversations } = importDataset('swe-agent', v0('gpt4-run.traj'));
    const yaml = scenarioToYaml(docs[0]!);
    expect(yaml).toMatch(/^id: gpt4-run\nmodel: gpt-4-1106-preview\nbilled: \{ calls: 4, input: 4321, output: 210 \}\nsystem: /m);
    const back = scenarioFromText('gpt4-run.yaml', yaml);
    expect([back.model, back.billed]).toEqual(['gpt-4-1106-preview', { calls: 4, input: 4321, output: 210 }]);
    expect({ ...back, source: '' }).toEqual({ ...conversations[0]!, source: '' });
  });
});

describe('observations as the model was sent them', () => {
  it('0.x steps without the history’s observations: each in next_step_template with the state before the next response; an empty one in the no-output template; the last (never sent) as recorded', () => {
    const { docs, report } = importDataset('swe-agent', v0('footer.traj'));
    expect(results(docs)).toEqual([
      `src/\ntests/\n${FOOTER('n/a')}`,
      `[File: /repo/src/dates.py (2 lines total)]\n1:import re\n2:def parse_date(text):\n${FOOTER('/repo/src/dates.py')}`,
      `${NO_OUTPUT}${FOOTER('/repo/src/dates.py')}`,
      'diff --git a/src/dates.py b/src/dates.py\n',
    ]);
    expect(report.quirks.map((q) => q.key)).toEqual(['steps']);
  });

  it('the history’s message after each response is what was sent, and wins; a response whose action is not its step’s ends the match', () => {
    const history = [
      ...v0Trajectory().history,
      { role: 'assistant', content: 'List the files.\n```\nls -F\n```', action: 'ls -F\n', agent: 'primary' },
      { role: 'user', content: 'as sent: src/ tests/', agent: 'primary' },
      { role: 'assistant', content: 'Open it.\n```\nopen src/dates.py\n```', action: 'open src/dates.py\n', agent: 'primary' },
      { role: 'user', content: 'as sent: the file', agent: 'primary' },
      { role: 'assistant', content: 'something else', action: 'ls -la\n', agent: 'primary' },
      { role: 'user', content: 'not this step’s', agent: 'primary' },
    ];
    const { docs } = importDataset('swe-agent', v0('history.traj', { history }));
    expect(results(docs)).toEqual(['as sent: src/ tests/', 'as sent: the file', `${NO_OUTPUT}${FOOTER('/repo/src/dates.py')}`, 'diff --git a/src/dates.py b/src/dates.py\n']);
  });

  it('a demonstration in the history is sent with the task, not matched to the steps', () => {
    const history = [
      { role: 'system', content: 'SETTING: You are an autonomous programmer.', agent: 'primary' },
      { role: 'user', content: 'Here is a demonstration.', agent: 'primary', is_demo: true },
      { role: 'assistant', content: 'demo', action: 'ls\n', agent: 'primary', is_demo: true },
      { role: 'user', content: `ISSUE: parse_date crashes on leap days.${FOOTER('n/a')}`, agent: 'primary' },
    ];
    const { docs, report } = importDataset('swe-agent', v0('demo.traj', { history }));
    expect((docs[0]!.turns[0] as TurnOut).user).toBe(`Here is a demonstration.\ndemo\nISSUE: parse_date crashes on leap days.${FOOTER('n/a')}`);
    expect(results(docs)[0]).toBe(`src/\ntests/\n${FOOTER('n/a')}`);
    expect(report.quirks.map((q) => [q.key, q.count])).toEqual([
      ['demonstration', 2],
      ['demonstration-messages', 1],
      ['steps', 1],
    ]);
  });

  it('without a template or state to rebuild the footer, an observation is kept as recorded and counted', () => {
    const { docs, report } = importDataset('swe-agent', v0('bare.traj', { config: JSON.stringify({ agent: { model: { model_name: 'gpt4' } } }) }));
    expect(results(docs)).toEqual(['src/\ntests/\n', '[File: /repo/src/dates.py (2 lines total)]\n1:import re\n2:def parse_date(text):\n', '', 'diff --git a/src/dates.py b/src/dates.py\n']);
    expect(report.quirks.find((q) => q.key === 'no-footer')).toMatchObject({ count: 3, examples: ['bare step 1', 'bare step 2', 'bare step 3'] });
  });
});

const FC = 'agent_transcripts_sample/swe-agent_fc-demo_marshmallow-1867.traj';
type Traj = { history: { role: string; content: unknown; tool_calls?: unknown; tool_call_ids?: unknown }[]; trajectory: { observation: string; state: Record<string, string> }[]; info: { model_stats: Record<string, number> }; replay_config: { agent: { model: { name: string } } } };
const readTraj = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Traj;
/** The tool messages of the real run's history: what the model was sent after each call. */
const sentInHistory = (t: Traj) => t.history.filter((m) => m.role === 'tool').map((m) => m.content as string);

itShared(FC, 'the real SWE-agent run: each result is the history’s tool message, the step’s observation with its footer (open file, directory, prompt)', (path) => {
  const traj = readTraj(path);
  const { docs } = importDataset('swe-agent', { path, file: 'fc.traj', base: dirname(path) });
  const sent = sentInHistory(traj);
  expect(results(docs)).toEqual(sent);
  sent.forEach((text, i) => {
    const { observation, state } = traj.trajectory[i]!;
    expect(text.endsWith(`\n(Open file: ${state.open_file})\n(Current directory: ${state.working_dir})\nbash-$`)).toBe(true);
    if (observation.trim()) expect(text.startsWith(observation)).toBe(true);
  });
});

itShared(FC, 'the real SWE-agent run read from its steps: with the history cut to the task, the observations rebuilt from its templates and states are the history’s messages, byte for byte', (path) => {
  const traj = readTraj(path);
  const sent = sentInHistory(traj);
  const cut = writeInput(tmp, 'fc-steps.traj', JSON.stringify({ ...traj, history: traj.history.slice(0, 2) }));
  const { docs, report } = importDataset('swe-agent', cut);
  expect(results(docs)).toEqual(sent);
  expect(report.quirks.map((q) => q.key)).toEqual(['steps', 'stand-in-model']);
  // The history without its tool calls (the thought/action form): its messages after each response are taken as sent.
  const plain = writeInput(tmp, 'fc-plain.traj', JSON.stringify({ ...traj, history: traj.history.map(({ tool_calls: _c, tool_call_ids: _i, ...m }) => ({ ...m, role: m.role === 'tool' ? 'user' : m.role })) }));
  expect(results(importDataset('swe-agent', plain).docs)).toEqual(sent);
});

/** The rows of a CSV file as objects by header. */
function csvRows(text: string): Record<string, string>[] {
  const [head, ...rows] = text.trim().split('\n');
  const keys = head!.split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((v, i) => [keys[i]!, v])));
}

/**
 * Runs a study of one imported trajectory under `full` on gpt-4o-mini first
 * and gpt-4-1106-preview second; gives the run's stderr and, from turns.csv,
 * what `full` sent on gpt-4-1106-preview: prompt tokens and calls.
 */
async function runOn(traj: string) {
  const dir = tempDir();
  writeFileSync(join(dir, 'study.yaml'), `models: [gpt-4o-mini, gpt-4-1106-preview]\nscenarios:\n  - import: {format: swe-agent, path: ${JSON.stringify(traj)}}\npolicies: [full]\n`);
  // turns.csv's content alone (no report folder's charts).
  const r = await cli('run', join(dir, 'study.yaml'), '--out', join(dir, 'turns.csv'), '--no-token-cache');
  expect(r.code, r.err).toBe(0);
  const rows = csvRows(readFileSync(join(dir, 'turns.csv'), 'utf8')).filter((row) => row.model === 'gpt-4-1106-preview' && row.policy === 'full');
  const sum = (k: string) => rows.reduce((n, row) => n + Number(row[k]), 0);
  return { err: r.err, input: sum('input_tokens'), calls: sum('calls'), cost: sum('cost_usd') };
}

const pct = (counted: number, billed: number) => {
  const diff = counted / billed - 1;
  return `${diff >= 0 ? '+' : '−'}${Math.abs(diff * 100).toFixed(1)}%`;
};

describe('a run’s billed totals (SWE-agent’s model_stats)', () => {
  it('are kept as the conversation’s billed total; zero tokens sent is nothing recorded', () => {
    expect(importDataset('swe-agent', v0('totals.traj')).docs[0]!.billed).toEqual({ calls: 4, input: 4321, output: 210 });
    expect(importDataset('swe-agent', v0('zero.traj', { stats: { tokens_sent: 0, tokens_received: 0, api_calls: 4 } })).docs[0]!.billed).toBeUndefined();
  });

  it('run compares them with full’s count of every call, on the transcript’s own model (not the study’s first), as the per-call line does', async () => {
    const traj = v0('totals.traj').path;
    const { err, input, calls, cost } = await runOn(traj);
    // Four rounds, the last without a reply after it: four calls, as the run billed.
    expect(calls).toBe(4);
    // gpt-4-1106-preview caches nothing, so the total's cost compares: $10/M input, $30/M output,
    // 4,321 × $0.00001 + 210 × $0.00003 = $0.04321 + $0.0063 = $0.049510.
    expect(err).toContain(
      `billed: totals (full on gpt-4-1106-preview, 4 calls): ctxsim counts ${input.toLocaleString('en-US')} prompt tokens, the provider billed 4,321 (${pct(input, 4321)}); cost $${cost.toFixed(6)}, billed $0.049510 (${pct(cost, 0.04951)}); prompts $${(input / 1e5).toFixed(6)}, billed $0.043210 (${pct(input, 4321)})\n`,
    );
    expect(err.match(/^billed: /gm)).toHaveLength(1);
  });

  it('says how many calls the bill covers when the replay makes another number', async () => {
    const { err, input } = await runOn(v0('five.traj', { stats: { tokens_sent: 5000, tokens_received: 100, api_calls: 5 } }).path);
    // Over another number of calls, the costs do not compare: no cost.
    expect(err).toContain(`billed: five (full on gpt-4-1106-preview, 4 calls; 5 billed): ctxsim counts ${input.toLocaleString('en-US')} prompt tokens, the provider billed 5,000 (${pct(input, 5000)})\n`);
  });

  it('a scenario gives a total or usage on its calls, not both', () => {
    const yaml = 'id: x\nbilled: {calls: 1, input: 40}\nturns:\n  - user: hi\n    tools:\n      - calls: [{call: ls, result: a.txt}]\n        usage: {input: 40}\n';
    expect(problems(() => scenarioFromText('x.yaml', yaml))).toEqual(['x.yaml:2:9 billed: a total for a conversation whose calls carry their usage: give one or the other (usage per call is compared call by call)']);
  });

  it('prints nothing for a run that recorded no tokens', async () => {
    const { err } = await runOn(v0('zero.traj', { stats: { tokens_sent: 0, tokens_received: 0, api_calls: 4 } }).path);
    expect(err).not.toMatch(/^billed: /m);
  });
});

itShared(FC, 'the real SWE-agent run with its bill (model_stats set, the config naming gpt4): the billed line on gpt-4-1106-preview over its 13 calls, its numbers those of turns.csv', async (path) => {
  const traj = readTraj(path);
  expect([traj.info.model_stats.tokens_sent, traj.replay_config.agent.model.name]).toEqual([0, 'replay']);
  const { err: none } = await runOn(path);
  expect(none).not.toMatch(/^billed: /m);
  traj.info.model_stats = { instance_cost: 1.2, tokens_sent: 120_000, tokens_received: 1_500, api_calls: 13 };
  traj.replay_config.agent.model.name = 'gpt4';
  const billed = writeInput(tmp, 'fc-billed.traj', JSON.stringify(traj));
  const { err, input, calls, cost } = await runOn(billed.path);
  expect(calls).toBe(13);
  expect(err).toContain('  recorded on gpt-4-1106-preview (the log names it gpt4, a shortcut)');
  // The bill: 120,000 × $0.00001 + 1,500 × $0.00003 = $1.245.
  expect(err).toContain(
    `billed: fc-billed (full on gpt-4-1106-preview, 13 calls): ctxsim counts ${input.toLocaleString('en-US')} prompt tokens, the provider billed 120,000 (${pct(input, 120_000)}); cost $${cost.toFixed(6)}, billed $1.245000 (${pct(cost, 1.245)}); prompts $${(input / 1e5).toFixed(6)}, billed $1.200000 (${pct(input, 120_000)})\n`,
  );
});

describe('bad values', () => {
  const bad = (name: string, traj: unknown) => problems(() => importDataset('swe-agent', writeInput(tmp, name, JSON.stringify(traj, null, 2))));

  it('are one line each, naming the file, the place and the value', () => {
    expect(bad('negative.traj', v0Trajectory({ stats: { tokens_sent: -5, api_calls: 4 } }))).toEqual(['negative.traj:48:22 info.model_stats.tokens_sent: expected a number ≥ 0, got -5']);
    expect(bad('calls.traj', v0Trajectory({ stats: { tokens_sent: 900, api_calls: 0 } }))).toEqual(['calls.traj:49:20 info.model_stats.api_calls: expected the number of model calls the 900 tokens_sent were billed for (≥ 1), got 0']);
    // The config as an object: at the value; as JSON text (SWE-agent 0.x): at the text, the path inside it.
    expect(bad('model.traj', { ...v0Trajectory(), replay_config: { agent: { model: { name: 4 } } } })).toEqual(['model.traj:58:17 replay_config.agent.model.name: expected string, got number 4 (quote it)']);
    expect(bad('model0.traj', v0Trajectory({ model: ['gpt4'] }))).toEqual(['model0.traj:55:20 replay_config.agent.model.model_name: expected string, got a list']);
    expect(bad('config.traj', v0Trajectory({ config: '{"agent": ' }))).toEqual([`config.traj:55:20 replay_config: expected the run's config as JSON text: ${jsonError('{"agent": ')}`]);
    const mini = JSON.parse(readFileSync(importFixture('mini-swe-agent-sample.traj.json').path, 'utf8')) as { info: Record<string, unknown> };
    expect(bad('mini.traj.json', { ...mini, info: { ...mini.info, config: { model: { model_name: false } } } })).toEqual(['mini.traj.json:12:23 info.config.model.model_name: expected string, got boolean false']);
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  return '';
}
