import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { ScenarioError } from '../src/errors.js';
import { importDataset } from '../src/scenario/import/index.js';
import { loadScenarios, loadStudy } from '../src/study/study.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const dir = mkdtempSync(join(tmpdir(), 'ctxsim-import-study-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'data'));
for (const f of ['locomo-sample.json', 'abcd-sample.json', 'openai-chats.jsonl', 'openai-chats.facts.yaml']) copyFileSync(join(FIXTURES, f), join(dir, 'data', f));

function study(name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, [...lines, ''].join('\n'));
  return file;
}

/** The problems `fn` throws or rejects with as a ScenarioError, one line each, paths shown from the study's folder. */
async function problems(fn: () => unknown): Promise<string[]> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n').map((l) => l.replaceAll(`${dir}/`, ''));
    throw e;
  }
  throw new Error('expected a ScenarioError');
}

describe('import: entries in a study', () => {
  it('read datasets relative to the study, with options, in order, and report each import', async () => {
    const file = study('ok.yaml', [
      'scenarios:',
      '  - import: {format: abcd, path: data/abcd-sample.json, prefix: cs}',
      '  - import: {format: locomo, path: data/locomo-sample.json, user: speaker_b, questions: after}',
      '  - import: {format: openai, path: data/openai-chats.jsonl, annotations: data/openai-chats.facts.yaml}',
    ]);
    const notes: string[] = [];
    const cs = loadScenarios((await loadStudy(file)).scenarios, { onNote: (l) => notes.push(l.replaceAll(`${dir}/`, '')) });
    expect(cs.map((c) => c.id)).toEqual(['cs-501', 'cs-502', 'locomo-conv-a1', 'locomo-conv-b2', 'openai-chats-0001', 'openai-chats-0002']);
    // Same conversations as importing directly with those options.
    const direct = importDataset('locomo', { path: join(dir, 'data', 'locomo-sample.json'), file: 'x', base: dir }, { user: 'speaker_b', questions: 'after' }).conversations;
    expect(cs.slice(2, 4).map((c) => c.turns)).toEqual(direct.map((c) => c.turns));
    expect(cs[4]!.turns[3]!.probe).toEqual(['order_id', 'email']);
    expect(notes.filter((l) => !l.startsWith('  '))).toEqual([
      'abcd data/abcd-sample.json: 2 conversations, 10 turns, 7 facts, 6 probes',
      'locomo data/locomo-sample.json: 2 conversations, 17 turns, 8 facts, 8 probes',
      'openai data/openai-chats.jsonl: 2 conversations, 5 turns, 4 facts, 2 probes',
    ]);
  });

  it('check format and options at their place in the study', async () => {
    const file = study('bad.yaml', [
      'scenarios:',
      '  - import: {format: parquet, path: a.json}',
      '  - import: {format: locomo, path: a.json, user: bob}',
      '  - import: {format: abcd, path: a.json, annotations: x.yaml}',
      '  - import: {format: openai}',
    ]);
    expect(await problems(() => loadStudy(file))).toEqual([
      'bad.yaml:2:22 scenarios[0].import.format: unknown import format "parquet"; expected one of openai, locomo, abcd, multiwoz, claude-code, swe-agent, anthropic, sgd',
      'bad.yaml:3:50 scenarios[1].import.user: expected one of speaker_a|speaker_b, got "bob"',
      'bad.yaml:4:42 scenarios[2].import.annotations: unknown key "annotations"',
      'bad.yaml:5:13 scenarios[3].import.path: required but missing',
    ]);
  });

  it('never yield a partial set: a malformed dataset fails the whole load with every problem', async () => {
    writeFileSync(join(dir, 'data', 'broken.json'), JSON.stringify([{ convo_id: 9, scenario: {}, original: [['customer', 1]] }]));
    const file = study('partial.yaml', [
      'scenarios:',
      '  - generate: {profile: support, count: 2}',
      '  - import: {format: abcd, path: data/broken.json}',
      '  - import: {format: locomo, path: data/missing.json}',
    ]);
    const { scenarios } = await loadStudy(file);
    expect(await problems(() => loadScenarios(scenarios))).toEqual([
      'data/broken.json:1:54 [0].original[0][1]: expected string, got number 1 (quote it)',
      'partial.yaml:4:36 scenarios[2].import.path: data/missing.json: cannot read file (ENOENT)',
    ]);
  });

  it('ctxsim run prints the import report on stderr and exits 2 on a malformed dataset', async () => {
    const o = { out: '', err: '' };
    const io = { out: (t: string) => void (o.out += t), err: (t: string) => void (o.err += t), isTTY: false };
    const ok = study('run.yaml', ['scenarios:', '  - import: {format: abcd, path: data/abcd-sample.json}', 'policies: [full]', 'out: out']);
    expect(await runMain(['run', ok], io)).toBe(0);
    expect(o.err).toContain('abcd-sample.json: 2 conversations, 10 turns, 7 facts, 6 probes\n');
    const bad = study('run-bad.yaml', ['scenarios:', '  - import: {format: abcd, path: data/broken.json}', 'policies: [full]', 'out: out-bad']);
    o.err = '';
    expect(await runMain(['run', bad], io)).toBe(2);
    expect(o.err.replaceAll(`${dir}/`, '')).toBe('ctxsim: data/broken.json:1:54 [0].original[0][1]: expected string, got number 1 (quote it)\n');
  });
});
