import type { TopLevelSpec } from 'vega-lite';
import type { Results } from '../records/registry.js';
import { AGE_BUCKETS, digestOf, policyNames, reported, severalModels, weightedRun, type ReportInput } from '../records/digest.js';
import { CHART_FONT } from './font.js';
import { dollars, grouped, meanCost, moneyDecimals, plural, usdNumber } from '../records/format.js';
import { caption, type ReportInfo } from '../records/info.js';
import { groupLabels, LABEL_FONT_SIZE, placeLabels } from './labels.js';
import { paretoOptimal } from './pareto.js';
import { PLOT_HEIGHT, PLOT_WIDTH } from './plot.js';
import { answersMeasured, simulatedLines } from './text.js';

/**
 * The charts of a run as Vega-Lite specs, data inlined (no URLs), so a spec
 * file renders anywhere on its own. Figures are aggregated here, not in
 * Vega-Lite transforms, so the data in a spec is exactly what is drawn.
 *
 * Many conversations are summarised, never drawn one line each:
 * - cost by turn: the mean cumulative cost per conversation, a finished
 *   conversation keeping its total (so the last point is the cost per
 *   conversation of the budget table);
 * - tokens by turn: the mean over the conversations that reach the turn;
 * - retention vs cost, cost breakdown: per policy over all conversations.
 *
 * With scenario weights, every figure per conversation or per policy is the
 * weighted one the tables show (cost by turn, retention vs cost, retention
 * by age, cost breakdown) and says so; tokens by turn stays a plain mean and
 * says that. A run of several models tells them apart: colour is the
 * policy's, the model is a line's dash, a point's shape, a panel of the bars
 * by age, and named on each bar of the cost breakdown.
 */

/** A chart: its file stem, its title, its spec. */
export interface Chart {
  name: string;
  title: string;
  spec: TopLevelSpec;
}

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/**
 * Policy colours, in study order (Tableau 10, then its lighter partners):
 * the same policy has the same colour and dash in every chart of a run.
 */
export const POLICY_COLORS: readonly string[] = [
  '#4c78a8', '#f58518', '#e45756', '#72b7b2', '#54a24b', '#eeca3b', '#b279a2', '#ff9da6', '#9d755d', '#bab0ac',
  '#9ecae9', '#ffbf79', '#ff9d98', '#88d27a', '#b7a2d3', '#d6a5c9', '#fcbfd2', '#d8b5a5', '#79706e', '#439894',
];

/** Line dashes by policy, so lines that overlap or share a hue stay apart. */
const POLICY_DASHES: readonly number[][] = [[1, 0], [7, 3], [2, 2], [9, 3, 2, 3], [4, 4], [12, 4], [2, 5], [6, 2, 2, 2, 2, 2]];

/** Cost components, in stack order (left to right) and legend order. */
export const COST_PARTS = ['uncached input', 'cached input', 'output', 'upkeep'] as const;
const COST_PART_COLORS = ['#31588a', '#9ecae9', '#e8a33d', '#8c6bb1'];

const cycle = <T>(xs: readonly T[], n: number): T[] => Array.from({ length: n }, (_, i) => xs[i % xs.length]!);

function policyScale(policies: readonly string[]) {
  return { domain: [...policies], range: cycle(POLICY_COLORS, policies.length) };
}

function dashScale(policies: readonly string[]) {
  return { domain: [...policies], range: cycle(POLICY_DASHES, policies.length) };
}

/** Point shapes by model, in study order (no diamond: a diamond marks answer retention). */
const MODEL_SHAPES: readonly string[] = ['circle', 'square', 'triangle-up', 'cross', 'triangle-down', 'triangle-right', 'triangle-left'];

/** A row's fields in chart data: its policy; with several models, its model and its name (`policy @ model`) too. */
interface RowFields {
  policy: string;
  model?: string;
  series?: string;
}

/** The rows of a run as charts tell them apart. */
interface Rows {
  /** Row names (`seriesName`), in report order. */
  names: string[];
  /** The policies, each once, in study order: the colours. */
  policies: string[];
  /** The chat models in study order when the run has several; else none. */
  models: string[];
  /** A row's fields, by row name. */
  fields: (name: string) => RowFields;
}

function rowsOf(results: Pick<Results, 'policies'>): Rows {
  const names = policyNames(results);
  if (!severalModels(results.policies)) return { names, policies: names, models: [], fields: (name) => ({ policy: name }) };
  const byName = new Map(names.map((series, i) => [series, { policy: results.policies[i]!.policy, model: results.policies[i]!.model, series }]));
  return {
    names,
    policies: [...new Set(results.policies.map((p) => p.policy))],
    models: [...new Set(results.policies.map((p) => p.model))],
    fields: (name) => byName.get(name)!,
  };
}

/**
 * A point at each turn of a line when there are few turns; none with
 * several models, whose dashes the points would break up (and whose legend
 * of dashes they would blank).
 */
function linePoints(longest: number, rows: Rows): { filled: true; size: number } | false {
  return longest <= 30 && !rows.models.length ? { filled: true, size: 28 } : false;
}

/**
 * Colour by policy, and dash by policy with one model (one legend that
 * shows each line's dash) or by model with several (a legend of its own).
 */
function lineLegend(rows: Rows) {
  const { policies, models } = rows;
  const legend = { symbolType: 'stroke', symbolSize: 400, symbolStrokeWidth: 2.5 };
  const color = { field: 'policy', type: 'nominal', title: 'Policy', scale: policyScale(policies), sort: policies, legend };
  if (!models.length) return { color, strokeDash: { field: 'policy', type: 'nominal', title: 'Policy', scale: dashScale(policies), sort: policies, legend } };
  return {
    color,
    strokeDash: { field: 'model', type: 'nominal', title: 'Model', scale: dashScale(models), sort: models, legend: { ...legend, symbolStrokeColor: '#444' } },
  };
}

const CONFIG = {
  font: CHART_FONT,
  background: 'white',
  padding: 12,
  view: { stroke: null },
  title: { fontSize: 15, anchor: 'start' as const, offset: 14, subtitleFontSize: 11, subtitleColor: '#555', subtitlePadding: 4 },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal' as const, titleColor: '#222', labelColor: '#333', gridColor: '#e8e8e8', domainColor: '#888', tickColor: '#888' },
  // Every entry shown (Vega stops at 30 by default), each label whole.
  legend: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal' as const, labelLimit: 320, symbolLimit: 0, symbolStrokeWidth: 2.5 },
};

/** d3 format for a USD axis spanning `span` dollars: enough fixed decimals that neighbouring ticks differ. */
export function moneyFormat(span: number): string {
  const step = span / 10;
  const decimals = step > 0 ? Math.min(10, Math.max(2, Math.ceil(-Math.log10(step)))) : 2;
  return `$,.${decimals}f`;
}

function base(name: string, title: string, subtitle: string[], info: ReportInfo, description: string) {
  return {
    $schema: SCHEMA,
    description,
    title: { text: title, subtitle: [...subtitle, caption(info)] },
    width: PLOT_WIDTH,
    height: PLOT_HEIGHT,
    autosize: { type: 'pad' as const },
    config: CONFIG,
    usermeta: { chart: name },
  };
}


/** A subtitle line when some probes were scored on calls over the context window (none otherwise): they count as not retained. */
function overflowNote(results: Pick<Results, 'policies'>): string[] {
  const names = policyNames(results);
  const over = results.policies.flatMap((p, i) => (p.overflowProbes > 0 ? [`${names[i]} ${plural(p.overflowProbes, 'probe')}`] : []));
  if (!over.length) return [];
  return [`Over the context window (the call would be rejected): not retained — ${over.join(', ')}`];
}

function conversationCount(results: Pick<Results, 'policies'>): number {
  return results.policies[0]?.scenarios ?? 0;
}

/** `Mean over 3 conversations`, `Weighted mean over …` when the run has scenario weights, or `One conversation`. */
function meanOver(results: Pick<Results, 'policies'>): string {
  const n = conversationCount(results);
  if (n === 1) return 'One conversation';
  return weightedRun(results.policies) ? `Weighted mean over ${plural(n, 'conversation')} (scenario weights, as in the tables)` : `Mean over ${plural(n, 'conversation')}`;
}

/** The line a chart of plain means carries when the run has scenario weights (none otherwise). */
function unweightedNote(results: Pick<Results, 'policies'>): string[] {
  return weightedRun(results.policies) ? ['Unweighted: each conversation counts once; scenario weights apply to the cost and retention figures'] : [];
}

/** Cumulative cost per conversation by turn, one line per policy. */
export function costByTurnChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const series = digestOf(results).cumulativeCostByTurn;
  const values = rows.names.flatMap((name) => (series.get(name) ?? []).map((p) => ({ ...rows.fields(name), turn: p.turn, cost: usdNumber(p.value) })));
  const longest = Math.max(2, ...values.map((v) => v.turn));
  const max = Math.max(0, ...values.map((v) => v.cost));
  const n = conversationCount(results);
  const title = 'Cumulative cost per conversation, by turn';
  return {
    name: 'cost-by-turn',
    title,
    spec: {
      ...base('cost-by-turn', title, [n === 1 ? meanOver(results) : `${meanOver(results)}; a conversation that has ended keeps its total`], info, 'Line chart of the cumulative cost of a conversation at each turn, one line per policy.'),
      data: { values },
      mark: { type: 'line', strokeWidth: 2, point: linePoints(longest, rows) },
      encoding: {
        x: { field: 'turn', type: 'quantitative', title: 'Turn', scale: { domain: [1, longest], nice: false }, axis: { format: 'd', tickMinStep: 1 } },
        y: { field: 'cost', type: 'quantitative', title: 'Cumulative cost per conversation (USD)', axis: { format: moneyFormat(max) } },
        ...lineLegend(rows),
      },
    } as TopLevelSpec,
  };
}

/** Input tokens sent per turn, one line per policy, with the model's context limit when it is in reach. */
export function tokensByTurnChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const series = digestOf(results).inputTokensByTurn;
  const values = rows.names.flatMap((name) => (series.get(name) ?? []).map((p) => ({ ...rows.fields(name), turn: p.turn, tokens: p.value, conversations: p.conversations })));
  const longest = Math.max(2, ...values.map((v) => v.turn));
  const max = Math.max(0, ...values.map((v) => v.tokens));
  // A model's limit is drawn when the data come within half of it; further off, it would flatten every line.
  const several = info.models.length > 1;
  const limits = [...new Set(info.models.map((m) => m.maxInputTokens))]
    .filter((limit): limit is number => limit !== null && max >= limit / 2)
    .map((limit) => {
      const whose = several ? ` (${info.models.filter((m) => m.maxInputTokens === limit).map((m) => m.model).join(', ')})` : '';
      return { limit, label: `context limit: ${grouped(limit)} tokens${whose}` };
    });
  const n = conversationCount(results);
  const title = 'Input tokens sent per turn';
  const lines = {
    data: { values },
    mark: { type: 'line', strokeWidth: 2, point: linePoints(longest, rows) },
    encoding: {
      x: { field: 'turn', type: 'quantitative', title: 'Turn', scale: { domain: [1, longest], nice: false }, axis: { format: 'd', tickMinStep: 1 } },
      y: { field: 'tokens', type: 'quantitative', title: 'Input tokens sent (prompt, incl. cached)', axis: { format: ',d' } },
      ...lineLegend(rows),
    },
  };
  const layers: object[] = [lines];
  if (limits.length) {
    const at = { data: { values: limits } };
    layers.push(
      { ...at, mark: { type: 'rule', color: '#b3261e', strokeDash: [6, 4], strokeWidth: 1.5 }, encoding: { y: { field: 'limit', type: 'quantitative' } } },
      {
        ...at,
        mark: { type: 'text', color: '#b3261e', align: 'right', baseline: 'bottom', dy: -4, fontSize: 11, x: 'width' },
        encoding: { y: { field: 'limit', type: 'quantitative' }, text: { field: 'label' } },
      },
    );
  }
  const note = n === 1 ? 'One conversation' : `Mean over the conversations that reach each turn (${plural(n, 'conversation')} in all)`;
  return {
    name: 'tokens-by-turn',
    title,
    spec: { ...base('tokens-by-turn', title, [note, ...unweightedNote(results)], info, 'Line chart of the input tokens sent at each turn, one line per policy.'), layer: layers } as TopLevelSpec,
  };
}

/** Retention against cost per conversation, one point per policy, the Pareto frontier marked. */
export function retentionVsCostChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const rated = results.policies.filter((p) => p.retention !== null);
  const ratedNames = rows.names.filter((_, i) => results.policies[i]!.retention !== null);
  const title = 'Retention vs cost per conversation';
  const name = 'retention-vs-cost';
  if (!rated.length) return noProbes(name, title, info);
  // The frontier is decided on exact figures (pico-dollars, exact ratios); the points show them rounded.
  const means = rated.map(meanCost);
  const optimal = paretoOptimal(rated.map((p, i) => ({ cost: means[i]!, retention: p.retention! })));
  const points = rated.map((p, i) => ({ ...rows.fields(ratedNames[i]!), cost: usdNumber(means[i]!), retention: Math.round(p.retention! * 1000) / 10 }));
  const values = points.map((p, i) => ({ ...p, status: optimal[i] ? 'Pareto-optimal' : 'dominated' }));
  const frontier = values.filter((v) => v.status === 'Pareto-optimal').sort((a, b) => a.cost - b.cost || a.retention - b.retention);
  // The cost axis spans the policies' costs with a margin (not from zero): policies often differ by a
  // few percent, and from zero they would sit on top of each other.
  const costs = points.map((p) => p.cost);
  const lo = Math.min(...costs);
  const hi = Math.max(...costs);
  const pad = Math.max((hi - lo) * 0.12, hi * 0.02, 1e-9);
  const xDomain: [number, number] = [Math.max(0, lo - pad), hi + pad];
  const yDomain: [number, number] = [0, 100];
  const x = { field: 'cost', type: 'quantitative', title: 'Cost per conversation (USD)', scale: { domain: xDomain, nice: false }, axis: { format: moneyFormat(xDomain[1] - xDomain[0]) } };
  const y = { field: 'retention', type: 'quantitative', title: 'Probed facts retained (%)', scale: { domain: yDomain } };
  const color = { field: 'policy', type: 'nominal', title: 'Policy', scale: policyScale(rows.policies), sort: rows.policies, legend: { symbolSize: 90 } };
  // With several models, a point's shape is its model's.
  const models = rows.models;
  const shape = models.length
    ? { shape: { field: 'model', type: 'nominal', title: 'Model', scale: { domain: models, range: cycle(MODEL_SHAPES, models.length) }, sort: models, legend: { symbolSize: 90, symbolStrokeColor: '#444', symbolFillColor: '#444' } } }
    : {};
  const labels = placeLabels(
    // Policies on the same point share one label; Pareto-optimal ones are placed first.
    groupLabels(values.map((v) => ({ x: v.cost, y: v.retention, text: v.series ?? v.policy, first: v.status === 'Pareto-optimal' }))),
    xDomain,
    yDomain,
    frontier.map((f) => ({ x: f.cost, y: f.retention })),
  );
  const leaders = labels.flatMap((l) => (l.leader ? [l.leader] : []));
  const skipped = results.policies.length - rated.length;
  const answered = answersMeasured(rated) ? rated.flatMap((p, i) => (p.answerRetention === null ? [] : [{ ...points[i]!, answered: Math.round(p.answerRetention * 1000) / 10 }])) : [];
  const notes = [
    ...(weightedRun(results.policies) ? ['Weighted by the scenario weights: the cost per conversation and retention of the tables'] : []),
    'Filled: Pareto-optimal (no other policy is as cheap and retains as much, and better at one); hollow: dominated',
    ...(models.length ? ['Shape: the chat model'] : []),
    ...(answered.length ? ['Diamonds: answer retention, the share of probes whose value the chat model’s reply held, joined to its policy’s point'] : []),
    ...(skipped ? [`${plural(skipped, 'policy', 'policies')} without probes not shown`] : []),
    ...overflowNote(results),
    ...simulatedLines(info, results.policies),
  ];
  const textLayer = (align: 'left' | 'right') => ({
    data: { values: labels.filter((l) => l.align === align).map(({ x, y, text }) => ({ x, y, text })) },
    mark: { type: 'text', align, baseline: 'middle', fontSize: LABEL_FONT_SIZE, color: '#333' },
    encoding: {
      x: { field: 'x', type: 'quantitative', scale: { domain: xDomain, nice: false } },
      y: { field: 'y', type: 'quantitative', scale: { domain: yDomain } },
      text: { field: 'text' },
    },
  });
  return {
    name,
    title,
    spec: {
      ...base(name, title, notes, info, 'Scatter plot of retention against cost per conversation, one point per policy, with the Pareto frontier.'),
      layer: [
        { data: { values: frontier }, mark: { type: 'line', color: '#777', strokeDash: [5, 4], strokeWidth: 1.5 }, encoding: { x, y, order: { field: 'cost', type: 'quantitative' } } },
        ...answeredLayers(answered, x, y, color).slice(0, 1),
        { data: { values: values.filter((v) => v.status !== 'Pareto-optimal') }, mark: { type: 'point', filled: false, size: 130, strokeWidth: 2.5, opacity: 1 }, encoding: { x, y, color, ...shape } },
        { data: { values: frontier }, mark: { type: 'point', filled: true, size: 150, opacity: 1 }, encoding: { x, y, color, ...shape } },
        ...answeredLayers(answered, x, y, color).slice(1),
        ...(leaders.length
          ? [
              {
                data: { values: leaders },
                mark: { type: 'rule', color: '#999', strokeWidth: 1 },
                encoding: {
                  x: { field: 'x', type: 'quantitative', scale: { domain: xDomain, nice: false } },
                  y: { field: 'y', type: 'quantitative', scale: { domain: yDomain } },
                  x2: { field: 'x2' },
                  y2: { field: 'y2' },
                },
              },
            ]
          : []),
        textLayer('left'),
        textLayer('right'),
      ],
    } as TopLevelSpec,
  };
}

/** With answers measured: a rule from each policy's point down (or up) to its answer retention (drawn under the points), and a diamond there. */
function answeredLayers(values: readonly (RowFields & { cost: number; retention: number; answered: number })[], x: object, y: object, color: object): object[] {
  if (!values.length) return [];
  const answered = { ...y, field: 'answered' };
  return [
    { data: { values }, mark: { type: 'rule', color: '#999', strokeDash: [2, 2], strokeWidth: 1 }, encoding: { x, y, y2: { field: 'answered' } } },
    { data: { values }, mark: { type: 'point', shape: 'diamond', filled: true, size: 110, opacity: 1 }, encoding: { x, y: answered, color } },
  ];
}

/** A share as a percentage with one decimal: weighted when the counts are, else plain. */
function percentOf(count: number, of: number, weighted?: bigint, weightedOf?: bigint): number {
  const share = weighted !== undefined && weightedOf ? Number(weighted) / Number(weightedOf) : count / of;
  return Math.round(share * 1000) / 10;
}

/** Retention by fact age bucket, grouped bars by policy; with several models, one panel of them per model. */
export function retentionByAgeChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const { names, policies, models } = rows;
  const title = 'Retention by fact age';
  const name = 'retention-by-age';
  const cells = digestOf(results).retentionByAge;
  if (!cells.length) return noProbes(name, title, info);
  // Every policy answers the same probes, so a bucket's probe count is the same for all of them.
  const counts = new Map<number, number>();
  for (const c of cells) counts.set(c.bucket, Math.max(counts.get(c.bucket) ?? 0, c.probes));
  // Two lines under each group (split at `|` by the axis): the age range, then how many probes it holds.
  const bucketLabel = (b: number) => `${AGE_BUCKETS[b]!.label} turn${AGE_BUCKETS[b]!.label === '1' ? '' : 's'}|${plural(counts.get(b)!, 'probe')}`;
  const order = [...counts.keys()].sort((a, b) => a - b).map(bucketLabel);
  // With scenario weights the shares are weighted, as the tables' retention is; the counts stay plain.
  const values = cells
    .sort((a, b) => a.bucket - b.bucket || names.indexOf(a.policy) - names.indexOf(b.policy))
    .map((c) => ({
      ...rows.fields(c.policy),
      age: bucketLabel(c.bucket),
      retention: percentOf(c.retained, c.probes, c.weighted?.retained, c.weighted?.probes),
      retained: c.retained,
      probes: c.probes,
      ...(c.answered !== undefined && { answered: percentOf(c.answered, c.probes, c.weighted?.answered, c.weighted?.probes) }),
    }));
  const answers = values.some((v) => 'answered' in v);
  const x = { field: 'age', type: 'nominal', title: 'Fact age when probed (turns since it was stated)', sort: order, axis: { labelAngle: 0, labelExpr: "split(datum.label, '|')", labelPadding: 6 } };
  const y = { field: 'retention', type: 'quantitative', title: 'Probed facts retained (%)', scale: { domain: [0, 100] } };
  const color = { field: 'policy', type: 'nominal', title: 'Policy', scale: policyScale(policies), sort: policies };
  const xOffset = { field: 'policy', type: 'nominal', scale: { domain: policies }, sort: policies };
  // Bars keep a readable width: the plot narrows when there are few groups.
  const width = Math.min(PLOT_WIDTH, Math.max(300, order.length * (policies.length * 26 + 40)));
  const head = base(
    name,
    title,
    [
      'Share of probes whose current value was in the prompt; a tick at 0 means none was',
      ...(weightedRun(results.policies) ? ['Weighted by the scenario weights, as the tables’ retention; probe counts are plain'] : []),
      ...(answers ? ['Diamonds: answer retention, the share whose value the chat model’s reply held'] : []),
      ...overflowNote(results),
      ...simulatedLines(info, results.policies),
    ],
    info,
    `Grouped bar chart of retention by fact age bucket, one bar per policy${models.length ? ', one panel per model' : ''}.`,
  );
  const layer = [
    { mark: { type: 'bar', opacity: 0.85 }, encoding: { x, y, xOffset, color } },
    { mark: { type: 'tick', thickness: 2.5 }, encoding: { x, y, xOffset, color } },
    ...(answers ? [{ mark: { type: 'point', shape: 'diamond', filled: true, size: 70, opacity: 1, stroke: '#333', strokeWidth: 0.8 }, encoding: { x, y: { ...y, field: 'answered' }, xOffset, color } }] : []),
  ];
  if (!models.length) return { name, title, spec: { ...head, width, data: { values }, layer } as TopLevelSpec };
  // A panel per model, its name above it: the same colours in each, so the models never share a bar group.
  const { width: _, height: __, ...top } = head;
  const row = { field: 'model', type: 'nominal', title: null, sort: models, header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelFontSize: 12, labelFontWeight: 'bold' } };
  return { name, title, spec: { ...top, data: { values }, facet: { row }, spec: { width, height: PANEL_HEIGHT, layer } } as TopLevelSpec };
}

/** The height of one model's panel of bars by age. */
const PANEL_HEIGHT = 200;

/** Mean cost per conversation split into uncached input, cached input, output and upkeep. */
export function costBreakdownChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const policies = rows.names;
  const parts = digestOf(results).costParts;
  // Weighted like the budget table when scenarios have weights.
  const values = policies.flatMap((policy) => {
    const p = parts.get(policy) ?? { input: 0n, cached: 0n, output: 0n, upkeep: 0n };
    return [p.input, p.cached, p.output, p.upkeep].map((v, i) => ({ ...rows.fields(policy), part: COST_PARTS[i]!, order: i, cost: usdNumber(v) }));
  });
  // Bar-end labels say the total of the bars: the budget table's cost per conversation, exactly rounded (weighted when scenarios have weights).
  const means = results.policies.map(meanCost);
  const decimals = moneyDecimals(means, 4);
  const totals = results.policies.map((p, i) => ({ ...rows.fields(policies[i]!), total: usdNumber(means[i]!), label: dollars(means[i]!, decimals) }));
  const max = Math.max(0, ...totals.map((t) => t.total));
  const format = moneyFormat(max);
  const name = 'cost-breakdown';
  const title = 'Where the money goes, per conversation';
  // A bar per row, named `policy @ model` when the run has several models.
  const y = { field: rows.models.length ? 'series' : 'policy', type: 'nominal', title: null, sort: policies, axis: { labelLimit: 260, labelFontSize: 11 } };
  return {
    name,
    title,
    spec: {
      ...base(name, title, [meanOver(results)], info, 'Stacked bar chart of the cost of a conversation by component, one bar per policy.'),
      height: Math.max(120, 40 + 36 * policies.length),
      layer: [
        {
          data: { values },
          mark: { type: 'bar', height: { band: 0.7 } },
          encoding: {
            y,
            x: { field: 'cost', type: 'quantitative', stack: 'zero', title: 'Mean cost per conversation (USD)', axis: { format }, scale: { domainMax: max * 1.18 || 1e-6 } },
            color: { field: 'part', type: 'nominal', title: 'Cost component', scale: { domain: [...COST_PARTS], range: COST_PART_COLORS }, sort: [...COST_PARTS] },
            order: { field: 'order', type: 'quantitative' },
          },
        },
        {
          data: { values: totals },
          mark: { type: 'text', align: 'left', baseline: 'middle', dx: 5, fontSize: 11, color: '#333' },
          encoding: { y, x: { field: 'total', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    } as TopLevelSpec,
  };
}

function noProbes(name: string, title: string, info: ReportInfo): Chart {
  return {
    name,
    title,
    spec: {
      ...base(name, title, [], info, 'No probes in this study.'),
      height: 160,
      data: { values: [{ text: 'No fact was probed in this study, so there is no retention to show.' }] },
      mark: { type: 'text', fontSize: 13, color: '#555' },
      encoding: { text: { field: 'text' } },
    } as TopLevelSpec,
  };
}

/** Every chart of a run, in the order reports show them. */
export function charts(input: ReportInput, info: ReportInfo): Chart[] {
  const results = reported(input);
  return [
    costByTurnChart(results, info),
    tokensByTurnChart(results, info),
    retentionVsCostChart(results, info),
    retentionByAgeChart(results, info),
    costBreakdownChart(results, info),
  ];
}
