import type { Pico } from '../types.js';
import { editDistance } from '../text/distance.js';
import { UsageError } from '../errors.js';
import type { ColumnSpec } from '../records/columns.js';
import { POLICY_RECORD, type PolicyRecord, type Results } from '../records/registry.js';
import { digestOf, policyNames, severalModels, weightedRun, type Digested } from '../records/digest.js';
import { csvLine } from '../records/csv.js';
import { answersMeasured, columnsFrom, rowLabels, sortedPolicies, vsFullText } from './text.js';
import type { TableSort } from '../records/table-sort.js';
import { costPer1000, divRound, dollars, fraction, grouped, latencyFormat, meanCost, moneyDecimals, oneDecimal, percent, retainedOf, usd } from '../records/format.js';

/** The turns the budget table shows tokens for, where some conversation reaches them. */
export const BUDGET_TURNS: readonly number[] = [1, 5, 10, 20, 50];

/** One policy's line of the budget table (a policy on one model, when the run has several). */
export interface BudgetRow {
  policy: string;
  model: string;
  /** Mean input tokens sent at each of `BudgetTable.turns`. */
  tokensAt: number[];
  costPerConversation: Pico;
  costPer1000: Pico;
  probes: number;
  retained: number;
  retention: number | null;
  /** Probes the chat model's reply held; null when answers were not measured. */
  answered: number | null;
  answerRetention: number | null;
  overflowTurns: number;
  /** Probes scored on calls over the context window (not retained). */
  overflowProbes: number;
  scenarios: number;
  /** Mean upkeep tokens (summaries, extractions, embeddings) per conversation, rounded. */
  upkeepTokens: number;
  /** On the Pareto frontier of cost and retention. */
  pareto: boolean;
  /** Its cost per 1,000 conversations against `full`'s on the same model (−0.27: 27% less); null when that model has no `full`. */
  vsFull: number | null;
  /** The policy record the row is of: the columns of `policies.csv` the table can show too. */
  record: PolicyRecord;
}

export interface BudgetTable {
  /** The `BUDGET_TURNS` that at least one conversation reaches. */
  turns: number[];
  rows: BudgetRow[];
}

/** How a budget table is laid out: which columns, in which order (names of `BUDGET_COLUMNS`), and the rows' order. */
export interface BudgetOptions {
  columns?: readonly string[];
  sort?: TableSort;
}

/**
 * The budget table: per policy, mean tokens sent at turns 1, 5, 10, 20, 50
 * (over the conversations that reach each), the mean cost of a conversation
 * and of 1,000 conversations (exact, rounded once), retention and overflows;
 * rows in the run's order, or as `sort` says.
 */
export function budgetTable(results: Pick<Results, 'policies'> & Digested, sort?: TableSort): BudgetTable {
  const series = digestOf(results).inputTokensByTurn;
  const longest = Math.max(0, ...[...series.values()].map((s) => s.length));
  const turns = BUDGET_TURNS.filter((t) => t <= longest);
  const byName = new Map(results.policies.map((p, i) => [p, policyNames(results)[i]!]));
  const full = new Map(results.policies.filter((p) => p.policy === 'full').map((p) => [p.model, costPer1000(p)]));
  const policies = sort === undefined ? results.policies : sortedPolicies(results.policies, sort);
  const rows = policies.map((p): BudgetRow => {
    const s = series.get(byName.get(p)!) ?? [];
    const base = full.get(p.model);
    return {
      policy: p.policy,
      model: p.model,
      tokensAt: turns.map((t) => s[t - 1]?.value ?? 0),
      costPerConversation: meanCost(p),
      costPer1000: costPer1000(p),
      probes: p.probes,
      retained: p.retained,
      retention: p.retention,
      answered: p.answered ?? null,
      answerRetention: p.answerRetention ?? null,
      overflowTurns: p.overflowTurns,
      overflowProbes: p.overflowProbes,
      scenarios: p.scenarios,
      upkeepTokens: Math.round(p.auxTokens / Math.max(1, p.scenarios)),
      pareto: p.pareto,
      vsFull: base === undefined || base === 0n ? null : Number(costPer1000(p) - base) / Number(base),
      record: p,
    };
  });
  return { turns, rows };
}

/** A cell of a CSV row. */
type CsvValue = string | number | boolean | null;

/**
 * A column of the budget table that `ctxsim table --columns` and a study's
 * `budgetColumns` name: its header in markdown (`weighted`: ` (weighted)`
 * when the run's figures are weighted means, else empty), its markdown
 * cells (all rows at once: a money column has one precision), its CSV cell,
 * and whether it is a number (right-aligned).
 */
interface BudgetColumn {
  name: string;
  header: (weighted: string) => string;
  cells: (rows: readonly BudgetRow[]) => string[];
  csv: (r: BudgetRow) => CsvValue;
  numeric: boolean;
}

/** A column whose markdown cell is a row's alone. */
function each(name: string, header: string | ((weighted: string) => string), cell: (r: BudgetRow) => string, csv: (r: BudgetRow) => CsvValue, numeric = true): BudgetColumn {
  return { name, header: typeof header === 'string' ? () => header : header, cells: (rows) => rows.map(cell), csv, numeric };
}

/** A money column: one precision for the column (three significant digits of its smallest value, at least `min` decimals). */
function money(name: string, header: (weighted: string) => string, value: (r: BudgetRow) => Pico, min: number, csvDecimals: number): BudgetColumn {
  return {
    name,
    header,
    cells: (rows) => {
      const decimals = moneyDecimals(rows.map(value), min);
      return rows.map((r) => dollars(value(r), decimals));
    },
    csv: (r) => usd(value(r), csvDecimals),
    numeric: true,
  };
}

/** The budget table's own columns (those `budgetCsv` writes, and `vs_full`), by name. */
function ownColumns(): BudgetColumn[] {
  return [
    each('policy', 'policy', (r) => r.policy, (r) => r.policy, false),
    each('model', 'model', (r) => r.model, (r) => r.model, false),
    ...BUDGET_TURNS.map((n) =>
      each(`tokens_turn_${n}`, `tokens @ turn ${n}`, (r) => tokensAt(r, n, grouped, '-'), (r) => tokensAt(r, n, (t) => t, null)),
    ),
    money('cost_per_conversation_usd', (w) => `cost / conversation${w}`, (r) => r.costPerConversation, 4, 8),
    money('cost_per_1000_conversations_usd', (w) => `cost / 1,000 conversations${w}`, (r) => r.costPer1000, 2, 4),
    // A number, not text: a negative change is not a formula to a spreadsheet.
    each('vs_full', 'vs full', (r) => vsFullText(r.vsFull), (r) => (r.vsFull === null ? null : Math.round(r.vsFull * 10_000) / 10_000)),
    each('probes', 'probes', (r) => grouped(r.probes), (r) => r.probes),
    each('retained', 'retained', (r) => grouped(r.retained), (r) => r.retained),
    each('retention', (w) => `retention${w}`, (r) => (r.probes ? `${percent(r.retention)} (${retainedOf(r)})` : '-'), (r) => fraction(r.retention)),
    each('answered', 'answered', (r) => (r.answered === null ? '-' : grouped(r.answered)), (r) => r.answered),
    each('answer_retention', (w) => `answer retention${w}`, (r) => (r.probes && r.answered !== null ? `${percent(r.answerRetention)} (${r.answered}/${r.probes})` : '-'), (r) => fraction(r.answerRetention)),
    each('pareto', 'pareto', (r) => (r.pareto ? 'yes' : '-'), (r) => r.pareto, false),
    each('upkeep_tokens_per_conversation', 'upkeep tokens / conversation', (r) => grouped(r.upkeepTokens), (r) => r.upkeepTokens),
    each('overflow_turns', 'overflows', (r) => grouped(r.overflowTurns), (r) => r.overflowTurns),
    each('overflow_probes', 'overflow probes', (r) => grouped(r.overflowProbes), (r) => r.overflowProbes),
    each('scenarios', 'scenarios', (r) => grouped(r.scenarios), (r) => r.scenarios),
  ];
}

/** Tokens sent at turn `n`, or `absent` when no conversation reaches it (markdown `-`, an empty CSV cell). */
function tokensAt<T, A>(r: BudgetRow, n: number, show: (tokens: number) => T, absent: A): T | A {
  const i = BUDGET_TURNS.indexOf(n);
  return i < r.tokensAt.length ? show(r.tokensAt[i]!) : absent;
}

/** A column of `policies.csv` the budget table has no column of its own for, shown as its kind reads: counts grouped, money in dollars, ratios as percentages, latencies in ms or s. */
function recordColumn(spec: ColumnSpec): BudgetColumn {
  const name = spec.csv!;
  const header = name.replace(/_(usd|ms)$/, '').replaceAll('_', ' ');
  const value = (r: BudgetRow) => (r.record as unknown as Record<string, unknown>)[spec.key];
  const csv = POLICY_RECORD.csv.find(([h]) => h === name)![1] as (r: PolicyRecord) => CsvValue | undefined;
  const column = (cells: BudgetColumn['cells'], numeric = true): BudgetColumn => ({ name, header: () => header, cells, csv: (r) => csv(r.record) ?? null, numeric });
  switch (spec.kind) {
    case 'money':
      return money(name, () => header, (r) => value(r) as Pico, 4, 8);
    case 'ratio':
      return column((rows) => rows.map((r) => percent((value(r) as number | null) ?? null)));
    case 'duration':
      return column((rows) => {
        const format = latencyFormat(rows.map((r) => value(r) as number));
        return rows.map((r) => format(value(r) as number));
      });
    case 'flag':
      return column((rows) => rows.map((r) => (value(r) ? 'yes' : '-')), false);
    case 'count':
      return column((rows) => rows.map((r) => (value(r) === null || value(r) === undefined ? '-' : grouped(value(r) as number))));
    default:
      return column((rows) => rows.map((r) => String(value(r) ?? '-')), false);
  }
}

/** Every column a budget table can show, by name: its own, then the other columns of `policies.csv`, in that file's order. */
export const BUDGET_COLUMNS: ReadonlyMap<string, BudgetColumn> = (() => {
  const own = ownColumns();
  const names = new Set(own.map((c) => c.name));
  const more = POLICY_RECORD.csvSpecs.filter((c) => !names.has(c.csv!)).map(recordColumn);
  return new Map([...own, ...more].map((c) => [c.name, c]));
})();

/** The names `--columns` and `budgetColumns` take, in the order `ctxsim table --help` lists them. */
export const BUDGET_COLUMN_NAMES: readonly string[] = [...BUDGET_COLUMNS.keys()];

/** Why a list of column names is not one a budget table can show (an unknown name, with the nearest known one; a name twice), or nothing. */
export function budgetColumnsProblem(names: readonly string[]): { index: number; message: string } | undefined {
  for (const [index, name] of names.entries()) {
    if (!BUDGET_COLUMNS.has(name)) {
      const near = closest(name, BUDGET_COLUMN_NAMES);
      return { index, message: `no budget table column ${JSON.stringify(name)}${near === undefined ? '' : ` (did you mean ${near}?)`}; the columns are listed in ctxsim table --help` };
    }
    if (names.indexOf(name) !== index) return { index, message: `column ${name} is listed twice` };
  }
  return undefined;
}

/**
 * The columns a budget table shows unless told: `ctxsim table`'s (`narrow`:
 * policy, model when the run has several, cost per 1,000 conversations,
 * retention, answer retention when measured, `vs full` when the run has
 * `full`, pareto: what fits a docs page), or report.md's and report.html's
 * (every figure of the table).
 */
export function defaultBudgetColumns(t: BudgetTable, narrow: boolean): string[] {
  const models = severalModels(t.rows) ? ['model'] : [];
  const answers = answersMeasured(t.rows) ? ['answer_retention'] : [];
  if (narrow) return ['policy', ...models, 'cost_per_1000_conversations_usd', 'retention', ...answers, ...(t.rows.some((r) => r.vsFull !== null) ? ['vs_full'] : []), 'pareto'];
  return ['policy', ...models, ...t.turns.map((n) => `tokens_turn_${n}`), 'cost_per_conversation_usd', 'cost_per_1000_conversations_usd', 'retention', ...answers, 'pareto', 'upkeep_tokens_per_conversation', 'overflow_turns'];
}

/** The columns `budgetCsv` writes unless told: the file's columns as they have been. */
function defaultCsvColumns(t: BudgetTable): string[] {
  const answers = answersMeasured(t.rows) ? ['answered', 'answer_retention'] : [];
  return [
    'policy',
    ...t.turns.map((n) => `tokens_turn_${n}`),
    'cost_per_conversation_usd',
    'cost_per_1000_conversations_usd',
    'probes',
    'retained',
    'retention',
    'overflow_turns',
    'scenarios',
    'overflow_probes',
    'model',
    ...answers,
    'upkeep_tokens_per_conversation',
    'pareto',
  ];
}

/** The columns named, checked. */
function columnsNamed(names: readonly string[]): BudgetColumn[] {
  const problem = budgetColumnsProblem(names);
  if (problem) throw new UsageError(`--columns: ${problem.message}`);
  return names.map((n) => BUDGET_COLUMNS.get(n)!);
}

/**
 * The budget table as CSV: plain numbers (USD with fixed decimals), one row
 * per policy, in the run's order unless `sort` says otherwise; by default
 * the columns it has always had (`answered` and `answer_retention` when
 * answers were measured), or those `columns` names, in that order.
 */
export function budgetCsv(results: Pick<Results, 'policies'> & Digested, options: BudgetOptions = {}): string {
  const t = budgetTable(results, options.sort);
  const columns = columnsNamed(options.columns ?? defaultCsvColumns(t));
  return [columns.map((c) => c.name), ...t.rows.map((r) => columns.map((c) => c.csv(r)))].map(csvLine).join('');
}

/** The budget table as display text: header, rows, and which columns are numeric (right-aligned). */
export interface DisplayTable {
  header: string[];
  rows: string[][];
  numeric: ReadonlySet<number>;
}

/**
 * The budget table as people read it, cheapest first unless `sort` says
 * otherwise: tokens with thousands separators, money as `$1,234.5678` with
 * one precision per column (three significant digits of its smallest
 * value), retention as `92.5% (37/40)` — with `, 3 overflowed` when probes
 * fell on calls over the context window —, whether the policy is on the
 * Pareto frontier, its mean upkeep tokens per conversation, and overflows
 * as the turns that went over it; or the columns `columns` names, in that
 * order (`narrow`: by default only what fits a docs page, see
 * `defaultBudgetColumns`). Figures that are weighted means say so in their
 * header.
 */
export function budgetDisplay(results: Pick<Results, 'policies'> & Digested, options: BudgetOptions & { narrow?: boolean } = {}): DisplayTable {
  const t = budgetTable(results, options.sort ?? 'cost');
  const columns = columnsNamed(options.columns ?? defaultBudgetColumns(t, options.narrow ?? false));
  const weighted = weightedRun(results.policies) ? ' (weighted)' : '';
  const cells = columns.map((c) => c.cells(t.rows));
  return {
    header: columns.map((c) => c.header(weighted)),
    rows: t.rows.map((_, i) => cells.map((column) => column[i]!)),
    numeric: new Set(columns.flatMap((c, i) => (c.numeric ? [i] : []))),
  };
}

/** The nearest of `names` to `name` by edit distance, when it is near enough to be a slip (at most a third of its letters, and 3). */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let least = Math.min(3, Math.ceil(name.length / 3)) + 1;
  for (const n of names) {
    const d = editDistance(name, n);
    if (d < least) [best, least] = [n, d];
  }
  return best;
}

/** What the latency, storage and safety table's columns mean, for its caption. */
export const DETAILS_CAPTION =
  "latency: the time until a turn's reply is complete, its 95th percentile in each conversation, then the 95th percentile of those over the conversations (in seconds when any policy's is 10 s or more) · stored: bytes kept at the end of a conversation · zombies: forgotten values still held at the end (artifacts), sent (turns) or found by a probe · injection exposure: turns whose prompt still held an earlier injection · rule violations: provider message rules broken";

/**
 * Per policy, what the budget table leaves out: the 95th-percentile turn
 * latency, the bytes stored at the end of a conversation (mean and 95th
 * percentile), and the safety counts — zombie artifacts, prompts and
 * probes, injection exposure and provider rule violations.
 */
export function detailsDisplay(results: Pick<Results, 'policies'>, sort: TableSort = 'cost'): DisplayTable {
  const policies = sortedPolicies(results.policies, sort);
  const labels = rowLabels(policies);
  const latency = latencyFormat(policies.map((p) => p.latencyP95Ms));
  const header = [
    ...labels.header,
    'latency p95',
    'stored (mean)',
    'stored (p95)',
    'zombie artifacts',
    'zombie turns',
    'zombie probes',
    'injection exposure',
    'rule violations',
  ];
  const rows = policies.map((p) => [
    ...labels.cells(p),
    latency(p.latencyP95Ms),
    `${grouped(p.storedBytesMean)} B`,
    `${grouped(p.storedBytesP95)} B`,
    grouped(p.zombieArtifacts),
    grouped(p.zombiePromptTurns),
    grouped(p.zombieProbes),
    grouped(p.injectionExposureTurns),
    grouped(p.violations),
  ]);
  return { header, rows, numeric: columnsFrom(header, labels.header.length) };
}

/**
 * What the model-call table's columns mean, for its caption; with scenario
 * weights, that they do not apply here.
 */
export function callsCaption(results: Pick<Results, 'policies'>): string {
  return [
    'calls: model calls over every turn (one after the user message, one after each round of tool calls)',
    'calls / turn: their mean per turn',
    'prompt tokens / call: input tokens sent per call, cached included',
    'cost / call: what the calls cost (uncached and cached input, output; upkeep apart) per call',
    "latency / call: the turns' latency over their calls, synchronous upkeep included (latency is recorded per turn, so there is no percentile per call)",
    ...(weightedRun(results.policies) ? ['each call counts once: scenario weights do not apply'] : []),
  ].join(' · ');
}

/**
 * Per policy, its model calls: how many, how many a turn, and the mean
 * prompt tokens, cost and latency of one; null when no turn of the run made
 * more than one call (then a call is a turn, and the budget table says it).
 * Money and latency columns have one precision and one unit each.
 */
export function callsDisplay(results: Pick<Results, 'policies'> & Digested, sort: TableSort = 'cost'): DisplayTable | null {
  const sums = digestOf(results).calls;
  const names = policyNames(results);
  const all = new Map(results.policies.map((p, i) => [p, { p, c: sums.get(names[i]!) ?? { turns: 0, calls: 0, multiCallTurns: 0, inputTokens: 0, cost: 0n, latencyMs: 0 } }]));
  if (![...all.values()].some(({ c }) => c.multiCallTurns > 0)) return null;
  // In the budget table's order.
  const rows = sortedPolicies(results.policies, sort).map((p) => all.get(p)!);
  const labels = rowLabels(results.policies);
  const per = (n: number, calls: number) => (calls ? n / calls : 0);
  const cost = rows.map(({ c }) => (c.calls ? divRound(c.cost, BigInt(c.calls)) : 0n));
  const decimals = moneyDecimals(cost, 4);
  const latencies = rows.map(({ c }) => per(c.latencyMs, c.calls));
  const latency = latencyFormat(latencies);
  const header = [...labels.header, 'calls', 'calls / turn', 'prompt tokens / call', 'cost / call', 'latency / call'];
  const body = rows.map(({ p, c }, i) => [
    ...labels.cells(p),
    grouped(c.calls),
    c.turns ? oneDecimal(c.calls, c.turns) : '-',
    grouped(Math.round(per(c.inputTokens, c.calls))),
    dollars(cost[i]!, decimals),
    latency(latencies[i]!),
  ]);
  return { header, rows: body, numeric: columnsFrom(header, labels.header.length) };
}
