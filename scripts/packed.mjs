/**
 * Installs the packed package into a project folder the way `npm install
 * --save-dev ./ctxsim-X.tgz` lays it out, without the network: `npm pack`
 * the built package (dist must be built; its prepack script, which builds
 * and leaves out `prepare`, runs without the build), unpack it into
 * `node_modules/ctxsim`, link its runtime dependency closure from this
 * repository's node_modules (no dev dependencies: nothing a consumer would
 * not have) and link its bins into `node_modules/.bin`, executable, as npm
 * does. What it cannot check is npm's resolution of the dependencies from
 * the registry.
 *
 * Used by scripts/check-consumer.mjs and the packed-install test.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** npm, by its name on this platform. */
export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Symlinks `target` at `path` (its folders made); an existing link is kept. */
function link(target, path, type) {
  mkdirSync(dirname(path), { recursive: true });
  try {
    symlinkSync(target, path, type);
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
  }
}

/**
 * Packs the package into `dir` and installs it into `dir/node_modules`;
 * returns the tarball's path and the installed package's folder.
 */
export function installPacked(dir) {
  // As `npm pack` packs it, with its prepack and postpack scripts (scripts/pack-manifest.mjs), but not its build: dist is built.
  const env = { ...process.env, CTXSIM_PACK_BUILT: '1' };
  const tarball = join(dir, execFileSync(npm, ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', env }).trim().split('\n').pop());
  const modules = join(dir, 'node_modules');
  const pkg = join(modules, 'ctxsim');
  mkdirSync(pkg, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1']);
  // The runtime dependency closure, as installed here.
  for (const path of execFileSync(npm, ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').slice(1)) {
    const name = relative(join(ROOT, 'node_modules'), path);
    if (!name.startsWith('..') && !name.includes('node_modules')) link(path, join(modules, name), 'dir');
  }
  const { bin = {} } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  for (const [name, file] of Object.entries(bin)) {
    chmodSync(join(pkg, file), 0o755);
    link(relative(join(modules, '.bin'), join(pkg, file)), join(modules, '.bin', name), 'file');
  }
  return { tarball, pkg };
}

/** Links one package of this repository's node_modules (e.g. `@types/node`) into `dir/node_modules`. */
export function linkDependency(dir, name) {
  link(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
}
