import { describe, expect, it } from 'vitest';
import { charts, costByTurnChart, POLICY_COLORS } from '../src/report/charts.js';
import { renderSvg } from '../src/report/svg.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { memorySink } from '../src/study/sinks.js';
import { PACKAGE_DIR } from '../src/process.js';
import { policiesFromFlags, type Study } from '../src/study/study.js';
import { PRICE_DATE } from './fixtures/report/run.js';
import { resultsOf, turn } from './fixtures/report/records.js';

/**
 * Charts of a run on several chat models tell the models apart — colour is
 * the policy's, the model a line's dash, a point's shape, a panel of bars —
 * and their legends name every policy and every model, however many there
 * are: checked in the rendered SVG, not only in the spec.
 */

const MODELS = ['gpt-4o-mini', 'gpt-4.1', 'gpt-4o'];
const POLICIES = ['full', 'window-turns:turns=2', 'window-turns:turns=6', 'window-tokens:budget=40', 'window-tokens:budget=300', 'summary', 'summary-buffer', 'facts', 'retrieval'];

const study: Study = {
  seed: 42,
  models: MODELS,
  tokenizer: 'chars4',
  prices: 'builtin',
  promptCache: 'auto',
  promptCacheTtl: 300,
  scenarios: [{ kind: 'glob', pattern: 'scenarios/{kavya-late-order,noah-amnesia}.yaml', base: PACKAGE_DIR }],
  policies: policiesFromFlags(POLICIES),
  out: 'reports',
};
const { output } = await runStudyPipeline({ ...study, cacheFolder: false, jobs: 1 }, memorySink());
const info = { ...output.info, priceDate: PRICE_DATE };
const list = charts(output.results, info);
const byName = new Map(list.map((c) => [c.name, c]));
const svgs = new Map(await Promise.all(list.map(async (c) => [c.name, await renderSvg(c.spec)] as const)));

/** The texts of an SVG's legend labels, in order. */
function legendLabels(svg: string): string[] {
  return [...svg.matchAll(/role-legend-label"[^>]*><text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

/** Every text of an SVG. */
function texts(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

/** The layers of a chart spec (the spec itself when it has none). */
function layers(name: string): { encoding?: Record<string, { field?: string; scale?: { domain?: string[]; range?: unknown[] } }> }[] {
  const spec = byName.get(name)!.spec as unknown as { layer?: unknown[]; spec?: { layer: unknown[] }; encoding?: unknown };
  return (spec.layer ?? spec.spec?.layer ?? [spec]) as never;
}

describe('a run of 3 models × 9 policies', () => {
  it('has 27 rows, the models in study order, each with the 9 policies', () => {
    expect(output.results.policies.map((p) => `${p.policy} @ ${p.model}`)).toEqual(MODELS.flatMap((m) => POLICIES.map((p) => `${p} @ ${m}`)));
  });

  it('colours by policy: 9 colours, none repeated, the same for a policy on every model', () => {
    for (const name of ['cost-by-turn', 'tokens-by-turn', 'retention-vs-cost', 'retention-by-age']) {
      const colors = layers(name).flatMap((l) => (l.encoding?.color ? [l.encoding.color] : []));
      expect(colors.length, name).toBeGreaterThan(0);
      for (const c of colors) {
        expect(c.field, name).toBe('policy');
        expect(c.scale).toEqual({ domain: POLICIES, range: POLICY_COLORS.slice(0, 9) });
      }
    }
    expect(new Set(POLICY_COLORS.slice(0, 9)).size).toBe(9);
  });

  it('draws the model as a point shape in retention vs cost: one shape per model, no diamond (answers use it)', () => {
    const shapes = layers('retention-vs-cost').flatMap((l) => (l.encoding?.shape ? [l.encoding.shape] : []));
    // The hollow (dominated) and the filled (Pareto-optimal) points.
    expect(shapes).toHaveLength(2);
    for (const s of shapes) expect(s).toMatchObject({ field: 'model', scale: { domain: MODELS, range: ['circle', 'square', 'triangle-up'] } });
    const values = (byName.get('retention-vs-cost')!.spec as unknown as { layer: { data: { values: { policy: string; model?: string; series?: string }[] } }[] }).layer[1]!.data.values;
    for (const v of values) expect(v.series).toBe(`${v.policy} @ ${v.model}`);
  });

  it('draws the model as a line dash in the line charts, and panels the bars by age per model', () => {
    for (const name of ['cost-by-turn', 'tokens-by-turn']) {
      const dash = layers(name).find((l) => l.encoding?.strokeDash)!.encoding!.strokeDash!;
      expect(dash.field, name).toBe('model');
      expect(dash.scale!.domain).toEqual(MODELS);
      expect(new Set(dash.scale!.range!.map((d) => JSON.stringify(d))).size).toBe(3);
    }
    expect((byName.get('retention-by-age')!.spec as unknown as { facet: { row: { field: string; sort: string[] } } }).facet.row).toMatchObject({ field: 'model', sort: MODELS });
  });

  it('shows, in the rendered SVG, a legend entry for every policy and every model', () => {
    // Policy legend, then model legend: all 9 and all 3, none cut.
    expect(legendLabels(svgs.get('retention-vs-cost')!)).toEqual([...POLICIES, ...MODELS]);
    expect(legendLabels(svgs.get('cost-by-turn')!)).toEqual([...POLICIES, ...MODELS]);
    expect(legendLabels(svgs.get('tokens-by-turn')!)).toEqual([...POLICIES, ...MODELS]);
    // Bars by age: the policies in the legend, each model heading its panel.
    expect(legendLabels(svgs.get('retention-by-age')!)).toEqual(POLICIES);
    for (const m of MODELS) expect(texts(svgs.get('retention-by-age')!)).toContain(m);
    // Cost breakdown: a bar per row, named policy @ model on the axis.
    const axis = texts(svgs.get('cost-breakdown')!);
    for (const m of MODELS) for (const p of POLICIES) expect(axis).toContain(`${p} @ ${m}`);
  });
});

describe('legends', () => {
  it('list every entry past Vega’s default limit of 30', async () => {
    const names = Array.from({ length: 34 }, (_, i) => `policy-${String(i + 1).padStart(2, '0')}`);
    const results = resultsOf(names.map((policy) => turn({ scenario: 'a', policy, turn: 1, inputTokens: 10, costInput: 1_000_000n })));
    const svg = await renderSvg(costByTurnChart(results, info).spec);
    expect(legendLabels(svg)).toEqual(names);
  });
});
