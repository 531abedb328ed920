import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture, cli, expectUsage } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Every way the CLI used to crash with a stack trace ends as one line on
 * stderr and exit 2 (bad usage or input), 70 (a bug), or quietly (a reader
 * that stops early). Exit 1 is only a tripped gate.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'email-correction.yaml');
/** A short study run: one scenario, one policy, nothing written outside the test's folder. */
const SMALL = ['--scenario', SCENARIO, '--policy', 'full', '--no-token-cache', '--quiet'];

describe('a reader that stops early ends the output quietly (the built CLI)', () => {
  const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
  const built = existsSync(MAIN) && statSync(MAIN).mtimeMs >= statSync(join(ROOT, 'src', 'cli', '_io.ts')).mtimeMs;

  /** Runs the built CLI with its stdout closed before it writes anything, as `| head -0` does. */
  function closedEarly(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
    return new Promise((done, fail) => {
      const child = spawn(process.execPath, [MAIN, ...args], { cwd: tempDir(), stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      child.on('error', fail);
      child.on('close', (code) => done({ code, stderr }));
    });
  }

  it.skipIf(!built)(`prices --all, generate and run --out -: exit 0, nothing on stderr${built ? '' : ' (skipped: dist/ is missing or stale)'}`, async () => {
    const results = await Promise.all([
      closedEarly(['prices', '--all']),
      closedEarly(['generate', '--profile', 'support', '--count', '2']),
      closedEarly(['run', '--out', '-', ...SMALL]),
    ]);
    expect(results).toEqual([
      { code: 0, stderr: '' },
      { code: 0, stderr: '' },
      { code: 0, stderr: '' },
    ]);
  });
});

describe('a flag that takes one value, given twice', () => {
  it.each([
    [['run', '--out', 'a', '--out', 'b'], 'ctxsim: --out: give --out once (got a, b)'],
    [['run', '--cache', 'off', '--cache', 'auto'], 'ctxsim: --cache: give --cache once (got off, auto)'],
    [['check', '--baseline', 'a.json', '--baseline', 'b.json'], 'ctxsim: --baseline: give --baseline once (got a.json, b.json)'],
    [['check', '--junit', 'a.xml', '--junit', 'b.xml'], 'ctxsim: --junit: give --junit once (got a.xml, b.xml)'],
    [['prices', '--study', 'a.yaml', '--study', 'b.yaml'], 'ctxsim: --study: give --study once (got a.yaml, b.yaml)'],
    [['explain', SCENARIO, '--turn', '1', '--policy', 'full', '--policy', 'window'], 'ctxsim: --policy: give --policy once (got full, window)'],
  ])('%j', async (args, line) => {
    await expectUsage(args, line);
  });

  it('--token-cache and --no-token-cache still take a list: the last wins', async () => {
    const dir = tempDir();
    const { code, err } = await cli('run', '--out', '-', '--scenario', SCENARIO, '--policy', 'full', '--quiet', '--token-cache', join(dir, 'cache'), '--no-token-cache');
    expect([code, err]).toEqual([0, '']);
    expect(existsSync(join(dir, 'cache'))).toBe(false);
  });
});

describe('a flag with nothing to name', () => {
  it('an empty --policy or --model is refused, not read as the study\'s', async () => {
    await expectUsage(['run', '--scenario', SCENARIO, '--policy', '', '--out', '-'], 'ctxsim: --policy: name a policy, e.g. --policy window-tokens:budget=2000');
    await expectUsage(['run', '--scenario', SCENARIO, '--model', ' ', '--out', '-'], 'ctxsim: --model: name a chat model, e.g. --model gpt-4o-mini');
  });

  it('a file as the cache folder is refused before the run, for run and cache alike', async () => {
    const file = join(tempDir(), 'p1.json');
    writeFileSync(file, '{}');
    await expectUsage(['run', ...SMALL.slice(0, 4), '--token-cache', file, '--out', '-'], `ctxsim: --token-cache ${file}: a file, not a folder`);
    await expectUsage(['cache', 'info', '--token-cache', file], `ctxsim: --token-cache ${file}: a file, not a folder`);
    expect(readFileSync(file, 'utf8')).toBe('{}');
  });
});

describe('run --out and --format', () => {
  it('--format md without --out prints to stdout, never a file named reports', async () => {
    const dir = tempDir();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, `scenarios: [${JSON.stringify(SCENARIO)}]\npolicies: [full]\n`);
    const { code, out, err } = await cli('run', study, '--format', 'md', '--no-token-cache', '--quiet');
    expect([code, err]).toEqual([0, '']);
    expect(out).toMatch(/^# /);
    expect(existsSync(join(dir, 'reports'))).toBe(false);
  });

  it('an unknown extension lists the accepted ones', async () => {
    const dir = tempDir();
    await expectUsage(
      ['run', '--out', join(dir, 'report.pdf'), ...SMALL],
      `ctxsim: --out ${join(dir, 'report.pdf')}: unknown file type .pdf; name a file ending in .csv, .json, .md (.markdown), .html (.htm), - for stdout, or a folder (end it with /)`,
    );
  });

  it('a file where the reports need a folder, /dev/null, a folder below a file', async () => {
    const dir = tempDir();
    const file = join(dir, 'notes');
    writeFileSync(file, 'x');
    await expectUsage(
      ['run', '--out', file, ...SMALL],
      `ctxsim: --out ${file}: is a file; the reports need a folder (or name one file ending in .csv, .json, .md (.markdown), .html (.htm))`,
    );
    await expectUsage(
      ['run', '--out', '/dev/null', ...SMALL],
      'ctxsim: --out /dev/null: is not a folder (a device or special file); the reports need a folder (or name one file ending in .csv, .json, .md (.markdown), .html (.htm))',
    );
    await expectUsage(['run', '--out', '/dev/null', '--format', 'csv', ...SMALL], 'ctxsim: --out /dev/null: is not a regular file (a device or special file); name a file or a folder');
    await expectUsage(['run', '--out', join(file, 'sub', 'x.csv'), ...SMALL], `ctxsim: --out ${join(file, 'sub', 'x.csv')}: ${file} is a file, not a folder`);
    await expectUsage(
['merge', dir, '--out', '/dev/null'], 'ctxsim: --out /dev/null: is not a folder (a device or special file); the reports need a folder');
    // generate and import write scenario files there, not reports.
    await expectUsage(['generate', '--profile', 'support', '--count', '1', '--out', file], `ctxsim: --out ${file}: is a file; the scenario files need a folder`);
    await expectUsage(['import', '--format', 'sgd', 'test/fixtures/import/sgd-sample.json', '--out', file], `ctxsim: --out ${file}: is a file; the scenario files need a folder`);
  });

  it.skipIf(process.getuid?.() === 0)('a read-only folder (skipped as root, who may write anywhere)', async () => {
    const dir = join(tempDir(), 'ro');
    mkdirSync(dir);
    chmodSync(dir, 0o555);
    await expectUsage(['run', '--out', join(dir, 'reports'), ...SMALL], `ctxsim: --out ${join(dir, 'reports')}: cannot write in ${dir}: permission denied (EACCES)`);
    chmodSync(dir, 0o755);
  });

  it('a write that fails on the way names the path and the reason', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'x');
    await expectUsage(['generate', '--profile', 'support', '--count', '1', '--out', join(dir, 'file', 'sub')], `ctxsim: --out ${join(dir, 'file', 'sub')}: ${join(dir, 'file')} is a file, not a folder`);
  });

  it('a file flag ending with / names a folder: refused, never a file of the folder\'s name', async () => {
    const dir = tempDir();
    await expectUsage(['run', '--out', join(dir, 'r'), '--save-baseline', `${join(dir, 'base')}/`, ...SMALL], `ctxsim: --save-baseline ${join(dir, 'base')}/: ends with /, which names a folder; name a file`);
    await expectUsage(['check', '--baseline', join(dir, 'none.json'), '--junit', `${join(dir, 'junit')}/`, ...SMALL], `ctxsim: --junit ${join(dir, 'junit')}/: ends with /, which names a folder; name a file`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a scenario id too long for a file name: the file, that it cannot be written, and why (not "cannot read")', async () => {
    const dir = tempDir();
    const prefix = 'p'.repeat(300);
    await expectUsage(
      ['generate', '--profile', 'support', '--count', '1', '--prefix', prefix, '--out', join(dir, 'out')],
      `ctxsim: ${join(dir, 'out', `${prefix}-0001.yaml`)}: the name is too long for a file (310 bytes; ENAMETOOLONG); cannot write it`,
    );
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });
});

describe('GITHUB_STEP_SUMMARY that cannot be written', () => {
  it('is a warning; the gate passes with exit 0', async () => {
    const dir = tempDir();
    const baseline = join(dir, 'baseline.json');
    expect((await cli('run', '--out', '-', '--save-baseline', baseline, ...SMALL)).code).toBe(0);
    const before = process.env.GITHUB_STEP_SUMMARY;
    process.env.GITHUB_STEP_SUMMARY = join(dir, 'missing', 'summary.md');
    try {
      const { code, err } = await cli('check', '--baseline', baseline, ...SMALL);
      expect(err).toBe(`ctxsim: warning: cannot append to GITHUB_STEP_SUMMARY ${join(dir, 'missing', 'summary.md')}: ENOENT\n`);
      expect(code).toBe(0);
    } finally {
      if (before === undefined) delete process.env.GITHUB_STEP_SUMMARY;
      else process.env.GITHUB_STEP_SUMMARY = before;
    }
  });
});

describe('YAML aliases are errors at file:line:col', () => {
  const BOMB = ['a: &a [x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]', 'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]', ''].join('\n');
  const BOMB_LINE = 'aliases expand too often (over 1000 copies, as in an alias bomb); write the values out';

  it('in a scenario: undefined, self-referencing, a bomb', async () => {
    const dir = tempDir();
    const write = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const undef = write('undef.yaml', 'id: x\nturns:\n  - user: *nope\n');
    await expectUsage(['explain', undef, '--policy', 'full', '--turn', '1'], `ctxsim: ${undef}:3:11: alias *nope names no anchor &nope before it`);
    const self = write('self.yaml', 'id: x\nturns: &t\n  - user: hi\n  - *t\n');
    await expectUsage(['explain', self, '--policy', 'full', '--turn', '1'], `ctxsim: ${self}:4:5: alias *t is inside the node &t it names (a cycle)`);
    const bomb = write('bomb.yaml', `${BOMB}id: x\nturns:\n  - user: hi\n`);
    await expectUsage(['explain', bomb, '--policy', 'full', '--turn', '1'], `ctxsim: ${bomb}:2:8: ${BOMB_LINE}`);
  });

  it('in a study, a price table and an annotation file', async () => {
    const dir = tempDir();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, 'policies: &p [full, *p]\n');
    await expectUsage(['run', study, '--out', '-'], `ctxsim: ${study}:1:21: alias *p is inside the node &p it names (a cycle)`);
    writeFileSync(study, 'args: &x {a: 1, self: *x}\n');
    await expectUsage(['run', study, '--out', '-'], `ctxsim: ${study}:1:23: alias *x is inside the node &x it names (a cycle)`);
    const prices = join(dir, 'prices.json');
    writeFileSync(prices, `${BOMB}gpt-4o-mini: {input_cost_per_token: 1.0e-7}\n`);
    await expectUsage(['prices', '--prices', prices], `ctxsim: ${prices}:2:8: price table: ${BOMB_LINE}`);
    const notes = join(dir, 'notes.yaml');
    writeFileSync(notes, 'conv-1:\n  facts: *nope\n');
    const chats = join(ROOT, 'test', 'fixtures', 'import', 'openai-chats.jsonl');
    await expectUsage(['import', chats, '--format', 'openai', '--annotations', notes], `ctxsim: ${notes}:2:10: alias *nope names no anchor &nope before it`);
  });
});

describe('names inherited from Object.prototype are names like any other', () => {
  it('a policy parameter, a policy id, a generator parameter', async () => {
    await expectUsage(['explain', SCENARIO, '--policy', 'full:toString=1', '--turn', '1'], 'ctxsim: --policy full:toString=1: policy full: unknown parameter "toString" (expected one of sessionCap, forget, moderation)');
    await expectUsage(['explain', SCENARIO, '--policy', 'constructor', '--turn', '1'], /^ctxsim: --policy constructor: unknown policy "constructor" \(expected one of full, /);
    await expectUsage(['generate', '--profile', 'support', '--set', '__proto__=1'], 'ctxsim: --set __proto__: unknown key "__proto__"');
    await expectUsage(['generate', '--profile', 'support', '--set', 'toString=1'], 'ctxsim: --set toString: unknown key "toString"');
  });

  it('facts named __proto__ and toString are stated, kept and probed like any other', async () => {
    const dir = tempDir();
    const file = join(dir, 'proto.yaml');
    const text = readFileSync(SCENARIO, 'utf8').replace('facts: {name: Kavya, order_id: SE-10423}', 'facts: {__proto__: Kavya, toString: SE-10423}');
    writeFileSync(file, text.replace(/probe: \[[^\]]*\]/, 'probe: [__proto__, toString]'));
    const { code, out, err } = await cli('run', '--scenario', file, '--policy', 'facts', '--out', '-', '--format', 'json', '--no-token-cache', '--quiet');
    expect([code, err]).toEqual([0, '']);
    expect([...out.matchAll(/"fact":"([^"]*)","outcome":"([^"]*)"/g)].map((m) => `${m[1]} ${m[2]}`)).toEqual(['__proto__ retained', 'toString retained']);
  });
});

describe('numbers too large', () => {
  it('a price whose pico-dollars overflow is a price error naming the file, model and field', async () => {
    const dir = tempDir();
    const prices = join(dir, 'prices.json');
    writeFileSync(prices, '{\n  "gpt-4o-mini": {"input_cost_per_token": 1e300}\n}\n');
    await expectUsage(
      ['prices', 'gpt-4o-mini', '--prices', prices],
      `ctxsim: ${prices}:2:43 gpt-4o-mini.input_cost_per_token: expected a price in USD per token of at most 9007 (prices are counted in whole pico-dollars), got 1e+300`,
    );
  });

  it('a gap of hundreds of digits is not a duration', async () => {
    const dir = tempDir();
    const file = join(dir, 'gap.yaml');
    writeFileSync(file, `id: x\nturns:\n  - user: hi\n  - user: again\n    gap: ${'9'.repeat(400)}s\n`);
    await expectUsage(['explain', file, '--policy', 'full', '--turn', '1'], `ctxsim: ${file}:5:10 turns[1].gap: expected a duration such as 30s, 5m, 2h or 1d, got "${'9'.repeat(56)}..."`);
  });
});

describe('a malformed shard file', () => {
  it('is a merge error naming the file and the field', async () => {
    const dir = tempDir();
    expect((await cli('run', '--shard', '1/1', '--out', join(dir, 'shards'), ...SMALL)).code).toBe(0);
    const file = join(dir, 'shards', 'shard-1-of-1.json');
    const shard = JSON.parse(readFileSync(file, 'utf8')) as { summary: Record<string, unknown>[] };
    shard.summary[0]!.totalCost = 'lots';
    writeFileSync(file, JSON.stringify(shard));
    await expectUsage(['merge', join(dir, 'shards'), '--out', join(dir, 'merged'), '--quiet'], /^ctxsim: .*shard-1-of-1\.json:1:\d+ summary\[0\]\.totalCost: expected money as \{"\$pico": "123"\}: whole pico-dollars, at least 0 and under 10\^27, got "lots"$/);
    expect(existsSync(join(dir, 'merged'))).toBe(false);
  });

  it('is a merge error when a summary row lacks its overflow probes (a shard of an older version), not a NaN total', async () => {
    const dir = tempDir();
    expect((await cli('run', '--shard', '1/1', '--out', join(dir, 'shards'), ...SMALL)).code).toBe(0);
    const file = join(dir, 'shards', 'shard-1-of-1.json');
    const shard = JSON.parse(readFileSync(file, 'utf8')) as { summary: Record<string, unknown>[] };
    delete shard.summary[0]!.overflowProbes;
    writeFileSync(file, JSON.stringify(shard));
    await expectUsage(['merge', join(dir, 'shards'), '--out', join(dir, 'merged'), '--quiet'], /^ctxsim: .*shard-1-of-1\.json:1:\d+ summary\[0\]\.overflowProbes: required but missing$/);
  });
});

describe('an internal error', () => {
  const boom = () => {
    const io = capture();
    io.out = () => {
      throw new TypeError('boom');
    };
    return io;
  };

  it('is one line asking for a bug report, exit 70', async () => {
    const io = boom();
    const before = process.env.CTXSIM_DEBUG;
    delete process.env.CTXSIM_DEBUG;
    try {
      expect(await runMain(['prices'], io)).toBe(70);
    } finally {
      if (before !== undefined) process.env.CTXSIM_DEBUG = before;
    }
    expect(io.stderr).toBe('ctxsim: internal error: TypeError: boom — please report it with the command that caused it (CTXSIM_DEBUG=1 shows the stack)\n');
  });

  it('escapes control characters in its message (no raw terminal escapes reach stderr)', async () => {
    const io = capture();
    io.out = () => {
      throw new Error('bad \x1b[31mred');
    };
    expect(await runMain(['prices'], io)).toBe(70);
    expect(io.stderr).not.toContain('\x1b');
    expect(io.stderr).toMatch(/^ctxsim: internal error: Error: bad \\x1b\[31mred — /);
  });

  it('shows its stack with CTXSIM_DEBUG=1', async () => {
    const io = boom();
    const before = process.env.CTXSIM_DEBUG;
    process.env.CTXSIM_DEBUG = '1';
    try {
      expect(await runMain(['prices'], io)).toBe(70);
    } finally {
      if (before === undefined) delete process.env.CTXSIM_DEBUG;
      else process.env.CTXSIM_DEBUG = before;
    }
    expect(io.stderr).toMatch(/^ctxsim: internal error: TypeError: boom — .*\nTypeError: boom\n {4}at /);
  });
});
