import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, expectUsage, folder } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * An output never replaces one of the study's inputs: `check --comment`,
 * `--junit` and `--out`, and `run --out FILE` and `--save-baseline --force`,
 * named over the study file, a scenario or the baseline, are exit 2 and
 * leave it as it was. And a study's own `out` that cannot be written is
 * the study's problem, at its key, not a `--out` the command line never gave.
 */

const INPUT = 'is read by this command (the study, a scenario, a dataset or its annotations, the price table, the cassette or the baseline), which an output never replaces: name another file';

/** A study of one scenario and one policy, with a gate baseline, and its baseline saved. */
async function project(): Promise<{ dir: string; study: string; scenario: string; baseline: string }> {
  const dir = tempDir('ctxsim-inputs-');
  const scenario = join(dir, 'email.yaml');
  copyFileSync(join(ROOT, 'test', 'fixtures', 'email-correction.yaml'), scenario);
  const study = join(dir, 'study.yaml');
  writeFileSync(study, ['scenarios: [email.yaml]', 'policies: [full]', 'out: reports/', 'gate: {baseline: base.json}', ''].join('\n'));
  const baseline = join(dir, 'base.json');
  expect((await cli('run', study, '--save-baseline', baseline, '--out', tempDir(), '--no-token-cache', '--quiet')).code).toBe(0);
  return { dir, study, scenario, baseline };
}

describe('an output named over an input', () => {
  it('is refused, before the run, and every input stays as it was', async () => {
    const { dir, study, scenario, baseline } = await project();
    const before = folder(dir);
    for (const [args, flag, path] of [
      [['check', study, '--comment', study], '--comment', study],
      [['check', study, '--junit', baseline], '--junit', baseline],
      [['check', study, '--junit', scenario], '--junit', scenario],
      [['check', study, '--out', join(dir, 'base.json')], '--out', baseline],
      [['run', study, '--out', scenario, '--format', 'json'], '--out', scenario],
      [['run', study, '--out', baseline], '--out', baseline],
      [['run', study, '--save-baseline', study, '--force'], '--save-baseline', study],
    ] as const) {
      await expectUsage([...args, '--no-token-cache', '--quiet'], `ctxsim: ${flag} ${path}: ${INPUT}`);
    }
    expect(folder(dir)).toEqual(before);
  });

  it('merge --save-baseline --force over one of the shard files it merges: refused, nothing written', async () => {
    const { study } = await project();
    const shards = tempDir();
    for (const k of ['1/2', '2/2']) expect((await cli('run', study, '--shard', k, '--out', shards, '--no-token-cache', '--quiet')).code).toBe(0);
    const before = folder(shards);
    const out = join(tempDir(), 'merged');
    const shard = join(shards, 'shard-1-of-2.json');
    await expectUsage(['merge', shards, '--out', out, '--save-baseline', shard, '--force', '--quiet'], `ctxsim: merge: the baseline ${shard} is one of the shard files merged, which an output never replaces: name another file`);
    expect(folder(shards)).toEqual(before);
    expect(existsSync(out)).toBe(false);
  });

  it('two outputs of one command named to the same file: refused, neither written', async () => {
    const { study } = await project();
    const dir = tempDir();
    const file = (name: string) => join(dir, name);
    await expectUsage(['run', study, '--out', file('a.json'), '--save-baseline', file('a.json'), '--no-token-cache', '--quiet'], `ctxsim: --save-baseline ${file('a.json')}: --out names the same file; each output needs a file of its own`);
    await expectUsage(['check', study, '--junit', file('a.xml'), '--comment', file('a.xml'), '--no-token-cache', '--quiet'], `ctxsim: --comment ${file('a.xml')}: --junit names the same file; each output needs a file of its own`);
    await expectUsage(['check', study, '--out', file('a.md'), '--junit', file('a.md'), '--no-token-cache', '--quiet'], `ctxsim: --junit ${file('a.md')}: --out names the same file; each output needs a file of its own`);
    expect(folder(dir)).toEqual(new Map());
  });

  it('import --out, over its own annotations file: refused, nothing written', async () => {
    const dir = tempDir();
    const dataset = join(dir, 'chat.json');
    copyFileSync(join(ROOT, 'test', 'fixtures', 'cookbook-messages.json'), dataset);
    const annotations = join(dir, 'chat-0001.yaml');
    writeFileSync(annotations, 'chat-0001: {facts: {}}\n');
    const before = folder(dir);
    const { code, out, err } = await cli('import', dataset, '--format', 'openai', '--prefix', 'chat', '--annotations', annotations, '--out', dir);
    expect([code, out, err.split('\n').at(-2)]).toEqual([2, '', `ctxsim: --out ${dir}: chat-0001.yaml: ${INPUT}`]);
    expect(folder(dir)).toEqual(before);
  });

  it('run --save-baseline --force still replaces the study’s baseline', async () => {
    const { study, baseline } = await project();
    writeFileSync(baseline, '{}');
    expect((await cli('run', study, '--save-baseline', baseline, '--force', '--out', tempDir(), '--no-token-cache', '--quiet')).code).toBe(0);
    expect(readFileSync(baseline, 'utf8')).not.toBe('{}');
  });
});

describe('a study’s out that cannot be written', () => {
  it('is named at the study’s out key, with its value', async () => {
    const { dir, study } = await project();
    writeFileSync(study, ['scenarios: [email.yaml]', 'policies: [full]', 'out: results.txt', ''].join('\n'));
    await expectUsage(['run', study, '--no-token-cache', '--quiet'], `ctxsim: ${study}:3:6 out: ${join(dir, 'results.txt')}: unknown file type .txt; name a file ending in .csv, .json, .md (.markdown), .html (.htm), - for stdout, or a folder (end it with /)`);
    writeFileSync(study, ['scenarios: [email.yaml]', 'policies: [full]', 'out: email.yaml/x', ''].join('\n'));
    await expectUsage(['run', study, '--no-token-cache', '--quiet'], `ctxsim: ${study}:3:6 out: ${join(dir, 'email.yaml', 'x')}: ${join(dir, 'email.yaml')} is a file, not a folder`);
  });
});
