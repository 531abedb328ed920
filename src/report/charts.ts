import type { TopLevelSpec } from 'vega-lite';
import type { PolicyRecord, Results } from '../records/registry.js';
import { AGE_BUCKETS, digestOf, policyNames, reported, severalModels, weightedRun, type ReportInput, type RetentionCell } from '../records/digest.js';
import { CHART_FONT } from './font.js';
import { costPer1000, dollars, grouped, meanCost, moneyDecimals, percent, plural, retainedOf, usdNumber } from '../records/format.js';
import { caption, type ReportInfo } from '../records/info.js';
import { LABEL_FONT_SIZE, pixels, placeLabels, spreadPoints, type PlacedLabel, type PlotSize } from './labels.js';
import { paretoOptimal } from './pareto.js';
import { PLOT_HEIGHT, PLOT_WIDTH } from './plot.js';
import { answersMeasured, simulatedLines } from './text.js';
import { verdictPicks } from './verdict.js';

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
 * - retention vs cost (per 1,000 conversations, the verdict's unit, the
 *   verdict's pick ringed), cost breakdown: per policy over all conversations.
 *
 * With scenario weights, every figure per conversation or per policy is the
 * weighted one the tables show (cost by turn, retention vs cost, retention
 * by age, cost breakdown) and says so; tokens by turn stays a plain mean and
 * says that. A run of several models tells them apart: colour is the
 * policy's; cost by turn and retention vs cost draw a panel per model (each
 * on its own cost scale), retention by age too unless every model's bars are
 * the same; tokens by turn draws the model as a line's dash; the cost
 * breakdown names it on each bar.
 *
 * Every spec is interactive where a browser shows it (report.html): hovering
 * a mark shows what it is (its tooltip fields), and clicking a legend entry
 * of policies or models hides that policy or model (again: shows it; a
 * double click shows everything). Rendered to SVG, nothing is hidden.
 * Caveats sit under the plot, one line each.
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

/**
 * A policy's colour as data, for the layers that do not hold a legend's
 * parameter: encoded without a scale, they add no legend (their legends would
 * conflict with the one whose clicks hide rows).
 */
function hexOf(policies: readonly string[]): (policy: string) => string {
  return (policy) => POLICY_COLORS[policies.indexOf(policy) % POLICY_COLORS.length]!;
}

/**
 * Colour from the row's `hex` field, no scale, no legend: as `fill` or
 * `stroke`, never `color`, whose scale (and so legend) it would join.
 */
const OWN_COLOR = { field: 'hex', type: 'nominal', scale: null };

function dashScale(policies: readonly string[]) {
  return { domain: [...policies], range: cycle(POLICY_DASHES, policies.length) };
}

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

/** A line's fields in every one of its points: its policy, and its model when the run has several (its name would only repeat them). */
function lineFields(rows: Rows, name: string): RowFields {
  const { policy, model } = rows.fields(name);
  return model === undefined ? { policy } : { policy, model };
}

/**
 * Whether a line chart marks each turn with a point: when there are few
 * turns; not when the lines are dashed by model, whose dashes the points
 * would break up (and whose legend of dashes they would blank).
 */
function linePoints(longest: number, dashedByModel: boolean): boolean {
  return longest <= 30 && !dashedByModel;
}

/**
 * The points on a line chart's lines, a layer of their own coloured by the
 * row's colour as data (`hex`): a point overlay of the line's own would bring
 * a second legend, at odds with the one whose clicks hide rows.
 */
function pointLayer(x: object, y: object, hideable: readonly Hideable[], data?: object) {
  return { ...(data && { data }), mark: { type: 'point', filled: true, size: 28, opacity: 1 }, encoding: { x, y, fill: OWN_COLOR, ...shownOpacity(hideable) } };
}

/* ---------------------------------------------------------------------------
 * Interaction: a legend entry clicked hides its policy (or model).
 * ------------------------------------------------------------------------- */

/** The fields a legend can hide the rows of. */
type Hideable = 'policy' | 'model';

/**
 * The parameter a legend's clicks toggle: the values of `field` it holds are
 * hidden (a click adds a value, a second click takes it out again; a double
 * click empties it). Declared in one layer that encodes `field` with a legend.
 */
function hideParam(field: Hideable) {
  return { name: `hide_${field}`, select: { type: 'point', fields: [field], toggle: 'true' }, bind: 'legend' };
}

/** The predicate of a mark whose row is hidden by a legend click on any of `fields`. */
function hiddenTest(fields: readonly Hideable[]) {
  const tests = fields.map((f) => ({ param: `hide_${f}`, empty: false }));
  return tests.length === 1 ? tests[0]! : { or: tests };
}

/** Opacity: none while the row is hidden. */
function shownOpacity(fields: readonly Hideable[], shown = 1) {
  return { opacity: { condition: { test: hiddenTest(fields), value: 0 }, value: shown } };
}

/** A legend's entries fade while their value is hidden, so the reader sees what a click did. */
function legendFades(field: Hideable) {
  const hidden = `(hide_${field}.${field} && indexof(hide_${field}.${field}, datum.value) >= 0)`;
  return { encoding: { symbols: { opacity: { value: { expr: `${hidden} ? 0.2 : 1` } } }, labels: { opacity: { value: { expr: `${hidden} ? 0.4 : 1` } } } } };
}

/**
 * Colour by policy, and dash by policy with one panel of lines (one legend that
 * shows each line's dash) or by model when the models share the panel (a legend of its own).
 */
function lineLegend(rows: Rows, dashByModel: boolean) {
  const { policies, models } = rows;
  const legend = { symbolType: 'stroke', symbolSize: 400, symbolStrokeWidth: 2.5 };
  const color = { field: 'policy', type: 'nominal', title: 'Policy', scale: policyScale(policies), sort: policies, legend: { ...legend, ...legendFades('policy') } };
  if (!dashByModel) return { color, strokeDash: { field: 'policy', type: 'nominal', title: 'Policy', scale: dashScale(policies), sort: policies, legend: { ...legend, ...legendFades('policy') } } };
  return {
    color,
    strokeDash: { field: 'model', type: 'nominal', title: 'Model', scale: dashScale(models), sort: models, legend: { ...legend, symbolStrokeColor: '#444', ...legendFades('model') } },
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
  // A model's name above its panel.
  header: { labelAngle: 0, labelOrient: 'top' as const, labelAnchor: 'start' as const, labelFontSize: 12, labelFontWeight: 'bold' as const, labelPadding: 6 },
};

/** d3 format for a USD axis spanning `span` dollars: enough fixed decimals that neighbouring ticks differ. */
export function moneyFormat(span: number): string {
  const step = span / 10;
  const decimals = step > 0 ? Math.min(10, Math.max(2, Math.ceil(-Math.log10(step)))) : 2;
  return `$,.${decimals}f`;
}

/**
 * The end of an axis from 0 that shows values up to `hi`: a round number (1,
 * 2, 2.5 or 5 times a power of ten, times a whole number) at least 4% past it.
 */
export function axisEnd(hi: number): number {
  if (!(hi > 0)) return 1;
  const target = hi * 1.04;
  const rough = target / 6;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
  return Number((Math.ceil(target / step - 1e-9) * step).toPrecision(12));
}

/** What every chart's spec starts with: schema, description, title (the caption its last subtitle line), config. */
function head(name: string, title: string, subtitle: string[], info: ReportInfo, description: string) {
  return {
    $schema: SCHEMA,
    description,
    title: { text: title, subtitle: [...subtitle, caption(info)] },
    autosize: { type: 'pad' as const },
    config: CONFIG,
    usermeta: { chart: name },
  };
}

function base(name: string, title: string, subtitle: string[], info: ReportInfo, description: string) {
  return { ...head(name, title, subtitle, info, description), width: PLOT_WIDTH, height: PLOT_HEIGHT };
}

/**
 * A chart with its notes under the plot, one line each: the plot is the one
 * view of a column, titled at its bottom with them. Without notes, the plot
 * alone.
 */
function withNotes(top: ReturnType<typeof head>, view: object, notes: readonly string[]): TopLevelSpec {
  if (!notes.length) return { ...top, ...view } as unknown as TopLevelSpec;
  const footer = { text: [...notes], orient: 'bottom', anchor: 'start', frame: 'bounds', fontSize: 11, fontWeight: 'normal', color: '#555', offset: 14, lineHeight: 15 };
  return { ...top, vconcat: [{ ...view, title: footer }], resolve: { legend: { color: 'independent', stroke: 'independent', strokeDash: 'independent', shape: 'independent' } } } as unknown as TopLevelSpec;
}

/** A line when some probes were scored on calls over the context window (none otherwise): they count as not retained. */
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

/**
 * What the points of retention vs cost are over: cost a mean per
 * conversation, retention the share of all their probes together (as the
 * tables' `94.9% (75/79)`), not a mean of each conversation's, which
 * weighs a conversation of one probe as one of ten.
 */
function costAndRetentionOver(results: Pick<Results, 'policies'>): string {
  const n = conversationCount(results);
  if (n === 1) return 'One conversation';
  const weighted = weightedRun(results.policies);
  return `Cost: ${weighted ? 'weighted mean' : 'mean'} over ${plural(n, 'conversation')}; retention: of all their probes together${weighted ? ' (scenario weights, as in the tables)' : ''}`;
}

/** The line a chart of plain means carries when the run has scenario weights (none otherwise). */
function unweightedNote(results: Pick<Results, 'policies'>): string[] {
  return weightedRun(results.policies) ? ['Unweighted: each conversation counts once; scenario weights apply to the cost and retention figures'] : [];
}

/** The height of one model's panel (cost by turn, retention vs cost, bars by age). */
const PANEL_HEIGHT = 220;

/** One panel per model, its name above it; `spec` is a panel, `resolve` what each panel has of its own. */
function panels(models: readonly string[], spec: object, resolve?: object) {
  return { facet: { row: { field: 'model', type: 'nominal', title: null, sort: [...models] } }, spec, ...(resolve && { resolve }) };
}

/** Cumulative cost per conversation by turn, one line per policy; with several models, one panel per model on its own cost scale. */
export function costByTurnChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const series = digestOf(results).cumulativeCostByTurn;
  // A line's tooltip (one per line) names its row and its end: the budget table's cost per conversation.
  const decimals = moneyDecimals(results.policies.map(meanCost), 4);
  const totals = new Map(rows.names.map((name, i) => [name, dollars(meanCost(results.policies[i]!), decimals)]));
  const longest = Math.max(2, ...[...series.values()].flatMap((s) => s.map((p) => p.turn)));
  const points = linePoints(longest, false);
  const hex = hexOf(rows.policies);
  const values = rows.names.flatMap((name) =>
    (series.get(name) ?? []).map((p) => ({ ...lineFields(rows, name), ...(points && { hex: hex(rows.fields(name).policy) }), turn: p.turn, cost: usdNumber(p.value), total: totals.get(name)! })),
  );
  // One axis format for every panel, with the decimals of the cheapest one's.
  const tops = rows.models.length ? rows.models.map((m) => Math.max(0, ...values.filter((v) => v.model === m).map((v) => v.cost))) : [Math.max(0, ...values.map((v) => v.cost))];
  const n = conversationCount(results);
  const title = 'Cumulative cost per conversation, by turn';
  const hideable: Hideable[] = ['policy'];
  const x = { field: 'turn', type: 'quantitative', title: 'Turn', scale: { domain: [1, longest], nice: false }, axis: { format: 'd', tickMinStep: 1 } };
  const y = { field: 'cost', type: 'quantitative', title: 'Cumulative cost per conversation (USD)', axis: { format: moneyFormat(Math.min(...tops)) } };
  const tooltip = [{ field: 'policy', title: 'policy' }, ...(rows.models.length ? [{ field: 'model', title: 'model' }] : []), { field: 'total', title: 'cost per conversation' }];
  const layer = [
    { params: [hideParam('policy')], mark: { type: 'line', strokeWidth: 2 }, encoding: { x, y, ...lineLegend(rows, false), ...shownOpacity(hideable), tooltip } },
    ...(points ? [pointLayer(x, y, hideable)] : []),
  ];
  const subtitle = [n === 1 ? meanOver(results) : `${meanOver(results)}; a conversation that has ended keeps its total`];
  const description = `Line chart of the cumulative cost of a conversation at each turn, one line per policy${rows.models.length ? ', one panel per model' : ''}.`;
  const top = head('cost-by-turn', title, subtitle, info, description);
  const view = rows.models.length
    ? { data: { values }, ...panels(rows.models, { width: PLOT_WIDTH, height: PANEL_HEIGHT, layer }, { scale: { y: 'independent' } }) }
    : { width: PLOT_WIDTH, height: PLOT_HEIGHT, data: { values }, layer };
  return { name: 'cost-by-turn', title, spec: withNotes(top, view, []) };
}

/** Input tokens sent per turn, one line per policy, with the model's context limit when it is in reach. */
export function tokensByTurnChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const series = digestOf(results).inputTokensByTurn;
  // A line's tooltip (one per line) names its row and the most it sent at a turn.
  const peaks = new Map(rows.names.map((name) => [name, grouped(Math.max(0, ...(series.get(name) ?? []).map((p) => p.value)))]));
  const longest = Math.max(2, ...[...series.values()].flatMap((s) => s.map((p) => p.turn)));
  const dashByModel = rows.models.length > 0;
  const points = linePoints(longest, dashByModel);
  const hex = hexOf(rows.policies);
  const values = rows.names.flatMap((name) =>
    (series.get(name) ?? []).map((p) => ({ ...lineFields(rows, name), ...(points && { hex: hex(rows.fields(name).policy) }), turn: p.turn, tokens: p.value, conversations: p.conversations, peak: peaks.get(name)! })),
  );
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
  const hideable: Hideable[] = dashByModel ? ['policy', 'model'] : ['policy'];
  const x = { field: 'turn', type: 'quantitative', title: 'Turn', scale: { domain: [1, longest], nice: false }, axis: { format: 'd', tickMinStep: 1 } };
  const y = { field: 'tokens', type: 'quantitative', title: 'Input tokens sent (prompt, incl. cached)', axis: { format: ',d' } };
  const tooltip = [{ field: 'policy', title: 'policy' }, ...(dashByModel ? [{ field: 'model', title: 'model' }] : []), { field: 'peak', title: 'most input tokens at a turn' }];
  const lines = {
    data: { values },
    params: hideable.map(hideParam),
    mark: { type: 'line', strokeWidth: 2 },
    encoding: { x, y, ...lineLegend(rows, dashByModel), ...shownOpacity(hideable), tooltip },
  };
  const layers: object[] = [lines, ...(points ? [pointLayer(x, y, hideable, { values })] : [])];
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

/** What a retention-vs-cost point says of its row when hovered: the figures of the tables and the verdict, as they print them. */
function pointTooltip(p: PolicyRecord, decimals: number, upkeep: bigint | undefined, answers: boolean) {
  const upkeepTokens = Math.round(p.auxTokens / Math.max(1, p.scenarios));
  return {
    costText: `${dollars(costPer1000(p), decimals)} per 1,000 conversations`,
    retentionText: `${percent(p.retention)} (${retainedOf(p)})`,
    ...(answers && { answeredText: p.answered === null || p.answered === undefined ? '-' : `${percent(p.answerRetention ?? null)} (${grouped(p.answered)}/${grouped(p.probes)})` }),
    // Upkeep: what the summaries, extractions and embeddings cost (in the cost above), and their tokens, as the budget table counts them.
    upkeepText: upkeep || upkeepTokens ? `${dollars((upkeep ?? 0n) * 1000n, decimals)} per 1,000 conversations` : 'none',
    upkeepTokensText: `${grouped(upkeepTokens)} per conversation`,
  };
}

/** The radius of the ring round the verdict's pick, in pixels (its mark is 480 px²). */
const PICK_RADIUS = 13;

/** A pixel position as the spec holds it: two decimals. */
const pixel = (v: number) => Math.round(v * 100) / 100;

/**
 * Retention against cost per 1,000 conversations (the verdict's unit), one
 * point per policy, the Pareto frontier marked and the verdict's pick ringed
 * and named; with several models, one panel per model, each cost axis from 0
 * to its own models' costs. Points that would cover each other are drawn side
 * by side (and say so under the plot); their tooltips give the exact figures.
 *
 * The axes are drawn from each panel's extent (a row of kind `extent`);
 * every mark is placed in plot pixels (`px`, `py`), where the labels were
 * fitted, while `cost` and `retention` keep the figures.
 */
export function retentionVsCostChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const rated = results.policies.flatMap((p, i) => (p.retention === null ? [] : [{ p, name: rows.names[i]! }]));
  const title = 'Retention vs cost per 1,000 conversations';
  const name = 'retention-vs-cost';
  if (!rated.length) return noProbes(name, title, info);
  // The frontier is decided on exact figures (pico-dollars, exact ratios); the points show them rounded.
  const costs = rated.map(({ p }) => costPer1000(p));
  const optimal = paretoOptimal(rated.map(({ p }, i) => ({ cost: costs[i]!, retention: p.retention! })));
  const picks = new Set<PolicyRecord>(verdictPicks(results.policies, info));
  const decimals = moneyDecimals(results.policies.map(costPer1000), 2);
  const upkeep = digestOf(results).costParts;
  const answers = answersMeasured(rated.map(({ p }) => p));
  const models = rows.models;
  const hex = hexOf(rows.policies);
  const size: PlotSize = { width: PLOT_WIDTH, height: models.length ? PANEL_HEIGHT : PLOT_HEIGHT };
  const yDomain: [number, number] = [0, 100];
  const percentOf = (r: number) => Math.round(r * 1000) / 10;
  const values: object[] = [];
  const ends: number[] = [];
  let moved = false;
  for (const model of models.length ? models : [undefined]) {
    const members = rated.map((r, i) => ({ ...r, i })).filter(({ p }) => model === undefined || p.model === model);
    // The cost axis runs from 0 to a round number past the panel's dearest policy.
    const xDomain: [number, number] = [0, axisEnd(Math.max(...members.map(({ i }) => usdNumber(costs[i]!))))];
    ends.push(xDomain[1]);
    const { px, py } = pixels(xDomain, yDomain, size);
    const drawn = spreadPoints(
      members.map(({ p, i }) => ({ x: usdNumber(costs[i]!), y: percentOf(p.retention!) })),
      xDomain,
      yDomain,
      size,
    );
    moved ||= drawn.some((d) => d.moved);
    const points = members.map(({ p, i }, k) => {
      const pick = picks.has(p);
      const answered = answers && p.answerRetention !== null && p.answerRetention !== undefined ? percentOf(p.answerRetention) : undefined;
      const tip = pointTooltip(p, decimals, upkeep.get(rated[i]!.name)?.upkeep, answers);
      return {
        kind: 'point',
        policy: p.policy,
        model: p.model,
        hex: hex(p.policy),
        px: pixel(px(drawn[k]!.x)),
        py: pixel(py(drawn[k]!.y)),
        cost: usdNumber(costs[i]!),
        retention: percentOf(p.retention!),
        ...(answered !== undefined && { answered, answeredPy: pixel(py(answered)) }),
        status: optimal[i] ? 'Pareto-optimal' : 'dominated',
        pick,
        role: [...(pick ? ['the verdict’s pick'] : []), optimal[i] ? 'Pareto-optimal' : 'dominated'].join(', '),
        ...tip,
        description: `${p.policy} on ${p.model}: ${tip.costText}, ${tip.retentionText} retained`,
      };
    });
    const frontier = points.filter((v) => v.status === 'Pareto-optimal').sort((a, b) => a.cost - b.cost || a.retention - b.retention);
    // Labels are fitted in pixels: the domains here are the plot's own.
    const plot: [number, number] = [0, size.width];
    const rows01: [number, number] = [size.height, 0];
    const labels = placeLabels(
      points.map((v, id) => ({ x: v.px, y: v.py, text: `${v.policy}${v.pick ? ' (pick)' : ''}`, first: v.status === 'Pareto-optimal', id, ...(v.pick && { bold: true, radius: PICK_RADIUS }) })),
      plot,
      rows01,
      frontier.map((f) => ({ x: f.px, y: f.py })),
      size,
    );
    // A label and its leader are their point's: hidden with it.
    const of = (l: PlacedLabel) => ({ policy: points[l.id!]!.policy, model: points[l.id!]!.model });
    values.push(
      { kind: 'extent', ...(model !== undefined && { model }), x: xDomain[1], y: 0 },
      ...points,
      ...labels.map((l) => ({ kind: 'label', ...of(l), px: pixel(l.x), py: pixel(l.y), text: l.text, align: l.align, bold: !!l.bold })),
      ...labels.flatMap((l) => (l.leader ? [{ kind: 'leader', ...of(l), px: pixel(l.leader.x), py: pixel(l.leader.y), px2: pixel(l.leader.x2), py2: pixel(l.leader.y2) }] : [])),
    );
  }
  const hideable: Hideable[] = ['policy'];
  // The axes, from the extent rows; the marks, in pixels.
  const axisX = { field: 'x', type: 'quantitative', title: 'Cost per 1,000 conversations (USD)', scale: { domainMin: 0, zero: true, nice: false }, axis: { format: moneyFormat(Math.min(...ends)) } };
  const axisY = { field: 'y', type: 'quantitative', title: 'Probed facts retained (%)', scale: { domain: yDomain } };
  const x = { field: 'px', type: 'quantitative', scale: null };
  const y = { field: 'py', type: 'quantitative', scale: null };
  const color = { field: 'policy', type: 'nominal', title: 'Policy', scale: policyScale(rows.policies), sort: rows.policies, legend: { symbolSize: 90, ...legendFades('policy') } };
  const tooltip = [
    { field: 'policy', title: 'policy' },
    { field: 'model', title: 'model' },
    { field: 'costText', title: 'cost' },
    { field: 'retentionText', title: 'retention' },
    ...(answers ? [{ field: 'answeredText', title: 'answered' }] : []),
    { field: 'upkeepText', title: 'upkeep' },
    { field: 'upkeepTokensText', title: 'upkeep tokens' },
    { field: 'role', title: 'on the chart' },
  ];
  const only = (test: string) => ({ transform: [{ filter: test }] });
  const shown = shownOpacity(hideable);
  const hoverable = (size: number) => ({ size: { condition: { test: hiddenTest(hideable), value: 0 }, value: size } });
  const about = { tooltip, description: { field: 'description' } };
  const textLayer = (align: 'left' | 'right', bold: boolean) => ({
    ...only(`datum.kind === 'label' && datum.align === '${align}' && ${bold ? 'datum.bold' : '!datum.bold'}`),
    mark: { type: 'text', align, baseline: 'middle', fontSize: LABEL_FONT_SIZE, color: bold ? '#111' : '#333', ...(bold && { fontWeight: 'bold' }), aria: false },
    encoding: { x, y, text: { field: 'text' }, ...shown },
  });
  const some = (test: (v: Record<string, unknown>) => boolean) => (values as Record<string, unknown>[]).some(test);
  const layer = [
    // The axes' extent (invisible).
    { ...only("datum.kind === 'extent'"), mark: { type: 'point', opacity: 0, size: 0, aria: false }, encoding: { x: axisX, y: axisY } },
    { ...only("datum.kind === 'point' && datum.status === 'Pareto-optimal'"), mark: { type: 'line', color: '#777', strokeDash: [5, 4], strokeWidth: 1.5, aria: false }, encoding: { x, y, order: { field: 'cost', type: 'quantitative' } } },
    ...(answers
      ? [{ ...only("datum.kind === 'point' && isValid(datum.answered)"), mark: { type: 'rule', color: '#999', strokeDash: [2, 2], strokeWidth: 1, aria: false }, encoding: { x, y, y2: { field: 'answeredPy' }, ...shown } }]
      : []),
    ...(picks.size ? [{ ...only("datum.kind === 'point' && datum.pick"), mark: { type: 'point', shape: 'circle', filled: false, size: 480, stroke: '#222', strokeWidth: 1.6, aria: false }, encoding: { x, y, ...shown } }] : []),
    ...(some((v) => v.status === 'dominated')
      ? [{ ...only("datum.kind === 'point' && datum.status === 'dominated'"), mark: { type: 'point', filled: false, strokeWidth: 2.5, opacity: 1 }, encoding: { x, y, stroke: OWN_COLOR, ...shown, ...hoverable(130), ...about } }]
      : []),
    // The legend is this layer's, which holds the parameter its clicks set.
    { ...only("datum.kind === 'point' && datum.status === 'Pareto-optimal'"), params: [hideParam('policy')], mark: { type: 'point', filled: true, opacity: 1 }, encoding: { x, y, color, ...shown, ...hoverable(150), ...about } },
    ...(answers
      ? [
          {
            ...only("datum.kind === 'point' && isValid(datum.answered)"),
            mark: { type: 'point', shape: 'diamond', filled: true, size: 110, opacity: 1 },
            encoding: { x, y: { ...y, field: 'answeredPy' }, fill: OWN_COLOR, ...shown, ...about },
          },
        ]
      : []),
    ...(some((v) => v.kind === 'leader') ? [{ ...only("datum.kind === 'leader'"), mark: { type: 'rule', color: '#999', strokeWidth: 1, aria: false }, encoding: { x, y, x2: { field: 'px2' }, y2: { field: 'py2' }, ...shown } }] : []),
    ...(['left', 'right'] as const).flatMap((align) => [false, true].filter((bold) => some((l) => l.kind === 'label' && l.align === align && l.bold === bold)).map((bold) => textLayer(align, bold))),
  ];
  const skipped = results.policies.length - rated.length;
  const notes = [
    ...(weightedRun(results.policies) ? ['Weighted by the scenario weights: the cost per 1,000 conversations and retention of the tables'] : []),
    'Filled: Pareto-optimal (no other policy is as cheap and retains as much, and better at one); hollow: dominated',
    ...(picks.size ? ['Ringed: the verdict’s pick'] : []),
    ...(moved ? ['Points that would cover each other are drawn side by side; the tables give their exact figures'] : []),
    ...(answers ? ['Diamonds: answer retention, the share of probes whose value the chat model’s reply held, joined to its policy’s point'] : []),
    ...(skipped ? [`${plural(skipped, 'policy', 'policies')} without probes not shown`] : []),
    ...overflowNote(results),
    ...simulatedLines(info, results.policies),
  ];
  const description = `Scatter plot of retention against cost per 1,000 conversations, one point per policy${models.length ? ', one panel per model' : ''}, with the Pareto frontier and the verdict’s pick.`;
  const top = head(name, title, [costAndRetentionOver(results)], info, description);
  const view = models.length ? { data: { values }, ...panels(models, { ...size, layer }, { scale: { x: 'independent' } }) } : { ...size, data: { values }, layer };
  return { name, title, spec: withNotes(top, view, notes) };
}

/** A share as a percentage with one decimal: weighted when the counts are, else plain. */
function percentOf(count: number, of: number, weighted?: bigint, weightedOf?: bigint): number {
  const share = weighted !== undefined && weightedOf ? Number(weighted) / Number(weightedOf) : count / of;
  return Math.round(share * 1000) / 10;
}

/** Whether every model's cells of bars by age are the same (same probes, same counts, per policy and bucket). */
function sameOnEveryModel(cells: readonly RetentionCell[], rows: Rows): boolean {
  if (!rows.models.length) return true;
  const of = (model: string) =>
    JSON.stringify(
      cells
        .filter((c) => rows.fields(c.policy).model === model)
        .map((c) => [rows.fields(c.policy).policy, c.bucket, c.probes, c.retained, c.answered ?? null, String(c.weighted?.probes ?? ''), String(c.weighted?.retained ?? ''), String(c.weighted?.answered ?? '')])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1])),
    );
  const first = of(rows.models[0]!);
  return rows.models.every((m) => of(m) === first);
}

/**
 * Retention by fact age bucket, grouped bars by policy; with several models,
 * one panel of them per model, unless every model's bars are the same (then
 * one panel, which says so).
 */
export function retentionByAgeChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const { names, policies } = rows;
  const title = 'Retention by fact age';
  const name = 'retention-by-age';
  const all = digestOf(results).retentionByAge;
  if (!all.length) return noProbes(name, title, info);
  const same = sameOnEveryModel(all, rows);
  const hex = hexOf(policies);
  const models = same ? [] : rows.models;
  const cells = same && rows.models.length ? all.filter((c) => rows.fields(c.policy).model === rows.models[0]) : all;
  // Every policy answers the same probes, so a bucket's probe count is the same for all of them.
  const counts = new Map<number, number>();
  for (const c of cells) counts.set(c.bucket, Math.max(counts.get(c.bucket) ?? 0, c.probes));
  // Two lines under each group (split at `|` by the axis): the age range, then how many probes it holds.
  const turnsLabel = (b: number) => `${AGE_BUCKETS[b]!.label} turn${AGE_BUCKETS[b]!.label === '1' ? '' : 's'}`;
  const bucketLabel = (b: number) => `${turnsLabel(b)}|${plural(counts.get(b)!, 'probe')}`;
  const order = [...counts.keys()].sort((a, b) => a - b).map(bucketLabel);
  // With scenario weights the shares are weighted, as the tables' retention is; the counts stay plain.
  const values = [...cells]
    .sort((a, b) => a.bucket - b.bucket || names.indexOf(a.policy) - names.indexOf(b.policy))
    .map((c) => {
      const retention = percentOf(c.retained, c.probes, c.weighted?.retained, c.weighted?.probes);
      const answered = c.answered !== undefined ? percentOf(c.answered, c.probes, c.weighted?.answered, c.weighted?.probes) : undefined;
      const { policy, model } = rows.fields(c.policy);
      return {
        policy,
        ...(models.length && { model }),
        hex: hex(policy),
        age: bucketLabel(c.bucket),
        retention,
        retained: c.retained,
        probes: c.probes,
        ...(answered !== undefined && { answered }),
        ageText: `${turnsLabel(c.bucket)} since stated`,
        retentionText: `${retention}% (${grouped(c.retained)}/${grouped(c.probes)})`,
        ...(answered !== undefined && { answeredText: `${answered}% (${grouped(c.answered!)}/${grouped(c.probes)})` }),
      };
    });
  const answers = values.some((v) => 'answered' in v);
  const hideable: Hideable[] = ['policy'];
  const x = { field: 'age', type: 'nominal', title: 'Fact age when probed (turns since it was stated)', sort: order, axis: { labelAngle: 0, labelExpr: "split(datum.label, '|')", labelPadding: 6 } };
  const y = { field: 'retention', type: 'quantitative', title: 'Probed facts retained (%)', scale: { domain: [0, 100] } };
  const color = { field: 'policy', type: 'nominal', title: 'Policy', scale: policyScale(policies), sort: policies, legend: legendFades('policy') };
  const xOffset = { field: 'policy', type: 'nominal', scale: { domain: policies }, sort: policies };
  const tooltip = [
    { field: 'policy', title: 'policy' },
    ...(models.length ? [{ field: 'model', title: 'model' }] : []),
    { field: 'ageText', title: 'fact age' },
    { field: 'retentionText', title: 'retained' },
    ...(answers ? [{ field: 'answeredText', title: 'answered' }] : []),
  ];
  // Bars keep a readable width: the plot narrows when there are few groups.
  const width = Math.min(PLOT_WIDTH, Math.max(300, order.length * (policies.length * 26 + 40)));
  const notes = [
    ...(same && rows.models.length ? [`The same on every model (${rows.models.join(', ')}): one panel for all`] : []),
    ...(weightedRun(results.policies) ? ['Weighted by the scenario weights, as the tables’ retention; probe counts are plain'] : []),
    ...(answers ? ['Diamonds: answer retention, the share whose value the chat model’s reply held'] : []),
    ...overflowNote(results),
    ...simulatedLines(info, results.policies),
  ];
  const top = head(
    name,
    title,
    ['Share of probes whose current value was in the prompt; a tick at 0 means none was'],
    info,
    `Grouped bar chart of retention by fact age bucket, one bar per policy${models.length ? ', one panel per model' : ''}.`,
  );
  const shown = shownOpacity(hideable);
  const layer = [
    { params: [hideParam('policy')], mark: { type: 'bar' }, encoding: { x, y, xOffset, color, ...shownOpacity(hideable, 0.85), tooltip } },
    { mark: { type: 'tick', thickness: 2.5 }, encoding: { x, y, xOffset, fill: OWN_COLOR, ...shown, tooltip } },
    ...(answers
      ? [{ mark: { type: 'point', shape: 'diamond', filled: true, size: 70, stroke: '#333', strokeWidth: 0.8 }, encoding: { x, y: { ...y, field: 'answered' }, xOffset, fill: OWN_COLOR, ...shown, tooltip } }]
      : []),
  ];
  // A panel per model, its name above it: the same colours in each, so the models never share a bar group.
  const view = models.length ? { data: { values }, ...panels(models, { width, height: PANEL_HEIGHT - 20, layer }) } : { width, height: PLOT_HEIGHT, data: { values }, layer };
  return { name, title, spec: withNotes(top, view, notes) };
}

/** Mean cost per conversation split into uncached input, cached input, output and upkeep. */
export function costBreakdownChart(results: ReportInput, info: ReportInfo): Chart {
  const rows = rowsOf(results);
  const policies = rows.names;
  const parts = digestOf(results).costParts;
  // Bar-end labels say the total of the bars: the budget table's cost per conversation, exactly rounded (weighted when scenarios have weights).
  const means = results.policies.map(meanCost);
  const decimals = moneyDecimals(means, 4);
  // Weighted like the budget table when scenarios have weights.
  const values = policies.flatMap((policy) => {
    const p = parts.get(policy) ?? { input: 0n, cached: 0n, output: 0n, upkeep: 0n };
    return [p.input, p.cached, p.output, p.upkeep].map((v, i) => ({ ...rows.fields(policy), part: COST_PARTS[i]!, order: i, cost: usdNumber(v), costText: dollars(v, decimals) }));
  });
  const totals = results.policies.map((p, i) => ({ ...rows.fields(policies[i]!), total: usdNumber(means[i]!), label: dollars(means[i]!, decimals) }));
  const max = Math.max(0, ...totals.map((t) => t.total));
  const format = moneyFormat(max);
  const name = 'cost-breakdown';
  const title = 'Where the money goes, per conversation';
  // A bar per row, named `policy @ model` when the run has several models.
  const y = { field: rows.models.length ? 'series' : 'policy', type: 'nominal', title: null, sort: policies, axis: { labelLimit: 260, labelFontSize: 11 } };
  const tooltip = [
    { field: 'policy', title: 'policy' },
    ...(rows.models.length ? [{ field: 'model', title: 'model' }] : []),
    { field: 'part', title: 'part' },
    { field: 'costText', title: 'per conversation' },
  ];
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
            tooltip,
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
