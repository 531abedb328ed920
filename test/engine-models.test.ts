import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { tokensByTurnChart } from '../src/report/charts.js';
import { parseResultsJson } from '../src/records/json.js';
import { builtSince, runBuilt } from './_built.js';
import { capture } from './_io.js';
import { priceFile, tinyWindowScenario } from './_pricing.js';
import { tempDir } from './_tmp.js';

/**
 * Several chat models in one run: every conversation × policy runs on each
 * model, a row per policy × model. Every figure below is worked by hand.
 *
 * Every message is 32 characters: 8 tokens under chars4 (no chat overhead).
 * Turn 1 states the fact `code`; turns 2 and 4 probe it. Neither model has a
 * cache-read price, so nothing is cached.
 *
 * `tiny`: a context window of 50 tokens, $1 / $2 per million input / output
 * tokens (the example of engine-overflow.test.ts):
 *   full: 8, 24, 40, 56 tokens sent; turn 4 is over the window, rejected and
 *     not charged → 24e6 + 40e6 + 56e6 = 120e6 pico = $0.000120; probes 1/2
 *     (turn 4 overflow).
 *   window-turns:turns=1: 8, 24, 24, 24 → 144e6 pico = $0.000144; 1/2.
 * `roomy`: 1,000 tokens, $3 / $4 per million:
 *   full: 128 input × 3e6 + 32 output × 4e6 = 384e6 + 128e6 = 512e6 = $0.000512; 2/2.
 *   window-turns:turns=1: 80 × 3e6 + 32 × 4e6 = 240e6 + 128e6 = 368e6 = $0.000368; 1/2.
 * Pareto over the four rows: full on tiny (cheapest) and full on roomy (the
 * only one at 2/2); both windows are dominated by full on tiny.
 */

const prices = priceFile({
  tiny: { litellm_provider: 'custom', input_cost_per_token: 0.000001, output_cost_per_token: 0.000002, max_input_tokens: 50 },
  roomy: { litellm_provider: 'custom', input_cost_per_token: 0.000003, output_cost_per_token: 0.000004, max_input_tokens: 1000 },
});


async function cli(...args: string[]) {
  const io = capture();
  const code = await runMain(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

const POLICIES = ['--policy', 'full', '--policy', 'window-turns:turns=1'];
const COMMON = ['--prices', prices, '--tokenizer', 'chars4', '--no-token-cache', '--quiet'];

/** A CSV of plain cells (no quoting) as header-keyed rows. */
function readCsv(file: string): Record<string, string>[] {
  const [head, ...rows] = readFileSync(file, 'utf8').trimEnd().split('\n');
  const keys = head!.split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((c, i) => [keys[i]!, c])));
}

afterEach(() => delete process.env.SOURCE_DATE_EPOCH);

const built = builtSince('engine/run.ts');

describe('several models in one run', () => {
  it('--model repeated runs every policy on each model: a row per policy × model, hand-checked', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const r = await cli('run', '--scenario', tinyWindowScenario(dir), ...POLICIES, '--model', 'tiny', '--model', 'roomy', ...COMMON, '--out', out, '--wide', '--sort', 'study');
    expect(r.code).toBe(0);
    const table = r.out.split('\n');
    expect(table[0]).toMatch(/^tiny, roomy · prices of \S+ · tokenizer chars4 · 1 conversation$/);
    // Each row against full on its own model: 0.144 / 0.120 = +20%, 0.368 / 0.512 = -28.1%.
    expect(table.slice(1, table.indexOf('')).map((l) => l.split(/\s{2,}/))).toEqual([
      ['policy', 'model', 'cost/1k conv USD', 'vs full', 'retention', 'pareto', 'upkeep tokens', 'p95 s', 'cost/conv USD', 'input tokens', 'cached', 'output', 'overflow turns', 'overflow probes', 'scenarios'],
      ['full', 'tiny', '0.1200', '0.0%', '50.0% (1/2, 1 overflowed)', 'yes', '0', '0.7', '0.000120', '128', '0', '24', '1', '1', '1'],
      ['window-turns:turns=1', 'tiny', '0.1440', '+20.0%', '50.0% (1/2)', '-', '0', '0.7', '0.000144', '80', '0', '32', '0', '0', '1'],
      ['full', 'roomy', '0.5120', '0.0%', '100.0% (2/2)', 'yes', '0', expect.any(String), '0.000512', '128', '0', '32', '0', '0', '1'],
      ['window-turns:turns=1', 'roomy', '0.3680', '-28.1%', '50.0% (1/2)', '-', '0', expect.any(String), '0.000368', '80', '0', '32', '0', '0', '1'],
    ]);
    // The verdict picks on each model, in the study's order: on tiny no policy keeps 95% (full's call overflowed); on roomy only full does.
    expect(r.out.replace(/\n/g, ' ')).toContain(
      'Verdict: No policy on tiny keeps 95% of probed facts; the most is full, 50% at $0.120 per 1,000 conversations. ' +
        'Use full on roomy: no cheaper policy keeps at least 95% of probed facts; window-turns:turns=1 comes closest, 50% for 28% less than full ($0.368 against $0.512 per 1,000 conversations). ' +
        'On 1 conversation, with retention',
    );
    expect(r.err).toBe('ctxsim: warning: full on tiny went over a context window on 1 of 4 turns: those calls would be rejected\n');

    const policies = readCsv(join(out, 'policies.csv'));
    expect(policies.map((p) => [p.policy, p.model, p.total_cost_usd, p.retained, p.pareto])).toEqual([
      ['full', 'tiny', '0.00012000', '1', 'true'],
      ['window-turns:turns=1', 'tiny', '0.00014400', '1', 'false'],
      ['full', 'roomy', '0.00051200', '2', 'true'],
      ['window-turns:turns=1', 'roomy', '0.00036800', '1', 'false'],
    ]);
    expect(readCsv(join(out, 'summary.csv')).map((s) => [s.policy, s.model, s.total_cost_usd])).toEqual(policies.map((p) => [p.policy, p.model, p.total_cost_usd]));
    expect(readCsv(join(out, 'probes.csv')).map((p) => [p.policy, p.model, p.turn, p.outcome])).toEqual([
      ['full', 'tiny', '2', 'retained'],
      ['full', 'tiny', '4', 'overflow'],
      ['window-turns:turns=1', 'tiny', '2', 'retained'],
      ['window-turns:turns=1', 'tiny', '4', 'missing'],
      ['full', 'roomy', '2', 'retained'],
      ['full', 'roomy', '4', 'retained'],
      ['window-turns:turns=1', 'roomy', '2', 'retained'],
      ['window-turns:turns=1', 'roomy', '4', 'missing'],
    ]);
    expect(readCsv(join(out, 'turns.csv')).map((t) => t.model)).toEqual([...Array(8).fill('tiny'), ...Array(8).fill('roomy')]);

    // The budget table and report.md name each row's model in a column of its own.
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    expect(md).toMatch(/^\| policy +\| model +\| tokens @ turn 1 /m);
    expect(md).toMatch(/^\| full +\| roomy +\| +8 \| +\$0\.000512/m);
    // The charts give each line its policy (its colour) and its model (its panel).
    const spec = JSON.parse(readFileSync(join(out, 'cost-by-turn.vl.json'), 'utf8')) as { data: { values: { policy: string; model: string }[] }; facet: { row: { field: string } } };
    expect(spec.facet.row.field).toBe('model');
    expect([...new Set(spec.data.values.map((v) => `${v.policy} | ${v.model}`))]).toEqual(['full | tiny', 'window-turns:turns=1 | tiny', 'full | roomy', 'window-turns:turns=1 | roomy']);

    // results.json lists both models, in order, with their context windows.
    const doc = parseResultsJson(readFileSync(join(out, 'results.json'), 'utf8'), 'results.json');
    expect(doc.study.models.map((m) => [m.model, m.maxInputTokens])).toEqual([['tiny', 50], ['roomy', 1000]]);
    // The tokens chart draws tiny's limit (the tokens come within half of it), named, and not roomy's.
    const tokens = JSON.stringify(tokensByTurnChart(doc.results, doc.study).spec);
    expect(tokens).toContain('context limit: 50 tokens (tiny)');
    expect(tokens).not.toContain('1,000 tokens');
  });

  it('a model added to the run leaves the other model’s rows unchanged', async () => {
    const dir = tempDir();
    const file = tinyWindowScenario(dir);
    expect((await cli('run', '--scenario', file, ...POLICIES, '--model', 'tiny', ...COMMON, '--out', join(dir, 'one'))).code).toBe(0);
    expect((await cli('run', '--scenario', file, ...POLICIES, '--model', 'tiny', '--model', 'roomy', ...COMMON, '--out', join(dir, 'two'))).code).toBe(0);
    const drop = (rows: Record<string, string>[]) => rows.filter((r) => r.model === 'tiny').map((r) => JSON.stringify(r));
    for (const f of ['summary.csv', 'probes.csv', 'turns.csv']) expect(drop(readCsv(join(dir, 'two', f))), f).toEqual(drop(readCsv(join(dir, 'one', f))));
  });

  it(`a study’s \`models:\` is the same run as --model repeated; worker threads and shards give the same bytes${built ? '' : ' (threads skipped: dist/ is missing or stale)'}`, async () => {
    process.env.SOURCE_DATE_EPOCH = '1700000000';
    const dir = tempDir();
    mkdirSync(join(dir, 's'));
    tinyWindowScenario(join(dir, 's'), 'first');
    tinyWindowScenario(join(dir, 's'), 'second');
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['models: [tiny, roomy]', 'tokenizer: chars4', `prices: ${prices}`, 'scenarios: ["s/*.yaml"]', 'policies: [full, "window-turns:turns=1"]', ''].join('\n'));
    const run = (...args: string[]) => cli('run', study, '--no-token-cache', '--quiet', ...args);
    expect((await run('--out', join(dir, 'whole'), '--jobs', '1')).code).toBe(0);
    // Worker threads load the compiled worker: two of them run in the built CLI (skipped below when dist/ is stale).
    if (built) expect((await runBuilt(['run', study, '--no-token-cache', '--quiet', '--out', join(dir, 'jobs'), '--jobs', '2'])).code).toBe(0);
    for (const k of [1, 2, 3]) expect((await run('--shard', `${k}/3`, '--out', join(dir, `p${k}`))).code).toBe(0);
    expect((await cli('merge', join(dir, 'p1'), join(dir, 'p2'), join(dir, 'p3'), '--out', join(dir, 'merged'), '--quiet')).code).toBe(0);
    const flags = await cli('run', '--scenario', join(dir, 's', '*.yaml'), ...POLICIES, '--model', 'tiny', '--model', 'roomy', ...COMMON, '--out', join(dir, 'flags'), '--jobs', '1');
    expect(flags.code).toBe(0);
    const files = readdirSync(join(dir, 'whole')).sort();
    for (const other of built ? ['jobs', 'merged'] : ['merged']) {
      expect(readdirSync(join(dir, other)).sort()).toEqual(files);
      for (const f of files) expect(readFileSync(join(dir, other, f)).equals(readFileSync(join(dir, 'whole', f))), `${other}/${f}`).toBe(true);
    }
    // The flags run differs only in what names the study (results.json's study file).
    for (const f of files.filter((f) => f.endsWith('.csv'))) expect(readFileSync(join(dir, 'flags', f)).equals(readFileSync(join(dir, 'whole', f))), `flags/${f}`).toBe(true);
  });

  it('the gate pairs rows by model: a price change of one model fails only its rows', async () => {
    const dir = tempDir();
    const file = tinyWindowScenario(dir);
    const base = ['--scenario', file, ...POLICIES, '--model', 'tiny', '--model', 'roomy', '--tokenizer', 'chars4', '--no-token-cache', '--quiet'];
    const baseline = join(dir, 'baseline.json');
    expect((await cli('run', ...base, '--prices', prices, '--out', join(dir, 'out'), '--save-baseline', baseline)).code).toBe(0);
    const same = await cli('check', ...base, '--prices', prices, '--baseline', baseline);
    expect(same.code).toBe(0);
    expect(same.out).toContain('- full @ tiny: cost $0.000120 → $0.000120 (+0.0%), retained 1/2 → 1/2 (1 scenario)');
    expect(same.out).toContain('- window-turns:turns=1 @ roomy: cost $0.000368 → $0.000368 (+0.0%), retained 1/2 → 1/2 (1 scenario)');
    // roomy's input price doubles: its rows cost more, tiny's do not.
    const dearer = priceFile({
      tiny: { litellm_provider: 'custom', input_cost_per_token: 0.000001, output_cost_per_token: 0.000002, max_input_tokens: 50 },
      roomy: { litellm_provider: 'custom', input_cost_per_token: 0.000006, output_cost_per_token: 0.000004, max_input_tokens: 1000 },
    });
    const failed = await cli('check', ...base, '--prices', dearer, '--baseline', baseline);
    expect(failed.code).toBe(1);
    const rows = failed.out.split('\n').filter((l) => l.startsWith('| fail'));
    // full on roomy: 128 × 6e6 + 128e6 = 896e6 (+75.0%); the window: 80 × 6e6 + 128e6 = 608e6 (+65.2%).
    expect(rows.map((l) => l.split(' | ').slice(2, 6))).toEqual([
      ['full', 'roomy', '$0.000512', '$0.000896'],
      ['window-turns:turns=1', 'roomy', '$0.000368', '$0.000608'],
    ]);
  });

  it('a baseline of one model checked against a run on another compares them (the model changed)', async () => {
    const dir = tempDir();
    const file = tinyWindowScenario(dir);
    const base = ['--scenario', file, ...POLICIES, '--prices', prices, '--tokenizer', 'chars4', '--no-token-cache', '--quiet'];
    const baseline = join(dir, 'baseline.json');
    expect((await cli('run', ...base, '--model', 'tiny', '--out', join(dir, 'out'), '--save-baseline', baseline)).code).toBe(0);
    const r = await cli('check', ...base, '--model', 'roomy', '--baseline', baseline);
    expect(r.code).toBe(1);
    expect(r.out).toContain('- model: tiny → roomy');
    expect(r.out.split('\n').filter((l) => l.startsWith('| fail')).map((l) => l.split(' | ').slice(2, 5))).toEqual([
      ['full', '$0.000120', '$0.000512'],
      ['window-turns:turns=1', '$0.000144', '$0.000368'],
    ]);
  });
});

describe('several models: what is refused', () => {
  it.each([
    [['--model', 'tiny', '--model', 'tiny'], 'ctxsim: --model: tiny given twice'],
  ])('%j', async (args, message) => {
    const dir = tempDir();
    const r = await cli('run', '--scenario', tinyWindowScenario(dir), '--policy', 'full', '--prices', prices, ...args, '--out', join(dir, 'out'));
    expect([r.code, r.err.trimEnd()]).toEqual([2, message]);
  });

  it.each([
    ['model: tiny\nmodels: [roomy]', 'study.yaml:2:9 models: give model or models, not both'],
    ['models: [tiny, roomy, tiny]', 'study.yaml:1:23 models[2]: model tiny is listed twice (also models[0])'],
    ['models: [tiny, nope]', 'study.yaml:1:16 models[1]: unknown model "nope"'],
    ['models: [tiny, roomy]\nroute: {light: tiny, strong: roomy, strongWhen: {userTokensOver: 5}}', 'study.yaml:1:9 models: route picks each turn’s model (light or strong): give one model with route'],
  ])('%j', async (head, message) => {
    const dir = tempDir();
    mkdirSync(join(dir, 's'));
    tinyWindowScenario(join(dir, 's'));
    const study = join(dir, 'study.yaml');
    writeFileSync(study, [head, `prices: ${prices}`, 'scenarios: ["s/*.yaml"]', 'policies: [full]', ''].join('\n'));
    const r = await cli('run', study, '--out', join(dir, 'out'), '--no-token-cache');
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toContain(message.replace('study.yaml', ''));
  });
});
