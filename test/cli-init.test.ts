import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse, parseDocument } from 'yaml';
import { runMain } from '../src/cli/_app.js';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { parsePercent, parseRetentionLimit } from '../src/gate/limits.js';
import { checkPolicyContract } from '../src/policies/contract/checker.js';
import { formatContractViolation } from '../src/policies/contract/rules.js';
import { resolvePolicy } from '../src/policies/spec.js';
import type { Policy } from '../src/policies/types.js';
import { generateConversations, PROFILES } from '../src/scenario/generate/index.js';
import { scenarioFromFile } from '../src/scenario/load.js';
import { scenarioJsonSchema } from '../src/scenario/schema.js';
import { INIT_FILES, INIT_TEMPLATE_DIR } from '../src/study/init.js';
import { loadStudy, studyJsonSchema } from '../src/study/study.js';
import type { Conversation } from '../src/types.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { allShipped, fixture, withSafetyEvents } from './_policies.js';
import { tempDir } from './_tmp.js';

/**
 * `ctxsim init [DIR]` scaffolds a project from templates/init/: a study
 * naming two scenarios, built-in policies and the example policy module, a
 * gate; the two scenarios; the example policy; a GitHub Actions workflow.
 * It refuses to overwrite (exit 2, nothing written) unless `--force`. The
 * files it writes load, and the example policy keeps the policy contract.
 */

const FILES = ['.github/workflows/ctxsim.yml', 'policies/example-policy.mjs', 'scenarios/plant-shop-order.yaml', 'scenarios/smart-home-scenes.yaml', 'study.yaml'];

/** Every file under a folder, relative to it, sorted. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => statSync(join(dir, p)).isFile())
    .map((p) => p.split('\\').join('/'))
    .sort();
}

async function init(args: string[]) {
  const io = capture();
  const code = await runMain(['init', ...args], io);
  return { code, ...io };
}

/** The example policy, loaded as ctxsim will load a policy module: its default export. */
async function examplePolicy(): Promise<Policy> {
  const mod = (await import(pathToFileURL(join(INIT_TEMPLATE_DIR, 'policies', 'example-policy.mjs')).href)) as { default: Policy };
  return mod.default;
}

const template = (name: string) => readFileSync(join(INIT_TEMPLATE_DIR, name), 'utf8');
const templateScenarios = () => FILES.filter((f) => f.startsWith('scenarios/')).map((f) => scenarioFromFile(join(INIT_TEMPLATE_DIR, f), f));

describe('ctxsim init', () => {
  it('writes the template files into a new folder and says what to run next', async () => {
    const dir = join(tempDir(), 'my-study');
    const r = await init([dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(tree(dir)).toEqual(FILES);
    expect([...INIT_FILES].sort()).toEqual(FILES);
    expect(tree(INIT_TEMPLATE_DIR)).toEqual(FILES);
    for (const f of FILES) expect(readFileSync(join(dir, f), 'utf8'), f).toBe(template(f));
    expect(r.stdout).toBe(`${INIT_FILES.map((f) => `wrote ${join(dir, f)}\n`).join('')}next: cd ${dir} && npx ctxsim run study.yaml\n`);
  });

  it('scaffolds the current folder by default, and names the files as written there', async () => {
    const dir = tempDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await init([]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${INIT_FILES.map((f) => `wrote ${f}\n`).join('')}next: npx ctxsim run study.yaml\n`);
    } finally {
      process.chdir(cwd);
    }
    expect(tree(dir)).toEqual(FILES);
  });

  it('scaffolds a folder that exists, leaving its other files alone', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect((await init([dir])).code).toBe(0);
    expect(tree(dir)).toEqual([...FILES, 'notes.txt'].sort());
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('refuses to overwrite: exit 2, one line naming every file that exists, nothing written', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'policies'));
    writeFileSync(join(dir, 'study.yaml'), 'seed: 1\n');
    writeFileSync(join(dir, 'policies', 'example-policy.mjs'), 'export default {};\n');
    const r = await init([dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`ctxsim: init: ${join(dir, 'study.yaml')}, ${join(dir, 'policies', 'example-policy.mjs')} exist; add --force to overwrite\n`);
    expect(tree(dir)).toEqual(['policies/example-policy.mjs', 'study.yaml']);
    expect(readdirSync(dir).sort()).toEqual(['policies', 'study.yaml']);
    expect(readFileSync(join(dir, 'study.yaml'), 'utf8')).toBe('seed: 1\n');
  });

  it('names a single existing file in the singular', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'seed: 1\n');
    const r = await init([dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`ctxsim: init: ${join(dir, 'study.yaml')} exists; add --force to overwrite\n`);
  });

  it('a DIR that is a file is refused in one line, exit 2', async () => {
    const file = join(tempDir(), 'taken');
    writeFileSync(file, 'mine');
    const r = await init([file]);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(/^ctxsim: cannot write .*taken/);
    expect(readFileSync(file, 'utf8')).toBe('mine');
  });

  it('a subfolder that is a symbolic link inside DIR (leading anywhere) is refused in one line, exit 2, nothing written through it', async () => {
    const dir = tempDir();
    const outside = tempDir();
    symlinkSync(outside, join(dir, 'policies'));
    const r = await init([dir]);
    expect(r.stderr).toBe(`ctxsim: ${join(dir, 'policies', 'example-policy.mjs')}: ${join(dir, 'policies')} is a symbolic link (to ${outside}); refusing to write through it\n`);
    expect(r.code).toBe(2);
    expect(readdirSync(outside)).toEqual([]);
    expect(readdirSync(dir)).toEqual(['policies']);
  });

  it('--force overwrites the files that exist', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'seed: 1\n');
    const r = await init([dir, '--force']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(tree(dir)).toEqual(FILES);
    expect(readFileSync(join(dir, 'study.yaml'), 'utf8')).toBe(template('study.yaml'));
  });

  it('--help describes every option and shows an example', async () => {
    const r = await init(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter((l) => /^\s+--[a-z-]+\s+\[/.test(l))).toEqual([]);
    expect(r.stdout).toMatch(/\nExamples:\n {2}ctxsim init /);
  });
});

describe('the files ctxsim init writes', () => {
  it('each YAML file parses, and each starts with a comment', () => {
    for (const f of FILES.filter((f) => /\.ya?ml$/.test(f))) {
      const doc = parseDocument(template(f));
      expect(doc.errors, f).toEqual([]);
      expect(template(f), f).toMatch(/^# /);
    }
  });

  it('the study and the scenarios name their JSON Schema on their first line, by its published URL', () => {
    expect(template('study.yaml').split('\n')[0]).toBe('# yaml-language-server: $schema=https://unpkg.com/ctxsim/schema/study.schema.json');
    for (const f of FILES.filter((f) => f.startsWith('scenarios/'))) {
      expect(template(f).split('\n')[0], f).toBe('# yaml-language-server: $schema=https://unpkg.com/ctxsim/schema/scenario.schema.json');
    }
  });

  it('the scenarios load, pass their JSON Schema, and probe facts (one with tools)', () => {
    const ajv = new Ajv({ allErrors: true });
    const valid = ajv.compile(scenarioJsonSchema());
    for (const f of FILES.filter((f) => f.startsWith('scenarios/'))) expect(valid(parse(template(f))), `${f}: ${ajv.errorsText(valid.errors)}`).toBe(true);
    const [plants, home] = templateScenarios();
    expect(plants!.id).toBe('plant-shop-order');
    expect(plants!.turns.flatMap((t) => t.probe)).toEqual(['postcode', 'order_id']);
    expect(home!.id).toBe('smart-home-scenes');
    expect(home!.turns.filter((t) => t.tools.length).map((t) => t.index)).toEqual([1, 2, 7]);
    expect(home!.turns.flatMap((t) => t.probe)).toEqual(['scene_id', 'guest']);
  });

  it('the study names the two scenarios, built-in policies, the example policy module and a gate', () => {
    const study = parse(template('study.yaml')) as Record<string, unknown>;
    expect(study.scenarios).toEqual(['scenarios/plant-shop-order.yaml', 'scenarios/smart-home-scenes.yaml']);
    expect(study.policies).toContainEqual({ './policies/example-policy.mjs': { keep: [1, 2] } });
    expect(study.gate).toEqual({ baseline: 'ctxsim-baseline.json', maxCostIncrease: '10%', maxRetentionDrop: '2%' });
    expect(parsePercent('gate.maxCostIncrease', '10%')).toBe(0.1);
    expect(parseRetentionLimit('gate.maxRetentionDrop', '2%')).toEqual({ points: 0.02 });
  });

  it('the study loads, with its policy module, and passes its JSON Schema', async () => {
    const dir = join(tempDir(), 'project');
    expect((await init([dir])).code).toBe(0);
    const ajv = new Ajv({ allErrors: true });
    const valid = ajv.compile(studyJsonSchema());
    expect(valid(parse(template('study.yaml'))), ajv.errorsText(valid.errors)).toBe(true);
    const study = await loadStudy(join(dir, 'study.yaml'));
    expect(study.policies.map((v) => v.name)).toEqual(['full', 'window-turns:turns=3', 'summary-buffer:keepRecent=2', 'facts', 'keep-edges:keep=1', 'keep-edges:keep=2']);
    expect(study.policies.at(-1)!.module?.file).toBe(join(dir, 'policies', 'example-policy.mjs'));
    expect(study.scenarios.map((s) => (s.kind === 'glob' ? s.pattern : s.kind))).toEqual(['scenarios/plant-shop-order.yaml', 'scenarios/smart-home-scenes.yaml']);
    // The gate's limits as the gate holds them (GATE_SPEC), read from what the study writes.
    expect(study.gate).toEqual({ baseline: join(dir, 'ctxsim-baseline.json'), maxCostIncrease: 0.1, maxRetentionDrop: { points: 0.02 } });
    expect(study.out).toBe(join(dir, 'reports'));
  });

  it('the worked example of docs/custom-policies.md prints what the docs show', async () => {
    const dir = join(tempDir(), 'project');
    expect((await init([dir])).code).toBe(0);
    const io = capture();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const args = ['run', '--policy', './policies/example-policy.mjs:keep=1', '--policy', 'full', '--scenario', 'scenarios/plant-shop-order.yaml', '--no-token-cache', '--quiet'];
      expect(await runMain(args, io)).toBe(0);
    } finally {
      process.chdir(cwd);
    }
    const doc = readFileSync(join(ROOT, 'docs', 'custom-policies.md'), 'utf8');
    expect(doc).toContain(`npx ctxsim run --policy ./policies/example-policy.mjs:keep=1 --policy full --scenario scenarios/plant-shop-order.yaml\n`);
    expect(doc).toContain(`\`\`\`\n${io.stdout}\`\`\``);
  });

  it('the workflow checks the example policy against the contract, then the study against its gate, on pull requests', () => {
    const wf = parse(template('.github/workflows/ctxsim.yml')) as { on: unknown; jobs: { gate: { steps: { run?: string }[] } } };
    expect(wf.on).toBe('pull_request');
    // The project's own ctxsim, as its lockfile pins it: never one npx would fetch from the registry.
    expect(wf.jobs.gate.steps.map((s) => s.run).filter(Boolean)).toEqual([
      'npm ci',
      'npx --no -- ctxsim check-policy ./policies/example-policy.mjs',
      'npx --no -- ctxsim check study.yaml --junit gate.xml --out ctxsim-reports',
    ]);
    expect(template('.github/workflows/ctxsim.yml')).not.toContain('--yes');
    expect(template('.github/workflows/ctxsim.yml')).toContain('npx --no -- ctxsim run study.yaml --save-baseline ctxsim-baseline.json\n');
    // `npm ci` installs the pull request's package files, which choose the ctxsim that judges it: the workflow says so to whoever reads it.
    expect(template('.github/workflows/ctxsim.yml')).toContain("# On a pull request they are the pull request's files (and `npm ci` runs the\n# project's install scripts): a change to them chooses the program that\n# judges it, so review it as code.\n");
  });

  it('init, then ctxsim run in that folder writes the reports and exits 0; check passes against its baseline', async () => {
    const dir = join(tempDir(), 'project');
    expect((await init([dir])).code).toBe(0);
    // The one run writes the reports and saves the baseline the study's gate names, as the workflow's comment says to.
    const io = capture();
    const code = await runMain(['run', join(dir, 'study.yaml'), '--save-baseline', join(dir, 'ctxsim-baseline.json'), '--no-token-cache', '--quiet'], io);
    expect(io.stderr).toBe('');
    expect(code).toBe(0);
    expect(io.stdout).toMatch(/^keep-edges\S*keep=1 /m);
    expect(io.stdout).toMatch(/^keep-edges\S*keep=2 /m);
    const reports = join(dir, 'reports');
    for (const f of ['summary.csv', 'policies.csv', 'turns.csv', 'probes.csv', 'report.md', 'report.html', 'results.json']) expect(existsSync(join(reports, f)), f).toBe(true);
    const gate = capture();
    expect(await runMain(['check', join(dir, 'study.yaml'), '--no-token-cache', '--quiet'], gate)).toBe(0);
    expect(gate.stdout).toMatch(/^### ctxsim check: passed/);
    // The workflow's first step, from the project's folder.
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const contract = capture();
      expect(await runMain(['check-policy', './policies/example-policy.mjs'], contract)).toBe(0);
      expect(contract.stdout).toMatch(/^keep-edges keeps the 12 rules of the policy contract on \d+ scenarios\n$/);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('the example policy', () => {
  // The shipped and the template scenarios; fixtures with forget events, injection turns and tools; generated conversations of every profile, each with a forget event and an injection turn.
  const LENGTHS: Record<string, [number, number] | undefined> = { companion: [8, 30], coding: [6, 20] };
  const generated = [...PROFILES.keys()].flatMap((profile) =>
    Array.from({ length: 3 }, (_, k) => {
      const turns = LENGTHS[profile];
      const [c] = generateConversations({ profile, count: 1, seed: 200 + k, prefix: `${profile}-init`, ...(turns && { params: { turns } }) });
      return withSafetyEvents(c!, 3 * k + 2, 5 * k + 1);
    }),
  );
  const conversations = (): Conversation[] => [
    ...allShipped(),
    ...templateScenarios(),
    fixture('safety/forget-and-inject.yaml'),
    fixture('late-order-tools.yaml'),
    ...generated,
  ];

  it('is keep-edges, with one parameter, keep (default 2, at least 0)', async () => {
    const policy = await examplePolicy();
    expect(policy.id).toBe('keep-edges');
    expect(policy.params).toEqual({ keep: { default: 2, kind: 'int', min: 0 } });
    const variants = resolvePolicy(policy, [['keep', [1, 2]]]);
    expect(typeof variants === 'string' ? variants : variants.map((v) => [v.name, v.params.keep])).toEqual([
      ['keep-edges:keep=1', 1],
      ['keep-edges:keep=2', 2],
    ]);
    expect(resolvePolicy(policy, [['keep', -1]])).toBe('policy keep-edges: parameter keep: expected a number ≥ 0, got -1');
  });

  it('keeps the policy contract', async () => {
    const policy = await examplePolicy();
    const variants = [{}, { keep: [0, 1, 3] }, { keep: 1, sessionCap: 3 }, { keep: 1, moderation: 'drop' }, { forget: 'naive' }];
    expect(checkPolicyContract(policy, conversations()).map(formatContractViolation)).toEqual([]);
    expect(checkPolicyContract(policy, conversations(), { variants }).map(formatContractViolation)).toEqual([]);
  });

  it('sends the first and the last `keep` exchanges: a corrected postcode is stale or missing, the order number retained', async () => {
    const policy = await examplePolicy();
    const [plants] = templateScenarios();
    const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'chars4' });
    const outcomes = (keep: number) => {
      const [variant] = resolvePolicy(policy, [['keep', keep]]) as Exclude<ReturnType<typeof resolvePolicy>, string>;
      return replay(plants!, variant!, ctx).probes.map((p) => `${p.turn} ${p.fact} ${p.outcome}`);
    };
    expect(outcomes(1)).toEqual(['7 postcode missing', '8 order_id retained']);
    expect(outcomes(2)).toEqual(['7 postcode stale', '8 order_id retained']);
    expect(outcomes(3)).toEqual(['7 postcode retained', '8 order_id retained']);
  });
});
