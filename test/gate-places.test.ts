import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Problem } from '../src/errors.js';
import type { Change } from '../src/gate/compare.js';
import { changePlaces } from '../src/study/gate-places.js';
import { loadScenarios, loadStudy } from '../src/study/study.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Where the gate points each change it blames: a scenario file's `id:`
 * line, a generated conversation's study entry, a policy's entry in
 * `policies`, a model's or a setting's key in the study file, a price
 * file's entry of the study's model; files named from a root.
 */

const STUDY = [
  '# a study',
  'seed: 7',
  'models: [gpt-4o-mini]',
  'prices: prices.json',
  'cache: auto',
  'scenarios:',
  '  - scenarios/noah-amnesia.yaml',
  '  - generate: {profile: support, count: 1}',
  'policies:',
  '  - full',
  '  - window-turns: {turns: 2}',
  '',
].join('\n');

async function placed(): Promise<{ dir: string; place: (c: Change) => unknown }> {
  const dir = tempDir('ctxsim-places-');
  cpSync(join(ROOT, 'scenarios', 'noah-amnesia.yaml'), join(dir, 'scenarios', 'noah-amnesia.yaml'));
  writeFileSync(join(dir, 'prices.json'), '{\n  "other": {"input_cost_per_token": 1e-7},\n  "gpt-4o-mini": {"max_input_tokens": 8000}\n}\n');
  writeFileSync(join(dir, 'study.yaml'), STUDY);
  const study = await loadStudy(join(dir, 'study.yaml'));
  const at = new Map<string, Problem>();
  loadScenarios(study.scenarios, { seed: study.seed, onPlace: (id, p) => at.set(id, p) });
  return { dir, place: changePlaces(study, at, dir) };
}

describe('the places of changes', () => {
  it('point at the line of what changed, files named from the root', async () => {
    const { place } = await placed();
    const text = '';
    expect(place({ kind: 'scenario', scenario: 'noah-amnesia', text })).toEqual({ file: 'scenarios/noah-amnesia.yaml', line: 3 });
    // A generated conversation: its entry in the study.
    expect(place({ kind: 'scenario', scenario: 'support-0001', text })).toEqual({ file: 'study.yaml', line: 8 });
    expect(place({ kind: 'policy', before: 'window-turns:turns=3', after: 'window-turns:turns=2', text })).toEqual({ file: 'study.yaml', line: 11 });
    expect(place({ kind: 'model', before: 'a', after: 'gpt-4o-mini', text })).toEqual({ file: 'study.yaml', line: 3 });
    expect(place({ kind: 'setting', key: 'seed', text })).toEqual({ file: 'study.yaml', line: 2 });
    expect(place({ kind: 'setting', key: 'cache', text })).toEqual({ file: 'study.yaml', line: 5 });
    // A price file's change: the study model's entry in it.
    expect(place({ kind: 'setting', key: 'prices', text })).toEqual({ file: 'prices.json', line: 3 });
    // A setting the study file does not write: the file, no line.
    expect(place({ kind: 'setting', key: 'latency', text })).toEqual({ file: 'study.yaml' });
  });

  it('a price table written on one line: the study model\'s entry is on line 1', async () => {
    const { dir } = await placed();
    writeFileSync(join(dir, 'prices.json'), '{"other": {"input_cost_per_token": 1e-7, "note": "gpt-4o-mini"}, "gpt-4o-mini": {"max_input_tokens": 8000}}\n');
    const study = await loadStudy(join(dir, 'study.yaml'));
    expect(changePlaces(study, new Map(), dir)({ kind: 'setting', key: 'prices', text: '' })).toEqual({ file: 'prices.json', line: 1 });
    // The model named as a value on line 1 is not its entry: the key on line 2 is.
    writeFileSync(join(dir, 'prices.json'), '{"other": {"note": "gpt-4o-mini"},\n "gpt-4o-mini": {"max_input_tokens": 8000}}\n');
    expect(changePlaces(await loadStudy(join(dir, 'study.yaml')), new Map(), dir)({ kind: 'setting', key: 'prices', text: '' })).toEqual({ file: 'prices.json', line: 2 });
  });

  it('outside the root, a file is named by its absolute path; the built-in study has no place for a setting', async () => {
    const { dir } = await placed();
    const study = await loadStudy(join(dir, 'study.yaml'));
    const far = changePlaces(study, new Map(), join(dir, 'elsewhere'));
    expect(far({ kind: 'setting', key: 'seed', text: '' })).toEqual({ file: join(dir, 'study.yaml'), line: 2 });
    const { defaultStudy } = await import('../src/study/study.js');
    expect(changePlaces(defaultStudy(), new Map())({ kind: 'setting', key: 'seed', text: '' })).toBeUndefined();
  });
});
