import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { projectFiles, projectOf, type TestProject } from './_projects.js';
import { ROOT } from './_shared.js';

/**
 * The test projects (vitest.config.ts, test/_projects.ts): a file lands in
 * one from what its text shows it does, and a unit file that starts a
 * process or a worker thread anyway fails.
 */

const TESTS = join(ROOT, 'test');
const text = (file: string) => readFileSync(join(TESTS, file), 'utf8');

describe('a test file lands in a project from its text', () => {
  const cases = parse(readFileSync(join(TESTS, 'fixtures', 'projects', 'texts.yaml'), 'utf8')) as Record<TestProject, string[]>;

  it.each(['cli', 'oracle', 'unit'] as const)('%s: each text of test/fixtures/projects/texts.yaml', (project) => {
    expect(cases[project].length).toBeGreaterThan(3);
    for (const t of cases[project]) expect(projectOf(t), t).toBe(project);
  });

  it('puts the files of test/ where they belong, each in one project', () => {
    const { cli, oracle } = projectFiles(TESTS);
    const all = readdirSync(TESTS).filter((f) => f.endsWith('.test.ts'));
    const unit = all.filter((f) => !cli.includes(`test/${f}`) && !oracle.includes(`test/${f}`));
    expect(cli.filter((f) => oracle.includes(f))).toEqual([]);
    // The built CLI, the packed package, the docs' outputs, the browser; a policy module, which runs on a thread of the built package.
    for (const f of ['package-install', 'docs-outputs', 'report-html-chromium', 'cli-lazy-load', 'policy-module', 'check-policy-cli', 'cli-folder-study']) expect(cli, f).toContain(`test/${f}.test.ts`);
    // Real data, the reference token counts of other tokenizers.
    for (const f of ['import-locomo', 'agents-billed', 'engine-open-weights', 'tokens-open-weights', 'tokens-spliced']) expect(oracle, f).toContain(`test/${f}.test.ts`);
    // In process: this file, the registries, a policy module imported by the test itself.
    for (const f of ['suite-projects', 'records-columns', 'policy-guard', 'policies-contract', 'report-golden']) expect(unit, f).toContain(`${f}.test.ts`);
    expect(projectOf(text('suite-projects.test.ts'))).toBe('unit');
  });
});

describe('the unit project', () => {
  // What its setup (test/_unit-setup.ts, not imported here: the config must apply it) caught in this file.
  const TRIPPED = ((globalThis as { [k: symbol]: string[] | undefined })[Symbol.for('ctxsim.unit.tripped')] ??= []);
  // The modules' names spelled at run time, so that this file's text keeps it in the unit project it tests.
  const builtin = (...name: string[]) => process.getBuiltinModule(`node:${name.join('_')}`) as Record<string, (...args: unknown[]) => unknown>;

  it('fails a test that starts a child process, naming the file and the project it belongs to', () => {
    for (const start of ['spawn', 'spawnSync', 'execFileSync', 'fork']) {
      expect(() => builtin('child', 'process')[start]!(process.execPath, ['-e', '']), start).toThrow(
        `test/suite-projects.test.ts starts a child process (child_process.${start}): it belongs to the cli project`,
      );
    }
    expect(TRIPPED.splice(0)).toHaveLength(4);
  });

  it('fails a test that starts a worker thread, even when the error is caught', () => {
    const { Worker } = builtin('worker', 'threads') as unknown as { Worker: new (f: string, o: object) => unknown };
    expect(() => new Worker('process.exit(0)', { eval: true })).toThrow('starts a worker thread');
    // What the file's afterAll fails it with, unless taken here.
    expect(TRIPPED.splice(0)).toEqual([expect.stringMatching(/suite-projects\.test\.ts starts a worker thread/)]);
  });
});
