import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';
import { ctxsim, moduleText, NOAH, project, type Ran } from './_hostile-module.js';
import { builtSince } from './_built.js';

/**
 * A policy module's code never runs on the main thread, nor on a thread a
 * built-in policy runs on: it runs on a thread of its own, which is given
 * what a policy is given and nothing else, and which the run ends with
 * itself. Each hostile module below is written here; the built CLI runs it,
 * and ends within its limits with one line (exit 2) or its output alone,
 * and the process exits.
 */

// The built CLI (dist/), no older than the code these tests are about.
const built = builtSince('policies/module-host.ts');
const COMMON = ['--tokenizer', 'chars4', '--no-token-cache', '--quiet'];
const TIMEOUT = 120_000;





/** Runs the module on noah-amnesia with `flags` and expects exit 2 with `line` alone on stderr, nothing on stdout, and no output folder. */
async function stops(text: string, line: (file: string) => string | RegExp, flags: string[] = []): Promise<void> {
  const { dir, file } = project(text);
  const out = join(dir, 'out');
  const r = await ctxsim(['run', '--scenario', NOAH, '--policy', file, ...COMMON, ...flags, '--out', out]);
  const expected = line(file);
  expect([r.code, r.out], r.err).toEqual([2, '']);
  expect(r.err.split('\n'), r.err).toHaveLength(2);
  if (typeof expected === 'string') expect(r.err).toBe(`ctxsim: ${expected}\n`);
  else expect(r.err).toMatch(expected);
  expect(readdirSync(dir)).toEqual(['hostile.mjs']);
}

/** Runs the module beside `full` on noah-amnesia with `--out -`: exit 0, and stdout is the CSV alone. */
async function runs(text: string, flags: string[] = []): Promise<Ran> {
  const { file } = project(text);
  const r = await ctxsim(['run', '--scenario', NOAH, '--policy', file, '--policy', 'full', ...COMMON, '--policy-timeout', '30', ...flags, '--out', '-']);
  expect([r.code, r.signal], r.err).toEqual([0, null]);
  const lines = r.out.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^scenario,policy,turn,/);
  expect(lines.slice(1).every((l) => l.startsWith('noah-amnesia,hostile,') || l.startsWith('noah-amnesia,full,'))).toBe(true);
  expect(lines).toHaveLength(11);
  return r;
}

const timedOut = (method = 'prompt', turn = 2) => (f: string) => `policy module ${f} (hostile): turn ${turn} of noah-amnesia: ${method} did not return within 1 s (raise the limit with --policy-timeout)`;

describe.skipIf(!built)(`a policy module's code runs on a thread of its own${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
  it(
    'a module that spins on the main thread never spins: its code never runs there',
    async () => {
      await runs(moduleText('', "import { isMainThread } from 'node:worker_threads';\nif (isMainThread) for (;;) {}"));
    },
    TIMEOUT,
  );

  it(
    'SIGINT ends the run while a module spins in a timer it started at its top level',
    async () => {
      // The timer says so on stderr (where a module's console goes) as it starts to spin.
      const { file } = project(moduleText('', "setTimeout(() => { console.error('spinning'); for (;;) {} }, 0);"));
      let sent = 0;
      const r = await ctxsim(['run', '--scenario', NOAH, '--policy', file, ...COMMON, '--policy-timeout', '60', '--out', '-'], undefined, (child) => {
        // Once the module's thread spins (its import has been read, then its timer runs), the main thread still hears the signal.
        child.stderr!.on('data', (d: Buffer) => {
          if (sent || !d.toString().includes('spinning')) return;
          sent = performance.now();
          child.kill('SIGINT');
        });
      });
      expect(sent).toBeGreaterThan(0);
      expect(r.signal ?? r.code).toBe('SIGINT');
      expect(performance.now() - sent).toBeLessThan(20_000);
      expect(r.out).toBe('');
    },
    TIMEOUT,
  );

  it(
    'a top-level setInterval, and a Worker the module starts, do not keep the process alive once the run is over',
    async () => {
      // Both in one module: the process exits only if neither keeps it alive.
      await runs(moduleText('', "import { Worker } from 'node:worker_threads';\nsetInterval(() => {}, 1000);\nnew Worker('setInterval(() => {}, 1000);', { eval: true });"));
    },
    TIMEOUT,
  );

  it(
    "a module's console.log from a timer goes to stderr: stdout is the CSV alone",
    async () => {
      const r = await runs(moduleText('', "setInterval(() => { console.log('tick'); process.stdout.write('tock\\n'); }, 1);"));
      expect(r.out).not.toMatch(/tick|tock/);
    },
    TIMEOUT,
  );

  it.each([
    ['a plan whose getter spins', 'if (info.turn.index === 2) return { get messages() { for (;;) {} } }'],
    ['a proxy plan whose trap spins', 'if (info.turn.index === 2) return new Proxy({}, { get() { for (;;) {} } })'],
    ['a message in its plan whose getter spins', "if (info.turn.index === 2) return { messages: [...head, { role: 'system', get content() { for (;;) {} } }, ...pending], overBudget: false, upkeep: [], stablePrefix: 0 }"],
    ['an error whose message getter spins', "if (info.turn.index === 2) { const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e; }"],
  ])(
    '%s is read within the call’s time: stopped at --policy-timeout',
    async (_, body) => {
      await stops(moduleText(body), timedOut(), ['--policy-timeout', '1']);
    },
    TIMEOUT,
  );

  it(
    'the module’s thread hears nothing but its calls: parentPort, workerData and the environment hold no conversation, annotation or later turn',
    async () => {
      // A module that writes down everything it can reach, and refuses to go on when it finds anything of the conversation there.
      const spy = moduleText(
        `
        while (true) { const m = receiveMessageOnPort(parentPort); if (!m) break; heard.push(m.message); }
        const reached = JSON.stringify({ heard, workerData, env: getEnvironmentData('ctxsim') ?? null });
        for (const secret of ['Noah', 'noah', 'facts', 'probe', 'favorite', 'hiking', 'Who am I']) {
          if (reached.includes(secret)) throw new Error('heard ' + secret + ': ' + reached.slice(0, 200));
        }
        if (heard.length) throw new Error('heard ' + heard.length + ' messages');`,
        `import { getEnvironmentData, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
const heard = [];
parentPort?.on('message', (m) => heard.push(m));`,
      );
      await runs(spy);
    },
    TIMEOUT,
  );

  it(
    'a module that listens on its parentPort does not hold the run; one that waits there for a message is stopped at --policy-timeout',
    async () => {
      await runs(moduleText('', "import { parentPort } from 'node:worker_threads';\nparentPort?.on('message', () => {});"));
      const waits = moduleText("if (info.turn.index === 2) for (;;) { if (receiveMessageOnPort(parentPort)) break; }", "import { parentPort, receiveMessageOnPort } from 'node:worker_threads';");
      await stops(waits, timedOut(), ['--policy-timeout', '1']);
    },
    TIMEOUT,
  );

  it(
    "a module that changes its thread's globals changes no row of a built-in policy: byte-identical with and without it",
    async () => {
      const { dir, file } = project(
        moduleText(
          '',
          `Math.random = () => 0.999;
Date.now = () => 0;
const includes = String.prototype.includes;
String.prototype.includes = function (...args) { return !includes.apply(this, args); };
const parse = JSON.parse;
JSON.parse = (text, ...rest) => { const v = parse(text, ...rest); return typeof v === 'object' && v !== null && !Array.isArray(v) ? { ...v, patched: true } : v; };
Array.prototype.sort = function () { return this.reverse(); };`,
        ),
      );
      const builtIns = ['--policy', 'full', '--policy', 'summary-buffer', '--policy', 'facts', '--policy', 'retrieval'];
      const scenarios = ['--scenario', join(ROOT, 'scenarios', '*.yaml')];
      // Every record, in results.json (a report folder's charts would add nothing here).
      const alone = await ctxsim(['run', ...scenarios, ...builtIns, ...COMMON, '--out', join(dir, 'alone.json')]);
      expect([alone.code, alone.err]).toEqual([0, '']);
      const beside = await ctxsim(['run', ...scenarios, ...builtIns, '--policy', file, ...COMMON, '--policy-timeout', '30', '--out', join(dir, 'beside.json')]);
      expect(beside.code, beside.err).toBe(0);
      type Records = Record<'turns' | 'probes' | 'summary' | 'violations', { policy: string; turn?: number }[]>;
      const records = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Records;
      for (const kind of ['turns', 'probes', 'summary', 'violations'] as const) {
        // Each record as its bytes in the file.
        const builtIn = (name: string) => records(name)[kind].filter((r) => r.policy !== 'hostile').map((r) => JSON.stringify(r));
        expect(builtIn('beside.json'), kind).toEqual(builtIn('alone.json'));
      }
      expect(records('beside.json').turns.some((t) => t.policy === 'hostile' && t.turn === 1)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'a plan of 2,000,000 messages is refused on the module’s thread, within the call’s time',
    async () => {
      await stops(moduleText('if (info.turn.index === 2) return { messages: new Array(2_000_000).fill(pending[0]), overBudget: false, upkeep: [], stablePrefix: 0 }'), (f) => `policy module ${f} (hostile): turn 2 of noah-amnesia: prompt: its plan holds 2000000 messages, more than a prompt may hold (100000)`, [
        '--policy-timeout',
        '30',
      ]);
    },
    TIMEOUT,
  );

  it(
    'buffers outside the heap count against --policy-memory: after a call, and from a timer between calls',
    async () => {
      const during = 'if (info.turn.index === 2) for (let i = 0; i < 5; i++) globalThis.kept = [...(globalThis.kept ?? []), new Uint8Array(50 * 1024 * 1024)]';
      await stops(moduleText(during), (f) => new RegExp(`^ctxsim: policy module ${f} \\(hostile\\): turn 2 of noah-amnesia: prompt: its thread holds 2\\d\\d MB outside its heap \\(array buffers and the like; limited to 64 MB; raise it with --policy-memory\\)\\n$`), [
        '--policy-memory',
        '64',
        '--policy-timeout',
        '30',
      ]);
      // Allocated by a timer after the last call of its first variant (artifacts, at the end of its replay): seen between calls, or after the
      // next variant's first call that follows it.
      const allocates = moduleText('')
        .replace("params: {},", "params: { n: { default: 1, kind: 'int' } },")
        .replace('start(conversation) {', 'start(conversation, params) {')
        .replace('artifacts() { return []; }', 'artifacts() { if (params.n === 1) setTimeout(() => { globalThis.kept = new Uint8Array(200 * 1024 * 1024); }, 0); return []; }');
      const { dir, file } = project(allocates);
      const long = join(ROOT, 'scenarios', 'coding-help-long.yaml');
      const r = await ctxsim(['run', '--scenario', long, '--policy', `${file}:n=1|2`, ...COMMON, '--policy-memory', '64', '--policy-timeout', '30', '--out', join(dir, 'out')]);
      expect([r.code, r.out]).toEqual([2, '']);
      expect(r.err).toMatch(new RegExp(`^ctxsim: policy module ${file} \\(hostile\\): (turn \\d+|before the first turn) of coding-help-long: \\w+: (after it, )?its thread holds 204 MB outside its heap \\(array buffers and the like; limited to 64 MB; raise it with --policy-memory\\)\\n$`));
    },
    TIMEOUT,
  );

  it(
    'a call that fills the process’s memory outside its heap is stopped once the process has grown by twice --policy-memory',
    async () => {
      const fills = "if (info.turn.index === 2) { const kept = []; for (;;) { const b = new Uint8Array(16 * 1024 * 1024); b.fill(1); kept.push(b); if (kept.length > 64) kept.shift(); } }";
      await stops(moduleText(fills), (f) => new RegExp(`^ctxsim: policy module ${f} \\(hostile\\): turn 2 of noah-amnesia: prompt: the process grew by \\d+ MB while it ran \\(a module may use 64 MB of heap and as much outside it; raise it with --policy-memory\\)\\n$`), [
        '--policy-memory',
        '64',
        '--policy-timeout',
        '60',
      ]);
    },
    TIMEOUT,
  );

  it(
    'check-policy and explain run the module on its own thread too: its console on stderr, a spin stopped',
    async () => {
      const { dir, file } = project(moduleText("console.log('from prompt')", "console.log('from the top');"));
      const check = await ctxsim(['check-policy', file, '--scenario', NOAH], dir);
      expect([check.code, check.out], check.err).toEqual([0, 'hostile keeps the 12 rules of the policy contract on 1 scenario\n']);
      expect(check.err).toContain('from prompt\n');
      const explain = await ctxsim(['explain', NOAH, '--policy', file, '--turn', '2', '--tokenizer', 'chars4'], dir);
      expect(explain.code, explain.err).toBe(0);
      expect(explain.out.split('\n')[0]).toBe('noah-amnesia · hostile · turn 2 · gpt-4o-mini · chars4');
      expect(explain.out).not.toContain('from');
      const spin = project(moduleText("if (info.turn.index === 2) { const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e; }"));
      const line = `ctxsim: ${timedOut()(spin.file)}\n`;
      expect(await ctxsim(['check-policy', spin.file, '--scenario', NOAH, '--policy-timeout', '1'], spin.dir)).toMatchObject({ code: 2, out: '', err: line });
      expect(await ctxsim(['explain', NOAH, '--policy', spin.file, '--turn', '3', '--tokenizer', 'chars4', '--policy-timeout', '1'], spin.dir)).toMatchObject({ code: 2, out: '', err: line });
    },
    TIMEOUT,
  );
});
