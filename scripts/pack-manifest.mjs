#!/usr/bin/env node
/**
 * Keeps the `prepare` script out of the packed package, so that installing
 * a tarball runs no script of ctxsim's.
 *
 * `prepare` (`npm run build`) is there for the git install: npm clones the
 * repository, installs its dev dependencies and runs `prepare`, which
 * compiles `dist/`. A tarball already holds `dist/`, yet npm lists a
 * `prepare` in a tarball's package.json among the install scripts to
 * approve (npm 11: "1 package has install scripts not yet covered by
 * allowScripts"). So `npm pack` and `npm publish` build and then take it
 * out (`prepack`), and put it back once the tarball is made (`postpack`):
 *
 *   node scripts/pack-manifest.mjs prepack    # npm run build, then package.json without `prepare`
 *   node scripts/pack-manifest.mjs postpack   # package.json with `prepare` again
 *
 * `CTXSIM_PACK_BUILT=1` skips the build (`dist/` is built already: the
 * tests pack it while other tests run it). Each step rewrites package.json
 * whole, by a rename, and does nothing when it is already done: after a
 * pack that failed between the two, `postpack` (or the next pack) puts it
 * right.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The script a git install runs, which a packed package leaves out. */
export const PREPARE = 'npm run build';

/** npm's scripts that run when a package is installed, as npm 11 lists them for approval (`prepare` for a tarball, a folder or git). */
export const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/** package.json's text without `scripts.prepare` (the same text when it has none); every other byte as it was. */
export function withoutPrepare(text) {
  const pkg = JSON.parse(text);
  if (pkg.scripts?.prepare === undefined) return text;
  if (pkg.scripts.prepare !== PREPARE) throw new Error(`package.json: scripts.prepare is "${pkg.scripts.prepare}", not "${PREPARE}": update scripts/pack-manifest.mjs`);
  delete pkg.scripts.prepare;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** package.json's text with `scripts.prepare` back in its place, after `build` (the same text when it has it). */
export function withPrepare(text) {
  const pkg = JSON.parse(text);
  if (pkg.scripts?.prepare !== undefined) return text;
  const scripts = {};
  for (const [name, body] of Object.entries(pkg.scripts ?? {})) {
    scripts[name] = body;
    if (name === 'build') scripts.prepare = PREPARE;
  }
  scripts.prepare ??= PREPARE;
  return `${JSON.stringify({ ...pkg, scripts }, null, 2)}\n`;
}

/** Rewrites `file` with `change(text)` by a rename, when that differs. */
function rewrite(file, change) {
  const text = readFileSync(file, 'utf8');
  const next = change(text);
  if (next === text) return;
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, next);
  renameSync(temp, file);
}

function main(step) {
  const file = join(ROOT, 'package.json');
  if (step === 'prepack') {
    // The npm that runs this lifecycle script, as it names itself (npm.cmd on Windows is not a file execFile runs).
    const npm = process.env.npm_execpath;
    if (process.env.CTXSIM_PACK_BUILT !== '1') execFileSync(npm ? process.execPath : 'npm', [...(npm ? [npm] : []), 'run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    rewrite(file, withoutPrepare);
  } else if (step === 'postpack') rewrite(file, withPrepare);
  else {
    process.stderr.write('pack-manifest: expected prepack or postpack\n');
    process.exit(2);
  }
}

// Run only when invoked as a script (tests import the functions).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main(process.argv[2]);
