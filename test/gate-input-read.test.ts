import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ScenarioError } from '../src/errors.js';
import { baselineJson, readBaseline, type Baseline } from '../src/gate/baseline.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Baselines and shard files are read through schemas, by one reader for
 * `check`, `merge` and the library: each bad field one line at
 * `file:line:col path: what`, exit 2; what older versions wrote still reads.
 */

/** Made outside a test: removed after the file's tests. */
const dir = tempDir();
const study = join(dir, 'study.yaml');
const QUIET = ['--no-token-cache', '--quiet'];
let baselineText: string;
let shardText: string;

beforeAll(async () => {
  for (const f of ['kavya-late-order.yaml', 'noah-amnesia.yaml']) cpSync(join(ROOT, 'scenarios', f), join(dir, 'scenarios', f));
  writeFileSync(study, ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies:', '  - full', '  - window-turns: {turns: 2}', ''].join('\n'));
  expect((await cli('run', study, '--save-baseline', join(dir, 'baseline.json'), '--out', join(dir, 'turns.csv'), ...QUIET)).code).toBe(0);
  expect((await cli('run', study, '--shard', '1/1', '--out', join(dir, 'shards'), ...QUIET)).code).toBe(0);
  expect((await cli('run', study, '--out', join(dir, 'results.json'), ...QUIET)).code).toBe(0);
  baselineText = readFileSync(join(dir, 'baseline.json'), 'utf8');
  shardText = readFileSync(join(dir, 'shards', 'shard-1-of-1.json'), 'utf8');
});

/** `line:col` of the `nth` occurrence (from 0) of `needle` in `text`. */
function place(text: string, needle: string, nth = 0): string {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = text.indexOf(needle, i + 1);
  if (i < 0) throw new Error(`not in the text: ${needle}`);
  const before = text.slice(0, i).split('\n');
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

/** `check` against a baseline of this text: its exit code and stderr. */
async function check(text: string, name = 'b.json'): Promise<{ code: number; err: string; file: string }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const r = await cli('check', study, '--baseline', file, ...QUIET);
  return { code: r.code, err: r.err, file };
}

/** `merge` of one shard file of this text (as shard 1 of 1): its exit code and stderr. */
async function merge(text: string): Promise<{ code: number; err: string; file: string }> {
  const folder = join(dir, `m${Math.random().toString(36).slice(2)}`);
  mkdirSync(folder);
  const file = join(folder, 'shard-1-of-1.json');
  writeFileSync(file, text);
  const r = await cli('merge', folder, '--out', join(folder, 'out'), '--quiet');
  return { code: r.code, err: r.err, file };
}

describe('a baseline', () => {
  it('the mutations that crashed check or passed the gate are each one line at file:line:col, exit 2', async () => {
    // The text replaced, its replacement, the value in it the problem is placed at, the problem.
    const cases: [from: string, to: string, value: string, problem: string][] = [
      ['"policy":"full"', '"policy":5', '5', 'rows[0].policy: expected string, got number 5 (quote it)'],
      ['"retained":0', '"retained":-1e308', '-1e308', 'rows[0].retained: expected a number ≥ 0, got -1e+308'],
      ['"latencyP95Ms":547', '"latencyP95Ms":9223372036854775808', '9', 'rows[0].latencyP95Ms: expected a whole number ≤ 9007199254740991, got 9223372036854776000'],
      ['"inputTokens":178', '"inputTokens":"{{7*7}}"', '"', 'rows[0].inputTokens: expected number, got string "{{7*7}}"'],
      ['"inputTokens":178', '"inputTokens":1e400', '1e400', 'rows[0].inputTokens: expected a finite number, got Infinity'],
      ['"outputTokens":41', '"outputTokens":4.5', '4.5', 'rows[0].outputTokens: expected a whole number, got number 4.5'],
      ['"probes":1,"retained":1', '"probes":1,"retained":2', '2', 'rows[2].retained: 2 is more than its probes (1)'],
      ['"cachedTokens":0', '"cachedTokens":179', '179', 'rows[0].cachedTokens: 179 is more than its inputTokens (178)'],
      ['"totalCost":"0.000051300000"', '"totalCost":"-0.000051300000"', '"', 'rows[0].totalCost: expected USD with 12 decimals such as "0.000051300000", at least 0 and under 10^15, got "-0.000051300000"'],
      ['"totalCost":"0.000051300000"', '"totalCost":"1000000000000000.000000000000"', '"', 'rows[0].totalCost: expected USD with 12 decimals such as "0.000051300000", at least 0 and under 10^15, got "1000000000000000.000000000000"'],
      ['"lost":["name@5"]', '"lost":["name"]', '"name"', 'rows[3].lost[0]: expected a probe as fact@turn, got "name"'],
      ['"scenarios": {', '"scenarios": 0, "x": {', '0', 'study.scenarios: expected mapping, got number 0'],
      ['"policies": [', '"policies": "full", "x": [', '"full"', 'study.policies: expected list, got string "full"'],
      ['"policy":"full"', '"policy":"nope"', '"nope"', 'rows[0].policy: "nope" is not a policy of the baseline\'s study'],
    ];
    for (const [from, to, value, problem] of cases) {
      const text = baselineText.replace(from, to);
      const { code, err, file } = await check(text);
      expect(code, to).toBe(2);
      const at = text.indexOf(to) + to.indexOf(value, to.indexOf(':') + 1);
      const before = text.slice(0, at).split('\n');
      expect(err).toBe(`ctxsim: ${file}:${before.length}:${before[before.length - 1]!.length + 1} ${problem}\n`);
    }
  });

  it('a row that is null, given twice or left out: its place, exit 2', async () => {
    const lines = baselineText.split('\n');
    // The index of the rows' key: its line is at + 1, the first row's at + 2.
    const at = lines.indexOf('  "rows": [');
    const nulled = [...lines.slice(0, at + 1), '    null,', ...lines.slice(at + 2)].join('\n');
    expect((await check(nulled)).err).toBe(`ctxsim: ${join(dir, 'b.json')}:${at + 2}:5 rows[0]: expected mapping, got null\n`);
    const twice = [...lines.slice(0, at + 2), lines[at + 1]!, ...lines.slice(at + 2)].join('\n');
    expect((await check(twice)).err).toBe(`ctxsim: ${join(dir, 'b.json')}:${at + 3}:5 rows[1]: kavya-late-order × full × gpt-4o-mini again (as rows[0])\n`);
    const missing = [...lines.slice(0, at + 3), lines[at + 3]!.replace(/,$/, ''), ...lines.slice(at + 5)].join('\n');
    expect((await check(missing)).err).toBe(`ctxsim: ${join(dir, 'b.json')}:${at + 1}:11 rows: no row for noah-amnesia × window-turns:turns=2 × gpt-4o-mini: a baseline has one for each scenario × policy of its study, on each model\n`);
  });

  it('a JSON syntax error is one line at its line and column, not the parser’s message over several lines', async () => {
    const cut = await check(baselineText.replace('"scenarios": {', '"scenarios": }'));
    expect(cut.err).toBe(`ctxsim: ${cut.file}:${place(baselineText, '"scenarios": {').replace(/:(\d+)$/, (_m, c: string) => `:${Number(c) + 13}`)}: invalid JSON: Unexpected token '}'\n`);
    const empty = await check('');
    expect(empty.err).toBe(`ctxsim: ${empty.file}:1:1: invalid JSON: Unexpected end of JSON input\n`);
  });

  it('lists nested too deep: one line, at the key or where the parser stopped', async () => {
    const nested = (n: number) => baselineText.replace('{', `{"extra": ${'['.repeat(n)}${']'.repeat(n)},`);
    expect((await check(nested(300))).err).toMatch(/^ctxsim: .*b\.json:1:11 extra: lists and mappings nested more than 256 deep\n$/);
    expect((await check(nested(30_000))).err).toMatch(/^ctxsim: .*b\.json:1:\d+: lists and mappings nested too deep to parse\n$/);
  });

  it('another file or a later version is named as such', async () => {
    const shard = await check(shardText);
    expect(shard.err).toBe(`ctxsim: ${shard.file}:1:1: a shard file, not a ctxsim baseline: merge it with ctxsim merge\n`);
    const results = await check(readFileSync(join(dir, 'results.json'), 'utf8'));
    expect(results.err).toBe(`ctxsim: ${results.file}:1:1: a run's results (results.json), not a ctxsim baseline: save one with ctxsim run --save-baseline FILE\n`);
    const later = await check(baselineText.replace('"schemaVersion": 1', '"schemaVersion": 2'));
    expect(later.err).toBe(`ctxsim: ${later.file}:2:20 schemaVersion: a ctxsim baseline of schemaVersion 2, written by a later ctxsim; this one reads schemaVersion 1\n`);
  });

  it('what older versions wrote still reads: rows without a model, lost probes or answers, a study without its rule set', async () => {
    const passed = await cli('check', study, '--baseline', join(dir, 'baseline.json'), '--json', ...QUIET);
    expect(passed.code).toBe(0);
    const old = baselineText.replace(/"model":"gpt-4o-mini",/g, '').replace(',"lost":["name@5"]', '').replace('    "rules": "openai",\n', '');
    expect(old).not.toContain('"rules"');
    writeFileSync(join(dir, 'old.json'), old);
    const r = await cli('check', study, '--baseline', join(dir, 'old.json'), '--json', ...QUIET);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as { differences: string[] };
    expect(json.differences).toEqual(['rules: not recorded → openai']);
  });

  it('keys it does not know are left out (a later version’s additions), in the study and in rows', async () => {
    const text = baselineText.replace('"seed": 7,', '"seed": 7,\n    "later": {"x": 1},').replace('"latencyP95Ms":547}', '"latencyP95Ms":547,"laterColumn":-1}');
    const file = join(dir, 'later.json');
    writeFileSync(file, text);
    const b = readBaseline(file);
    expect(Object.keys(b.study)).not.toContain('later');
    expect(Object.keys(b.rows[0]!)).not.toContain('laterColumn');
    expect(b).toEqual(readBaseline(join(dir, 'baseline.json')));
  });

  it('the library’s readBaseline is the reader check uses: the same problems, each with its file, line, column and path', async () => {
    const text = baselineText.replace('"retained":0', '"retained":-1');
    const { err, file } = await check(text, 'lib.json');
    let thrown: unknown;
    try {
      readBaseline(file);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ScenarioError);
    const e = thrown as ScenarioError;
    expect(`ctxsim: ${e.message}\n`).toBe(err);
    const first = text.split('\n').indexOf('  "rows": [') + 1;
    expect(e.problems).toEqual([{ file, line: first + 1, column: text.split('\n')[first]!.indexOf('-1') + 1, path: 'rows[0].retained', message: 'expected a number ≥ 0, got -1' }]);
  });

  it('lists 20 problems and counts the rest', async () => {
    const text = baselineText.replace(/"auxTokens":0/g, '"auxTokens":-1').replace(/"overflowTurns":0/g, '"overflowTurns":"0"').replace(/"probes":(\d)/g, '"probes":$1.5').replace(/"inputTokens":(\d+)/g, '"inputTokens":"$1"').replace(/"cachedTokens":0/g, '"cachedTokens":null').replace(/"outputTokens":(\d+)/g, '"outputTokens":-$1').replace(/"latencyP95Ms":(\d+)/g, '"latencyP95Ms":$1.25');
    const { err, file } = await check(text);
    const lines = err.trimEnd().split('\n');
    expect(lines).toHaveLength(21);
    expect(lines[20]).toBe(`ctxsim: ${file}: and 8 more problems`);
  });

  it('a file over 4 MB names a problem by its field path, without reparsing it for the line', () => {
    const rows = 20_000;
    const scenarios = Object.fromEntries(Array.from({ length: rows }, (_, i) => [`s${i}`, '0123456789abcdef']));
    const row = (i: number) => ({ scenario: `s${i}`, policy: 'full', model: 'gpt-4o-mini', inputTokens: 178, cachedTokens: 0, outputTokens: 41, auxTokens: 0, costMicroUsd: 51.3, probes: 1, retained: 1, overflowTurns: 0, latencyP95Ms: 547 });
    const b: Baseline = { schemaVersion: 1, studyHash: 'x', study: { model: 'gpt-4o-mini', tokenizer: 'o200k_base', prices: 'builtin', cache: 'auto', rules: 'openai', seed: 7, policies: ['full'], scenarios }, rows: Array.from({ length: rows }, (_, i) => row(i)) };
    const text = baselineJson(b);
    expect(text.length).toBeGreaterThan(4_000_000);
    const file = join(dir, 'large.json');
    writeFileSync(file, text);
    expect(readBaseline(file).rows).toHaveLength(rows);
    writeFileSync(file, text.replace(/"retained":1,"overflowTurns":0,"latencyP95Ms":547}\n/, '"retained":-1,"overflowTurns":0,"latencyP95Ms":547}\n'));
    expect(() => readBaseline(file)).toThrow(new ScenarioError([{ file, path: `rows[${rows - 1}].retained`, message: 'expected a number ≥ 0, got -1' }]));
  });
});

describe('a shard file', () => {
  it('money as a string or a list, and keys it does not know, are one line at file:line:col, exit 2', async () => {
    const money = shardText.replace(/"costOutput":\{"\$pico":"\d+"\}/, '"costOutput":"5"');
    const a = await merge(money);
    expect(a.code).toBe(2);
    expect(a.err).toBe(`ctxsim: ${a.file}:${place(money, '"5"')} turns[0].costOutput: expected money as {"$pico": "123"}: whole pico-dollars, at least 0 and under 10^27, got "5"\n`);
    const list = shardText.replace(/"costOutput":\{"\$pico":"\d+"\}/, '"costOutput":[]');
    expect((await merge(list)).err).toMatch(/^ctxsim: .*shard-1-of-1\.json:1:\d+ turns\[0\]\.costOutput: expected money as \{"\$pico": "123"\}: whole pico-dollars, at least 0 and under 10\^27, got a list\n$/);
    const extra = shardText.replace('"turn":1,', '"turn":1,"later":0,');
    const b = await merge(extra);
    expect(b.err).toBe(`ctxsim: ${b.file}:${place(extra, '"later"')} turns[0].later: unknown key "later"\n`);
    // The study's gate limits, which the merged baseline records, as a study's gate reads them.
    const limit = shardText.replace('"maxRetentionDrop":"0"', '"maxRetentionDrop":"-1"');
    const c = await merge(limit);
    expect(c.err).toBe(`ctxsim: ${c.file}:${place(limit, '"-1"')} study.gate.maxRetentionDrop: a limit is at least 0 probes, got -1\n`);
  });

  it('a JSON syntax error is one line at its line and column', async () => {
    const r = await merge(`${shardText.slice(0, 41)}\n}`);
    expect(shardText.slice(0, 41)).toBe('{"kind":"ctxsim-shard","schemaVersion":1,');
    expect(r.err).toBe(`ctxsim: ${r.file}:2:1: invalid JSON: Expected double-quoted property name\n`);
  });

  it('what a shard of an earlier version lacks (answered counts, calls) still merges', async () => {
    const older = shardText.replace(/,"calls":\d+/g, '').replace(/,"answered":null,"answerRetention":null/g, '');
    expect(older).not.toContain('"calls"');
    expect(older).not.toContain('"answered"');
    const r = await merge(older);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it('the report settings its info carries are read as a study holds them (REPORT_SETTINGS): each merges, a value out of bounds is refused at its place', async () => {
    expect(shardText).toContain('"info":{"studyFile":');
    const withInfo = (fields: string) => shardText.replace('"info":{', `"info":{${fields},`);
    const given = await merge(withInfo('"minRetention":0.9,"minSaving":0.1,"budgetColumns":["policy","retention"],"budgetSort":"name"'));
    expect(given).toMatchObject({ code: 0, err: '' });
    const sort = await merge(withInfo('"budgetSort":"cheapest"'));
    expect(sort.err).toMatch(/^ctxsim: .*shard-1-of-1\.json:1:\d+ info\.budgetSort: expected one of cost\|retention\|name\|study, got "cheapest"\n$/);
    const share = await merge(withInfo('"minRetention":1.5'));
    expect(share.err).toMatch(/^ctxsim: .*shard-1-of-1\.json:1:\d+ info\.minRetention: /);
  });

  it('a summary row outside its shard’s slice, or given twice, is refused at its place', async () => {
    const shard = JSON.parse(shardText) as { shard: { index: number; count: number }; summary: unknown[] };
    shard.summary.push(shard.summary[0]);
    const twice = await merge(JSON.stringify(shard));
    expect(twice.err).toMatch(/^ctxsim: .*:1:\d+ summary\[4\]: kavya-late-order × full × gpt-4o-mini again \(as summary\[0\]\)\n$/);
    shard.summary.pop();
    shard.summary.pop();
    const short = await merge(JSON.stringify(shard));
    expect(short.err).toMatch(/^ctxsim: .*:1:\d+ summary: no row for noah-amnesia × window-turns:turns=2 × gpt-4o-mini, which is in this shard's slice of the work\n$/);
  });
});

describe('shards of a study whose scenario ids look like numbers', () => {
  it('merge into the unsharded run’s files, byte for byte (its scenarios in the study’s order)', async () => {
    const d = join(dir, 'numeric');
    mkdirSync(d);
    // "zeta" first, then "7": an object's keys would put "7" first.
    writeFileSync(join(d, 'a.yaml'), 'id: zeta\nturns:\n  - user: "Hi, I\'m Ana."\n    facts: {name: Ana}\n  - user: What is my name?\n    probe: [name]\n');
    writeFileSync(join(d, 'b.yaml'), 'id: "7"\nturns:\n  - user: Hello there.\n  - user: And again.\n');
    writeFileSync(join(d, 'study.yaml'), ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [a.yaml, b.yaml]', 'policies: [full, {window-turns: {turns: 1}}]', ''].join('\n'));
    process.env.SOURCE_DATE_EPOCH = '1700000000';
    try {
      expect((await cli('run', join(d, 'study.yaml'), '--out', join(d, 'whole'), ...QUIET)).code).toBe(0);
      for (const k of [1, 2]) expect((await cli('run', join(d, 'study.yaml'), '--shard', `${k}/2`, '--out', join(d, 'shards'), ...QUIET)).code).toBe(0);
      expect((await cli('merge', join(d, 'shards'), '--out', join(d, 'merged'), '--quiet')).code).toBe(0);
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
    const files = readdirSync(join(d, 'whole')).sort();
    expect(readdirSync(join(d, 'merged')).sort()).toEqual(files);
    expect(readFileSync(join(d, 'merged', 'summary.csv'), 'utf8').split('\n')[1]).toMatch(/^zeta,/);
    for (const f of files) expect(readFileSync(join(d, 'merged', f)).equals(readFileSync(join(d, 'whole', f))), f).toBe(true);
  });
});
