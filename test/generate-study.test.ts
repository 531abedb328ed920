import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError } from '../src/errors.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { runMain } from '../src/cli/_app.js';
import { defaultStudy, loadScenarios, loadStudy } from '../src/study/study.js';
import type { Conversation } from '../src/types.js';
import { capture } from './_io.js';

const dir = mkdtempSync(join(tmpdir(), 'ctxsim-study-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function study(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** The problems `fn` throws or rejects with as a ScenarioError, one line each, paths shown from the study's folder. */
async function problems(fn: () => unknown): Promise<string[]> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n').map((l) => l.replace(`${dir}/`, ''));
    throw e;
  }
  throw new Error('expected a ScenarioError');
}

describe('generate: entries in a study', () => {
  it('produce conversations in the order given, with the study seed unless the entry names one', async () => {
    const file = study(
      'ok.yaml',
      ['seed: 7', 'scenarios:', '  - generate: {profile: support, count: 3}', '  - generate: {profile: companion, count: 1, seed: 9, turns: 50-60, prefix: pal, gapDays: 2-3}', ''].join('\n'),
    );
    const s = await loadStudy(file);
    const cs = loadScenarios(s.scenarios, { seed: s.seed });
    expect(cs.map((c) => c.id)).toEqual(['support-0001', 'support-0002', 'support-0003', 'pal-0001']);
    // Same as generating directly with the study's seed (7) and the entry's own (9).
    expect(cs.slice(0, 3)).toEqual(generateConversations({ profile: 'support', count: 3, seed: 7 }));
    expect(cs[3]).toEqual(generateConversations({ profile: 'companion', count: 1, seed: 9, prefix: 'pal', params: { turns: [50, 60], gapDays: [2, 3] } })[0]);
    expect(cs[3]!.turns.length).toBeGreaterThanOrEqual(50);
    expect(cs[3]!.turns.length).toBeLessThanOrEqual(60);
    // gapDays 2-3: gaps between sessions are 2 or 3 days plus up to 23 hours, except the
    // last one, stretched so that preferences stated early can be asked 14 days later.
    const big = cs[3]!.turns.filter((t) => t.gapSeconds >= 86400).map((t) => Math.floor(t.gapSeconds / 86400));
    expect(big.length).toBeGreaterThan(2);
    for (const d of big.slice(0, -1)) expect([2, 3]).toContain(d);
    expect(big.at(-1)).toBeGreaterThan(3);
  });

  it('are checked against the profile, each problem at its place', async () => {
    const file = study(
      'bad.yaml',
      [
        'scenarios:',
        '  - generate: {profile: chatty, count: 3}',
        '  - generate: {profile: support, count: 0}',
        '  - generate: {profile: support, count: 2, correctionShare: 2, mood: happy}',
        '  - generate: {profile: coding, count: 2, turns: 60-10}',
        '  - {generate: {profile: support, count: 1}, import: {format: abcd, path: x.json}}',
        '',
      ].join('\n'),
    );
    expect(await problems(() => loadStudy(file))).toEqual([
      'bad.yaml:2:25 scenarios[0].generate.profile: unknown profile "chatty"; expected one of support, voice-assistant, coding, companion, agent',
      'bad.yaml:3:41 scenarios[1].generate.count: expected a number ≥ 1, got 0',
      'bad.yaml:4:61 scenarios[2].generate.correctionShare: expected a number ≤ 1, got 2',
      'bad.yaml:4:64 scenarios[2].generate.mood: unknown key "mood"',
      'bad.yaml:5:50 scenarios[3].generate.turns: expected a range MIN-MAX of whole numbers from 1, such as 5-40, got "60-10"',
      'bad.yaml:6:5 scenarios[4]: expected a glob of scenario files, {glob}, {generate: {profile, count}} or {import: {format, path}} (each may have a weight), got {"generate":{"profile":"support","count":1},"import":{"format":"abcd","path":"x.json"}}',
    ]);
  });

  it('are written as ctxsim generate’s flags write them, a field each (GENERATE_SPEC): the same set', async () => {
    const file = study('same.yaml', ['scenarios:', '  - generate: {profile: support, count: 2, seed: 5, prefix: same, turns: 3-4, correctionShare: 1}', ''].join('\n'));
    const fromStudy = loadScenarios((await loadStudy(file)).scenarios);
    const out = join(dir, 'same');
    const flags = ['--profile', 'support', '--count', '2', '--seed', '5', '--prefix', 'same', '--turns', '3-4', '--set', 'correctionShare=1', '--out', out];
    expect(await runMain(['generate', ...flags], capture())).toBe(0);
    // Each the same but for where it comes from (a file, or the entry).
    const unsourced = (cs: readonly Conversation[]) => cs.map(({ source: _source, ...c }) => c);
    expect(unsourced(loadScenarios([{ kind: 'glob', pattern: '*.yaml', base: out }]))).toEqual(unsourced(fromStudy));
    expect(fromStudy.map((c) => [c.id, c.turns.length >= 3 && c.turns.length <= 4])).toEqual([['same-0001', true], ['same-0002', true]]);
  });

  it('reject two sets with the same ids, naming both', async () => {
    const file = study('dup.yaml', ['scenarios:', '  - generate: {profile: support, count: 2}', '  - generate: {profile: support, count: 1, seed: 3}', ''].join('\n'));
    const { scenarios } = await loadStudy(file);
    expect(await problems(() => loadScenarios(scenarios))).toEqual([
      'dup.yaml:3:15 scenarios[1].generate: duplicate scenario id "support-0001" (also at line 2, column 15)',
    ]);
  });
});

describe('the default study', () => {
  it('adds a generated set of every profile after the shipped scenarios', () => {
    const sources = defaultStudy().scenarios;
    expect(sources.map((s) => (s.kind === 'generate' ? `${s.profile}×${s.count}` : s.kind))).toEqual([
      'glob',
      'support×20',
      'voice-assistant×5',
      'coding×2',
      'companion×1',
    ]);
    const ids = loadScenarios(sources.slice(1), { seed: 42 }).map((c) => c.id);
    expect(ids.length).toBe(28);
    expect(ids.slice(19, 22)).toEqual(['support-0020', 'voice-assistant-0001', 'voice-assistant-0002']);
    expect(ids.at(-1)).toBe('companion-0001');
  });
});
