import type { PolicyRecord, ProbeRecord, Results, SummaryRecord, TurnRecord, ViolationRecord } from '../types.js';
import { fraction, usd } from './format.js';

/** A CSV column: its header and how a row gives its cell. */
export type Column<T> = readonly [header: string, value: (row: T) => string | number | boolean | null | undefined];

/** First characters that make a spreadsheet run a text cell as a formula: such a cell gets a leading `'`. */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20']);
const NEEDS_QUOTES = /[",\n]/;

/**
 * One CSV cell (RFC 4180, as csv-stringify writes it with `escape_formulas`):
 * numbers as they print (a negative number is not a formula); text that
 * starts like a formula gets a leading `'`; text with a quote, comma or
 * newline (the record delimiter) is quoted, its quotes doubled; nothing is
 * written for null or undefined.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  let s = FORMULA_START.has(value.charAt(0)) ? `'${value}` : value;
  if (NEEDS_QUOTES.test(value)) s = `"${s.replaceAll('"', '""')}"`;
  return s;
}

/** One CSV line: the cells, comma-separated, and a newline. */
export function csvLine(cells: readonly (string | number | boolean | null | undefined)[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i ? ',' : '') + csvCell(cells[i]);
  return `${line}\n`;
}

/** One row as a CSV line with explicit columns (formula-like cells escaped), newline included. */
export function csvRow<T>(columns: readonly Column<T>[], row: T): string {
  let line = '';
  for (let i = 0; i < columns.length; i++) line += (i ? ',' : '') + csvCell(columns[i]![1](row));
  return `${line}\n`;
}

/** The header line of `columns`. */
export function csvHeader<T>(columns: readonly Column<T>[]): string {
  return csvLine(columns.map(([h]) => h));
}

/**
 * Writes rows with explicit columns; cells that a spreadsheet would run as
 * formulas are escaped. Every row ends with a newline and is written on its
 * own, so a file written row by row (the header first) has the bytes of one
 * call.
 */
export function csvRows<T>(columns: readonly Column<T>[], rows: readonly T[], header = true): string {
  let out = header ? csvHeader(columns) : '';
  for (const r of rows) out += csvRow(columns, r);
  return out;
}

export const TURN_COLUMNS: readonly Column<TurnRecord>[] = [
  ['scenario', (r) => r.scenario],
  ['policy', (r) => r.policy],
  ['turn', (r) => r.turn],
  ['context_messages', (r) => r.contextMessages],
  ['input_tokens', (r) => r.inputTokens],
  ['cached_tokens', (r) => r.cachedTokens],
  ['output_tokens', (r) => r.outputTokens],
  ['aux_input_tokens', (r) => r.auxInputTokens],
  ['aux_output_tokens', (r) => r.auxOutputTokens],
  ['embed_tokens', (r) => r.embedTokens],
  ['cost_usd', (r) => usd(r.cost)],
  ['cumulative_cost_usd', (r) => usd(r.cumulativeCost)],
  ['latency_ms', (r) => r.latencyMs],
  ['overflow', (r) => r.overflow],
  ['probes', (r) => r.probes],
  ['retained', (r) => r.retained],
  ['over_budget', (r) => r.overBudget],
  ['model', (r) => r.model],
  ['fallback', (r) => r.fallback],
  ['cache_write_tokens', (r) => r.cacheWriteTokens],
  ['estimated_tokens', (r) => r.estimatedTokens],
  ['violations', (r) => r.violations],
  ['zombie_prompt', (r) => r.zombiePrompt],
  ['injection_exposed', (r) => r.injectionExposed],
  ['calls', (r) => r.calls],
];

export const PROBE_COLUMNS: readonly Column<ProbeRecord>[] = [
  ['scenario', (r) => r.scenario],
  ['policy', (r) => r.policy],
  ['turn', (r) => r.turn],
  ['fact', (r) => r.fact],
  ['outcome', (r) => r.outcome],
  ['age_turns', (r) => r.ageTurns],
  ['source', (r) => r.source],
  ['expected', (r) => r.expected],
  ['violation', (r) => r.violation],
  ['model', (r) => r.model],
  ['answer', (r) => r.answer],
  ['judged', (r) => r.judged],
];

export const SUMMARY_COLUMNS: readonly Column<SummaryRecord>[] = [
  ['scenario', (r) => r.scenario],
  ['policy', (r) => r.policy],
  ['turns', (r) => r.turns],
  ['input_tokens', (r) => r.inputTokens],
  ['cached_tokens', (r) => r.cachedTokens],
  ['output_tokens', (r) => r.outputTokens],
  ['aux_tokens', (r) => r.auxTokens],
  ['total_cost_usd', (r) => usd(r.totalCost)],
  ['cost_per_turn_usd', (r) => usd(r.costPerTurn)],
  ['peak_input_tokens', (r) => r.peakInputTokens],
  ['overflow_turns', (r) => r.overflowTurns],
  ['probes', (r) => r.probes],
  ['retained', (r) => r.retained],
  ['stale', (r) => r.stale],
  ['missing', (r) => r.missing],
  ['retention', (r) => fraction(r.retention)],
  ['first_lost_turn', (r) => r.firstLostTurn ?? ''],
  ['over_budget_turns', (r) => r.overBudgetTurns],
  ['latency_p50_ms', (r) => r.latencyP50Ms],
  ['latency_p95_ms', (r) => r.latencyP95Ms],
  ['zombie_artifacts', (r) => r.zombieArtifacts],
  ['zombie_prompt_turns', (r) => r.zombiePromptTurns],
  ['injection_exposure_turns', (r) => r.injectionExposureTurns],
  ['violations', (r) => r.violations],
  ['stored_bytes', (r) => r.storedBytes],
  ['zombies', (r) => r.zombies.join(';')],
  ['zombie_probes', (r) => r.zombieProbes],
  ['overflow_probes', (r) => r.overflowProbes],
  ['weight', (r) => r.weight],
  ['model', (r) => r.model],
  ['answered', (r) => r.answered],
  ['answer_retention', (r) => fraction(r.answerRetention ?? null)],
  ['memory', (r) => r.memory],
];

export const POLICY_COLUMNS: readonly Column<PolicyRecord>[] = [
  ['policy', (r) => r.policy],
  ['scenarios', (r) => r.scenarios],
  ['turns', (r) => r.turns],
  ['input_tokens', (r) => r.inputTokens],
  ['cached_tokens', (r) => r.cachedTokens],
  ['output_tokens', (r) => r.outputTokens],
  ['aux_tokens', (r) => r.auxTokens],
  ['total_cost_usd', (r) => usd(r.totalCost)],
  ['cost_per_conversation_usd', (r) => usd(r.costPerConversation)],
  ['cost_per_turn_usd', (r) => usd(r.costPerTurn)],
  ['overflow_turns', (r) => r.overflowTurns],
  ['probes', (r) => r.probes],
  ['retained', (r) => r.retained],
  ['stale', (r) => r.stale],
  ['missing', (r) => r.missing],
  ['retention', (r) => fraction(r.retention)],
  ['pareto', (r) => r.pareto],
  ['stored_bytes_mean', (r) => r.storedBytesMean],
  ['stored_bytes_p95', (r) => r.storedBytesP95],
  ['zombie_artifacts', (r) => r.zombieArtifacts],
  ['zombie_prompt_turns', (r) => r.zombiePromptTurns],
  ['zombie_probes', (r) => r.zombieProbes],
  ['injection_exposure_turns', (r) => r.injectionExposureTurns],
  ['violations', (r) => r.violations],
  ['overflow_probes', (r) => r.overflowProbes],
  ['latency_p95_ms', (r) => r.latencyP95Ms],
  ['model', (r) => r.model],
  ['answered', (r) => r.answered],
  ['answer_retention', (r) => fraction(r.answerRetention ?? null)],
  ['memory', (r) => r.memory],
];

export const VIOLATION_COLUMNS: readonly Column<ViolationRecord>[] = [
  ['scenario', (r) => r.scenario],
  ['policy', (r) => r.policy],
  ['turn', (r) => r.turn],
  ['rule', (r) => r.rule],
  ['detail', (r) => r.detail],
  ['call', (r) => r.call],
  ['model', (r) => r.model],
];

export const turnsCsv = (r: Pick<Results, 'turns'>): string => csvRows(TURN_COLUMNS, r.turns);
export const probesCsv = (r: Pick<Results, 'probes'>): string => csvRows(PROBE_COLUMNS, r.probes);
export const summaryCsv = (r: Pick<Results, 'summary'>): string => csvRows(SUMMARY_COLUMNS, r.summary);
export const policiesCsv = (r: Pick<Results, 'policies'>): string => csvRows(POLICY_COLUMNS, r.policies);
export const violationsCsv = (r: Pick<Results, 'violations'>): string => csvRows(VIOLATION_COLUMNS, r.violations);
