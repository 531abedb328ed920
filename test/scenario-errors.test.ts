import {readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { ScenarioError } from '../src/errors.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

function problems(text: string): string[] {
  try {
    scenarioFromText('scenarios/x.yaml', text);
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  return [];
}

describe('scenario errors name file:line:col path and the bad value', () => {
  it('bad role', () => {
    expect(problems('id: x\nturns:\n  - role: user\n    content: hi\n  - role: bot\n    content: hey\n')).toEqual([
      'scenarios/x.yaml:5:11 turns[1].role: expected one of user|assistant, got "bot"',
    ]);
  });

  it('unknown key, at the key', () => {
    expect(problems('id: x\nturns:\n  - user: hi\n    colour: red\n')).toEqual(['scenarios/x.yaml:4:5 turns[0].colour: unknown key "colour"']);
  });

  it('missing user', () => {
    expect(problems('id: x\nturns:\n  - user: hi\n  - assistant: hello\n')).toEqual(['scenarios/x.yaml:4:5 turns[1].user: required but missing']);
  });

  it('bad YAML', () => {
    expect(problems('id: x\nturns:\n  - user: "open\n')).toEqual(['scenarios/x.yaml:4:1: Missing closing "quote']);
  });

  it('lists every problem, not only the first', () => {
    expect(problems('id: Bad_Id\nturns:\n  - user: 7\n    probe: [email]\n')).toEqual([
      'scenarios/x.yaml:1:5 id: expected an id of a-z, 0-9 and -, starting with a letter or digit, got "Bad_Id"',
      'scenarios/x.yaml:3:11 turns[0].user: expected string, got number 7 (quote it)',
    ]);
  });

  it('a probe of a fact never stated, and a number where a string belongs', () => {
    expect(problems('id: x\nturns:\n  - user: hi\n    facts: {zip: 90210}\n  - user: which?\n    probe: [email]\n')).toEqual([
      'scenarios/x.yaml:4:18 turns[0].facts.zip: expected string, got number 90210 (quote it)',
      'scenarios/x.yaml:6:13 turns[1].probe[0]: fact "email" is not stated in this or an earlier turn',
    ]);
  });

  it('JSON scenarios get positions too', () => {
    expect(problems('{"id": "x", "turns": [{"user": "hi", "gap": "soon"}]}')).toEqual([
      'scenarios/x.yaml:1:45 turns[0].gap: expected a duration such as 30s, 5m, 2h or 1d, got "soon"',
    ]);
  });
});

describe('the CLI on bad input', () => {
  it('prints the problems, exits 2, writes nothing, leaves the input untouched', async () => {
    const dir = tempDir('ctxsim-');
    const file = join(dir, 'bad.yaml');
    const text = 'id: x\nturns:\n  - user: hi\n    colour: red\n';
    writeFileSync(file, text);
    const io = capture();
    const code = await runMain(['run', '--scenario', file, '--out', join(dir, 'out'), '--quiet'], io);
    expect(code).toBe(2);
    expect(io.stdout).toBe('');
    expect(io.stderr).toMatch(/^ctxsim: \S*bad\.yaml:4:5 turns\[0\]\.colour: unknown key "colour"\n$/);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(() => readFileSync(join(dir, 'out', 'turns.csv'))).toThrow();
  });

  it.each([
    [['run', '--policy', 'nope'], 'ctxsim: --policy nope: unknown policy "nope"'],
    [['run', '--policy', 'window-tokens:budgit=3'], 'ctxsim: --policy window-tokens:budgit=3: policy window-tokens: unknown parameter "budgit"'],
    [['run', '--model', 'gpt-4o-minii'], 'ctxsim: --model: unknown model "gpt-4o-minii" (closest: gpt-4o-mini'],
    [['run', 'missing-study.yaml'], 'ctxsim: missing-study.yaml: cannot read study file (ENOENT)'],
    [['explain', 'scenarios/noah-amnesia.yaml', '--policy', 'full', '--turn', '9'], 'ctxsim: --turn: expected a turn from 1 to 5, got 9'],
  ])('%j → exit 2 with one line', async (args, start) => {
    const io = capture();
    expect(await runMain(args, io)).toBe(2);
    expect(io.stderr.startsWith(start)).toBe(true);
    expect(io.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('study errors', () => {
  it('lists a bad setting and bad policy entries together, each at its place', async () => {
    const dir = tempDir('ctxsim-');
    const file = join(dir, 'study.yaml');
    writeFileSync(file, 'seed: x\npolicies:\n  - window-tokens: {budgt: 3}\n  - nope\n');
    const io = capture();
    expect(await runMain(['run', file, '--quiet'], io)).toBe(2);
    expect(io.stderr.replaceAll(file, 'study.yaml').split('\n')).toEqual([
      'ctxsim: study.yaml:1:7 seed: expected number, got string "x"',
      'ctxsim: study.yaml:3:5 policies[0]: policy window-tokens: unknown parameter "budgt" (expected one of budget, sessionCap, forget, moderation)',
      'ctxsim: study.yaml:4:5 policies[1]: unknown policy "nope" (expected one of full, window-turns, window-tokens, window, summary, summary-buffer, priority, retrieval, facts, mask-observations, clear-tool-results, compact, pipeline)',
      '',
    ]);
  });
});
