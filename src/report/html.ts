import type { ProbeRecord } from '../records/registry.js';
import { policyNames, reported, seriesName, severalModels, type Reported, type ReportInput } from '../records/digest.js';
import { budgetDisplay, callsCaption, callsDisplay, DETAILS_CAPTION, detailsDisplay, type DisplayTable } from './budget.js';
import { answersMeasured, columnsFrom, rowLabels, scenarioNotes, tableNotes } from './text.js';
import { dollars, grouped, moneyDecimals, percent, plural, retainedOf } from '../records/format.js';
import { caption, tokenizerLabel, type ReportInfo, type StudyList } from '../records/info.js';
import { budgetCaption } from './markdown.js';
import { conversationsText, totalWeight, verdict, weightText } from './verdict.js';
import type { VegaSpec } from './compile.js';
import { inlineJson, liveScripts, type PageScript } from './live.js';

/**
 * A chart as the page shows it: its title, its rendered SVG, and the Vega
 * spec it was rendered from; with a spec, the page draws the chart live
 * (tooltips, legends that hide what they name) and keeps the SVG for a
 * browser that runs no script.
 */
export interface RenderedChart {
  name: string;
  title: string;
  svg: string;
  vega?: VegaSpec;
}

/**
 * The page's Content-Security-Policy: nothing may load (no scripts, fonts,
 * images from anywhere, no connections); only the inline style applies, and,
 * when the page has live charts, its own inline scripts, each by its hash.
 */
export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

function csp(scripts: readonly PageScript[]): string {
  return scripts.length ? `${REPORT_CSP}; script-src ${scripts.map((s) => s.hash).join(' ')}` : REPORT_CSP;
}

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/**
 * Prefixes an inline SVG's ids (and their `url(#…)` / `href="#…"` uses):
 * ids are document-wide in HTML, and every chart numbers its clip paths from 1.
 */
export function scopeSvgIds(svg: string, prefix: string): string {
  return svg
    .replace(/\sid="([^"]+)"/g, ` id="${prefix}-$1"`)
    .replace(/url\(#([^)]+)\)/g, `url(#${prefix}-$1)`)
    .replace(/href="#([^"]+)"/g, `href="#${prefix}-$1"`);
}

/**
 * Escapes a text cell and lets it break where a name has parts — after `/`,
 * `,` and `|`, and after `:` or `.` before a letter (`window-tokens:budget=500`,
 * `bedrock/us.anthropic.claude…`) — so a table narrows to the page before it
 * scrolls in its box.
 */
export function breakableHtml(text: string): string {
  return escapeHtml(text)
    .replace(/([/,|])(?=\S)/g, '$1<wbr>')
    .replace(/([:.])(?=[A-Za-z])/g, '$1<wbr>');
}

function table(t: DisplayTable, cls = ''): string {
  const th = t.header.map((h, i) => `<th${t.numeric.has(i) ? ' class="num"' : ''}>${escapeHtml(h)}</th>`).join('');
  const body = t.rows
    .map((r) => `<tr>${r.map((c, i) => (t.numeric.has(i) ? `<td class="num">${escapeHtml(c)}</td>` : `<td>${breakableHtml(c)}</td>`)).join('')}</tr>`)
    .join('\n');
  return `<div class="scroll"><table${cls ? ` class="${cls}"` : ''}>\n<thead><tr>${th}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table></div>`;
}

/** What the conversations were replayed through: the policies, and the models when there are several (the policy records are one per policy × model). */
function runSize(results: Reported): string {
  const models = new Set(results.policies.map((p) => p.model)).size;
  const policies = plural(results.policies.length / Math.max(1, models), 'policy', 'policies');
  return models > 1 ? `${policies} × ${models} models` : policies;
}

/** The flag that replaces each list of a study. */
const LIST_FLAG: Readonly<Record<StudyList, string>> = { scenarios: '--scenario', policies: '--policy', models: '--model' };

/**
 * Where what ran comes from: the study file, or the built-in default study,
 * and which of its lists the command line replaced (`built-in default study;
 * from the command line: scenarios (--scenario), policies (--policy)`).
 */
function studySource(info: Pick<ReportInfo, 'studyFile' | 'fromCommandLine'>): string {
  const study = info.studyFile ?? 'built-in default study';
  const replaced = info.fromCommandLine ?? [];
  return replaced.length ? `${study}; from the command line: ${replaced.map((l) => `${l} (${LIST_FLAG[l]})`).join(', ')}` : study;
}

function studyList(results: Reported, info: ReportInfo): string {
  const turns = results.digest.turns;
  const items: [string, string][] = [
    ['study', studySource(info)],
    [info.models.length > 1 ? 'models' : 'model', info.models.map((m) => `${m.model}${m.maxInputTokens !== null ? ` (context window ${grouped(m.maxInputTokens)} tokens)` : ''}`).join(', ')],
    ['tokenizer', `${[...new Set(info.models.map(tokenizerLabel))].join(', ')}${info.tokenizer === 'auto' ? ' (auto)' : ''}`],
    ['prices', `${info.prices} (snapshot of ${info.priceDate})`],
    ['prompt caching', info.cache],
    ['seed', String(info.seed)],
    ['scenarios', conversationsText(info.scenarios.length, info)],
    ['policies', info.policies.map((p) => p.name).join(', ')],
    ['turns replayed', `${grouped(turns)} (scenario × ${info.models.length > 1 ? 'model × ' : ''}policy × turn)`],
    ['probes scored', grouped(results.digest.probes)],
  ];
  const weighted = totalWeight(info) !== undefined;
  const scenarios: DisplayTable = {
    header: ['scenario', 'title', 'turns', ...(weighted ? ['weight'] : []), 'file'],
    rows: info.scenarios.map((s) => [s.id, s.title ?? '', grouped(s.turns), ...(weighted ? [weightText(s.weight ?? 1)] : []), s.source]),
    numeric: new Set(weighted ? [2, 3] : [2]),
  };
  return `<dl class="study">\n${items.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('\n')}\n</dl>\n<h3>Scenarios</h3>\n${table(scenarios, 'scenario-list')}`;
}

function scenarioTable(results: Reported): DisplayTable {
  const decimals = moneyDecimals(results.summary.map((s) => s.totalCost), 4);
  const labels = rowLabels(results.policies);
  const answers = answersMeasured(results.summary);
  const header = [
    'scenario',
    ...labels.header,
    'turns',
    'input tokens',
    'cached',
    'output',
    'upkeep tokens',
    'peak input',
    'cost',
    'overflows',
    'retained',
    'retention',
    ...(answers ? ['answered', 'answer retention'] : []),
    'first lost at turn',
  ];
  const rows = results.summary.map((s) => [
    s.scenario,
    ...labels.cells(s),
    grouped(s.turns),
    grouped(s.inputTokens),
    grouped(s.cachedTokens),
    grouped(s.outputTokens),
    grouped(s.auxTokens),
    grouped(s.peakInputTokens),
    dollars(s.totalCost, decimals),
    grouped(s.overflowTurns),
    retainedOf(s),
    percent(s.retention),
    ...(answers ? [s.answered === null ? '-' : `${grouped(s.answered)}/${grouped(s.probes)}`, percent(s.answerRetention)] : []),
    s.firstLostTurn === null ? '-' : String(s.firstLostTurn),
  ]);
  return { header, rows, numeric: columnsFrom(header, 1 + labels.header.length) };
}

const SOURCE_NOTE: Record<string, string> = {
  window: 'an older value, in the window',
  summary: 'an older value, in the summary',
  retrieved: 'an older value, retrieved',
  facts: 'an older value, in the fact sheet',
  none: 'nowhere',
};

/** What a lost probe found instead: an older value (where), nothing, or a call rejected over the context window. */
function foundInstead(l: ProbeRecord): string {
  if (l.outcome === 'overflow') return 'the call was over the context window';
  return l.outcome === 'stale' ? (SOURCE_NOTE[l.source] ?? l.source) : 'nothing';
}

function lostSection(results: Reported): string {
  const { lost, unanswered } = results.digest;
  if (!results.digest.probes) return '<p>No fact was probed in this study.</p>';
  const parts = [lost.length ? notRetained(results) : '<p>Every probed fact was retained by every policy.</p>'];
  // With answers measured: the facts that were sent, but the chat model's reply did not hold.
  if (unanswered.length) parts.push(notAnswered(results));
  return parts.join('\n');
}

/** `policy: 3 · other: 1`: how many of `probes` each row lost, in the report's order. */
function perRow(results: Reported, probes: readonly ProbeRecord[]): string {
  const byModel = severalModels(results.policies);
  return policyNames(results)
    .map((p) => [p, probes.filter((l) => seriesName(l, byModel) === p).length] as const)
    .filter(([, n]) => n > 0)
    .map(([p, n]) => `${escapeHtml(p)}: ${grouped(n)}`)
    .join(' · ');
}

function notRetained(results: Reported): string {
  const { lost } = results.digest;
  const labels = rowLabels(results.policies);
  const t: DisplayTable = {
    header: ['scenario', ...labels.header, 'turn', 'fact', 'outcome', 'turns since stated', 'found instead'],
    rows: lost.map((l) => [l.scenario, ...labels.cells(l), String(l.turn), l.fact, l.outcome, grouped(l.ageTurns), foundInstead(l)]),
    numeric: new Set([1 + labels.header.length, 4 + labels.header.length]),
  };
  return `<p>${grouped(lost.length)} of ${grouped(results.digest.probes)} probes were not retained (${perRow(results, lost)}). <em>stale</em>: only an older value was sent; <em>missing</em>: no value was${lost.some((l) => l.outcome === 'overflow') ? '; <em>overflow</em>: the call was over the model&#39;s context window, so a real backend would have rejected it' : ''}.</p>\n${table(t, 'lost')}`;
}

function notAnswered(results: Reported): string {
  const { unanswered } = results.digest;
  const labels = rowLabels(results.policies);
  const t: DisplayTable = {
    header: ['scenario', ...labels.header, 'turn', 'fact', 'turns since stated'],
    rows: unanswered.map((l) => [l.scenario, ...labels.cells(l), String(l.turn), l.fact, grouped(l.ageTurns)]),
    numeric: new Set([1 + labels.header.length, 3 + labels.header.length]),
  };
  const judge = unanswered.some((l) => l.judged !== undefined) ? ', and the judge did not say it gave it' : '';
  return `<p>${grouped(unanswered.length)} of ${grouped(results.digest.probes)} probes were retained but not answered (${perRow(results, unanswered)}): the fact was sent, but the chat model&#39;s reply to the probe turn did not hold its value${judge}.</p>\n${table(t, 'lost')}`;
}

/** The model-call table's section (after the latency, storage and safety table); empty when no turn made more than one call. */
function callsSection(results: Reported): string {
  const t = callsDisplay(results);
  if (!t) return '';
  return `<section id="calls">\n<h2>Model calls per policy</h2>\n<p class="caption">${escapeHtml(callsCaption(results))}</p>\n${table(t, 'calls')}\n</section>\n`;
}

const STYLE = `
:root { color-scheme: light; --fg: #1f2328; --muted: #57606a; --line: #d0d7de; --head: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--fg); background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 28px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 20px 0 8px; }
.caption { color: var(--muted); margin: 0 0 12px; }
.verdict { font-size: 16px; max-width: 80ch; }
nav { margin: 12px 0 0; font-size: 14px; }
nav a { color: #0969da; margin-right: 14px; text-decoration: none; }
dl.study { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 18px; margin: 0; }
dl.study dt { color: var(--muted); }
dl.study dd { margin: 0; overflow-wrap: anywhere; }
.caption, .verdict { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 7px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
td:not(.num) { white-space: normal; overflow-wrap: break-word; min-width: 4ch; }
th { background: var(--head); font-weight: 600; white-space: normal; vertical-align: bottom; }
td.num, th.num { text-align: right; }
tbody tr:nth-child(even) { background: #fbfcfd; }
.charts { display: flex; flex-direction: column; gap: 20px; align-items: flex-start; }
figure { margin: 0; padding: 12px; border: 1px solid var(--line); border-radius: 6px; background: #fff; max-width: 100%; }
figure svg { display: block; max-width: 100%; height: auto; }
figure .live { display: block; }
#vg-tooltip-element { pointer-events: none; }
#vg-tooltip-element.vg-tooltip table tr td.key { white-space: nowrap; }
#vg-tooltip-element.vg-tooltip table tr td.value { max-width: 420px; }
`;

/** The chart the verdict section shows under its paragraph: retention against cost. */
const VERDICT_CHART = 'retention-vs-cost';

/**
 * report.html: one self-contained page (inline CSS, SVG and, for charts with
 * a Vega spec, the Vega runtime; nothing loaded from anywhere, which a
 * Content-Security-Policy forbids), the answer first:
 * the verdict with the retention-vs-cost chart, the budget table, the
 * latency, storage and safety table, the other charts, the per-scenario
 * table, each probe a policy lost, and last the study it was run on.
 */
export function reportHtml(input: ReportInput, info: ReportInfo, charts: readonly RenderedChart[]): string {
  const results = reported(input);
  const title = `ctxsim report${info.studyFile ? ` · ${info.studyFile}` : ''}`;
  const figure = (c: RenderedChart) =>
    `<figure id="chart-${escapeHtml(c.name)}"${c.vega ? ` data-chart="${escapeHtml(c.name)}"` : ''} aria-label="${escapeHtml(c.title)}">\n<div class="static">\n${scopeSvgIds(c.svg.trimEnd(), c.name)}\n</div>\n</figure>`;
  // Live charts: their specs as data, the runtime and the page's script after everything else.
  const live = charts.filter((c) => c.vega);
  const scripts = live.length ? liveScripts() : [];
  const specs = live.length ? `<script type="application/json" id="chart-specs">${inlineJson(Object.fromEntries(live.map((c) => [c.name, c.vega])))}</script>\n` : '';
  const first = charts.filter((c) => c.name === VERDICT_CHART).map(figure);
  const figures = charts.filter((c) => c.name !== VERDICT_CHART).map(figure).join('\n');
  const notes = (lines: readonly string[]) => lines.map((n) => `<p class="caption">${escapeHtml(n)}</p>\n`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp(scripts)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header>
<h1>ctxsim report</h1>
<p class="caption">${escapeHtml(caption(info))} · ${escapeHtml(conversationsText(results.policies[0]?.scenarios ?? 0, info))} × ${escapeHtml(runSize(results))}</p>
<nav><a href="#verdict">Verdict</a><a href="#budget">Budget</a><a href="#details">Latency, storage, safety</a><a href="#charts">Charts</a><a href="#scenarios">Per scenario</a><a href="#lost">Facts not retained</a><a href="#study">Study</a></nav>
</header>
<section id="verdict">
<h2>Verdict</h2>
<p class="verdict">${escapeHtml(verdict(results.policies, info, results.summary))}</p>
${first.length ? `<div class="charts">\n${first.join('\n')}\n</div>\n` : ''}</section>
<section id="budget">
<h2>Budget per policy</h2>
<p class="caption">${escapeHtml(budgetCaption(results, info))}</p>
${table(budgetDisplay(results), 'budget')}
${notes(tableNotes(info, results.policies))}</section>
<section id="details">
<h2>Latency, storage and safety per policy</h2>
<p class="caption">${escapeHtml(DETAILS_CAPTION)}</p>
${table(detailsDisplay(results), 'details')}
</section>
${callsSection(results)}<section id="charts">
<h2>Charts</h2>
<div class="charts">
${figures}
</div>
</section>
<section id="scenarios">
<h2>Per scenario</h2>
${table(scenarioTable(results), 'scenarios')}
${notes(scenarioNotes(info, results.policies))}</section>
<section id="lost">
<h2>Facts not retained</h2>
${lostSection(results)}
</section>
<section id="study">
<h2>Study</h2>
${studyList(results, info)}
</section>
</main>
${specs}${scripts.map((sc) => `<script>${sc.text}</script>\n`).join('')}</body>
</html>
`;
}
