import type { PolicyRecord, Results } from '../types.js';
import { severalModels } from '../records/digest.js';
import { costPer1000, fraction, grouped, usd } from '../records/format.js';
import { caption, type ReportInfo } from '../records/info.js';
import { builtInMemory, simulatedOf } from '../records/memory.js';

/** Aligns rows into columns; numbers right-aligned. */
export function align(rows: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((c, i) => (right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd())
    .join('\n')
    .concat('\n');
}

/**
 * A table's leading header cells: `policy`, and `model` after it when the
 * rows are of several chat models; `cells` gives a row's.
 */
export function rowLabels(rows: readonly { model: string }[]): { header: string[]; cells: (r: { policy: string; model: string }) => string[] } {
  return severalModels(rows) ? { header: ['policy', 'model'], cells: (r) => [r.policy, r.model] } : { header: ['policy'], cells: (r) => [r.policy] };
}

/** The column indexes from `from` on: the numeric columns of a table whose leading label cells end before `from`. */
export function columnsFrom(header: readonly string[], from: number): ReadonlySet<number> {
  return new Set(header.map((_, i) => i).filter((i) => i >= from));
}

/**
 * The per-policy table `ctxsim run` and `ctxsim merge` print, under a caption
 * (model, price-table date, tokenizer): tokens, the mean cost of a
 * conversation and of 1,000 (exact, rounded once), retention, turns and
 * probes over the model's context window, the 95th-percentile turn latency
 * and whether the policy is on the Pareto frontier of cost and retention.
 */
export function policyTable(results: Pick<Results, 'policies'>, info: Pick<ReportInfo, 'models' | 'priceDate'> & Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>): string {
  const labels = rowLabels(results.policies);
  const answers = answersMeasured(results.policies);
  const header = [
    ...labels.header,
    'scenarios',
    'input tokens',
    'cached',
    'output',
    'upkeep',
    'cost/conv USD',
    'cost/1k conv USD',
    'retained',
    'retention',
    ...(answers ? ['answered', 'answer retention'] : []),
    'overflow turns',
    'overflow probes',
    'p95 ms',
    'pareto',
  ];
  const rows = [
    header,
    ...results.policies.map((p) => [
      ...labels.cells(p),
      String(p.scenarios),
      String(p.inputTokens),
      String(p.cachedTokens),
      String(p.outputTokens),
      String(p.auxTokens),
      usd(p.costPerConversation, 6),
      usd(costPer1000(p), 4),
      `${p.retained}/${p.probes}`,
      share(p.retention),
      ...(answers ? [p.answered === null ? '-' : `${p.answered}/${p.probes}`, share(p.answerRetention)] : []),
      String(p.overflowTurns),
      String(p.overflowProbes),
      String(p.latencyP95Ms),
      p.pareto ? 'yes' : '-',
    ]),
  ];
  // Numbers are right-aligned: every column after the labels but the last (pareto).
  const numeric = new Set([...columnsFrom(header, labels.header.length)].filter((i) => i < header.length - 1));
  return `${caption(info)}\n${align(rows, numeric)}${tableNotes(info, results.policies).map((n) => `${n}\n`).join('')}`;
}

/** A ratio as the table shows it: `92.5%`, `-` when there is none. */
const share = (r: number | null) => (r === null ? '-' : `${fraction(r * 100, 1)}%`);

/** Whether the rows' probes were also scored on the chat model's answers (then tables show answer retention beside retention). */
export function answersMeasured(rows: readonly { answered?: number | null }[]): boolean {
  return rows.some((r) => r.answered !== null && r.answered !== undefined);
}

/**
 * The line every table that shows answer retention carries: what answered
 * means, where the answers came from, and that what they cost is not in
 * the policies' cost. None when answers were not measured.
 */
export function answersNote(info: Partial<Pick<ReportInfo, 'upkeep'>>): string | undefined {
  if (!info.upkeep?.answers) return undefined;
  const judge = info.upkeep.judge === undefined ? '' : `, or the judge ${info.upkeep.judge} said it gave it`;
  const cost = info.upkeep.judge === undefined ? 'what they cost is' : 'what they and the verdicts cost is';
  return `Answered: the chat model’s reply to the probe turn’s prompt held the fact’s value${judge} (a real model’s answers from ${info.upkeep.recorded}; ${cost} not in the policies’ cost)`;
}

/**
 * The lines under a table of the run's cost and retention: what simulated or
 * recorded memory rests on, where measured answers came from, and which
 * prompts hold a stand-in for what a transcript's log left out.
 */
export function tableNotes(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep' | 'scenarios'>>, records: UpkeepTotals = []): string[] {
  return [simulatedNote(info, records), answersNote(info), unloggedNote(info)].filter((n) => n !== undefined);
}

/** Which transcripts' prompts carry an unlogged prefix, an estimate sized from their bills; none when no scenario has one. */
export function unloggedNote(info: Partial<Pick<ReportInfo, 'scenarios'>>): string | undefined {
  const s = (info.scenarios ?? []).filter((c) => c.unloggedTokens !== undefined);
  if (!s.length) return undefined;
  const each = s.slice(0, 3).map((c) => `${c.id} ${grouped(c.unloggedTokens!)}`);
  if (s.length > 3) each.push(`… ${s.length} in all`);
  return `Estimated: what the transcript logs left out of every prompt is a stand-in sized from their bills (unlogged_prefix, tokens a call: ${each.join(', ')})`;
}

/** What retention means when memory is simulated. */
const AVAILABILITY = "retained means the fact's value is in what is sent, an upper bound on what a model would answer";

/** Per-policy totals as the memory line reads them: a policy not built in that did upkeep remembers through it. */
type UpkeepTotals = readonly Pick<PolicyRecord, 'policy' | 'auxTokens'>[];

/**
 * The line every table that shows retention carries when the run has a
 * policy that remembers through upkeep (summaries, the fact sheet,
 * retrieval, or a policy module's upkeep, told by its records): simulated —
 * what it rests on (`keep`, `recall`, the lexical embedding, the module) —
 * or recorded — a real model's responses, from which cassette; and that
 * retention is availability — the fact's value is in what is sent — an
 * upper bound on what a model would answer. None otherwise.
 */
export function simulatedNote(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>, records: UpkeepTotals = []): string | undefined {
  const what = memoryBasis(info, records);
  return what === undefined ? undefined : `${what.kind} memory (${what.basis}): ${AVAILABILITY}`;
}

/** The same as two shorter lines, for a chart's subtitle (none when no policy remembers through upkeep). */
export function simulatedLines(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>, records: UpkeepTotals = []): string[] {
  const what = memoryBasis(info, records);
  return what === undefined ? [] : [`${what.kind} memory: ${what.basis}`, `${AVAILABILITY[0]!.toUpperCase()}${AVAILABILITY.slice(1)}`];
}

/** Whether the run's memory is simulated or recorded, and what it rests on. */
function memoryBasis(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>, records: UpkeepTotals): { kind: 'Simulated' | 'Recorded'; basis: string } | undefined {
  const own = ownUpkeep(info, records);
  if (info.upkeep) {
    const ids = [...new Set((info.policies ?? []).filter((p) => simulatedOf(p) !== undefined).map((p) => p.id)), ...own];
    return ids.length ? { kind: 'Recorded', basis: `${ids.join(', ')}: a real model’s responses from ${info.upkeep.recorded}` } : undefined;
  }
  const basis = [simulatedMemory(info), ...own.map((id) => `${id} as its module simulates it`)].filter((b) => b !== undefined);
  return basis.length ? { kind: 'Simulated', basis: basis.join(', ') } : undefined;
}

/** The ids of the policies the run has that are not built in (see `builtInMemory`) and whose records show upkeep. */
function ownUpkeep(info: Partial<Pick<ReportInfo, 'policies'>>, records: UpkeepTotals): string[] {
  const did = new Set(records.filter((r) => r.auxTokens > 0).map((r) => r.policy));
  return [...new Set((info.policies ?? []).filter((p) => !builtInMemory(p.id) && did.has(p.name)).map((p) => p.id))];
}

/** Each remembering policy of the run with what its simulated upkeep rests on: `summary keep 1, facts recall 0.8`. */
function simulatedMemory(info: Partial<Pick<ReportInfo, 'policies'>>): string | undefined {
  const byPolicy = new Map<string, string[]>();
  for (const p of info.policies ?? []) {
    const what = simulatedOf(p);
    if (what === undefined) continue;
    const seen = byPolicy.get(p.id) ?? [];
    if (!seen.includes(what)) seen.push(what);
    byPolicy.set(p.id, seen);
  }
  if (!byPolicy.size) return undefined;
  // Several values of one parameter are listed once: `keep 0.9/1`.
  return [...byPolicy].map(([id, whats]) => `${id} ${whats.map((w, i) => (i ? w.replace(/^\w+ /, '') : w)).join('/')}`).join(', ');
}

/**
 * One warning line per policy (on each model) whose calls went over a
 * context window: on how many of its turns, and that a real backend would
 * have rejected those calls (their probes count as `overflow`, not retained).
 * The window is the chat model's, or an upkeep model's for an upkeep call.
 */
export function overflowWarnings(policies: readonly PolicyRecord[]): string[] {
  return policies
    .filter((p) => p.overflowTurns > 0)
    .map((p) => `${p.policy} on ${p.model} went over a context window on ${grouped(p.overflowTurns)} of ${grouped(p.turns)} turns: those calls would be rejected`);
}
