import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installPacked, npm } from '../scripts/packed.mjs';
import { INSTALL_SCRIPTS, PREPARE, withoutPrepare, withPrepare } from '../scripts/pack-manifest.mjs';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * ctxsim installed in another project from its packed tarball (as `npm
 * install --save-dev ./ctxsim-X.tgz` lays it out, offline: the runtime
 * dependencies linked from this repository), run from that project as the
 * workflow `ctxsim init` writes runs it: the project's own copy, through
 * `npx --no --`, which never installs one from the registry. Needs `npm run
 * build` first.
 */

let project: string;
/** This repository's package.json before the pack: the pack leaves it as it was. */
let manifest: string;
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;

/** Runs a shell command line in the project (no network: npx may not install anything), its cache the user's cache folder as in the workflow (the suite's is a temp folder). */
function sh(line: string) {
  const r = spawnSync('sh', ['-c', line], { cwd: project, encoding: 'utf8', env: { ...process.env, CTXSIM_CACHE_DIR: '', npm_config_offline: 'true' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'ctxsim-installed-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, devDependencies: { ctxsim: `file:ctxsim-${VERSION}.tgz` } }));
  manifest = readFileSync(join(ROOT, 'package.json'), 'utf8');
  installPacked(project);
}, 120_000);

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('ctxsim installed from its tarball in another project', () => {
  it('the tarball holds the built CLI, the templates, scenarios and schemas, not the sources or tests', () => {
    const r = spawnSync('tar', ['-tzf', join(project, `ctxsim-${VERSION}.tgz`)], { encoding: 'utf8' });
    const files = r.stdout.split('\n');
    for (const f of ['package/dist/cli/main.js', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/templates/init/study.yaml', 'package/templates/init/.github/workflows/ctxsim.yml', 'package/schema/study.schema.json']) {
      expect(files, f).toContain(f);
    }
    expect(files.some((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toBe(false);
    expect(readFileSync(join(ROOT, 'dist', 'cli', 'main.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    // Executable as built: `npx ctxsim` in the checkout runs it as a program (npm makes it so only when it links it, which a cached link skips).
    expect(statSync(join(ROOT, 'dist', 'cli', 'main.js')).mode & 0o111).toBe(0o111);
  });

  it('the tarball runs no script when installed: its package.json has no prepare (the git install’s build) nor any install script; the repository’s is left as it was', () => {
    const r = spawnSync('tar', ['-xzOf', join(project, `ctxsim-${VERSION}.tgz`), 'package/package.json'], { encoding: 'utf8' });
    const packed = JSON.parse(r.stdout) as { scripts: Record<string, string> };
    expect(INSTALL_SCRIPTS.filter((s) => s in packed.scripts)).toEqual([]);
    expect(packed.scripts.build).toBe(JSON.parse(manifest).scripts.build);
    // The repository keeps `prepare` for the git install, and the pack put it back byte for byte.
    expect(readFileSync(join(ROOT, 'package.json'), 'utf8')).toBe(manifest);
    expect(JSON.parse(manifest).scripts.prepare).toBe(PREPARE);
    expect(withPrepare(withoutPrepare(manifest))).toBe(manifest);
    expect(r.stdout).toBe(withoutPrepare(manifest));
  });

  it('the root and every sub-path of its exports resolve from the project, with their type declarations, and export what the built files do', async () => {
    const exports = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports as Record<string, string | { types: string; import: string }>;
    const entries = Object.entries(exports).flatMap(([key, target]) => (typeof target === 'object' ? [{ specifier: key === '.' ? 'ctxsim' : `ctxsim/${key.slice(2)}`, target }] : []));
    expect(entries.length).toBe(11);
    const script = `const out = {}; for (const s of ${JSON.stringify(entries.map((e) => e.specifier))}) out[s] = Object.keys(await import(s)).sort(); console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: project, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const installed = JSON.parse(r.stdout) as Record<string, string[]>;
    for (const { specifier, target } of entries) {
      expect(existsSync(join(project, 'node_modules', 'ctxsim', target.types)), target.types).toBe(true);
      const built = Object.keys(await import(join(ROOT, target.import))).sort();
      expect(built.length, specifier).toBeGreaterThan(0);
      expect(installed[specifier], specifier).toEqual(built);
    }
    expect(installed['ctxsim']).toContain('runStudyPipeline');
    expect(installed['ctxsim/policies']).toContain('blocks');
  });

  it('npx --no -- ctxsim --version runs the project’s copy', () => {
    const r = sh('npx --no -- ctxsim --version');
    expect(r.err).toBe('');
    expect(r.out).toBe(`${VERSION}\n`);
    expect(r.code).toBe(0);
  });

  it('init, then the workflow’s own commands: save a baseline, check the policy, check the study', () => {
    const init = sh('npx --no -- ctxsim init .');
    expect(init.code).toBe(0);
    const workflow = readFileSync(join(project, '.github', 'workflows', 'ctxsim.yml'), 'utf8');
    const steps = (parse(workflow) as { jobs: { gate: { steps: { run?: string }[] } } }).jobs.gate.steps.flatMap((s) => (s.run ? [s.run] : []));
    expect(steps[0]).toBe('npm ci');
    const save = /^# {3}(npx .* --save-baseline ctxsim-baseline\.json)$/m.exec(workflow)![1]!;
    const saved = sh(`${save} --quiet`);
    expect(saved.err).toBe('');
    expect(saved.code).toBe(0);
    expect(existsSync(join(project, 'ctxsim-baseline.json'))).toBe(true);
    for (const step of steps.slice(1)) {
      const r = sh(step);
      expect(r.code, `${step}\n${r.err}`).toBe(0);
    }
    expect(existsSync(join(project, 'gate.xml'))).toBe(true);
    expect(existsSync(join(project, 'ctxsim-reports', 'results.json'))).toBe(true);
    // With no study named, the project's study.yaml, checked against the baseline it names.
    const folder = sh('npx --no -- ctxsim check --quiet');
    expect(folder.err).toMatch(/^ctxsim: note: using study\.yaml, the study in the working folder \(no study file named\)\n/);
    expect([folder.code, folder.out.split('\n')[0]]).toEqual([0, '### ctxsim check: passed']);
  });

  it('npx --no refuses, without installing, where the project has no ctxsim', () => {
    const empty = tempDir('ctxsim-none-');
    const r = spawnSync(npm, ['exec', '--no', '--offline', '--', 'ctxsim', '--version'], { cwd: empty, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain(VERSION);
    expect(existsSync(join(empty, 'node_modules'))).toBe(false);
  });
});
