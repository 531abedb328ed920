import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { dropUnstatedFacts } from '../src/scenario/import/index.js';
import { scenarioFromText, scenarioFromValue } from '../src/scenario/load.js';
import { loadStudy } from '../src/study/study.js';
import { TokenCache } from '../src/tokens/token-cache.js';
import { asyncProblems, capture, problems } from './_io.js';
import { tempDir } from './_tmp.js';

const scenario = (text: string) => problems(() => scenarioFromText('s.yaml', text));

describe('a fact value must occur in the turn that states it', () => {
  it('is an error at the fact when the turn never says it', () => {
    expect(scenario("id: x\nturns:\n  - user: Hi, I'm Ana\n    facts: {name: Anna}\n")).toEqual([
      's.yaml:4:19 turns[0].facts.name: fact "name": "Anna" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('compares as the scorer does: case and whitespace do not matter', () => {
    expect(scenario("id: x\nturns:\n  - user: \"My code is  AB\\n12\"\n    facts: {code: ab 12}\n")).toEqual([]);
  });

  it('counts the assistant reply, tool arguments and tool results as the turn', () => {
    const text = [
      'id: x',
      'turns:',
      '  - user: book it',
      '    tools:',
      '      - {call: book, args: {room: R-17}, result: {ref: BK-9}}',
      '    assistant: Done, see you Friday',
      '    facts: {room: r-17, ref: BK-9, day: friday}',
      '  - role: user',
      '    content: and the time?',
      '    facts: {time: "10:30"}',
      '  - role: assistant',
      '    content: At 10:30.',
    ].join('\n');
    expect(scenario(text)).toEqual([]);
  });

  it('lists every missing fact, with the one on a chat message at its place', () => {
    const text = ['id: x', 'turns:', '  - user: hi', '    facts: {a: one, b: two}', '  - role: user', '    content: hello', '    facts: {c: three}'].join('\n');
    expect(scenario(text)).toEqual([
      's.yaml:4:16 turns[0].facts.a: fact "a": "one" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
      's.yaml:4:24 turns[0].facts.b: fact "b": "two" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
      's.yaml:7:16 turns[1].facts.c: fact "c": "three" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('a value said only in another turn does not count', () => {
    expect(scenario('id: x\nturns:\n  - user: I am Ana\n  - user: ok\n    facts: {name: Ana}\n')).toEqual([
      's.yaml:5:19 turns[1].facts.name: fact "name": "Ana" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('holds for documents built in memory too (no line)', () => {
    expect(problems(() => scenarioFromValue('gen#x', { id: 'x', turns: [{ user: 'hi', facts: { n: 'Anna' } }] }))).toEqual([
      'gen#x turns[0].facts.n: fact "n": "Anna" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('an importer drops such a fact, and the probes and forgets that named only it, as a quirk', () => {
    const docs = [
      {
        id: 'd',
        turns: [
          { user: "I'm Ana, order 42", facts: { name: 'Anna', order: '42' } },
          { forget: ['name', 'order'] },
          { user: 'who am I?', probe: ['name', 'order'] },
        ],
      },
    ];
    expect(dropUnstatedFacts(docs)).toEqual([
      { key: 'fact-not-in-turn', label: 'facts whose value their turn does not contain (dropped)', count: 1, examples: ['d name'] },
      { key: 'probe-of-dropped-fact', label: 'probes of dropped facts (skipped)', count: 1, examples: ['d name'] },
    ]);
    expect(docs[0]!.turns).toEqual([{ user: "I'm Ana, order 42", facts: { order: '42' } }, { forget: ['order'] }, { user: 'who am I?', probe: ['order'] }]);
    expect(problems(() => scenarioFromValue('d', docs[0]))).toEqual([]);
  });

  it('ctxsim run exits 2 with the fact\'s place', async () => {
    const dir = tempDir();
    const file = join(dir, 's.yaml');
    writeFileSync(file, "id: x\nturns:\n  - user: Hi, I'm Ana\n    facts: {name: Anna}\n");
    const io = capture();
    expect(await runMain(['run', '--scenario', file, '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr).toContain(':4:19 turns[0].facts.name: fact "name": "Anna" occurs nowhere in this turn');
  });
});

describe('every model a study names is checked at load, at its place', () => {
  async function runStudy(text: string): Promise<{ code: number; lines: string[] }> {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), 'id: s\nturns:\n  - user: hi\n');
    writeFileSync(join(dir, 'study.yaml'), text);
    const io = capture();
    const code = await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io);
    return { code, lines: io.stderr.replaceAll(join(dir, 'study.yaml'), 'study.yaml').split('\n').filter(Boolean) };
  }

  it('chat, routed, fallback and upkeep models, even when no call would use them', async () => {
    const text = [
      'scenarios: [s.yaml]',
      'model: gpt-4o-minii',
      'route: {light: gpt-4o-mini, strong: nope-1, strongWhen: {userTokensOver: 1000000}}',
      'fallback: {model: nope-2, rate: 0}',
      'policies:',
      '  - full',
      '  - summary:summaryModel=nope-3',
      '  - facts: {extractModel: nope-4}',
      '  - retrieval: {embedModel: nope-5}',
    ].join('\n');
    const { code, lines } = await runStudy(text);
    expect(code).toBe(2);
    expect(lines.map((l) => l.replace(/ \(closest: .*\)$/, ''))).toEqual([
      'ctxsim: study.yaml:2:8 model: unknown model "gpt-4o-minii"',
      'ctxsim: study.yaml:3:37 route.strong: unknown model "nope-1"',
      'ctxsim: study.yaml:4:19 fallback.model: unknown model "nope-2"',
      'ctxsim: study.yaml:7:5 policies[1]: unknown model "nope-3"',
      'ctxsim: study.yaml:8:27 policies[2].facts.extractModel: unknown model "nope-4"',
      'ctxsim: study.yaml:9:29 policies[3].retrieval.embedModel: unknown model "nope-5"',
    ]);
    expect(lines[0]).toBe('ctxsim: study.yaml:2:8 model: unknown model "gpt-4o-minii" (closest: gpt-4o-mini, gpt-4.1-mini, gpt-5-mini)');
  });

  it('a policy module\'s model parameter: its entry\'s key, a path, in brackets', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), 'id: s\nturns:\n  - user: hi\n');
    mkdirSync(join(dir, 'policies'));
    writeFileSync(join(dir, 'policies', 'm.mjs'), "export default { id: 'm', describe: 'm', params: { summaryModel: { kind: 'string' } }, start() { return {}; } };\n");
    writeFileSync(join(dir, 'study.yaml'), 'scenarios: [s.yaml]\npolicies:\n  - ./policies/m.mjs: {summaryModel: nope-3}\n');
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr.replace(/ \(closest: .*\)\n$/, '')).toBe(`ctxsim: ${join(dir, 'study.yaml')}:3:38 policies[0]["./policies/m.mjs"].summaryModel: unknown model "nope-3"`);
  });

  it('a model named only as a key of latency or of tokenFactor, unknown to the price table (a typo that would apply to nothing)', async () => {
    const [latency, factor] = ['latency: {default: {ttftMs: 1}, gpt-4o-mnii: {ttftMs: 100}}', 'tokenFactor: {gpt-4o-mnii: 1.1, gpt-4o-mini: 1.1}'];
    const { code, lines } = await runStudy(`scenarios: [s.yaml]\n${latency}\n${factor}\n`);
    expect(code).toBe(2);
    // `default` is every model's, not a model's name. Each at the typo's value.
    expect(lines.map((l) => l.replace(/ \(closest: .*\)$/, ''))).toEqual([
      `ctxsim: study.yaml:2:${latency.indexOf('{ttftMs: 100}') + 1} latency.gpt-4o-mnii: unknown model "gpt-4o-mnii"`,
      `ctxsim: study.yaml:3:${factor.indexOf('1.1') + 1} tokenFactor.gpt-4o-mnii: unknown model "gpt-4o-mnii"`,
    ]);
  });

  it('a number too large for a double (1e400) where a number or a mapping goes: said as not finite, not as "expected number, got number"', async () => {
    const { code, lines } = await runStudy('scenarios: [s.yaml]\ntokenFactor: 1e400\n');
    expect(code).toBe(2);
    expect(lines).toEqual(['ctxsim: study.yaml:2:14 tokenFactor: expected a finite number, got Infinity']);
  });

  it('a prices file that cannot be read is named at the study\'s prices key', async () => {
    const { code, lines } = await runStudy('scenarios: [s.yaml]\nprices: missing.json\n');
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ctxsim: study\.yaml:2:9 prices: price table .*missing\.json: cannot read price table \(ENOENT\)$/);
  });

  it('a folder, or an empty entry, among the scenarios is named at its entry (or its flag), not as the folder the study is in', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 's.yaml'), 'id: s\nturns:\n  - user: hi\n');
    writeFileSync(join(dir, 'study.yaml'), "scenarios: [sub/, '']\n");
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr.replaceAll(join(dir, 'study.yaml'), 'study.yaml')).toBe(
      ['ctxsim: study.yaml:1:13 scenarios[0]: sub/ is a folder; name its scenario files with a glob: sub/*.yaml', 'ctxsim: study.yaml:1:19 scenarios[1]: expected a scenario file or a glob such as scenarios/*.yaml, got ""', ''].join('\n'),
    );
    for (const [given, line] of [
      [join(dir, 'sub'), `ctxsim: --scenario ${join(dir, 'sub')}: is a folder; name its scenario files with a glob: ${join(dir, 'sub')}/*.yaml\n`],
      ['', 'ctxsim: --scenario: expected a scenario file or a glob such as scenarios/*.yaml, got ""\n'],
    ]) {
      const flag = capture();
      expect(await runMain(['run', '--scenario', given!, '--policy', 'full', '--out', '-', '--no-token-cache', '--quiet'], flag)).toBe(2);
      expect(flag.stderr).toBe(line);
    }
  });

  it('a prices file --prices names is not blamed on the study (whose prices key it replaces)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), 'id: s\nturns:\n  - user: hi\n');
    writeFileSync(join(dir, 'study.yaml'), 'scenarios: [s.yaml]\nprices: builtin\n');
    const missing = join(dir, 'missing.json');
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--prices', missing, '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr).toBe(`ctxsim: ${missing}: cannot read price table (ENOENT)\n`);
  });
});

describe('duplicates and files in the wrong place', () => {
  function files(entries: Record<string, string>): string {
    const dir = tempDir();
    for (const [name, text] of Object.entries(entries)) writeFileSync(join(dir, name), text);
    return dir;
  }
  async function run(args: string[], dir: string): Promise<{ code: number; lines: string[] }> {
    const io = capture();
    const code = await runMain([...args, '--out', '-', '--no-token-cache', '--quiet'], io);
    return { code, lines: io.stderr.replaceAll(`${dir}/`, '').split('\n').filter(Boolean) };
  }

  it('a duplicate scenario id names the places of both', async () => {
    const dir = files({ 'a.yaml': 'id: same\nturns:\n  - user: hi\n', 'b.yaml': '# b\nid: same\nturns:\n  - user: ho\n' });
    const { code, lines } = await run(['run', '--scenario', join(dir, '*.yaml')], dir);
    expect(code).toBe(2);
    expect(lines).toEqual(['ctxsim: b.yaml:2:5 id: duplicate scenario id "same" (also at a.yaml:1:5)']);
  });

  it('a generated id that repeats a file\'s id is placed at its study entry', async () => {
    const dir = files({
      'a.yaml': 'id: g-0001\nturns:\n  - user: hi\n',
      'study.yaml': 'scenarios:\n  - a.yaml\n  - generate: {profile: support, count: 1, prefix: g}\npolicies: [full]\n',
    });
    const { code, lines } = await run(['run', join(dir, 'study.yaml')], dir);
    expect(code).toBe(2);
    expect(lines).toEqual(['ctxsim: study.yaml:3:15 scenarios[1].generate: duplicate scenario id "g-0001" (also at a.yaml:1:5)']);
  });

  it('a policy listed twice in a study is an error at the second', async () => {
    const dir = files({
      'a.yaml': 'id: a\nturns:\n  - user: hi\n',
      'study.yaml': 'scenarios: [a.yaml]\npolicies:\n  - full\n  - window-turns:turns=3\n  - window-turns: {turns: [2, 3]}\n  - full\n',
    });
    const { code, lines } = await run(['run', join(dir, 'study.yaml')], dir);
    expect(code).toBe(2);
    expect(lines).toEqual([
      'ctxsim: study.yaml:5:5 policies[2]: policy window-turns:turns=3 is listed twice (also policies[1]); its totals would count twice',
      'ctxsim: study.yaml:6:5 policies[3]: policy full is listed twice (also policies[0]); its totals would count twice',
    ]);
  });

  it('the same --policy twice is a usage error', async () => {
    const dir = files({ 'a.yaml': 'id: a\nturns:\n  - user: hi\n' });
    const { code, lines } = await run(['run', '--scenario', join(dir, 'a.yaml'), '--policy', 'full', '--policy', 'full'], dir);
    expect(code).toBe(2);
    expect(lines).toEqual(['ctxsim: --policy full: policy full is given twice (also --policy full); its totals would count twice']);
  });

  it('a study file given as a scenario to run --scenario says so; explain takes it as a study', async () => {
    const dir = files({ 'study.yaml': 'scenarios: [a.yaml]\npolicies: [full]\n' });
    expect(await run(['run', '--scenario', join(dir, 'study.yaml')], dir)).toEqual({
      code: 2,
      lines: ['ctxsim: study.yaml:1:1: this is a study file, not a scenario (it has no turns): run it with ctxsim run FILE'],
    });
    const io = capture();
    expect(await runMain(['explain', join(dir, 'study.yaml'), '--policy', 'full', '--turn', '1'], io)).toBe(2);
    expect(io.stderr.replaceAll(`${dir}/`, '')).toBe('ctxsim: study.yaml:1:13 scenarios[0]: no scenario file matches "a.yaml"\n');
  });

  it('a scenario file given as a study says so', async () => {
    const dir = files({ 'a.yaml': 'id: a\nturns:\n  - user: hi\n' });
    expect(await run(['run', join(dir, 'a.yaml')], dir)).toEqual({
      code: 2,
      lines: ['ctxsim: a.yaml:1:1: this is a scenario file, not a study (it has turns): run it with ctxsim run --scenario FILE'],
    });
  });
});

describe('JSON syntax errors in datasets carry line and column; messages escape control characters', () => {
  async function importFile(text: string, format = 'locomo', name = 'data.json'): Promise<{ code: number; err: string }> {
    const dir = tempDir();
    writeFileSync(join(dir, name), text);
    const io = capture();
    const code = await runMain(['import', join(dir, name), '--format', format], io);
    return { code, err: io.stderr.replaceAll(`${dir}/`, '').replaceAll(dir, '') };
  }

  it.each([
    ['[1,\n  2,]', "2:5: invalid JSON: Unexpected token ']'"],
    ['[\n  {"a": 1\n  "b": 2}]', "3:3: invalid JSON: Expected ',' or '}' after property value"],
    ['[{"a": [1, 2', "1:13: invalid JSON: Expected ',' or ']' after array element"],
    ['', '1:1: invalid JSON: Unexpected end of JSON input'],
    ['\n\n  nope', "3:4: invalid JSON: Unexpected token 'o'"],
  ])('%j → line and column', async (text, where) => {
    const { code, err } = await importFile(text);
    expect(code).toBe(2);
    expect(err).toBe(`ctxsim: data.json:${where}\n`);
  });

  it('a bad line of JSON Lines is at its line, with the column', async () => {
    const { code, err } = await importFile('{"messages": []}\n{"messages": [x]}\n', 'openai', 'chats.jsonl');
    expect(code).toBe(2);
    expect(err).toBe("ctxsim: chats.jsonl:2:15: invalid JSON: Unexpected token 'x'\n");
  });

  it('a study import: source names the line and column too', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'd.json'), '[\n  {,}\n]');
    writeFileSync(join(dir, 'study.yaml'), 'scenarios:\n  - import: {format: locomo, path: d.json}\npolicies: [full]\n');
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr.replaceAll(`${dir}/`, '')).toBe("ctxsim: d.json:2:4: invalid JSON: Expected property name or '}'\n");
  });

  it('control characters in a value reach stderr escaped, one line per problem', async () => {
    const dir = tempDir();
    const file = join(dir, 's.yaml');
    writeFileSync(file, 'id: x\nturns:\n  - user: hi\n    "\\e[31mred\\nline": 1\n    role2: "\\u202e"\n');
    const io = capture();
    expect(await runMain(['run', '--scenario', file, '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr.replaceAll(`${dir}/`, '')).toBe(
      [
        'ctxsim: s.yaml:4:5 turns[0].\\x1b[31mred\\x0aline: unknown key "\\x1b[31mred\\x0aline"',
        'ctxsim: s.yaml:5:5 turns[0].role2: unknown key "role2"',
        '',
      ].join('\n'),
    );
    expect(io.stderr.replaceAll('\n', '')).not.toMatch(/\p{Cc}/u);
  });

  it('a usage error quoting a flag value is escaped too', async () => {
    const io = capture();
    expect(await runMain(['run', '--policy', 'no\x1b[2Jpe', '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr).not.toContain('\x1b');
    expect(io.stderr).toContain('no\\x1b[2Jpe');
  });
});

describe('a YAML syntax error does not quote the text it met', () => {
  // The file a CI checkout leaves in .git/config, holding the job's token; a link in a pull request (`scenarios/x.yaml -> ../.git/config`) reads it.
  const gitConfig = '[core]\n\trepositoryformatversion = 0\n[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46U0VDUkVU\n';
  // The places of the token's ":" and of the value after it, found in the text: on line 4, where they are (the parser takes lines 2–4 as one token).
  const header = gitConfig.split('\n')[3]!;
  const [colon, value] = [`4:${header.indexOf(': ') + 1}`, `4:${header.indexOf('basic') + 1}`];

  it.each([
    ['a git config', gitConfig, ['s.yaml:2:2: Unexpected scalar at node end', `s.yaml:${colon}: Unexpected map-value-ind token in YAML stream`, `s.yaml:${value}: Unexpected scalar token in YAML stream`]],
    ['a block scalar header', 'a: |x SECRET\n  b\n', ['s.yaml:1:5: Block scalar header includes extra characters', 's.yaml:1:7: Not a YAML token']],
  ])('%s: the place, not the text', (_what, text, said) => {
    const got = scenario(text);
    expect(got).toEqual(said);
    expect(got.join('\n')).not.toMatch(/SECRET|eC1hY2Nlc3M/);
  });

  it('a second document (a stream as generate prints without --out) is said in ctxsim’s words, at its start', () => {
    expect(scenario('id: a\nturns: [{user: hi}]\n---\nid: b\nturns: [{user: hi}]\n')).toEqual(['s.yaml:3:1: a second YAML document starts here; a file holds one (ctxsim generate and ctxsim import write one file each with --out DIR)']);
  });

  it('nor through a link where a study reads a scenario', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config'), gitConfig);
    mkdirSync(join(dir, 'scenarios'));
    symlinkSync('../config', join(dir, 'scenarios', 'x.yaml'));
    writeFileSync(join(dir, 'study.yaml'), 'scenarios: [scenarios/*.yaml]\npolicies: [full]\n');
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr).toContain(`x.yaml:${value}: Unexpected scalar token in YAML stream\n`);
    expect(io.stderr).not.toContain('eC1hY2Nlc3M');
  });
});

describe('bounds: counts, unknown keys, long names, odd files', () => {
  it('generate --count above 100,000 is refused', async () => {
    const io = capture();
    expect(await runMain(['generate', '--profile', 'support', '--count', '100001'], io)).toBe(2);
    expect(io.stderr).toBe('ctxsim: --count: expected a whole number from 1 to 100000, got 100001\n');
    expect(io.stdout).toBe('');
  });

  it('so is a study generate: count above it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'scenarios:\n  - generate: {profile: support, count: 100001}\n');
    expect((await asyncProblems(() => loadStudy(join(dir, 'study.yaml')))).map((l) => l.replace(`${dir}/`, ''))).toEqual([
      'study.yaml:2:41 scenarios[0].generate.count: expected a number ≤ 100000, got 100001',
    ]);
  });

  it('an empty text where one is required is said as the other bounds are, not in zod’s words', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'out: ""\n');
    expect((await asyncProblems(() => loadStudy(join(dir, 'study.yaml')))).map((l) => l.replace(`${dir}/`, ''))).toEqual(['study.yaml:1:6 out: expected a non-empty string, got ""']);
  });

  it('40,000 unknown keys: twenty listed with their place, the rest counted, in linear time', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}: 1`).join('\n');
    const started = performance.now();
    const lines = problems(() => scenarioFromText('s.yaml', `id: a\nturns:\n  - user: hi\n${keys}\n`));
    // Generous for a busy machine: a quadratic scan of 40,000 keys would take minutes.
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(lines).toHaveLength(21);
    expect(lines[0]).toBe('s.yaml:4:1 k0: unknown key "k0"');
    expect(lines[19]).toBe('s.yaml:23:1 k19: unknown key "k19"');
    expect(lines[20]).toBe('s.yaml:1:1: and 39980 more unknown keys');
  });

  it('lists nested deeper than the parser can go: one located problem that says so, not its stack overflow', () => {
    expect(scenario(`id: a\nturns:\n  - user: hi\n    assistant: ${'['.repeat(5000)}${']'.repeat(5000)}\n`)).toEqual([
      expect.stringMatching(/^s\.yaml:4:\d+: lists and mappings nested too deep to parse$/),
    ]);
    // So deep around a value that the parser says it ran out of stack twice: one problem all the same.
    expect(scenario(`id: a\nturns:\n  - user: hi\n    assistant: ${'['.repeat(10_000)}1${']'.repeat(10_000)}\n`)).toEqual([
      expect.stringMatching(/^s\.yaml:4:\d+: lists and mappings nested too deep to parse$/),
    ]);
  });

  it('a value nested more than 256 deep (in a turn, or built in memory) is one problem at its key', () => {
    const nested = `${'['.repeat(300)}${']'.repeat(300)}`;
    expect(scenario(`id: a\nturns:\n  - user: hi\n    tools: [{call: f, args: {a: ${nested}}, result: ok}]\n`)).toEqual([
      's.yaml:4:33 turns[0].tools[0].args.a: lists and mappings nested more than 256 deep',
    ]);
    const deep: unknown[] = [];
    let inner = deep;
    for (let i = 0; i < 30_000; i++) inner.push((inner = []));
    expect(problems(() => scenarioFromValue('mem', { id: 'a', turns: [{ user: 'hi', tools: [{ call: 'f', args: { a: deep }, result: 'ok' }] }] }))).toEqual([
      'mem turns[0].tools[0].args.a: lists and mappings nested more than 256 deep',
    ]);
  });

  it('a call\'s billed usage whose cached or written tokens are more than its input (they are part of it) is an error at the field', () => {
    const usage = (u: string) => scenario(`id: a\nturns:\n  - user: hi\n    assistant: ho\n    usage: {${u}}\n`);
    expect(usage('input: 100, cached: 60, written: 40, written1h: 40')).toEqual([]);
    expect(usage('input: 100, cached: 101')).toEqual(['s.yaml:5:33 turns[0].usage.cached: more than the input (100) it is part of, got 101']);
    expect(usage('input: 100, cached: 60, written: 41')).toEqual(['s.yaml:5:46 turns[0].usage.written: with cached (60), more than the input (100) they are part of, got 41']);
    expect(usage('input: 100, written: 10, written1h: 11')).toEqual(['s.yaml:5:49 turns[0].usage.written1h: more than written (10) it is part of, got 11']);
    // A bad input is said once, at the input: not also as a cached it would then be more than.
    expect(usage('input: -1')).toEqual(['s.yaml:5:20 turns[0].usage.input: expected a number ≥ 0, got -1']);
    expect(usage('input: 1.5, cached: 1')).toEqual(['s.yaml:5:20 turns[0].usage.input: expected a whole number, got number 1.5']);
  });

  it('a tag the core schema does not read is an error at its value, not a value read as if untagged', () => {
    const tagged = (v: string) => scenario(`id: a\nturns:\n  - user: hi\n    assistant: ${v}\n`);
    expect(tagged('!!str 5')).toEqual([]);
    expect(tagged('!foo hello')).toEqual(['s.yaml:4:16: unknown tag !foo: the tags read are the core ones (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)']);
    expect(tagged('!!js/function "f"')).toEqual(['s.yaml:4:16: unknown tag !!js/function: the tags read are the core ones (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)']);
    expect(tagged('!!float x')).toEqual(['s.yaml:4:16: !!float does not fit the value: write one it fits, or no tag']);
    // YAML 1.1's types would be values no check reads (a Map said "expected mapping, got a mapping").
    expect(scenario('id: a\nturns:\n  - user: hi\n    facts: !!omap [name: hi]\n')).toEqual(['s.yaml:4:12: unknown tag !!omap: the tags read are the core ones (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq)']);
  });

  it('a duplicate key is still an error at the repeat', () => {
    expect(scenario('id: a\nturns:\n  - user: hi\n    user: ho\n')).toEqual(['s.yaml:4:5: Map keys must be unique']);
  });

  it('a 30,000-character model name is rejected at once, without suggestions', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.yaml'), 'id: a\nturns:\n  - user: hi\n');
    writeFileSync(join(dir, 'study.yaml'), `scenarios: [a.yaml]\nmodel: ${'x'.repeat(30_000)}\n`);
    const io = capture();
    const started = performance.now();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(io.stderr.replace(`${dir}/`, '')).toBe(`ctxsim: study.yaml:2:8 model: unknown model "${'x'.repeat(30_000)}"\n`);
  });

  it.skipIf(process.platform === 'win32')('a FIFO in the token-cache folder is skipped with a warning, never read', () => {
    const dir = tempDir();
    const { file } = TokenCache.open(dir, 'o200k_base test');
    mkdirSync(dirname(file), { recursive: true });
    execFileSync('mkfifo', [file]);
    const cache = TokenCache.open(dir, 'o200k_base test');
    expect(cache.loaded).toBe(0);
    expect(cache.warnings).toEqual([`token cache entry ${file} cannot be read (not a regular file but a FIFO); counting without it`]);
  });
});
