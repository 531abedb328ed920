import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { runBuilt } from './_built.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A policy module run like a built-in policy: from `--policy PATH:k=v` and
 * from a study entry keyed by its path, swept, on worker threads, in the
 * gate; and every way a module can be wrong, one line with exit 2.
 *
 * keep-edges (test/fixtures/policies/keep-edges.mjs) sends the system
 * prompt, the first `keep` exchanges and the current turn. So with keep=0
 * it sends exactly what `window-turns:turns=0` sends (the system prompt and
 * the current turn), and with keep=5 on the five-turn noah-amnesia exactly
 * what `full` sends: the built-ins are the reference for its token counts.
 * Noah says his name in turn 1 and is asked it in turn 5: keep=0 has lost
 * it, keep=1 still sends it.
 */

const FIXTURE = join(ROOT, 'test', 'fixtures', 'policies', 'keep-edges.mjs');
const NOAH = join(ROOT, 'scenarios', 'noah-amnesia.yaml');

async function cli(...args: string[]) {
  const io = capture();
  const code = await runMain(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

/** A project folder with the fixture module at policies/keep-edges.mjs and noah-amnesia at s/. */
function project(): string {
  const dir = tempDir();
  mkdirSync(join(dir, 'policies'));
  mkdirSync(join(dir, 's'));
  cpSync(FIXTURE, join(dir, 'policies', 'keep-edges.mjs'));
  cpSync(NOAH, join(dir, 's', 'noah-amnesia.yaml'));
  return dir;
}

const COMMON = ['--tokenizer', 'chars4', '--no-token-cache', '--quiet'];

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const built = existsSync(MAIN) && statSync(MAIN).mtimeMs >= statSync(join(ROOT, 'src', 'study', 'policy-modules.ts')).mtimeMs;

describe('a policy module from the command line', () => {
  it('runs as a sweep beside built-ins, named by its id: keep=0 sends what window-turns:turns=0 sends, keep=5 what full sends', async () => {
    const dir = project();
    // Every record, in results.json (a report folder's charts are not what this is about).
    const out = join(dir, 'results.json');
    const spec = './policies/keep-edges.mjs:keep=0|1|5';
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await cli('run', '--scenario', 's/noah-amnesia.yaml', '--policy', spec, '--policy', 'window-turns:turns=0', '--policy', 'full', ...COMMON, '--out', out);
      expect([r.code, r.err]).toEqual([0, '']);
    } finally {
      process.chdir(cwd);
    }
    const results = JSON.parse(readFileSync(out, 'utf8')) as Record<'turns' | 'probes' | 'summary', Record<string, string | number>[]>;
    const tokens = (policy: string) => results.turns.filter((t) => t.policy === policy).map((t) => t.inputTokens);
    expect(tokens('keep-edges:keep=0')).toEqual(tokens('window-turns:turns=0'));
    expect(tokens('keep-edges:keep=5')).toEqual(tokens('full'));
    expect(tokens('keep-edges:keep=1')).not.toEqual(tokens('full'));
    expect(results.probes.map((p) => [p.policy, p.turn, p.fact, p.outcome])).toEqual([
      ['keep-edges:keep=0', 5, 'name', 'missing'],
      ['keep-edges:keep=1', 5, 'name', 'retained'],
      ['keep-edges:keep=5', 5, 'name', 'retained'],
      ['window-turns:turns=0', 5, 'name', 'missing'],
      ['full', 5, 'name', 'retained'],
    ]);
    // What it stores is scored like a built-in's: the transcript of its first `keep` exchanges.
    const stored = (policy: string) => results.summary.find((s) => s.policy === policy)!.storedBytes;
    expect(stored('keep-edges:keep=0')).toBe(0);
    // Turn 1: "My name is Noah." (16 bytes) and "Nice to meet you, Noah!" (23).
    expect(stored('keep-edges:keep=1')).toBe(39);
  });

  it('a module whose records show upkeep is named in the memory line of the reports (what it remembers is what it simulates); without upkeep it is not', async () => {
    const file = join(tempDir(), 'notes.mjs');
    // Keeps every exchange and says it paid a summarizer after each turn when `upkeep` is 1.
    writeFileSync(
      file,
      `export default {
  id: 'notes',
  describe: 'keeps everything, with or without a summarizer call after each turn',
  params: { upkeep: { default: 1, kind: 'int', min: 0 } },
  start(conversation, params) {
    const head = [...conversation.system];
    const kept = [];
    const call = { kind: 'summary', model: 'gpt-4o-mini', inputTokens: 40, outputTokens: 10, sync: false };
    return {
      prompt: (pending) => ({ messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length }),
      commit: (exchange) => (kept.push(...exchange), params.upkeep ? [call] : []),
      forget: () => [],
      artifacts: () => [],
    };
  },
};
`,
    );
    // The budget markdown alone (report.md without its chart links) carries the line too.
    const line = (policy: string) => {
      const out = join(tempDir(), 'budget.md');
      return cli('run', '--scenario', NOAH, '--policy', policy, ...COMMON, '--out', out).then((r) => {
        expect([r.code, r.err]).toEqual([0, '']);
        return readFileSync(out, 'utf8').split('\n').filter((l) => l.includes('memory ('));
      });
    };
    expect(await line(file)).toEqual([
      "Simulated memory (notes as its module simulates it): retained means the fact's value is in what is sent, an upper bound on what a model would answer",
    ]);
    expect(await line(`${file}:upkeep=0`)).toEqual([]);
  });

  it('explain shows what the module sends at a turn', async () => {
    const r = await cli('explain', NOAH, '--policy', `${FIXTURE}:keep=1`, '--turn', '5', '--tokenizer', 'chars4');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toBe('noah-amnesia · keep-edges:keep=1 · turn 5 · gpt-4o-mini · chars4');
    expect(r.out).toContain('My name is Noah.');
    expect(r.out).not.toContain('Blue is my favorite color.');
  });
});

describe('a policy module in a study', () => {
  it('is named by its path relative to the study file; a sweep of its parameters gives the rows of the same specs on the command line', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies:', '  - ./policies/keep-edges.mjs: {keep: [0, 1]}', '  - full', ''].join('\n'));
    // The records of results.json: what the CSV files hold, without a report folder's charts.
    expect((await cli('run', study, ...COMMON, '--out', join(dir, 'a.json'))).code).toBe(0);
    const r = await cli('run', '--scenario', join(dir, 's', '*.yaml'), '--policy', `${join(dir, 'policies', 'keep-edges.mjs')}:keep=0|1`, '--policy', 'full', ...COMMON, '--out', join(dir, 'b.json'));
    expect(r.code).toBe(0);
    const records = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<'turns' | 'probes' | 'summary' | 'policies', { policy: string }[]>;
    for (const kind of ['turns', 'probes', 'summary', 'policies'] as const) expect(records('a.json')[kind].map((x) => JSON.stringify(x)), kind).toEqual(records('b.json')[kind].map((x) => JSON.stringify(x)));
    expect(records('a.json').policies.map((p) => p.policy)).toEqual(['keep-edges:keep=0', 'keep-edges:keep=1', 'full']);
  });

  it.skipIf(!built)(`runs on worker threads with output byte-identical to one thread${built ? '' : ' (skipped: dist/ is missing or stale)'}`, async () => {
    const dir = project();
    cpSync(NOAH, join(dir, 's', 'noah-2.yaml'));
    writeFileSync(join(dir, 's', 'noah-2.yaml'), readFileSync(NOAH, 'utf8').replace('id: noah-amnesia', 'id: noah-2'));
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies:', '  - ./policies/keep-edges.mjs: {keep: [0, 1, 2]}', '  - window-turns: {turns: 1}', ''].join('\n'));
    const env = { SOURCE_DATE_EPOCH: '1700000000' };
    for (const jobs of ['1', '2']) {
      const r = await runBuilt(['run', study, ...COMMON, '--jobs', jobs, '--out', join(dir, `jobs-${jobs}`)], { env });
      expect(r.code, r.err).toBe(0);
    }
    const files = readdirSync(join(dir, 'jobs-1')).sort();
    expect(readdirSync(join(dir, 'jobs-2')).sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(dir, 'jobs-2', f)).equals(readFileSync(join(dir, 'jobs-1', f))), f).toBe(true);
  });

  it('shards of a study with a module merge into exactly the unsharded run', async () => {
    process.env.SOURCE_DATE_EPOCH = '1700000000';
    try {
      const dir = project();
      writeFileSync(join(dir, 's', 'noah-2.yaml'), readFileSync(NOAH, 'utf8').replace('id: noah-amnesia', 'id: noah-2'));
      const study = join(dir, 'study.yaml');
      writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies:', '  - ./policies/keep-edges.mjs: {keep: [0, 1]}', '  - full', ''].join('\n'));
      expect((await cli('run', study, ...COMMON, '--out', join(dir, 'whole'))).code).toBe(0);
      for (const k of [1, 2, 3]) expect((await cli('run', study, ...COMMON, '--shard', `${k}/3`, '--out', join(dir, `p${k}`))).code).toBe(0);
      expect((await cli('merge', join(dir, 'p1'), join(dir, 'p2'), join(dir, 'p3'), '--out', join(dir, 'merged'), '--quiet')).code).toBe(0);
      const files = readdirSync(join(dir, 'whole')).sort();
      expect(readdirSync(join(dir, 'merged')).sort()).toEqual(files);
      for (const f of files) expect(readFileSync(join(dir, 'merged', f)).equals(readFileSync(join(dir, 'whole', f))), f).toBe(true);
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
  });

  it('the gate says when the module changed', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies: ["./policies/keep-edges.mjs:keep=1"]', ''].join('\n'));
    const baseline = join(dir, 'baseline.json');
    expect((await cli('run', study, ...COMMON, '--out', join(dir, 'out.json'), '--save-baseline', baseline)).code).toBe(0);
    const same = await cli('check', study, ...COMMON, '--baseline', baseline);
    expect(same.code).toBe(0);
    expect(same.out).not.toContain('policy implementation changed');
    appendFileSync(join(dir, 'policies', 'keep-edges.mjs'), '// a comment changes the file, not what it sends\n');
    const changed = await cli('check', study, ...COMMON, '--baseline', baseline);
    expect(changed.code).toBe(0);
    expect(changed.out).toContain('- policy implementation changed: keep-edges\n');
  });

  it('the annotation of a re-parameterized module policy points at its entry in the study', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    const write = (keep: number) => writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies:', '  - full', `  - ./policies/keep-edges.mjs: {keep: ${keep}}`, ''].join('\n'));
    write(0);
    const baseline = join(dir, 'baseline.json');
    expect((await cli('run', study, ...COMMON, '--out', join(dir, 'out.json'), '--save-baseline', baseline)).code).toBe(0);
    write(3);
    vi.stubEnv('GITHUB_ACTIONS', 'true');
    vi.stubEnv('GITHUB_WORKSPACE', dir);
    try {
      const r = await cli('check', study, ...COMMON, '--baseline', baseline);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^::error file=study\.yaml,line=4,title=ctxsim check%3A policy%3A keep-edges%3Akeep=0 → keep-edges%3Akeep=3::/m);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('the gate says when a file the module imports changed, the module file left alone', async () => {
    const dir = project();
    const template = readFileSync(join(ROOT, 'templates', 'init', 'policies', 'example-policy.mjs'), 'utf8');
    const module = template.replace('export default {', "import { extra } from './helper.mjs';\nexport default {").replace('const keep = params.keep;', 'const keep = params.keep + extra;');
    expect(module).not.toBe(template);
    writeFileSync(join(dir, 'policies', 'edges.mjs'), module);
    writeFileSync(join(dir, 'policies', 'helper.mjs'), 'export const extra = 0;\n');
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies: ["./policies/edges.mjs:keep=1"]', ''].join('\n'));
    const baseline = join(dir, 'baseline.json');
    expect((await cli('run', study, ...COMMON, '--out', join(dir, 'out.json'), '--save-baseline', baseline)).code).toBe(0);
    const same = await cli('check', study, ...COMMON, '--baseline', baseline);
    expect(same.code, same.err).toBe(0);
    expect(same.out).not.toContain('policy implementation changed');
    writeFileSync(join(dir, 'policies', 'helper.mjs'), 'export const extra = 4;\n');
    const changed = await cli('check', study, ...COMMON, '--baseline', baseline);
    expect(changed.code).toBe(1);
    expect(changed.out).toContain('\n- policy implementation changed: keep-edges (a file it imports)\n');
    expect(changed.out).not.toContain('Nothing in the study differs');
  });
});

describe('a bad policy module: one line, exit 2', () => {
  /** Writes a module into a fresh folder; returns its path. */
  function moduleFile(text: string, name = 'bad.mjs'): string {
    const file = join(tempDir(), name);
    writeFileSync(file, text);
    return file;
  }

  /** A module of the documented shape whose `prompt` is `body` (given `pending`, `head`, `kept`). */
  const shaped = (prompt: string, id = 'bad') => `export default {
  id: '${id}',
  describe: 'a broken policy',
  params: {},
  start(conversation) {
    const head = [...conversation.system];
    const kept = [];
    return {
      prompt(pending, info) { ${prompt} },
      commit(exchange) { kept.push(...exchange); return []; },
      forget() { return []; },
      artifacts() { return []; },
    };
  },
};
`;

  async function fails(spec: string, message: string | RegExp): Promise<void> {
    const r = await cli('run', '--scenario', NOAH, '--policy', spec, ...COMMON, '--out', join(tempDir(), 'out'));
    expect(r.code).toBe(2);
    expect(r.err.split('\n')).toHaveLength(2);
    if (typeof message === 'string') expect(r.err).toBe(`ctxsim: ${message}\n`);
    else expect(r.err).toMatch(message);
  }

  it('a missing file', async () => {
    const file = join(tempDir(), 'nope.mjs');
    await fails(file, `policy module ${file}: no such file`);
  });

  it('no default export, and a default export of the wrong shape', async () => {
    const none = moduleFile('export const policy = {};\n');
    await fails(none, `policy module ${none}: no default export (expected \`export default { id, describe, params, start }\`)`);
    const noStart = moduleFile("export default { id: 'x', describe: 'x', params: {} };\n");
    await fails(noStart, `policy module ${noStart}: start must be a function (conversation, params, deps) => session, got undefined`);
  });

  it('an unknown parameter, and a value out of bounds', async () => {
    await fails(`${FIXTURE}:kep=1`, `--policy ${FIXTURE}:kep=1: policy keep-edges: unknown parameter "kep" (expected one of keep, sessionCap, forget, moderation)`);
    await fails(`${FIXTURE}:keep=-1`, `--policy ${FIXTURE}:keep=-1: policy keep-edges: parameter keep: expected a number ≥ 0, got "-1"`);
  });

  it('an id of a built-in policy, or of another module', async () => {
    const full = moduleFile(shaped('return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };', 'full'));
    await fails(full, `policy module ${full}: id "full" is a built-in policy's; give the module an id of its own`);
    const twin = moduleFile(readFileSync(FIXTURE, 'utf8'), 'twin.mjs');
    const r = await cli('run', '--scenario', NOAH, '--policy', FIXTURE, '--policy', twin, ...COMMON, '--out', join(tempDir(), 'out'));
    expect([r.code, r.err]).toEqual([2, `ctxsim: policy module ${twin}: id "keep-edges" is also the id of ${FIXTURE}; each module needs an id of its own\n`]);
  });

  it('throws at turn 3: the run stops naming the policy, the turn and the scenario; CTXSIM_DEBUG=1 adds the stack', async () => {
    const file = moduleFile(shaped("if (info.turn.index === 3) throw new Error('no memory left'); return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };"));
    await fails(file, 'bad: turn 3 of noah-amnesia: threw: no memory left');
    process.env.CTXSIM_DEBUG = '1';
    try {
      const r = await cli('run', '--scenario', NOAH, '--policy', file, ...COMMON, '--out', join(tempDir(), 'out'));
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/^ctxsim: bad: turn 3 of noah-amnesia: threw: no memory left\nError: no memory left\n\s+at /);
    } finally {
      delete process.env.CTXSIM_DEBUG;
    }
  });

  it.each([
    ['the current turn not sent last', 'return { messages: [...head, ...pending, ...kept], overBudget: false, upkeep: [], stablePrefix: head.length };', 'bad: turn 2 of noah-amnesia: current-turn-last: the current turn is not sent last, its newest round in full: 2 message(s) after it'],
    [
      'the current turn stored when it is sent (in prompt, not commit): sent twice, priced twice',
      'kept.push(...pending); return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };',
      'bad: turn 1 of noah-amnesia: whole-turns: turn 1, the current one, sent before its own messages (at 1)',
    ],
    ['the system prompt not pinned', 'return { messages: [...kept, ...head, ...pending], overBudget: false, upkeep: [], stablePrefix: 1 };', /^ctxsim: bad: turn 2 of noah-amnesia: system-pinned: /],
    ['a plan of the wrong shape', 'return { messages: [...head, ...pending], upkeep: [], stablePrefix: 0 };', /^ctxsim: bad: turn 1 of noah-amnesia: plan: /],
    [
      'an upkeep call without a model',
      "return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [{ kind: 'summary', inputTokens: 10, outputTokens: 5, sync: true }], stablePrefix: head.length };",
      "bad: turn 1 of noah-amnesia: plan: upkeep summary with model undefined (expected a model's name)",
    ],
    [
      'an upkeep call on a model the price table lacks',
      "return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [{ kind: 'summary', model: 'nope-4', inputTokens: 10, outputTokens: 5, sync: true }], stablePrefix: head.length };",
      /^ctxsim: bad: turn 1 of noah-amnesia: upkeep summary: unknown model "nope-4"/,
    ],
    // The scenario's messages are frozen: a module (strict, as every ES module is) cannot change what the other policies send.
    ['changes a message it was given', "pending[0].content += '!'; return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };", /^ctxsim: bad: turn 1 of noah-amnesia: threw: Cannot assign to read only property 'content'/],
  ])('breaks a rule: %s', async (_, prompt, message) => {
    await fails(moduleFile(shaped(prompt)), message);
  });

  it('an async method (a promise, which a run cannot read): named as a promise, not as a plan or session it is not', async () => {
    const plan = 'return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };';
    const promise = "a promise (a policy's methods are synchronous: not async)";
    await fails(moduleFile(shaped(plan).replace('prompt(pending, info) {', 'async prompt(pending, info) {')), `bad: turn 1 of noah-amnesia: plan: the plan is ${promise}, not an object {messages, overBudget, upkeep, stablePrefix}`);
    await fails(moduleFile(shaped(plan).replace('start(conversation) {', 'async start(conversation) {')), `bad: noah-amnesia: start returned ${promise}, not a session {prompt, commit, forget, artifacts}`);
    await fails(moduleFile(shaped(plan).replace('commit(exchange) {', 'async commit(exchange) {')), `bad: turn 1 of noah-amnesia: commit: upkeep is ${promise}, not an array`);
    await fails(moduleFile(shaped(plan).replace('artifacts() {', 'async artifacts() {')), `bad: after turn 5 of noah-amnesia: artifacts: artifacts is ${promise}, not an array`);
  });

  it('returns artifacts of the wrong shape: named like a broken rule, not an internal error', async () => {
    const file = moduleFile(
      shaped('return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };').replace('artifacts() { return []; }', "artifacts() { return [{ kind: 'memo', texts: [], bytes: 0 }]; }"),
    );
    await fails(file, /^ctxsim: bad: after turn \d+ of noah-amnesia: artifacts: artifact of kind "memo" \(expected transcript, summary, vectors, facts\)\n$/);
  });

  it.skipIf(!built)(`a syntax error (the built CLI: Node's own loader)${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
    const file = moduleFile('export default { id: "x", describe: ;\n');
    const r = spawnSync(process.execPath, [MAIN, 'run', '--scenario', NOAH, '--policy', file, ...COMMON, '--out', join(tempDir(), 'out')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`ctxsim: policy module ${file}: syntax error (line 1): Unexpected token ';'\n`);
  });

  it('in a study: the problem is placed at the entry that names the module', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['scenarios: [s/*.yaml]', 'policies:', '  - full', '  - ./policies/missing.mjs: {keep: 1}', '  - ./policies/keep-edges.mjs: {keep: [1, nope]}', ''].join('\n'));
    const r = await cli('run', study, ...COMMON, '--out', join(dir, 'out'));
    expect(r.code).toBe(2);
    expect(r.err.split('\n').map((l) => l.replace(`${dir}/`, ''))).toEqual([
      'ctxsim: study.yaml:4:5 policies[1]: policy module ./policies/missing.mjs: no such file',
      'ctxsim: study.yaml:5:5 policies[2]: policy keep-edges: parameter keep: expected a whole number, got "nope"',
      '',
    ]);
  });
});
