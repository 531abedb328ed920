import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The built CLI loads a command's implementation, and the parts of the
 * library it needs, only when that command runs: `--help` and `--version`
 * load the commands' wiring alone, `run --help` the policies its --policy
 * help lists but not the run, `import --help` the importers its flags are
 * read from but not the import, `prices` its own implementation and no other
 * command's. A module hook in the child lists the ES modules it loads.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** The built CLI is current when its wiring is no older than its sources. */
const built = ['_app', 'commands/run', 'commands/prices', 'commands/import'].every((f) => {
  const js = join(ROOT, 'dist', 'cli', `${f}.js`);
  return existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', 'cli', `${f}.ts`)).mtimeMs;
});
const why = built ? '' : ' (skipped: dist/ is missing or stale; npm run build)';

const HOOKS = "export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write(`loaded ${url}\\n`); return next(url, context); }";
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/** The built CLI's exit code for `args`, the modules of dist/ it loaded (as `cli/_app.js`), and the packages. */
function loaded(...args: string[]): { code: number | null; modules: string[]; packages: string[] } {
  const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, MAIN, ...args], { cwd: tempDir(), encoding: 'utf8' });
  const paths = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('loaded file:'))
    .map((l) => fileURLToPath(l.slice('loaded '.length)));
  const dist = join(ROOT, 'dist') + sep;
  const modules = paths.filter((p) => p.startsWith(dist)).map((p) => p.slice(dist.length).split(sep).join('/'));
  const packages = paths.flatMap((p) => /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(p)?.[1] ?? []);
  return { code: r.status, modules: [...new Set(modules)].sort(), packages: [...new Set(packages)].sort() };
}

/** The command implementations among the modules: dist/cli's files but main.js, the private `_` ones and the wiring in commands/. */
const implementations = (modules: readonly string[]) => modules.filter((m) => /^cli\/[a-z][^/]*\.js$/.test(m) && m !== 'cli/main.js');

describe(`what the built CLI loads${why}`, () => {
  it.skipIf(!built)('--help and --version: the wiring of every command, no implementation, study, policy or schema package', () => {
    for (const args of [['--help'], ['--version']]) {
      const { code, modules, packages } = loaded(...args);
      expect(code).toBe(0);
      expect(modules).toContain('cli/commands/run.js');
      expect(modules).toContain('cli/commands/prices.js');
      expect(implementations(modules)).toEqual([]);
      expect(modules.filter((m) => /^(policies|engine\/run|study\/(study|pipeline)|records\/(?!table-sort\.js)|report\/)/.test(m))).toEqual([]);
      expect(packages).toContain('yargs');
      expect(packages.filter((p) => ['zod', 'yaml', 'js-tiktoken', 'tinyglobby'].includes(p))).toEqual([]);
    }
  });

  it.skipIf(!built)('run --help: the policies its --policy help lists, not the run', () => {
    const { code, modules } = loaded('run', '--help');
    expect(code).toBe(0);
    expect(modules).toContain('cli/_study-options.js');
    expect(modules).toContain('policies/index.js');
    expect(implementations(modules)).toEqual([]);
    expect(modules.filter((m) => /^study\/(study|pipeline)\.js$/.test(m))).toEqual([]);
  });

  it.skipIf(!built)('import --help: the importers its flags are read from, not the import', () => {
    const { code, modules } = loaded('import', '--help');
    expect(code).toBe(0);
    expect(modules).toContain('scenario/import/index.js');
    expect(modules).toContain('cli/_import-flags.js');
    expect(implementations(modules)).toEqual([]);
    expect(modules.filter((m) => /^(policies|engine\/run|study\/(study|pipeline|billed))/.test(m))).toEqual([]);
  });

  it.skipIf(!built)('prices: its own implementation and no other command’s, nor the study pipeline', () => {
    const { code, modules } = loaded('prices', 'gpt-4o-mini');
    expect(code).toBe(0);
    expect(implementations(modules)).toEqual(['cli/prices.js']);
    expect(modules).not.toContain('study/pipeline.js');
  });
});
