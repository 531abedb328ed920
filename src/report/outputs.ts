import type { Results } from '../records/registry.js';
import { reported, type Reported } from '../records/digest.js';
import { charts, type Chart } from './charts.js';
import { specJson } from './spec-json.js';
import { eventLoopTurn } from '../process.js';
import { policiesCsv, probesCsv, summaryCsv, turnsCsv, violationsCsv } from '../records/csv.js';
import { reportHtml, type RenderedChart } from './html.js';
import type { ReportInfo } from '../records/info.js';
import { resultsJson, type ResultsMeta } from '../records/json.js';
import { reportMarkdown } from './markdown.js';

/**
 * Every output of a run, as file name → content; the CLI writes them. The
 * pipeline: records → CSV tables → results.json → chart specs → SVG (vega,
 * server-side) → PNG (resvg) → report.md → report.html (SVG inlined, and
 * each spec compiled to Vega for the page's live charts).
 * Only the record files (turns, probes and violations as CSV, and
 * results.json) need the records; everything else is made from the
 * summaries and the records' digest, so a run can stream its records to
 * those files (output/record-files.ts) and keep only the digest.
 */

/** A format one output file can take: `--out FILE.ext` or `--out - --format F`. */
export type OutputFormat = 'csv' | 'json' | 'md' | 'html';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['csv', 'json', 'md', 'html'];

/** The format a file name asks for by its extension, if any. */
export function formatOfPath(path: string): OutputFormat | undefined {
  const ext = /\.([a-z]+)$/i.exec(path)?.[1]?.toLowerCase();
  return ext === 'markdown' ? 'md' : ext === 'htm' ? 'html' : OUTPUT_FORMATS.find((f) => f === ext);
}

/**
 * Renders the charts to SVG one at a time (clip ids restart per render, so
 * renders must not interleave), each with its compiled Vega spec. Vega is
 * loaded here, on first use, so commands and outputs without charts start
 * faster.
 */
export async function renderCharts(list: readonly Chart[]): Promise<RenderedChart[]> {
  const { renderSvg } = await import('./svg.js');
  const { toVega } = await import('./compile.js');
  const out: RenderedChart[] = [];
  for (const c of list) {
    // A chart takes a fraction of a second to render: a signal is heard between two.
    await eventLoopTurn();
    out.push({ name: c.name, title: c.title, svg: await renderSvg(c.spec), vega: toVega(c.spec) });
  }
  return out;
}

/** A chart as rendered: its SVG, and its PNG when one was asked for. */
export interface StoredChart {
  svg: string;
  png?: Uint8Array;
}

/**
 * Charts rendered before, kept by the JSON of their spec (a chart is a
 * function of its spec): a rerun whose charts did not change renders none.
 * The CLI keeps them in the replay cache.
 */
export interface ChartStore {
  get(spec: string): StoredChart | undefined;
  set(spec: string, chart: StoredChart): void;
}

export interface ReportFilesOptions {
  /** Write PNGs beside the SVGs (default true). */
  png?: boolean;
  /** Where charts rendered before are kept, and new ones put. */
  charts?: ChartStore;
}

/** Each chart's spec as JSON and its SVG (and PNG), from the store when it has them, else rendered (one at a time) and stored. */
async function chartImages(list: readonly Chart[], png: boolean, store: ChartStore | undefined): Promise<(StoredChart & { spec: string })[]> {
  const out: (StoredChart & { spec: string })[] = [];
  for (const c of list) {
    const spec = specJson(c.spec);
    const kept = store?.get(spec);
    if (kept && (!png || kept.png)) {
      out.push({ ...kept, spec });
      continue;
    }
    // Its SVG alone (the page's Vega is compiled where the page is made).
    await eventLoopTurn();
    const svg = await (await import('./svg.js')).renderSvg(c.spec);
    if (png) await eventLoopTurn();
    const made: StoredChart = { svg, ...(png && { png: (await import('./png.js')).svgToPng(svg) }) };
    store?.set(spec, made);
    out.push({ ...made, spec });
  }
  return out;
}

/**
 * Every file of an output folder but the record files: summary.csv,
 * policies.csv, the charts (spec, SVG, PNG), report.md, report.html.
 */
export async function reportOnlyFiles(results: Reported, info: ReportInfo, opts: ReportFilesOptions = {}): Promise<Map<string, string | Uint8Array>> {
  const png = opts.png ?? true;
  const list = charts(results, info);
  const images = await chartImages(list, png, opts.charts);
  const files = new Map<string, string | Uint8Array>([
    ['summary.csv', summaryCsv(results)],
    ['policies.csv', policiesCsv(results)],
  ]);
  for (const [i, c] of list.entries()) {
    files.set(`${c.name}.vl.json`, images[i]!.spec);
    files.set(`${c.name}.svg`, images[i]!.svg);
    if (png) files.set(`${c.name}.png`, images[i]!.png!);
  }
  files.set('report.md', reportMarkdown(results, info, list.map((c) => ({ title: c.title, file: `${c.name}.${png ? 'png' : 'svg'}` }))));
  // The page's live charts: each spec compiled to Vega (Vega-Lite only; a cached chart loads no Vega).
  const { toVega } = await import('./compile.js');
  files.set('report.html', reportHtml(results, info, list.map((c, i) => ({ name: c.name, title: c.title, svg: images[i]!.svg, vega: toVega(c.spec) }))));
  return files;
}

/** Every file of an output folder. Everything but results.json's `meta` is the same on every rerun. */
export async function reportFiles(results: Results, info: ReportInfo, meta: ResultsMeta, opts: ReportFilesOptions = {}): Promise<Map<string, string | Uint8Array>> {
  const rest = await reportOnlyFiles(reported(results), info, opts);
  const files = new Map<string, string | Uint8Array>([
    ['turns.csv', turnsCsv(results)],
    ['probes.csv', probesCsv(results)],
    ['summary.csv', rest.get('summary.csv')!],
    ['policies.csv', rest.get('policies.csv')!],
    ['violations.csv', violationsCsv(results)],
    ['results.json', resultsJson(results, info, meta)],
  ]);
  for (const [name, content] of rest) files.set(name, content);
  return files;
}

/** One output in one format, for `--out FILE` and `--out -`: csv is turns.csv; md has no chart links. */
export async function singleOutput(format: OutputFormat, results: Results, info: ReportInfo, meta: ResultsMeta): Promise<string> {
  switch (format) {
    case 'csv':
      return turnsCsv(results);
    case 'json':
      return resultsJson(results, info, meta);
    case 'md':
    case 'html':
      return reportOutput(format, reported(results), info);
  }
}

/** report.md (without chart links) or report.html as one output: made from summaries and the digest only. */
export async function reportOutput(format: 'md' | 'html', results: Reported, info: ReportInfo): Promise<string> {
  return format === 'md' ? reportMarkdown(results, info) : reportHtml(results, info, await renderCharts(charts(results, info)));
}
