import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CtxsimError } from '../src/errors.js';
import { isPolicyPath, loadPolicyModule } from '../src/policies/module.js';
import type { Given } from '../src/policies/module-link.js';
import { resolvePolicy } from '../src/policies/spec.js';
import { tempDir } from './_tmp.js';

/**
 * Policy modules named by path: the documented shapes load (a parameter
 * table, a zod object of the repo's zod or of a copy of its own), and each
 * kind of bad module is one line naming the file and what is wrong.
 */

const FIXTURES = fileURLToPath(new URL('./fixtures/policies/', import.meta.url));

/** Loads a module as a run does (on a thread of its own), resolving the sets of parameters `given`. */
const loadFile = (file: string, shown: string, given: Given[] = []) => loadPolicyModule(file, shown, { given });

/** Loads a fixture module, named as the user would write it. */
const load = (name: string, given: Given[] = []) => loadFile(join(FIXTURES, name), `./policies/${name}`, given);

/** The error a load fails with: its message, code and exit code. */
async function failure(loading: Promise<unknown>): Promise<[string, string, number]> {
  const e: unknown = await loading.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(e instanceof CtxsimError)) throw new Error(`expected a CtxsimError, got ${String(e)}`);
  return [e.message, e.code, e.exitCode];
}

/** Writes a module into a temp folder; returns its path. */
function write(source: string, name = 'policy.mjs', dir = tempDir()): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

describe('isPolicyPath', () => {
  it.each([
    ['./policies/keep-edges.mjs', true],
    ['../keep-edges.mjs', true],
    ['/home/me/keep-edges.mjs', true],
    ['./keep-edges', true],
    ['policies/keep-edges.js', true],
    ['keep-edges.mjs', true],
    ['keep-edges.cjs', true],
    ['keep-edges', false],
    ['window-tokens', false],
    ['summary-buffer', false],
  ])('%s → %s', (name, path) => {
    expect(isPolicyPath(name)).toBe(path);
  });
});

describe('a good module', () => {
  it('of the parameter-table shape, no imports: its variants resolve, its parameters read from text', async () => {
    const m = await load('keep-edges.mjs', [[['keep', ['0', '1']]], [['keep', '-1']]]);
    expect(m.policy.id).toBe('keep-edges');
    expect(m.file).toBe(join(FIXTURES, 'keep-edges.mjs'));
    expect(m.hash).toMatch(/^[0-9a-f]{64}$/);
    const variants = resolvePolicy(m.policy, [['keep', ['0', '1']]]);
    if (typeof variants === 'string') throw new Error(variants);
    expect(variants.map((v) => [v.name, v.params.keep])).toEqual([
      ['keep-edges:keep=0', 0],
      ['keep-edges:keep=1', 1],
    ]);
    expect(resolvePolicy(m.policy, [])).toMatchObject([{ name: 'keep-edges', params: { keep: 2, forget: 'cascade' } }]);
    expect(resolvePolicy(m.policy, [['keep', '-1']])).toBe('policy keep-edges: parameter keep: expected a number ≥ 0, got "-1"');
  });

  it('with a zod object of the zod it imports', async () => {
    const m = await load('last-turns.mjs', [[['turns', '3']], [['turns', '1.5']]]);
    expect(resolvePolicy(m.policy, [['turns', '3']])).toMatchObject([{ name: 'last-turns:turns=3', params: { turns: 3 } }]);
    expect(resolvePolicy(m.policy, [['turns', '1.5']])).toBe('policy last-turns: parameter turns: expected a whole number, got "1.5"');
  });

  it('with a zod object of its own copy of zod (not the instance ctxsim imports)', async () => {
    const dir = tempDir();
    const zod = fileURLToPath(new URL('../node_modules/zod', import.meta.url));
    mkdirSync(join(dir, 'node_modules'));
    // What Node loads of it (its package.json and JavaScript), not its sources and type declarations: a tenth of the files.
    cpSync(zod, join(dir, 'node_modules', 'zod'), { recursive: true, filter: (f) => !f.endsWith('.ts') && !f.endsWith('.cts') && !f.endsWith('.md') && !f.includes('/zod/src') });
    const m = await loadFile(write(`import { z } from 'zod';\nexport default { id: 'own-zod', describe: 'its own zod', params: z.object({ turns: z.number().int().min(0).default(2) }), start: () => ({}) };\n`, 'own.mjs', dir), './own.mjs', [[['turns', '3']], [['turns', '-1']]]);
    expect(resolvePolicy(m.policy, [['turns', '3']])).toMatchObject([{ name: 'own-zod:turns=3', params: { turns: 3 } }]);
    expect(resolvePolicy(m.policy, [['turns', '-1']])).toBe('policy own-zod: parameter turns: expected a number ≥ 0, got "-1"');
  });

  it('in CommonJS (.cjs): module.exports is the default export', async () => {
    const file = write(`module.exports = { id: 'cjs-policy', describe: 'CommonJS', params: { n: { default: 1, kind: 'int' } }, start: () => ({}) };\n`, 'policy.cjs');
    expect((await loadFile(file, './policy.cjs')).policy.id).toBe('cjs-policy');
  });

  it('its hash is the sha256 of its bytes, and a changed file is loaded again', async () => {
    const dir = tempDir();
    const source = (describe: string) => `export default { id: 'changing', describe: '${describe}', params: {}, start: () => ({}) };\n`;
    const file = write(source('first'), 'changing.mjs', dir);
    const first = await loadFile(file, './changing.mjs');
    expect((await loadFile(file, './changing.mjs')).hash).toBe(first.hash);
    write(source('second'), 'changing.mjs', dir);
    const second = await loadFile(file, './changing.mjs');
    expect(second.hash).not.toBe(first.hash);
    expect(second.policy.describe).toBe('second');
  });
});

describe('a bad module is one line naming the file and what is wrong (exit 2)', () => {
  it('a missing file', async () => {
    expect(await failure(load('nope.mjs'))).toEqual(['policy module ./policies/nope.mjs: no such file', 'policy-module', 2]);
  });

  it('a folder', async () => {
    expect(await failure(loadFile(tempDir(), './policies/'))).toEqual(['policy module ./policies/: is a folder, not a regular file', 'policy-module', 2]);
  });

  it('a syntax error, at its line (Node gives none for one found while parsing: node --check finds it)', async () => {
    const file = write("export default {\n  id: 'broken',\n  start() { return 1 +; },\n};\n");
    expect((await failure(loadFile(file, './broken.mjs')))[0]).toBe("policy module ./broken.mjs: syntax error (line 3): Unexpected token ';'");
  });

  it('a module that throws while loading: its message and line', async () => {
    expect((await failure(load('throws.mjs')))[0]).toBe('policy module ./policies/throws.mjs: threw while loading (line 2): KEEP_EDGES_CONFIG is not set');
  });

  it('a module that imports what is not installed', async () => {
    const [message] = await failure(loadFile(write("import 'no-such-package-here';\nexport default {};\n"), './imports.mjs'));
    expect(message).toMatch(/^policy module \.\/imports\.mjs: threw while loading: Cannot find package 'no-such-package-here' imported from /);
  });

  it('no default export', async () => {
    expect((await failure(load('no-default.mjs')))[0]).toBe('policy module ./policies/no-default.mjs: no default export (expected `export default { id, describe, params, start }`)');
  });

  it('a bad id', async () => {
    expect((await failure(load('bad-id.mjs')))[0]).toBe(
      'policy module ./policies/bad-id.mjs: id must be a string of lower-case letters, digits and dashes, starting with a letter or digit (such as "keep-edges"), got "Keep Edges"',
    );
  });

  it('no start', async () => {
    expect((await failure(load('no-start.mjs')))[0]).toBe('policy module ./policies/no-start.mjs: start must be a function (conversation, params, deps) => session, got undefined');
  });

  it('a parameter of an unknown kind', async () => {
    expect((await failure(load('bad-param.mjs')))[0]).toBe('policy module ./policies/bad-param.mjs: params.keep.kind: expected one of int, number, string, boolean, duration, probability');
  });

  it.each([
    ['export default 42;', 'the default export is a number, not a policy { id, describe, params, start }'],
    ["export default { id: 'p', describe: 3, params: {}, start() {} };", 'describe must be a string (one line for --help), got 3'],
    ["export default { id: 'p', describe: 'd', start() {} };", 'params must be a zod object or a parameter table { name: { default, kind, min?, oneOf? } }, got undefined'],
    ["export default { id: 'p', describe: 'd', params: { keep: 2 }, start() {} };", 'params.keep: expected an object { default, kind, min?, oneOf? }'],
    ["export default { id: 'p', describe: 'd', params: { keep: { kind: 'int', defualt: 2 } }, start() {} };", 'params.keep: unknown field defualt (expected default, kind, min, oneOf)'],
    ["export default { id: 'p', describe: 'd', params: { keep: { kind: 'int', default: 'two' } }, start() {} };", 'params.keep.default: expected a whole number, got "two"'],
    ["export default { id: 'p', describe: 'd', params: { keep: { kind: 'int', default: -1, min: 0 } }, start() {} };", 'params.keep.default: expected a number ≥ 0, got -1'],
    ["export default { id: 'p', describe: 'd', params: { mode: { kind: 'string', default: 'c', oneOf: ['a', 'b'] } }, start() {} };", 'params.mode.default: expected one of a|b, got "c"'],
    ["export default { id: 'p', describe: 'd', params: { mode: { kind: 'string', oneOf: 'a' } }, start() {} };", 'params.mode.oneOf: expected a list of strings'],
    ["export default { id: 'p', describe: 'd', params: { mode: { kind: 'string', oneOf: ['a', 2] } }, start() {} };", 'params.mode.oneOf.1: expected a list of strings'],
    // A common parameter declared again would be passed over (the common one wins), its default never given.
    [
      "export default { id: 'p', describe: 'd', params: { sessionCap: { kind: 'int', default: 20, min: 1 } }, start() {} };",
      "params.sessionCap: every policy takes sessionCap already, as a common parameter (sessionCap, forget, moderation); give the policy's own parameter another name",
    ],
    [
      "export default { id: 'p', describe: 'd', params: { _zod: {}, shape: { forget: {} } }, start() {} };",
      "params.forget: every policy takes forget already, as a common parameter (sessionCap, forget, moderation); give the policy's own parameter another name",
    ],
    // A parameter's name is written in the policy's name (id:name=value,…) and in study files: a name, not any text.
    [
      "export default { id: 'p', describe: 'd', params: { 'keep,edges': { kind: 'int', default: 1 } }, start() {} };",
      'params: a parameter\'s name is a letter, then letters, digits or _ (such as keepRecent), got "keep,edges"',
    ],
    ["export default { id: 'p', describe: 'd', params: { _zod: {}, shape: { 'max age': {} } }, start() {} };", 'params: a parameter\'s name is a letter, then letters, digits or _ (such as keepRecent), got "max age"'],
    ["export default { id: 'p', describe: 'd', params: { '': { kind: 'int' } }, start() {} };", 'params: a parameter\'s name is a letter, then letters, digits or _ (such as keepRecent), got ""'],
    ["export default { id: 'p', describe: 'd', params: { _def: {}, shape: {} }, start() {} };", 'params is a zod 3 schema: ctxsim reads zod 4 (import { z } from "zod" with zod 4 installed)'],
  ])('%s', async (source, what) => {
    expect((await failure(loadFile(write(`${source}\n`), './p.mjs')))[0]).toBe(`policy module ./p.mjs: ${what}`);
  });
});
