import type { Results } from '../records/registry.js';
import { digestOf, policyNames, reported, type Digested, type ReportInput } from '../records/digest.js';
import { budgetDisplay, budgetTable, callsCaption, callsDisplay, DETAILS_CAPTION, detailsDisplay, type BudgetOptions } from './budget.js';
import { grouped } from '../records/format.js';
import { tableNotes } from './text.js';
import { conversationsText, verdict } from './verdict.js';
import { caption, type ReportInfo } from '../records/info.js';
import type { TableSort } from '../records/table-sort.js';
import { terminalColumns } from '../text/columns.js';

/** A chart as report.md links it. */
export interface ChartLink {
  title: string;
  /** File name beside report.md, e.g. `cost-by-turn.svg`. */
  file: string;
}

/** Escapes text for a markdown table cell. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * Escapes text a study names (models, files) for a markdown line: the
 * characters that would make markup of it (emphasis, code, links, HTML,
 * and `$`, which GitHub reads as the start of math) are written as
 * themselves. A `_` inside a word is left alone (GitHub reads it as a
 * letter there): `o200k_base` stays as it is.
 */
export function markdownText(text: string): string {
  return text.replace(/[\\`*[\]<>|$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ');
}

/**
 * A GitHub markdown table with padded columns, so the source reads as a
 * table too (in a terminal, where `ctxsim table` prints it, as the run table
 * is laid out: by the columns a terminal draws, a CJK name two a
 * character). `right` marks numeric columns (right-aligned, `---:`). A text
 * cell of a row holds what a study names (a policy, a model), so it is
 * written as text, as the caption is.
 */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const all = [header.map(cell), ...rows.map((r) => r.map((c, i) => (right.has(i) ? cell(c) : markdownText(c))))];
  const widths = header.map((_, i) => Math.max(3, ...all.map((r) => terminalColumns(r[i]!))));
  const pad = (s: string, i: number) => {
    const room = ' '.repeat(widths[i]! - terminalColumns(s));
    return right.has(i) ? `${room}${s}` : `${s}${room}`;
  };
  const line = (r: readonly string[]) => `| ${r.map(pad).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (right.has(i) ? ` ${'-'.repeat(w - 1)}: ` : ` ${'-'.repeat(w)} `)).join('|')}|`;
  return [line(all[0]!), rule, ...all.slice(1).map(line)].join('\n').concat('\n');
}

/**
 * The one-line caption of the budget table; given the turns its tokens
 * columns show, what they are, and how many conversations reach each turn
 * that not all reach (`turn 50: 1`): a mean at a late turn may be one
 * conversation's.
 */
export function budgetCaption(results: Pick<Results, 'policies'> & Digested, info: ReportInfo, turns: readonly number[] = budgetTable(results).turns): string {
  const n = results.policies[0]?.scenarios ?? 0;
  const head = `${caption(info)} · ${conversationsText(n, info)}`;
  if (!turns.length) return head;
  const first = results.policies[0];
  const series = first ? (digestOf(results).inputTokensByTurn.get(policyNames(results)[0]!) ?? []) : [];
  const fewer = turns.flatMap((t) => {
    const reach = series[t - 1]?.conversations ?? 0;
    return reach < n ? [`turn ${t}: ${grouped(reach)}`] : [];
  });
  return `${head} · tokens: mean sent at that turn by the conversations that reach it${fewer.length ? ` (${fewer.join(', ')})` : ''}`;
}

/**
 * The budget table as paste-ready GitHub markdown: caption line, blank
 * line, table; then, when memory is simulated or recorded and when answers
 * were measured, a blank line and what that means, each. Its columns and
 * order are `options`' (`narrow`: by default only what fits a docs page,
 * as `ctxsim table` prints it; else every figure, as report.md has it).
 */
export function budgetMarkdown(results: Pick<Results, 'policies'> & Digested, info: ReportInfo, options: BudgetOptions & { narrow?: boolean } = {}): string {
  const t = budgetDisplay(results, options);
  const notes = tableNotes(info, results.policies);
  const turns = t.header.flatMap((h) => {
    const m = /^tokens @ turn (\d+)$/.exec(h);
    return m ? [Number(m[1])] : [];
  });
  return `${markdownText(budgetCaption(results, info, turns))}\n\n${markdownTable(t.header, t.rows, t.numeric)}${notes.map((n) => `\n${markdownText(n)}\n`).join('')}`;
}

/** The latency, storage and safety table as GitHub markdown: caption line, blank line, table. */
export function detailsMarkdown(results: Pick<Results, 'policies'>, sort?: TableSort): string {
  const t = detailsDisplay(results, sort);
  return `${DETAILS_CAPTION}\n\n${markdownTable(t.header, t.rows, t.numeric)}`;
}

/** The model-call table's section of report.md (heading, caption, table); none when no turn made more than one call. */
function callsMarkdown(results: Pick<Results, 'policies'> & Digested, sort?: TableSort): string[] {
  const t = callsDisplay(results, sort);
  return t ? ['## Model calls per policy\n', `${callsCaption(results)}\n\n${markdownTable(t.header, t.rows, t.numeric)}`] : [];
}

/**
 * report.md: the verdict, the budget table for docs (its columns and order
 * the study's `budgetColumns` and `budgetSort`, when given), the latency,
 * storage and safety table, the model-call table of agent runs and, when
 * the charts are written beside it, links to them.
 */
export function reportMarkdown(input: ReportInput, info: ReportInfo, charts: readonly ChartLink[] = []): string {
  const results = reported(input);
  const parts = [
    `# ctxsim report\n`,
    `## Verdict\n`,
    `${markdownText(verdict(results.policies, info, results.summary))}\n`,
    `## Budget per policy\n`,
    budgetMarkdown(results, info, { ...(info.budgetColumns && { columns: info.budgetColumns }), ...(info.budgetSort && { sort: info.budgetSort }) }),
    `## Latency, storage and safety per policy\n`,
    detailsMarkdown(results, info.budgetSort),
  ];
  // The tables below the budget table keep its order.
  parts.push(...callsMarkdown(results, info.budgetSort));
  if (charts.length) {
    parts.push('## Charts\n');
    for (const c of charts) parts.push(`![${c.title}](${c.file})\n`);
  }
  return parts.join('\n');
}
