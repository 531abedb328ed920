import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ENGINE_VERSION } from '../src/engine/version.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

let dir: string;
const study = () => join(dir, 'study.yaml');
const baseline = () => join(dir, 'baseline.json');

beforeEach(async () => {
  dir = tempDir('ctxsim-gate-');
  for (const f of ['kavya-late-order.yaml', 'noah-amnesia.yaml']) cpSync(join(ROOT, 'scenarios', f), join(dir, 'scenarios', f));
  writeFileSync(
    study(),
    ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies:', '  - full', '  - window-turns: {turns: 2}', 'out: out/', ''].join('\n'),
  );
  const r = await cli('run', study(), '--save-baseline', baseline(), '--out', join(dir, 'turns.csv'), '--quiet');
  expect(r.code).toBe(0);
});

afterEach(() => {
  delete process.env.GITHUB_STEP_SUMMARY;
  delete process.env.SOURCE_DATE_EPOCH;
});

describe('ctxsim check', () => {
  it('passes an unchanged study: one line per policy', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--quiet');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        '### ctxsim check: passed',
        '',
        'Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.',
        '',
        '- full: cost $0.000125 → $0.000125 (+0.0%), retained 1/1 → 1/1 (2 scenarios)',
        '- window-turns:turns=2: cost $0.000116 → $0.000116 (+0.0%), retained 0/1 → 0/1 (2 scenarios)',
        '',
      ].join('\n'),
    );
  });

  it('says when retention rests on simulated memory, under the limits', async () => {
    // keepRecent=1: it folds in these short conversations, so its memory is simulated (by default it keeps them whole).
    const policies = ['--policy', 'full', '--policy', 'summary-buffer:keep=0.9,keepRecent=1'];
    expect((await cli('run', study(), ...policies, '--save-baseline', join(dir, 'memory.json'), '--out', join(dir, 'm.csv'), '--quiet')).code).toBe(0);
    const r = await cli('check', study(), ...policies, '--baseline', join(dir, 'memory.json'), '--quiet');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').slice(2, 5)).toEqual([
      'Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.',
      '',
      "Simulated memory (summary-buffer keep 0.9): retained means the fact's value is in what is sent, an upper bound on what a model would answer.",
    ]);
  });

  it('--verbose prints every scenario × policy row', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--verbose', '--quiet');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        '### ctxsim check: passed',
        '',
        'Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.',
        '',
        '| verdict | scenario | policy | cost before | cost after | Δ cost | retained before | retained after | overflows before | overflows after | why |',
        '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
        '| pass | kavya-late-order | full | $0.000051 | $0.000051 | +0.0% | 0/0 | 0/0 | 0 | 0 |  |',
        '| pass | kavya-late-order | window-turns:turns=2 | $0.000051 | $0.000051 | +0.0% | 0/0 | 0/0 | 0 | 0 |  |',
        '| pass | noah-amnesia | full | $0.000074 | $0.000074 | +0.0% | 1/1 | 1/1 | 0 | 0 |  |',
        '| pass | noah-amnesia | window-turns:turns=2 | $0.000065 | $0.000065 | +0.0% | 0/1 | 0/1 | 0 | 0 |  |',
        '',
      ].join('\n'),
    );
  });

  it('a dearer model trips the gate and names every scenario × policy', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--model', 'gpt-4o', '--quiet');
    expect(r.code).toBe(1);
    expect(r.out).toContain('- model: gpt-4o-mini → gpt-4o');
    // gpt-4o costs 2.5e-6/1e-5 against 1.5e-7/6e-7 per token: input ×16.67, output ×16.67 → +1566.7%
    expect(r.out).toContain('| fail | kavya-late-order | full | $0.000051 | $0.000855 | +1566.7% |');
    expect(r.out.match(/^\| fail \|/gm)).toHaveLength(4);
    expect(r.out).toContain(`| fail | kavya-late-order | full | $0.000051 | $0.000855 | +1566.7% | 0/0 | 0/0 | 0 | 0 | cost $0.000051 → $0.000855 (+1566.7%, limit +5%) |`);
    // The command that accepts it repeats the flags that changed the run.
    expect(r.out.endsWith(`To accept the change, save the new baseline:\n\n    npx ctxsim run ${study()} --model gpt-4o --save-baseline ${baseline()} --force\n`)).toBe(true);
  });

  it('an improvement passes', async () => {
    await cli('run', study(), '--model', 'gpt-4o', '--save-baseline', baseline(), '--force', '--out', join(dir, 'turns.csv'), '--quiet');
    const r = await cli('check', study(), '--baseline', baseline(), '--quiet');
    expect(r.code).toBe(0);
    expect(r.out).toContain('- full: cost $0.002083 → $0.000125 (-94.0%), retained 1/1 → 1/1 (2 scenarios)\n');
  });

  it('a longer system prompt in a scenario trips it for that scenario only', async () => {
    const f = join(dir, 'scenarios', 'noah-amnesia.yaml');
    writeFileSync(f, readFileSync(f, 'utf8').replace('system: You are a friendly assistant.', `system: You are a friendly assistant. ${'Always be polite. '.repeat(30)}`));
    const r = await cli('check', study(), '--baseline', baseline(), '--verbose', '--quiet');
    expect(r.code).toBe(1);
    expect(r.out).toContain('- scenario changed: noah-amnesia');
    expect(r.out).toMatch(/^\| fail \| noah-amnesia \| full \|/m);
    expect(r.out).toMatch(/^\| fail \| noah-amnesia \| window-turns:turns=2 \|/m);
    expect(r.out).toMatch(/^\| pass \| kavya-late-order \| full \|/m);
  });

  it('a larger budget (re-parameterized policy) is compared with its old variant and trips it', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--policy', 'full', '--policy', 'window-turns:turns=4', '--verbose', '--quiet');
    expect(r.code).toBe(1);
    expect(r.out).toContain('- policy: window-turns:turns=2 → window-turns:turns=4');
    // noah: turns 4 and 5 now send 3 and 4 earlier exchanges instead of 2: dearer, and the name is retained again.
    expect(r.out).toMatch(/^\| fail \| noah-amnesia \| window-turns:turns=2 → window-turns:turns=4 \|.*\| 0\/1 \| 1\/1 \|/m);
    // kavya has 3 turns: a window of 2 or 4 exchanges sends the same.
    expect(r.out).toMatch(/^\| pass \| kavya-late-order \| window-turns:turns=2 → window-turns:turns=4 \|.*\| \+0\.0% \|/m);
  });

  it('a retention drop trips it: the failing row, the fact lost at its turn, the command that accepts it', async () => {
    await cli('run', study(), '--policy', 'window-turns:turns=4', '--save-baseline', baseline(), '--force', '--out', join(dir, 'turns.csv'), '--quiet');
    const r = await cli('check', study(), '--baseline', baseline(), '--policy', 'window-turns:turns=3', '--quiet');
    expect(r.code).toBe(1);
    expect(r.out).toBe(
      [
        '### ctxsim check: FAILED (1 regression)',
        '',
        'Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.',
        '',
        "The study differs from the baseline's:",
        '',
        '- policy: window-turns:turns=4 → window-turns:turns=3',
        '',
        '| verdict | scenario | policy | cost before | cost after | Δ cost | retained before | retained after | overflows before | overflows after | why |',
        '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
        '| fail | noah-amnesia | window-turns:turns=4 → window-turns:turns=3 | $0.000074 | $0.000071 | -4.1% | 1/1 | 0/1 | 0 | 0 | retained 1/1 → 0/1 (1 more probe lost, limit 0) |',
        '',
        'Facts lost:',
        '',
        '- noah-amnesia, window-turns:turns=3: `name` at turn 5 (missing)',
        '',
        'To accept the change, save the new baseline:',
        '',
        `    npx ctxsim run ${study()} --policy window-turns:turns=3 --save-baseline ${baseline()} --force`,
        '',
      ].join('\n'),
    );
    const lenient = await cli('check', study(), '--baseline', baseline(), '--policy', 'window-turns:turns=3', '--max-retention-drop', '1', '--quiet');
    expect(lenient.code).toBe(0);
    const points = await cli('check', study(), '--baseline', baseline(), '--policy', 'window-turns:turns=3', '--max-retention-drop', '2.5%', '--json', '--quiet');
    expect(points.code).toBe(1);
    const row = JSON.parse(points.out).rows[0];
    expect(row.reasons).toEqual(['retained 1/1 → 0/1 (100.0% → 0.0%, limit −2.5% points)']);
    expect(row.lostFacts).toEqual([{ fact: 'name', turn: 5, outcome: 'missing' }]);
  });

  it('a bare number as a cost limit is refused (fraction or percentage?)', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--max-cost-increase', '0.25', '--quiet');
    expect(r.code).toBe(2);
    expect(r.err).toBe('ctxsim: --max-cost-increase: write 25% or 0.25% (a bare number could be a fraction or a percentage), got 0.25\n');
    const plain = readFileSync(study(), 'utf8');
    writeFileSync(study(), `${plain}gate: {maxCostIncrease: 5}\n`);
    const s = await cli('check', study(), '--baseline', baseline(), '--quiet');
    expect(s.code).toBe(2);
    expect(s.err).toBe(`ctxsim: ${study()}:8:25 gate.maxCostIncrease: write 500% or 5% (a bare number could be a fraction or a percentage), got 5\n`);
    // The limit prints as given, unrounded.
    writeFileSync(study(), plain);
    const exact = await cli('check', study(), '--baseline', baseline(), '--max-cost-increase', '0.25%', '--max-retention-drop', '2.5%', '--quiet');
    expect(exact.code).toBe(0);
    expect(exact.out).toContain('\nLimits per scenario × policy: cost up to +0.25%, retention down by up to 2.5% (points).\n');
  });

  it('a limit below 0, or a retention drop beyond 100%, is refused: on the command line, and at its place in the study', async () => {
    const flags = [
      [['--max-cost-increase=-5%'], '--max-cost-increase: a limit is at least 0%, got -5%'],
      [['--max-cost-increase', '-5%'], '--max-cost-increase: a limit is at least 0%, got -5%'],
      [['--max-retention-drop', '150%'], '--max-retention-drop: retention cannot drop by more than 100%, got 150%'],
      [['--max-retention-drop', '-1'], '--max-retention-drop: a limit is at least 0 probes, got -1'],
    ] as const;
    for (const [args, line] of flags) expect(await cli('check', study(), '--baseline', baseline(), ...args, '--quiet')).toEqual({ code: 2, out: '', err: `ctxsim: ${line}\n` });
    writeFileSync(study(), `${readFileSync(study(), 'utf8')}gate:\n  maxCostIncrease: -1%\n  maxRetentionDrop: 101%\n`);
    // Any command reads the study, and names both at once.
    expect(await cli('run', study(), '--out', '-', '--quiet')).toEqual({
      code: 2,
      out: '',
      err: `ctxsim: ${study()}:9:20 gate.maxCostIncrease: a limit is at least 0%, got -1%\nctxsim: ${study()}:10:21 gate.maxRetentionDrop: retention cannot drop by more than 100%, got 101%\n`,
    });
  });

  it('--out DIR writes the new run\'s reports there', async () => {
    const out = join(dir, 'check-out');
    const r = await cli('check', study(), '--baseline', baseline(), '--out', out, '--quiet');
    expect(r.code).toBe(0);
    const whole = join(dir, 'run-out');
    expect((await cli('run', study(), '--out', whole, '--quiet')).code).toBe(0);
    const files = readdirSync(whole).sort();
    expect(files).toContain('report.html');
    expect(readdirSync(out).sort()).toEqual(files);
    for (const f of files.filter((f) => f !== 'results.json')) expect(readFileSync(join(out, f)).equals(readFileSync(join(whole, f))), f).toBe(true);
  });

  it('--out FILE.json and FILE.md write that one file, as run --out FILE does (not a folder of that name); --out - is refused (stdout is the verdict)', async () => {
    // results.json says when it was made: pinned, so the two files can be compared.
    vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
    onTestFinished(() => void vi.unstubAllEnvs());
    for (const name of ['check.json', 'check.md']) {
      const file = join(dir, name);
      const r = await cli('check', study(), '--baseline', baseline(), '--out', file, '--quiet');
      expect(r.code, r.err).toBe(0);
      expect(statSync(file).isFile()).toBe(true);
      const whole = join(dir, `run-${name}`);
      expect((await cli('run', study(), '--out', whole, '--quiet')).code).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe(readFileSync(whole, 'utf8'));
    }
    expect(await cli('check', study(), '--baseline', baseline(), '--out', '-', '--quiet')).toEqual({
      code: 2,
      out: '',
      err: 'ctxsim: --out -: check prints its verdict on stdout; name a folder or a file (.csv .json .md .html) for the reports\n',
    });
    expect(await cli('check', study(), '--baseline', baseline(), '--out', '', '--quiet')).toEqual({
      code: 2,
      out: '',
      err: 'ctxsim: --out: check prints its verdict on stdout; name a folder or a file (.csv .json .md .html) for the reports\n',
    });
    expect((await cli('check', study(), '--baseline', baseline(), '--out', join(dir, 'x.txt'), '--quiet')).err).toBe(
      `ctxsim: --out ${join(dir, 'x.txt')}: unknown file type .txt; name a file ending in .csv, .json, .md (.markdown), .html (.htm) or a folder (end it with /)\n`,
    );
  });

  it('names only the facts the change lost: the baseline names those it had lost already', async () => {
    const scenario = ['id: two-facts', 'system: You are a helpful assistant.', 'turns:'];
    const turn = (user: string, extra = '') => [`  - user: ${user}`, ...(extra ? [`    ${extra}`] : []), '    assistant: Noted.'];
    scenario.push(...turn('My name is Ada.', 'facts: {name: Ada}'), ...turn('Nice weather.'), ...turn('My city is Oslo.', 'facts: {city: Oslo}'));
    scenario.push(...turn('Tell me a joke.'), ...turn('Another one.'), ...turn('What are my name and city?', 'probe: [name, city]'));
    writeFileSync(join(dir, 'scenarios', 'two-facts.yaml'), `${scenario.join('\n')}\n`);
    // Three turns back at turn 6 reach the city (turn 3), not the name (turn 1); two reach neither.
    expect((await cli('run', study(), '--policy', 'window-turns:turns=3', '--save-baseline', baseline(), '--force', '--out', '-', '--quiet')).code).toBe(0);
    const rows = JSON.parse(readFileSync(baseline(), 'utf8')).rows as { scenario: string; lost?: string[] }[];
    expect(rows.find((r) => r.scenario === 'two-facts')!.lost).toEqual(['name@6']);
    const r = await cli('check', study(), '--baseline', baseline(), '--policy', 'window-turns:turns=2', '--json', '--quiet');
    expect(r.code).toBe(1);
    const failed = (JSON.parse(r.out).rows as { scenario: string; lostFacts?: unknown }[]).find((x) => x.scenario === 'two-facts')!;
    expect(failed.lostFacts).toEqual([{ fact: 'city', turn: 6, outcome: 'missing' }]);
    // A baseline that does not name its lost probes (written before rows did) cannot tell: every one is listed.
    writeFileSync(baseline(), readFileSync(baseline(), 'utf8').replace(/,"lost":\["name@6"\]/, ''));
    const old = await cli('check', study(), '--baseline', baseline(), '--policy', 'window-turns:turns=2', '--json', '--quiet');
    const all = (JSON.parse(old.out).rows as { scenario: string; lostFacts?: unknown }[]).find((x) => x.scenario === 'two-facts')!;
    expect(all.lostFacts).toEqual([
      { fact: 'name', turn: 6, outcome: 'missing' },
      { fact: 'city', turn: 6, outcome: 'missing' },
    ]);
  });

  it('rows on one side only are listed, not failed', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--policy', 'full', '--policy', 'window-tokens:budget=50', '--policy', 'window-turns:turns=2', '--quiet');
    expect(r.code).toBe(0);
    // One line per policy and side, its scenarios named.
    expect(r.out).toContain('\n- window-tokens:budget=50: added for kavya-late-order and noah-amnesia\n');
  });

  it('appends the result by cause to $GITHUB_STEP_SUMMARY (the rows under <details>) and writes parseable JUnit XML', async () => {
    const summary = join(dir, 'summary.md');
    writeFileSync(summary, '# before\n');
    process.env.GITHUB_STEP_SUMMARY = summary;
    const junit = join(dir, 'junit', 'gate.xml');
    const r = await cli('check', study(), '--baseline', baseline(), '--model', 'gpt-4o', '--junit', junit, '--quiet', '--no-token-cache');
    expect(r.code).toBe(1);
    const text = readFileSync(summary, 'utf8');
    expect(text.split('\n').slice(0, 17)).toEqual([
      '# before',
      '### ctxsim check: FAILED (4 regressions, 1 cause)',
      '',
      'Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.',
      '',
      "The study differs from the baseline's:",
      '',
      '- model: gpt-4o-mini → gpt-4o',
      '',
      '#### 1. model: gpt-4o-mini → gpt-4o: 4 regressions',
      '',
      `\`${study()}\` line 2`,
      '',
      'The worst: kavya-late-order × full: cost $0.000051 → $0.000855 (+1566.7%, limit +5%)',
      '',
      '<details><summary>The 4 rows it moved</summary>',
      '',
    ]);
    expect(text).toContain('\n| scenario | policy | Δ cost | retained | why |\n|---|---|---:|---:|---|\n| kavya-late-order | full | +1566.7% | 0/0 → 0/0 | cost $0.000051 → $0.000855 (+1566.7%, limit +5%) |\n');
    expect(text.endsWith(`</details>\n\nTo accept the change, save the new baseline:\n\n    npx ctxsim run ${study()} --model gpt-4o --save-baseline ${baseline()} --force\n\n`)).toBe(true);
    const xml = readFileSync(junit, 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false }).parse(xml);
    const suite = doc.testsuites.testsuite;
    expect(suite['@_tests']).toBe('4');
    expect(suite['@_failures']).toBe('4');
    // Each failure says the value before and after.
    const kavya = suite.testcase.find((c: Record<string, string>) => c['@_classname'] === 'kavya-late-order' && c['@_name'] === 'full');
    expect(kavya.failure['@_message']).toBe('cost $0.000051 → $0.000855 (+1566.7%, limit +5%)');
    expect(suite.testcase.map((c: Record<string, string>) => `${c['@_classname']}/${c['@_name']}`).sort()).toEqual([
      'kavya-late-order/full',
      'kavya-late-order/window-turns:turns=2',
      'noah-amnesia/full',
      'noah-amnesia/window-turns:turns=2',
    ]);
  });

  it('--comment FILE writes the markdown a bot posts on the pull request: the result, the new run’s verdict, what changed, the causes', async () => {
    const comment = join(dir, 'comment.md');
    const pass = await cli('check', study(), '--baseline', baseline(), '--comment', comment, '--quiet', '--no-token-cache');
    expect(pass.code).toBe(0);
    const passed = readFileSync(comment, 'utf8').split('\n');
    expect(passed[0]).toBe('### ctxsim check: passed');
    // The verdict leads with the pick.
    expect(passed[2]).toMatch(/^Use full: /);
    expect(passed.slice(3)).toEqual([
      '',
      'Limits per scenario × policy: cost up to +5%, up to 0 more probes lost.',
      '',
      "Nothing in the study differs from the baseline's.",
      '',
      '- full: cost $0.000125 → $0.000125 (+0.0%), retained 1/1 → 1/1 (2 scenarios)',
      '- window-turns:turns=2: cost $0.000116 → $0.000116 (+0.0%), retained 0/1 → 0/1 (2 scenarios)',
      '',
    ]);
    const fail = await cli('check', study(), '--baseline', baseline(), '--model', 'gpt-4o', '--comment', comment, '--quiet', '--no-token-cache');
    expect(fail.code).toBe(1);
    const failed = readFileSync(comment, 'utf8');
    expect(failed.split('\n')[0]).toBe('### ctxsim check: FAILED (4 regressions, 1 cause)');
    expect(failed).toContain("\n\nThe study differs from the baseline's:\n\n- model: gpt-4o-mini → gpt-4o\n\n#### 1. model: gpt-4o-mini → gpt-4o: 4 regressions\n\n");
    expect(failed).toContain('\n<details><summary>The 4 rows it moved</summary>\n');
    // The verdict is the new run's, on gpt-4o.
    expect(failed).toMatch(/\n\nUse full: /);
    // Written with the JUnit file, all or nothing: a comment path under a file is refused before the run.
    const bad = await cli('check', study(), '--baseline', baseline(), '--comment', join(baseline(), 'c.md'), '--junit', join(dir, 'j.xml'), '--quiet');
    expect([bad.code, bad.err.startsWith('ctxsim: --comment ')]).toEqual([2, true]);
    expect(readdirSync(dir)).not.toContain('j.xml');
    expect((await cli('check', study(), '--comment', '', '--quiet')).err).toBe('ctxsim: --comment: name a file for the pull request comment (markdown)\n');
  });

  it('--json prints machine-readable results; the study gate block sets thresholds, none looser than its baseline was saved with', async () => {
    writeFileSync(study(), `${readFileSync(study(), 'utf8')}gate: {baseline: baseline.json, maxCostIncrease: 2000%}\n`);
    // Raised in the study alone (as a pull request could), the limit is the baseline's: the dearer model fails, and every report says why.
    const loosened = await cli('check', study(), '--model', 'gpt-4o', '--json', '--quiet');
    expect(loosened.code).toBe(1);
    expect(JSON.parse(loosened.out).limits.maxCostIncrease).toBe(0.05);
    expect(JSON.parse(loosened.out).differences).toEqual(['gate.maxCostIncrease: 5% → 2000%; the baseline\'s 5% applies until a baseline saved with 2000% is committed', 'model: gpt-4o-mini → gpt-4o']);
    // A baseline saved with it accepts it.
    expect((await cli('run', study(), '--save-baseline', baseline(), '--force', '--out', join(dir, 'turns.csv'), '--quiet')).code).toBe(0);
    expect(JSON.parse(readFileSync(baseline(), 'utf8')).study.gate).toEqual({ maxCostIncrease: '2000%', maxRetentionDrop: '0', maxAnswerDrop: '0' });
    const r = await cli('check', study(), '--model', 'gpt-4o', '--json', '--quiet');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.failed).toBe(false);
    expect(j.rows).toHaveLength(4);
    expect(j.differences).toEqual(['model: gpt-4o-mini → gpt-4o']);
  });

  it('names a change of any setting of the run, those without a field of their own in the baseline too (latency, fallback)', async () => {
    writeFileSync(study(), `${readFileSync(study(), 'utf8')}latency: {gpt-4o-mini: {ttftMs: 900}}\nfallback: {model: gpt-4o, rate: 0.5}\n`);
    const r = await cli('check', study(), '--baseline', baseline(), '--json', '--quiet');
    expect(JSON.parse(r.out).differences).toEqual(['fallback: set', 'latency: set']);
    // A baseline made with them names a change of one, and one taken away.
    const saved = await cli('run', study(), '--save-baseline', baseline(), '--force', '--out', join(dir, 'turns.csv'), '--quiet');
    expect(saved.code, saved.err).toBe(0);
    expect(JSON.parse(readFileSync(baseline(), 'utf8')).study.settings).toEqual({ fallback: expect.stringMatching(/^[0-9a-f]{16}$/), latency: expect.stringMatching(/^[0-9a-f]{16}$/) });
    // The same settings written in another order are the same.
    writeFileSync(study(), readFileSync(study(), 'utf8').replace('fallback: {model: gpt-4o, rate: 0.5}', 'fallback: {rate: 0.5, model: gpt-4o}'));
    expect(JSON.parse((await cli('check', study(), '--baseline', baseline(), '--json', '--quiet')).out).differences).toEqual([]);
    writeFileSync(study(), readFileSync(study(), 'utf8').replace('ttftMs: 900', 'ttftMs: 100').replace(/fallback:.*\n/, ''));
    const again = await cli('check', study(), '--baseline', baseline(), '--json', '--quiet');
    expect(JSON.parse(again.out).differences).toEqual(['fallback: removed', 'latency: changed']);
  });

  it('--json gives money as USD decimal strings, as results.json', async () => {
    const r = await cli('check', study(), '--baseline', baseline(), '--model', 'gpt-4o', '--json', '--quiet');
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(j.money).toBe('USD, exact decimal strings with 12 decimals');
    const full = j.policies.find((p: { policy: string }) => p.policy === 'full');
    expect([full.costBefore, full.costAfter]).toEqual(['0.000124950000', '0.002082500000']);
    const row = j.rows.find((x: { scenario: string; policy: string }) => x.scenario === 'kavya-late-order' && x.policy === 'full');
    expect([row.before.totalCost, row.after.totalCost]).toEqual(['0.000051300000', '0.000855000000']);
    expect(row.before.costMicroUsd).toBeUndefined();
    expect(r.out).not.toMatch(/"cost(Before|After|MicroUsd)": \d/);
  });

  it('with GITHUB_ACTIONS=true a tripped gate prints one error annotation per cause, on stderr, at the file and line that changed', async () => {
    process.env.GITHUB_ACTIONS = 'true';
    process.env.GITHUB_WORKSPACE = dir;
    try {
      // With no cache, stderr holds the annotations only (a cache that served units says so there: test/cache-folder.test.ts).
      const r = await cli('check', study(), '--baseline', baseline(), '--model', 'gpt-4o', '--json', '--quiet', '--no-token-cache');
      expect(r.code).toBe(1);
      JSON.parse(r.out);
      // A model change moved the 4 rows: one annotation, at the study's `model:` line, its path from the workspace's root.
      expect(r.err).toBe('::error file=study.yaml,line=2,title=ctxsim check%3A model%3A gpt-4o-mini → gpt-4o::4 regressions; the worst, kavya-late-order × full: cost $0.000051 → $0.000855 (+1566.7%25, limit +5%25); the 3 others in the job summary\n');
      // A changed scenario: at its file's id line.
      const f = join(dir, 'scenarios', 'noah-amnesia.yaml');
      writeFileSync(f, readFileSync(f, 'utf8').replace('system: You are a friendly assistant.', `system: You are a friendly assistant. ${'Always be polite. '.repeat(30)}`));
      const scenario = await cli('check', study(), '--baseline', baseline(), '--quiet', '--no-token-cache');
      expect(scenario.code).toBe(1);
      expect(scenario.err).toMatch(/^::error file=scenarios\/noah-amnesia\.yaml,line=3,title=ctxsim check%3A scenario changed%3A noah-amnesia::2 regressions; the worst, noah-amnesia × /);
      expect(scenario.err.split('\n')).toHaveLength(2);
      const pass = await cli('check', study(), '--baseline', baseline(), '--quiet', '--no-token-cache', '--scenario', join(dir, 'scenarios', 'kavya-late-order.yaml'));
      expect(pass.err).toBe('');
    } finally {
      delete process.env.GITHUB_ACTIONS;
      delete process.env.GITHUB_WORKSPACE;
    }
    const outside = await cli('check', study(), '--baseline', baseline(), '--model', 'gpt-4o', '--quiet');
    expect(outside.code).toBe(1);
    expect(outside.err).not.toContain('::error');
  });

  it('the baseline file holds each row’s cost as USD, a decimal string; one holding micro-dollars still reads', async () => {
    const text = readFileSync(baseline(), 'utf8');
    expect(text).toContain('"scenario":"kavya-late-order","policy":"full","model":"gpt-4o-mini","inputTokens":178,"cachedTokens":0,"outputTokens":41,"auxTokens":0,"totalCost":"0.000051300000",');
    expect(text).not.toContain('costMicroUsd');
    const passed = (await cli('check', study(), '--baseline', baseline(), '--json', '--quiet')).out;
    // As baselines were written before: the same figures, in micro-dollars.
    writeFileSync(baseline(), text.replace(/"totalCost":"(\d+)\.(\d{12})"/g, (_m, w: string, f: string) => `"costMicroUsd":${Number(BigInt(`${w}${f}`)) / 1e6}`));
    expect(readFileSync(baseline(), 'utf8')).toContain('"costMicroUsd":51.3,');
    const old = await cli('check', study(), '--baseline', baseline(), '--json', '--quiet');
    expect(old.code).toBe(0);
    expect(old.out).toBe(passed);
    writeFileSync(baseline(), text.replace('"totalCost":"0.000051300000"', '"totalCost":"$0.05"'));
    const bad = await cli('check', study(), '--baseline', baseline(), '--quiet');
    expect(bad.code).toBe(2);
    // The first row is on the line after the rows' key; the column is where its cost's value starts.
    const first = text.split('\n').indexOf('  "rows": [') + 1;
    const column = text.split('\n')[first]!.indexOf('"0.000051300000"') + 1;
    expect(bad.err).toBe(`ctxsim: ${baseline()}:${first + 1}:${column} rows[0].totalCost: expected USD with 12 decimals such as "0.000051300000", at least 0 and under 10^15, got "$0.05"\n`);
  });

  it('a baseline that shares no scenario × policy with the run (another study\'s) is refused, not passed: exit 2, no JUnit file', async () => {
    const junit = join(dir, 'gate.xml');
    const r = await cli('check', study(), '--baseline', baseline(), '--policy', 'window-tokens:budget=50', '--junit', junit, '--quiet');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      `ctxsim: ${baseline()}: no scenario × policy of this run is in the baseline (2 rows of the run, 4 of the baseline, none in both): nothing to compare; is it the baseline of another study? To make it this study's: npx ctxsim run ${study()} --policy window-tokens:budget=50 --save-baseline ${baseline()} --force\n`,
    );
    expect(existsSync(junit)).toBe(false);
  });

  it('a baseline of an older engine: the gate names the engine as the change (a baseline that did not record it names none)', async () => {
    const saved = JSON.parse(readFileSync(baseline(), 'utf8')) as { study: { engine?: number }; rows: { totalCost: string }[] };
    expect(saved.study.engine).toBe(ENGINE_VERSION);
    saved.rows[0]!.totalCost = '0.000001000000';
    writeFileSync(join(dir, 'older.json'), JSON.stringify({ ...saved, study: { ...saved.study, engine: ENGINE_VERSION - 1 } }));
    const r = await cli('check', study(), '--baseline', join(dir, 'older.json'), '--quiet');
    expect(r.code).toBe(1);
    const change = `engine: ${ENGINE_VERSION - 1} → ${ENGINE_VERSION} (another ctxsim, whose records of the same study differ)`;
    expect(r.out).toContain(`The study differs from the baseline's:\n\n- ${change}\n`);
    const comment = join(dir, 'comment.md');
    expect((await cli('check', study(), '--baseline', join(dir, 'older.json'), '--comment', comment, '--quiet')).code).toBe(1);
    expect(readFileSync(comment, 'utf8')).toContain(`#### 1. ${change}: 1 regression\n`);
    const { engine: _, ...unrecorded } = saved.study;
    writeFileSync(join(dir, 'unrecorded.json'), JSON.stringify({ ...saved, study: unrecorded }));
    const before = await cli('check', study(), '--baseline', join(dir, 'unrecorded.json'), '--quiet');
    expect(before.code).toBe(1);
    expect(before.out).not.toContain('engine:');
  });

  it('a missing baseline says how to save one, exit 2, before any run', async () => {
    const missing = join(dir, 'none', 'b.json');
    const r = await cli('check', study(), '--baseline', missing, '--model', 'gpt-4o', '--quiet');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toBe(`ctxsim: ${missing}: no baseline there yet; save one first: npx ctxsim run ${study()} --model gpt-4o --save-baseline ${missing}\n`);
  });

  it('never overwrites a baseline without --force; bad baselines are input errors', async () => {
    const again = await cli('run', study(), '--save-baseline', baseline(), '--out', join(dir, 'turns.csv'), '--quiet');
    expect(again.code).toBe(2);
    expect(again.err).toContain('exists; add --force to replace it');
    writeFileSync(join(dir, 'bad.json'), '{"rows": 3}');
    const bad = await cli('check', study(), '--baseline', join(dir, 'bad.json'), '--quiet');
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(`ctxsim: ${join(dir, 'bad.json')}:1:1: not a ctxsim baseline (expected schemaVersion 1)\n`);
  });
});

describe('sharded runs', () => {
  it('shards 1/3 + 2/3 + 3/3 merged equal the unsharded run byte for byte', async () => {
    process.env.SOURCE_DATE_EPOCH = '1700000000'; // results.json's meta time, the only field that would differ
    const whole = join(dir, 'whole');
    expect((await cli('run', study(), '--out', whole, '--quiet')).code).toBe(0);
    for (const k of [1, 2, 3]) expect((await cli('run', study(), '--shard', `${k}/3`, '--out', join(dir, `s${k}`), '--quiet')).code).toBe(0);
    const merged = join(dir, 'merged');
    const m = await cli('merge', join(dir, 's1'), join(dir, 's2'), join(dir, 's3'), '--out', merged, '--quiet');
    expect(m.code).toBe(0);
    const files = readdirSync(whole).sort();
    expect(readdirSync(merged).sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(merged, f)).equals(readFileSync(join(whole, f))), f).toBe(true);
  });

  it('merge --save-baseline saves the baseline the unsharded run saves, byte for byte, and check passes against it', async () => {
    const shard = await cli('run', study(), '--shard', '1/3', '--save-baseline', join(dir, 'shard.json'), '--out', join(dir, 'x'), '--quiet');
    expect(shard.code).toBe(2);
    expect(shard.err).toBe('ctxsim: --save-baseline: a shard holds part of the run; save the baseline when merging the shards: ctxsim merge DIR... --save-baseline FILE\n');
    for (const k of [1, 2, 3]) expect((await cli('run', study(), '--shard', `${k}/3`, '--out', join(dir, `s${k}`), '--quiet')).code).toBe(0);
    const shards = [1, 2, 3].map((k) => join(dir, `s${k}`));
    const merged = join(dir, 'merged.json');
    const m = await cli('merge', ...shards, '--out', join(dir, 'merged'), '--save-baseline', merged, '--quiet');
    expect(m.code).toBe(0);
    expect(readFileSync(merged, 'utf8')).toBe(readFileSync(baseline(), 'utf8'));
    const again = await cli('merge', ...shards, '--out', join(dir, 'merged'), '--save-baseline', merged, '--quiet');
    expect(again.code).toBe(2);
    expect(again.err).toBe(`ctxsim: --save-baseline: ${merged} exists; add --force to replace it\n`);
    expect((await cli('check', study(), '--baseline', merged, '--quiet')).code).toBe(0);
  });

  it('a missing shard is an error', async () => {
    await cli('run', study(), '--shard', '1/2', '--out', join(dir, 'a'), '--quiet');
    const m = await cli('merge', join(dir, 'a'), '--out', join(dir, 'm'), '--quiet');
    expect(m.code).toBe(2);
    expect(m.err).toBe('ctxsim: merge: missing shard(s) 2/2\n');
  });
});

describe('a baseline row’s cost survives the file', () => {
  it('any cost a run can have (whole pico-dollars up to $1,000,000) reads back as the very number saved, so an unchanged rerun compares equal', async () => {
    const fc = await import('fast-check');
    const { baselineJson, readBaseline } = await import('../src/gate/baseline.js');
    const dir = tempDir();
    const file = join(dir, 'baseline.json');
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), (pico) => {
        const row = { scenario: 's', policy: 'p', model: 'm', inputTokens: 1, cachedTokens: 0, outputTokens: 1, auxTokens: 0, costMicroUsd: Number(pico) / 1e6, probes: 0, retained: 0, overflowTurns: 0, latencyP95Ms: 0 };
        const study = { model: 'm', tokenizer: 'o200k_base', prices: 'builtin', cache: 'auto', rules: 'openai', seed: 1, policies: ['p'], scenarios: { s: '0' } };
        const b = { schemaVersion: 1 as const, studyHash: 'x', study, rows: [row] };
        writeFileSync(file, baselineJson(b));
        expect(readBaseline(file).rows[0]!.costMicroUsd).toBe(row.costMicroUsd);
      }),
      // 4,327,694,247,345,799 pico-dollars once read back one ulp off, when micro × 10^6 was rounded alone.
      { numRuns: 300, seed: 47, examples: [[4_327_694_247_345_799n]] },
    );
  });
});

describe('what a scenario names, in the gate report', () => {
  it('a fact name with a newline, an escape or a right-to-left override is printed on its one line, escaped: no line of the report a CI runner reads as a command', async () => {
    const dir = tempDir('ctxsim-gate-');
    const fact = 'code\n::error title=x::injected\u202e\x1b[2J';
    writeFileSync(
      join(dir, 'inj.yaml'),
      ['id: inj', 'turns:', '  - user: my code is AB-1234', `    facts: {${JSON.stringify(fact)}: AB-1234}`, '    assistant: Noted.', '  - user: what else', '    assistant: ok', '  - user: what is my code?', `    probe: [${JSON.stringify(fact)}]`, '    assistant: AB-1234', ''].join('\n'),
    );
    const common = ['--scenario', join(dir, 'inj.yaml'), '--no-token-cache', '--quiet'];
    expect((await cli('run', ...common, '--policy', 'window-turns:turns=2', '--save-baseline', join(dir, 'b.json'), '--out', join(dir, 'o'))).code).toBe(0);
    const r = await cli('check', ...common, '--policy', 'window-turns:turns=1', '--baseline', join(dir, 'b.json'));
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain('\n- inj, window-turns:turns=1: `code\\x0a::error title=x::injected\\u202e\\x1b[2J` at turn 3 (missing)\n');
    expect(r.out.split('\n').filter((l) => l.startsWith('::'))).toEqual([]);
    expect(r.out.replaceAll('\n', '').match(/[\p{Cc}\p{Cf}\u2028\u2029]/gu)).toBeNull();
  });
});
