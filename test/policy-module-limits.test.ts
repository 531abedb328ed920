import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeOpenAI } from './_openai-server.js';
import { tempDir } from './_tmp.js';
import { ctxsim, moduleText, NOAH, project } from './_hostile-module.js';
import { builtSince } from './_built.js';

/**
 * Policy modules are foreign code, bounded: a call that never returns or a
 * heap that grows without end stops the run after `--policy-timeout` /
 * `--policy-memory`, an import that never finishes too; a module's console
 * goes to stderr; and nothing a module throws or returns ends as an
 * internal error (exit 70) or Node's exit 13. Each is one line, exit 2,
 * naming the module, the scenario and the turn, with no output left behind.
 * The built CLI runs them (the limits are enforced on its worker threads).
 */

// The built CLI (dist/), no older than the code these tests are about.
const built = builtSince('engine/module-watch.ts');
const COMMON = ['--tokenizer', 'chars4', '--no-token-cache', '--quiet', '--policy-memory', '64'];




const TIMEOUT = 120_000;

describe.skipIf(!built)(`a policy module under limits${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
  /** Runs the module on noah-amnesia with `flags` (after the common ones: `--jobs`, a longer timeout) and expects exit 2 with `line` alone on stderr, no output folder and nothing on stdout. */
  async function stops(text: string, line: (file: string) => string | RegExp, flags: string[] = []): Promise<void> {
    const { dir, file } = project(text);
    const out = join(dir, 'out');
    // A generous limit unless the test is about the limit: a busy machine is slow.
    const timeout = flags.includes('--policy-timeout') ? [] : ['--policy-timeout', '30'];
    const r = await ctxsim(['run', '--scenario', NOAH, '--policy', file, ...COMMON, ...timeout, ...flags, '--out', out]);
    const expected = line(file);
    expect(r.code, r.err).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')).toHaveLength(2);
    if (typeof expected === 'string') expect(r.err).toBe(`ctxsim: ${expected}\n`);
    else expect(r.err).toMatch(expected);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir)).toEqual(['hostile.mjs']);
  }

  // One scenario replays on one worker thread whatever --jobs says (jobs are at most the scenarios): `--jobs 1` and `--jobs 2` would run this same run.
  it(
    'a session method that spins forever is stopped after --policy-timeout, naming module, scenario and turn',
    async () => {
      await stops(moduleText('if (info.turn.index === 3) for (;;) {}'), (f) => `policy module ${f} (hostile): turn 3 of noah-amnesia: prompt did not return within 1 s (raise the limit with --policy-timeout)`, ['--policy-timeout', '1']);
    },
    TIMEOUT,
  );

  it(
    'recording upkeep tries the module first on a watched worker: a module that spins stops the run before any request is sent',
    async () => {
      const server = new FakeOpenAI();
      const url = await server.start();
      try {
        const policy = `${project(moduleText('if (info.turn.index === 3) for (;;) {}')).file}`;
        const r = await ctxsim(['run', '--scenario', NOAH, '--policy', policy, '--policy', 'summary', ...COMMON, '--policy-timeout', '1', '--upkeep', 'record', '--base-url', url, '--cassette', join(tempDir(), 'c.jsonl'), '--out', '-']);
        expect(r.code, r.err).toBe(2);
        expect(r.err).toBe(`ctxsim: policy module ${policy} (hostile): turn 3 of noah-amnesia: prompt did not return within 1 s (raise the limit with --policy-timeout)\n`);
        expect(server.connections).toBe(0);
      } finally {
        await server.stop();
      }
    },
    TIMEOUT,
  );

  it(
    'a module that allocates until it dies is stopped at --policy-memory',
    async () => {
      const grow = 'if (info.turn.index === 2) { const a = []; for (;;) a.push(new Array(1e6).fill(info.turn.index)); }';
      // A heap near its limit collects often: the time limit is made long enough not to come first on a busy machine.
      await stops(moduleText(grow), (f) => `policy module ${f} (hostile): turn 2 of noah-amnesia: prompt: the worker thread ran out of memory (its heap is limited to 64 MB; raise it with --policy-memory)`, ['--policy-timeout', '60']);
    },
    TIMEOUT,
  );

  it(
    'an import that never finishes (a top-level await that never settles, a top-level loop) is exit 2 naming the module, not exit 13 or a hang',
    async () => {
      // The least limit: the import is the module's first call, so a machine too slow to import it within 1 s ends the run with this same line.
      const limit = 'its import did not finish within 1 s (a top-level await that never settles, or a loop; raise the limit with --policy-timeout)';
      await stops(moduleText('', 'await new Promise(() => {});'), (f) => `policy module ${f}: ${limit}`, ['--policy-timeout', '1']);
      await stops(moduleText('', 'for (;;) {}'), (f) => `policy module ${f}: ${limit}`, ['--policy-timeout', '1']);
    },
    TIMEOUT,
  );

  it(
    "a module's console and stdout go to stderr: with --out - stdout is the CSV alone",
    async () => {
      const { file } = project(moduleText("console.log('log line'); console.info('info line'); process.stdout.write('raw line\\n')", "console.log('top line');"));
      const r = await ctxsim(['run', '--scenario', NOAH, '--policy', file, ...COMMON, '--policy-timeout', '30', '--out', '-']);
      expect(r.code, r.err).toBe(0);
      expect(r.out.split('\n')[0]).toMatch(/^scenario,policy,turn,/);
      expect(r.out).not.toMatch(/line/);
      expect(r.err).toContain('log line\ninfo line\nraw line\n');
      expect(r.err).toContain('top line\n');
    },
    TIMEOUT,
  );

  const hostile: [string, string, string][] = [
    ['throws a value that cannot become a string', 'throw Object.create(null)', 'hostile: turn 1 of noah-amnesia: threw: a value that cannot be shown ([object Object])'],
    ['throws an error whose message getter throws', "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw new Error('no'); } }); throw e", 'hostile: turn 1 of noah-amnesia: threw: a value that cannot be shown ([object Error])'],
    ['calls process.exit', 'if (info.turn.index === 2) process.exit(0)', 'hostile: turn 2 of noah-amnesia: threw: called process.exit(0): a policy must not end the process'],
    ['returns a plan whose getter throws', "if (info.turn.index === 2) return { get messages() { throw new Error('getter'); } }", 'hostile: turn 2 of noah-amnesia: what it returned cannot be read: getter'],
    ['returns a proxy that throws', "return new Proxy({}, { get() { throw new Error('trap'); } })", 'hostile: turn 1 of noah-amnesia: what it returned cannot be read: trap'],
    ['returns a bigint stablePrefix', 'return { messages: [...head, ...pending], overBudget: false, upkeep: [], stablePrefix: 0n }', 'hostile: turn 1 of noah-amnesia: what it returned cannot be read: Do not know how to serialize a BigInt'],
    ['rejects a promise it does not await', "if (info.turn.index === 2) Promise.reject(new Error('later'))", /^ctxsim: policy module \S+hostile\.mjs \(hostile\): turn \d of noah-amnesia: \w+: after it, threw outside its calls \(from a timer or a promise it started\): later\n$/.source],
  ];
  it.each(hostile)(
    'a module that %s: exit 2, one line',
    async (_, body, line) => {
      await stops(moduleText(body), () => (line.startsWith('^') ? new RegExp(line) : line));
    },
    TIMEOUT,
  );

  it(
    'a default export whose getter throws, and a top-level process.exit: exit 2 naming the module',
    async () => {
      await stops('export default { get id() { throw 7; }, describe: "x", params: {}, start() {} };\n', (f) => `policy module ${f}: its default export cannot be read: 7`);
      await stops(moduleText('', 'process.exit(0);'), (f) => `policy module ${f}: threw while loading (line 1): called process.exit(0): a policy must not end the process`);
    },
    TIMEOUT,
  );

  it(
    'explain and check-policy stop a spinning module too',
    async () => {
      const { dir, file } = project(moduleText('if (info.turn.index === 3) for (;;) {}'));
      const line = (scenario: string) => `ctxsim: policy module ${file} (hostile): turn 3 of ${scenario}: prompt did not return within 1 s (raise the limit with --policy-timeout)\n`;
      const explain = await ctxsim(['explain', NOAH, '--policy', file, '--turn', '4', '--tokenizer', 'chars4', '--policy-timeout', '1'], dir);
      expect([explain.code, explain.out, explain.err]).toEqual([2, '', line('noah-amnesia')]);
      const check = await ctxsim(['check-policy', file, '--scenario', NOAH, '--policy-timeout', '1'], dir);
      expect([check.code, check.out, check.err]).toEqual([2, '', line('noah-amnesia')]);
    },
    TIMEOUT,
  );
});
