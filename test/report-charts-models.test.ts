import { describe, expect, it } from 'vitest';
import { axisEnd, charts, costByTurnChart, POLICY_COLORS, retentionByAgeChart } from '../src/report/charts.js';
import { digestOf } from '../src/records/digest.js';
import { costPer1000, usdNumber } from '../src/records/format.js';
import { renderSvg } from '../src/report/svg.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { memorySink } from '../src/output/sinks.js';
import { PACKAGE_DIR } from '../src/process.js';
import { policiesFromFlags, type Study } from '../src/study/study.js';
import { PRICE_DATE } from './fixtures/report/run.js';
import { resultsOf, turn } from './fixtures/report/records.js';
import { layersOf, notesOf, valuesOf, viewOf } from './fixtures/report/spec.js';

/**
 * Charts of a run on several chat models tell the models apart — colour is
 * the policy's; cost by turn and retention vs cost a panel per model, each on
 * its own cost scale; tokens by turn a line's dash; retention by age a panel
 * per model unless every model's bars are the same — and their legends name
 * every policy and every model, however many there are: checked in the
 * rendered SVG, not only in the spec.
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
  return [...svg.matchAll(/role-legend-label[^"]*"[^>]*><text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

/** Every text of an SVG. */
function texts(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
}

/** The layers of a chart spec (of one panel, when it has panels). */
function layers(name: string): { encoding?: Record<string, { field?: string; scale?: { domain?: string[]; range?: unknown[] } | null }>; params?: unknown[] }[] {
  return layersOf(byName.get(name)!.spec);
}

describe('a run of 3 models × 9 policies', () => {
  it('has 27 rows, the models in study order, each with the 9 policies', () => {
    expect(output.results.policies.map((p) => `${p.policy} @ ${p.model}`)).toEqual(MODELS.flatMap((m) => POLICIES.map((p) => `${p} @ ${m}`)));
  });

  it('colours by policy: 9 colours, none repeated, the same for a policy on every model', () => {
    for (const name of ['cost-by-turn', 'tokens-by-turn', 'retention-vs-cost', 'retention-by-age']) {
      // The layer that holds the legend colours by its scale; the others by the row's colour as data, with no scale.
      const colors = layers(name).flatMap((l) => (l.encoding?.color?.scale ? [l.encoding.color] : []));
      expect(colors.length, name).toBe(1);
      for (const c of colors) {
        expect(c.field, name).toBe('policy');
        expect(c.scale).toEqual({ domain: POLICIES, range: POLICY_COLORS.slice(0, 9) });
      }
      for (const v of name.startsWith('retention') ? valuesOf(byName.get(name)!.spec).filter((v) => v.hex) : []) expect(v.hex).toBe(POLICY_COLORS[POLICIES.indexOf(v.policy)]);
    }
    expect(new Set(POLICY_COLORS.slice(0, 9)).size).toBe(9);
  });

  it('draws retention vs cost and cost by turn in a panel per model, each on its own cost scale, retention vs cost’s from 0', () => {
    const vsCost = viewOf(byName.get('retention-vs-cost')!.spec);
    expect(vsCost.facet.row).toMatchObject({ field: 'model', sort: MODELS });
    expect(vsCost.resolve).toEqual({ scale: { x: 'independent' } });
    // Each panel's cost axis ends just past its own dearest policy.
    const extents = vsCost.data.values.filter((v: { kind: string }) => v.kind === 'extent');
    const dearest = (m: string) => Math.max(...output.results.policies.filter((p) => p.model === m).map((p) => usdNumber(costPer1000(p))));
    expect(extents.map((v: { model: string; x: number }) => [v.model, v.x])).toEqual(MODELS.map((m) => [m, axisEnd(dearest(m))]));
    expect(new Set(extents.map((v: { x: number }) => v.x)).size).toBeGreaterThan(1);
    // A point's label is its policy: the panel names the model.
    for (const v of vsCost.data.values.filter((v: { kind: string }) => v.kind === 'label')) expect(POLICIES.map((p) => [p, `${p} (pick)`]).flat()).toContain(v.text);
    const byTurn = viewOf(byName.get('cost-by-turn')!.spec);
    expect(byTurn.facet.row).toMatchObject({ field: 'model', sort: MODELS });
    expect(byTurn.resolve).toEqual({ scale: { y: 'independent' } });
    // Within a panel the lines are told apart as on one model: colour and dash by policy.
    expect(layers('cost-by-turn')[0]!.encoding!.strokeDash!.field).toBe('policy');
  });

  it('draws the model as a line dash in tokens by turn, and lets its legend hide a model', () => {
    const dash = layers('tokens-by-turn').find((l) => l.encoding?.strokeDash)!.encoding!.strokeDash!;
    expect(dash.field).toBe('model');
    expect(dash.scale!.domain).toEqual(MODELS);
    expect(new Set(dash.scale!.range!.map((d) => JSON.stringify(d))).size).toBe(3);
    expect(layers('tokens-by-turn')[0]!.params).toEqual([
      { name: 'hide_policy', select: { type: 'point', fields: ['policy'], toggle: 'true' }, bind: 'legend' },
      { name: 'hide_model', select: { type: 'point', fields: ['model'], toggle: 'true' }, bind: 'legend' },
    ]);
  });

  it('draws retention by age once when every model’s bars are the same, and says so; a panel per model when they differ', () => {
    const same = byName.get('retention-by-age')!.spec;
    expect(viewOf(same).facet).toBeUndefined();
    expect(notesOf(same)[0]).toBe(`The same on every model (${MODELS.join(', ')}): one panel for all`);
    expect(valuesOf(same)).toHaveLength(new Set(valuesOf(same).map((v) => `${v.policy} ${v.age}`)).size);
    // gpt-4o keeps one probe less in one cell: then each model has its panel.
    const digest = digestOf(output.results);
    const cells = digest.retentionByAge.map((c, i) => (c.policy.endsWith('@ gpt-4o') && i === digest.retentionByAge.findIndex((d) => d.policy.endsWith('@ gpt-4o') && d.retained > 0) ? { ...c, retained: c.retained - 1 } : c));
    const differ = retentionByAgeChart({ ...output.results, digest: { ...digest, retentionByAge: cells } }, info).spec;
    expect(viewOf(differ).facet.row).toMatchObject({ field: 'model', sort: MODELS });
    expect(notesOf(differ).join('\n')).not.toContain('The same on every model');
  });

  it('shows, in the rendered SVG, a legend entry for every policy and every model', () => {
    // Policy legend, then model legend where the models share a plot: all 9 and all 3, none cut.
    expect(legendLabels(svgs.get('tokens-by-turn')!)).toEqual([...POLICIES, ...MODELS]);
    // In panels, the policies in the legend, each model heading its panel.
    for (const name of ['retention-vs-cost', 'cost-by-turn']) {
      expect(legendLabels(svgs.get(name)!), name).toEqual(POLICIES);
      for (const m of MODELS) expect(texts(svgs.get(name)!), name).toContain(m);
    }
    expect(legendLabels(svgs.get('retention-by-age')!)).toEqual(POLICIES);
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
