import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { loadScenarios, loadStudy } from '../src/study/study.js';
import { conversationHash } from '../src/gate/baseline.js';
import { byPolicy } from '../src/engine/summary.js';
import { parseResultsJson } from '../src/records/json.js';
import type { SummaryRecord } from '../src/records/registry.js';
import {capture, problems } from './_io.js';
import { summaryRecord } from './_records.js';
import { tempDir } from './_tmp.js';
import { notesOf, valuesOf } from './fixtures/report/spec.js';

/** The example of docs/reports.md: `short` (weight 1) and `long` (weight 3), window-turns:turns=1, chars4, gpt-4o-mini. */
const FIXTURES = 'test/fixtures/weights';
const FLAGS = ['--policy', 'window-turns:turns=1', '--tokenizer', 'chars4'];

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture();
  const code = await runMain(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

const csv = (file: string) => readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => l.split(','));
const column = (rows: string[][], name: string) => rows.slice(1).map((r) => r[rows[0]!.indexOf(name)]);

describe('weights make the per-policy means weighted (the hand-checked example)', () => {
  it('short costs $0.00000285, long $0.00000420; weights 1 and 3 give $0.0000038625 a conversation and retention 1/4', async () => {
    const out = tempDir();
    const r = await run(['run', '--scenario', `${FIXTURES}/*.yaml`, ...FLAGS, '--out', out]);
    expect(r.code).toBe(0);
    const summary = csv(join(out, 'summary.csv'));
    expect(column(summary, 'scenario')).toEqual(['long', 'short']);
    // long: 16 input × $0.15/M + 3 output × $0.60/M = $0.0000024 + $0.0000018; short: 11 × $0.15/M + 2 × $0.60/M = $0.00000165 + $0.0000012.
    expect(column(summary, 'input_tokens')).toEqual(['16', '11']);
    expect(column(summary, 'output_tokens')).toEqual(['3', '2']);
    expect(column(summary, 'total_cost_usd')).toEqual(['0.00000420', '0.00000285']);
    expect(column(summary, 'retention')).toEqual(['0.0000', '1.0000']);
    expect(column(summary, 'weight')).toEqual(['3', '1']);
    const policies = csv(join(out, 'policies.csv'));
    // (1 × 2,850,000 + 3 × 4,200,000) / 4 = 3,862,500 pico-dollars, shown to 8 decimals; unweighted it would be 3,525,000.
    expect(column(policies, 'cost_per_conversation_usd')).toEqual(['0.00000386']);
    // (1 × 1 + 3 × 0) / (1 × 1 + 3 × 1) = 0.25; unweighted 1/2.
    expect(column(policies, 'retention')).toEqual(['0.2500']);
    // Totals stay plain sums.
    expect(column(policies, 'total_cost_usd')).toEqual(['0.00000705']);
    expect(column(policies, 'input_tokens')).toEqual(['27']);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { policies: Record<string, unknown>[]; summary: Record<string, unknown>[] };
    expect(results.policies[0]).toMatchObject({ costPerConversation: '0.000003862500', costPer1000: '0.003862500000', retention: 0.25 });
    expect(results.summary.map((s) => s.weight)).toEqual([3, 1]);
    // The table: the retained count stays unweighted, retention and costs are weighted, and say so; the caption says what the weights add up to.
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/ · 2 conversations, weighted to 4$/);
    expect(lines[1]!.split(/\s{2,}/)).toEqual(['policy', 'cost/1k conv USD (weighted)', 'retention (weighted)', 'pareto', 'upkeep tokens']);
    expect(lines[2]!.split(/\s{2,}/)).toEqual(['window-turns:turns=1', '0.0039', '25.0% (1/2)', 'yes', '0']);
    expect(r.out.replace(/\n {2}/g, ' ')).toContain('Weighted: cost per conversation, cost per 1,000 conversations and retention are means over the 2 conversations, weighted to 4');
    expect(r.out.replace(/\n/g, ' ')).toMatch(/ {2}Verdict: .* On 2 conversations, weighted to 4, with retention/);
  });

  it('the Weighted: line is under the tables of weighted means only: report.html’s budget table, not its per-scenario table or the gate’s rows', async () => {
    const dir = tempDir();
    const baseline = join(dir, 'baseline.json');
    const r = await run(['run', '--scenario', `${FIXTURES}/*.yaml`, ...FLAGS, '--out', join(dir, 'out'), '--save-baseline', baseline, '--quiet']);
    expect(r.code).toBe(0);
    const html = readFileSync(join(dir, 'out', 'report.html'), 'utf8');
    const section = (id: string) => html.slice(html.indexOf(`<section id="${id}">`), html.indexOf('</section>', html.indexOf(`<section id="${id}">`)));
    expect(section('budget')).toContain('<p class="caption">Weighted: cost per conversation');
    // Each row of the per-scenario table is one conversation's own figures: nothing in it is a mean.
    expect(section('scenarios')).toContain('<table class="scenarios">');
    expect(section('scenarios')).not.toContain('Weighted:');
    // The gate compares rows per scenario × policy, and sums them per policy unweighted.
    const checked = await run(['check', '--scenario', `${FIXTURES}/*.yaml`, ...FLAGS, '--baseline', baseline, '--quiet']);
    expect(checked.code).toBe(0);
    expect(checked.out).toContain('### ctxsim check: passed');
    expect(checked.out).not.toContain('Weighted:');
  });

  it('shards carry the weights: merged shards give the same policies.csv and summary.csv', async () => {
    const dir = tempDir();
    const args = ['run', '--scenario', `${FIXTURES}/*.yaml`, ...FLAGS, '--quiet'];
    expect((await run([...args, '--out', join(dir, 'whole')])).code).toBe(0);
    expect((await run([...args, '--shard', '1/2', '--out', join(dir, 's1')])).code).toBe(0);
    expect((await run([...args, '--shard', '2/2', '--out', join(dir, 's2')])).code).toBe(0);
    expect((await run(['merge', join(dir, 's1'), join(dir, 's2'), '--out', join(dir, 'merged'), '--quiet'])).code).toBe(0);
    for (const f of ['summary.csv', 'policies.csv']) expect(readFileSync(join(dir, 'merged', f), 'utf8')).toBe(readFileSync(join(dir, 'whole', f), 'utf8'));
    expect(column(csv(join(dir, 'merged', 'policies.csv')), 'retention')).toEqual(['0.2500']);
  });

  it('a study entry weight multiplies the file weight; glob, generate and import entries take one', async () => {
    const dir = tempDir();
    for (const f of ['short.yaml', 'long.yaml']) copyFileSync(join(FIXTURES, f), join(dir, f));
    const study = join(dir, 'study.yaml');
    writeFileSync(study, 'scenarios:\n  - {glob: short.yaml, weight: 2}\n  - glob: long.yaml\n    weight: 0.5\n  - {generate: {profile: support, count: 1, prefix: g}, weight: 4}\npolicies: [full]\n');
    const s = await loadStudy(study);
    expect(loadScenarios(s.scenarios).map((c) => [c.id, c.weight])).toEqual([['short', 2], ['long', 1.5], ['g-0001', 4]]);
  });

  it('all weights 1 give the same bytes as no weights, and the same scenario hash', async () => {
    const plain = tempDir();
    const ones = tempDir();
    writeFileSync(join(plain, 'long.yaml'), readFileSync(join(FIXTURES, 'long.yaml'), 'utf8').replace('weight: 3\n', ''));
    writeFileSync(join(ones, 'long.yaml'), readFileSync(join(FIXTURES, 'long.yaml'), 'utf8').replace('weight: 3\n', 'weight: 1\n'));
    writeFileSync(join(plain, 'short.yaml'), readFileSync(join(FIXTURES, 'short.yaml'), 'utf8'));
    writeFileSync(join(ones, 'short.yaml'), `weight: 1\n${readFileSync(join(FIXTURES, 'short.yaml'), 'utf8')}`);
    const a = await run(['run', '--scenario', `${plain}/*.yaml`, ...FLAGS, '--out', join(plain, 'out')]);
    const b = await run(['run', '--scenario', `${ones}/*.yaml`, ...FLAGS, '--out', join(ones, 'out')]);
    expect([a.code, b.code], a.err + b.err).toEqual([0, 0]);
    expect(b.out).toBe(a.out);
    const files = readdirSync(join(plain, 'out')).sort();
    expect(readdirSync(join(ones, 'out')).sort()).toEqual(files);
    // Only the scenario folder and results.json's time differ (report.html's tables may break the folder's name: <wbr>).
    const same = (t: Buffer, dir: string) => t.toString('latin1').replaceAll('<wbr>', '').replaceAll(dir, 'DIR').replace(/"generatedAt":"[^"]*"/, '');
    for (const f of files) expect(same(readFileSync(join(ones, 'out', f)), ones), f).toBe(same(readFileSync(join(plain, 'out', f)), plain));
    const text = readFileSync(join(plain, 'long.yaml'), 'utf8');
    expect(conversationHash(scenarioFromText('a.yaml', `weight: 1\n${text}`))).toBe(conversationHash(scenarioFromText('b.yaml', text)));
    expect(conversationHash(scenarioFromText('a.yaml', `weight: 3\n${text}`))).not.toBe(conversationHash(scenarioFromText('b.yaml', text)));
  });
});

describe('charts with weights show the weighted figures of the tables, and say so', () => {
  type Values = { policy: string; [k: string]: unknown }[];
  type Spec = { title: { subtitle: string[] }; data?: { values: Values }; layer?: { data?: { values: Values } }[] };
  const spec = (out: string, name: string) => JSON.parse(readFileSync(join(out, `${name}.vl.json`), 'utf8')) as Spec;

  it('cost breakdown, cost by turn, retention by age: full and window-turns:turns=1 over short (weight 1) and long (weight 3)', async () => {
    const out = tempDir();
    const r = await run(['run', '--scenario', `${FIXTURES}/*.yaml`, '--policy', 'full', ...FLAGS, '--out', out, '--quiet']);
    expect(r.code).toBe(0);
    const doc = parseResultsJson(readFileSync(join(out, 'results.json'), 'utf8'), 'results.json');
    const cost = (scenario: string, policy: string) => doc.results.summary.find((s) => s.scenario === scenario && s.policy === policy)!.totalCost;
    // By hand: (1 × short + 3 × long) / 4, rounded to the nearest pico-dollar.
    const weighted = (policy: string) => (cost('short', policy) + 3n * cost('long', policy) + 2n) / 4n;
    expect(weighted('window-turns:turns=1')).toBe(3_862_500n);
    // full sends long's 21 input tokens (3 output): 21 × $0.15/M + 3 × $0.60/M = $0.00000495; short as above, $0.00000285.
    expect([cost('short', 'full'), cost('long', 'full')]).toEqual([2_850_000n, 4_950_000n]);
    // (2,850,000 + 3 × 4,950,000) / 4 = 4,425,000 pico-dollars; unweighted it would be 3,900,000, which the chart showed before.
    const full = weighted('full');
    expect(full).toBe(4_425_000n);

    // The budget table's cost per conversation of full, as report.md prints it.
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    const tableCost = /^\| full +\|.*?\| +(\$[0-9.]+) \|/m.exec(md)![1]!;

    const breakdown = spec(out, 'cost-breakdown');
    const totals = breakdown.layer![1]!.data!.values;
    const fullTotal = totals.find((v) => v.policy === 'full')!;
    expect(fullTotal.total).toBe(Number(full) / 1e12);
    // $0.000004425, to the table's 8 decimals, half up.
    expect(tableCost).toBe('$0.00000443');
    expect(fullTotal.label).toBe(tableCost);
    // The parts add up to the total (each part rounded to a pico-dollar).
    const parts = breakdown.layer![0]!.data!.values.filter((v) => v.policy === 'full').reduce((a, v) => a + Math.round((v.cost as number) * 1e12), 0);
    expect(Math.abs(parts - Number(full))).toBeLessThanOrEqual(2);
    expect(breakdown.title.subtitle[0]).toBe('Weighted mean over 2 conversations (scenario weights, as in the tables)');

    // Cost by turn ends at the same weighted figure: short has ended (2 turns) and keeps its total.
    const byTurn = spec(out, 'cost-by-turn');
    const last = byTurn.data!.values.filter((v) => v.policy === 'full').at(-1)!;
    expect([last.turn, last.cost]).toEqual([3, Number(full) / 1e12]);
    expect(byTurn.title.subtitle[0]).toBe('Weighted mean over 2 conversations (scenario weights, as in the tables); a conversation that has ended keeps its total');

    // Retention by age: both probes are 1–2 turns old; window-turns:turns=1 keeps short's (weight 1), loses long's (weight 3): 25%, as the table's retention.
    const byAge = spec(out, 'retention-by-age');
    expect(valuesOf(byAge).map((v) => [v.policy, v.retention, v.retained, v.probes])).toEqual([
      ['full', 100, 2, 2],
      ['window-turns:turns=1', 25, 1, 2],
    ]);
    expect(notesOf(byAge)).toContain('Weighted by the scenario weights, as the tables’ retention; probe counts are plain');
    expect(notesOf(spec(out, 'retention-vs-cost'))[0]).toBe('Weighted by the scenario weights: the cost per 1,000 conversations and retention of the tables');

    // Tokens by turn stays a plain mean, and says so.
    expect(spec(out, 'tokens-by-turn').title.subtitle).toContain('Unweighted: each conversation counts once; scenario weights apply to the cost and retention figures');
  });

  it('say nothing of weights when every weight is 1', async () => {
    const out = tempDir();
    const r = await run(['run', '--scenario', `${FIXTURES}/short.yaml`, ...FLAGS, '--out', out, '--quiet']);
    expect(r.code).toBe(0);
    for (const name of ['cost-by-turn', 'tokens-by-turn', 'retention-vs-cost', 'retention-by-age', 'cost-breakdown']) {
      expect(JSON.stringify([spec(out, name).title, notesOf(spec(out, name))]), name).not.toMatch(/eight/);
    }
  });
});

describe('byPolicy with weights', () => {
  const row = (scenario: string, policy: string, totalCost: bigint, retained: number, weight: number): SummaryRecord =>
    summaryRecord({ scenario, policy, model: 'gpt-4o-mini', turns: 1, totalCost, costPerTurn: totalCost, probes: 1, retained, missing: 1 - retained, retention: retained, weight });

  it('decides the Pareto frontier on the weighted cost, and takes weights to millionths', () => {
    // a: 10 and 0 pico-dollars, weights 1 and 3 → (10 + 0) / 4 = 2.5, rounded down to 2; b: 0 and 4 → 12 / 4 = 3.
    // Unweighted b (total 4) would be cheaper than a (total 10); weighted, a is, at the same retention.
    const rows = [row('s1', 'a', 10n, 1, 1), row('s2', 'a', 0n, 1, 3), row('s1', 'b', 0n, 1, 1), row('s2', 'b', 4n, 1, 3)];
    expect(byPolicy(rows).map((p) => [p.policy, p.totalCost, p.costPerConversation, p.costPer1000, p.retention, p.pareto])).toEqual([
      ['a', 10n, 2n, 2500n, 1, true],
      ['b', 4n, 3n, 3000n, 1, false],
    ]);
    // 0.0000004 is taken as 0 millionths, and counts as 1 millionth: s2 weighs 1,000,000 times less than s1.
    // retention (1,000,000 × 1 + 1 × 0) / 1,000,001; cost (1,000,000 × 0 + 1 × 1,000,001) / 1,000,001 = 1.
    const tiny = byPolicy([row('s1', 'a', 0n, 1, 1), row('s2', 'a', 1_000_001n, 0, 0.0000004)])[0]!;
    expect([tiny.costPerConversation, tiny.retention]).toEqual([1n, 1_000_000 / 1_000_001]);
  });

  it('weighs answer retention exactly like retention, and leaves it null when answers were not measured', () => {
    const answered = (r: SummaryRecord, n: number): SummaryRecord => ({ ...r, answered: n, answerRetention: n });
    const p = byPolicy([answered(row('s1', 'a', 0n, 1, 1), 1), answered(row('s2', 'a', 0n, 1, 3), 0)])[0]!;
    expect([p.answered, p.answerRetention, p.retention]).toEqual([1, 1 / 4, 1]);
    const q = byPolicy([row('s1', 'a', 0n, 1, 1), row('s2', 'a', 0n, 0, 3)])[0]!;
    expect([q.answered, q.answerRetention, q.memory]).toEqual([null, null, 'none']);
  });
});

describe('a weight must be a positive number', () => {
  const doc = (w: string) => `id: x\nweight: ${w}\nturns:\n  - user: Hi\n`;
  it('is an error at the key in a scenario file', () => {
    expect(problems(() => scenarioFromText('s.yaml', doc('0')))).toEqual(['s.yaml:2:9 weight: expected a number ≥ 0.000001, got 0']);
    expect(problems(() => scenarioFromText('s.yaml', doc('-1')))).toEqual(['s.yaml:2:9 weight: expected a number ≥ 0.000001, got -1']);
    expect(problems(() => scenarioFromText('s.yaml', doc('"x"')))).toEqual(['s.yaml:2:9 weight: expected number, got string "x"']);
  });

  it('is an error at the entry in a study, through the CLI (exit 2)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'scenarios:\n  - {glob: "*.yaml", weight: 0}\n  - {generate: {profile: support, count: 1}, weight: -1}\n  - {glob: "*.yaml", weight: x}\npolicies: [full]\n');
    const r = await run(['run', join(dir, 'study.yaml'), '--out', join(dir, 'out')]);
    expect(r.code).toBe(2);
    expect(r.err.split('\n').filter((l) => l.includes('weight'))).toEqual([
      `ctxsim: ${dir}/study.yaml:2:30 scenarios[0].weight: expected a number ≥ 0.000001, got 0`,
      `ctxsim: ${dir}/study.yaml:3:54 scenarios[1].weight: expected a number ≥ 0.000001, got -1`,
      `ctxsim: ${dir}/study.yaml:4:30 scenarios[2].weight: expected number, got string "x"`,
    ]);
  });
});
