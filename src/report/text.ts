import type { PolicyRecord, Results } from '../records/registry.js';
import { severalModels, weightedRun } from '../records/digest.js';
import { costPer1000, fraction, grouped, oneDecimal, plural, retainedOf, usd } from '../records/format.js';
import { caption, type PolicyInfo, type ReportInfo } from '../records/info.js';
import { builtInMemory, simulatedOf } from '../records/memory.js';
import { byCost, conversationsText, judgedUnsentOf, readRetention, totalWeight, verdict, wrap, type JudgedUnsent, type VerdictInfo } from './verdict.js';
import type { TableSort } from '../records/table-sort.js';
import { terminalColumns } from '../text/columns.js';

/** Aligns rows into columns, by the terminal columns each cell takes; numbers right-aligned. */
export function align(rows: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, terminalColumns(r[i]!)), 0));
  const pad = (c: string, i: number) => ' '.repeat(widths[i]! - terminalColumns(c));
  return rows
    .map((r) => r.map((c, i) => (right.has(i) ? `${pad(c, i)}${c}` : `${c}${pad(c, i)}`)).join('  ').trimEnd())
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
 * How the run table is laid out: its order, and every column (`wide`) or
 * what fits in `width` characters (default 100), its caption and notes
 * wrapped to that width too (with `wide`, one line each, as they always
 * were).
 */
export interface TableOptions {
  sort?: TableSort;
  wide?: boolean;
  width?: number;
}

/** One column of the run table: header, a row's cell, whether it is a number (right-aligned) and, for a column shown only when it fits, its rank (lower first). */
interface Column {
  header: string;
  cell: (p: PolicyRecord) => string;
  numeric: boolean;
  /** Absent: always shown. */
  rank?: number;
}

/**
 * The per-policy table `ctxsim run` and `ctxsim merge` print, under a caption
 * (model, price-table date, tokenizer, how many conversations and, with
 * scenario weights, what they weigh): by default the cost of 1,000
 * conversations (exact, rounded once), its change against `full`,
 * retention, answered retention when measured, whether the policy is on the
 * Pareto frontier of cost and retention, and what else fits in 100
 * columns — turns over the context window when there are any, then upkeep
 * tokens, the 95th-percentile turn latency, the cost of a conversation,
 * tokens, probes over the context window; `wide` shows every column. Rows are sorted by
 * cost unless told otherwise. Figures that are weighted say so in their header.
 */
export function policyTable(
  results: Pick<Results, 'policies'>,
  info: Pick<ReportInfo, 'models' | 'priceDate'> & Partial<Pick<ReportInfo, 'policies' | 'upkeep' | 'scenarios'>>,
  options: TableOptions = {},
): string {
  const rows = sortedPolicies(results.policies, options.sort ?? 'cost');
  const labels = rowLabels(rows);
  const columns = tableColumns(rows);
  const render = (shown: readonly Column[]) => {
    const header = [...labels.header, ...shown.map((c) => c.header)];
    const numeric = new Set(shown.flatMap((c, i) => (c.numeric ? [labels.header.length + i] : [])));
    return align([header, ...rows.map((p) => [...labels.cells(p), ...shown.map((c) => c.cell(p))])], numeric);
  };
  let shown = columns.filter((c) => options.wide || c.rank === undefined);
  if (!options.wide) {
    const width = options.width ?? 100;
    // The optional columns join in rank order until the next one would make the table wider than the width.
    for (const c of columns.filter((c) => c.rank !== undefined).sort((a, b) => a.rank! - b.rank!)) {
      const tried = columns.filter((x) => shown.includes(x) || x === c);
      if (widest(render(tried)) > width) break;
      shown = tried;
    }
  }
  const head = `${caption(info)} · ${conversationsText(rows[0]?.scenarios ?? 0, info)}`;
  const notes = tableNotes(info, rows);
  // --wide keeps the caption and each note on one line, as they always were; else they are wrapped to the width, a note's next lines indented.
  if (options.wide) return `${head}\n${render(shown)}${notes.map((n) => `${n}\n`).join('')}`;
  const width = options.width ?? 100;
  return `${wrap(head, width, '  ', ' · ')}\n${render(shown)}${notes.map((n) => `${wrap(n, width, '  ')}\n`).join('')}`;
}

/**
 * The run table, then a blank line and the verdict (`Verdict: ` and its
 * paragraph, wrapped at the table's width): what `ctxsim run` and `ctxsim
 * merge` print. Given the per-scenario rows (`summary`), the verdict says
 * at which length a pick that does not pay would.
 */
export function runSummary(results: Pick<Results, 'policies'> & Partial<Pick<Results, 'summary'>>, info: Parameters<typeof policyTable>[1] & VerdictInfo, options: TableOptions = {}): string {
  return `${policyTable(results, info, options)}\n${wrap(`Verdict: ${verdict(results.policies, info, results.summary)}`, options.width ?? 100)}\n`;
}

/** The longest line of a text. */
const widest = (text: string) => Math.max(...text.split('\n').map(terminalColumns));

/** Policy rows in a table's order (a stable sort): cheapest first, most retained first (as the verdict reads retention), by name, or as given. */
export function sortedPolicies<R extends Pick<PolicyRecord, 'policy' | 'model' | 'scenarios' | 'totalCost' | 'costPer1000' | 'retention' | 'memory' | 'answerRetention'>>(rows: readonly R[], sort: TableSort): R[] {
  if (sort === 'cost') return byCost(rows);
  if (sort === 'study') return [...rows];
  // By the retention the verdict reads.
  const kept = readRetention(rows);
  const compare =
    sort === 'name'
      ? (a: R, b: R) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0) || (a.model < b.model ? -1 : a.model > b.model ? 1 : 0)
      : (a: R, b: R) => (kept(b) ?? -1) - (kept(a) ?? -1);
  // Ties keep the cheaper first.
  return byCost(rows).sort(compare);
}

/** Every column of the run table, in the order they are shown; the ranked ones only when they fit (unless wide). */
function tableColumns(rows: readonly PolicyRecord[]): Column[] {
  const weighted = weightedRun(rows) ? ' (weighted)' : '';
  const answers = answersMeasured(rows);
  const full = new Map(rows.filter((p) => p.policy === 'full').map((p) => [p.model, costPer1000(p)]));
  // Turns over the context window come first among the optional columns when there are any.
  const overflowRank = rows.some((p) => p.overflowTurns > 0) ? 0 : 7;
  const columns: (Column | false)[] = [
    { header: `cost/1k conv USD${weighted}`, cell: (p) => usd(costPer1000(p), 4), numeric: true },
    full.size > 0 && { header: 'vs full', cell: (p) => change(costPer1000(p), full.get(p.model)), numeric: true, rank: 1 },
    { header: `retention${weighted}`, cell: (p) => (p.probes ? `${share(p.retention)} (${retainedOf(p)})` : '-'), numeric: true },
    answers && { header: `answered${weighted}`, cell: (p) => (p.answered === null || !p.probes ? '-' : `${share(p.answerRetention)} (${p.answered}/${p.probes})`), numeric: true },
    { header: 'pareto', cell: (p) => (p.pareto ? 'yes' : '-'), numeric: false },
    { header: 'upkeep tokens', cell: (p) => String(p.auxTokens), numeric: true, rank: 2 },
    { header: 'p95 s', cell: (p) => seconds(p.latencyP95Ms), numeric: true, rank: 3 },
    { header: `cost/conv USD${weighted}`, cell: (p) => usd(p.costPerConversation, 6), numeric: true, rank: 4 },
    { header: 'input tokens', cell: (p) => String(p.inputTokens), numeric: true, rank: 5 },
    { header: 'cached', cell: (p) => String(p.cachedTokens), numeric: true, rank: 6 },
    { header: 'output', cell: (p) => String(p.outputTokens), numeric: true, rank: 6 },
    { header: 'overflow turns', cell: (p) => String(p.overflowTurns), numeric: true, rank: overflowRank },
    // The retention cell already says how many probes overflowed.
    { header: 'overflow probes', cell: (p) => String(p.overflowProbes), numeric: true, rank: 7 },
    { header: 'scenarios', cell: (p) => String(p.scenarios), numeric: true, rank: 8 },
  ];
  return columns.filter((c) => c !== false);
}

/** A cost against `full`'s on the same model: `-27.3%`, `+4.1%`, `0.0%`; `-` without one. */
function change(cost: bigint, full: bigint | undefined): string {
  return vsFullText(full === undefined || full === 0n ? null : Number(cost - full) / Number(full));
}

/** A change against `full` (−0.273: 27.3% less) as the tables show it: `-27.3%`, `+4.1%`, `0.0%`, `+1,200.0%`; `-` without one. */
export function vsFullText(r: number | null): string {
  return r === null ? '-' : `${r > 0 ? '+' : ''}${grouped((r * 100).toFixed(1))}%`;
}

/** Milliseconds as seconds with one decimal, rounded half up, grouped: `5.0`, `1,106.2`. */
const seconds = (ms: number): string => oneDecimal(ms, 1000);

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
 * The lines under a table of the run's cost and retention per policy: what
 * the weighted figures are (with scenario weights), what simulated or
 * recorded memory rests on, where measured answers came from, and which
 * prompts hold a stand-in for what a transcript's log left out.
 */
export function tableNotes(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep' | 'scenarios'>>, records?: NoteRows): string[] {
  const weights = weightsNote(info);
  return [...(weights === undefined ? [] : [weights]), ...scenarioNotes(info, records)];
}

/**
 * The lines under a table of rows per scenario (report.html's per-scenario
 * table, the gate's): `tableNotes` but the weighted figures' line, for no
 * figure of such a row is weighted.
 */
export function scenarioNotes(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep' | 'scenarios'>>, records?: NoteRows): string[] {
  return [simulatedNote(info, records), answersNote(info), judgedUnsentNote(info, records ?? []), unloggedNote(info)].filter((n) => n !== undefined);
}

/** The policy rows the notes read: what upkeep they did, and what a judge said yes to that was not sent. */
type NoteRows = readonly (Pick<PolicyRecord, 'policy' | 'model' | 'auxTokens' | 'probes' | 'retained'> & Partial<Pick<PolicyRecord, 'judgedUnsent'>>)[];

/**
 * The line under a table of answered retention when the judge said yes on
 * probes whose value was not in the prompt: how many, by policy, and that
 * they count as unanswered. None otherwise.
 */
export function judgedUnsentNote(info: Partial<Pick<ReportInfo, 'upkeep'>>, records: NoteRows): string | undefined {
  const unsent = judgedUnsentOf(records);
  if (!unsent || info.upkeep?.judge === undefined) return undefined;
  return `Judged unsent: the judge ${info.upkeep.judge} ${unsentText(unsent)}; a yes counts as answered only when the prompt held the value, so these count as unanswered (judged_unsent)`;
}

/**
 * The warning `ctxsim run` gives on stderr when the judge said yes on
 * probes whose value was not in the prompt; none otherwise.
 */
export function judgedUnsentWarning(policies: readonly PolicyRecord[]): string | undefined {
  const unsent = judgedUnsentOf(policies);
  return unsent && `the judge ${unsentText(unsent)}: counted as unanswered (judged_unsent); check the judge`;
}

/** `said yes on 79 of the 83 probes whose value was not sent (41 under window-turns:turns=2, 38 under summary)`. */
function unsentText(unsent: JudgedUnsent): string {
  const byModel = severalModels(unsent.rows);
  const each = unsent.rows.map((r) => `${grouped(r.count)} under ${byModel ? `${r.policy} on ${r.model}` : r.policy}`);
  return `said yes on ${grouped(unsent.count)} of the ${plural(unsent.notRetained, 'probe')} whose value was not sent (${each.join(', ')})`;
}

/** What the weighted figures are, when scenarios have weights; none otherwise. */
export function weightsNote(info: Partial<Pick<ReportInfo, 'scenarios'>>): string | undefined {
  const total = totalWeight(info);
  if (total === undefined) return undefined;
  return `Weighted: cost per conversation, cost per 1,000 conversations and retention are means over the ${conversationsText(info.scenarios!.length, info)} by their scenarios' weights; token and probe counts are not weighted`;
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
export function simulatedNote(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>, records?: UpkeepTotals): string | undefined {
  const what = memoryBasis(info, records);
  return what === undefined ? undefined : `${what.kind} memory (${what.basis}): ${AVAILABILITY}`;
}

/** The same as two shorter lines, for a chart's subtitle (none when no policy remembers through upkeep). */
export function simulatedLines(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>, records?: UpkeepTotals): string[] {
  const what = memoryBasis(info, records);
  return what === undefined ? [] : [`${what.kind} memory: ${what.basis}`, `${AVAILABILITY[0]!.toUpperCase()}${AVAILABILITY.slice(1)}`];
}

/**
 * Whether the run's memory is simulated or recorded, and what it rests on.
 * Given the policy rows (`records`), a built-in policy counts only when its
 * rows show upkeep, as a module's does: one that made no memory in any
 * conversation sent the messages themselves, and its retention rests on
 * nothing simulated (its rows' `memory` is `none`).
 */
function memoryBasis(info: Partial<Pick<ReportInfo, 'policies' | 'upkeep'>>, records: UpkeepTotals | undefined): { kind: 'Simulated' | 'Recorded'; basis: string } | undefined {
  const own = ownUpkeep(info, records ?? []);
  const did = records && new Set(records.filter((r) => r.auxTokens > 0).map((r) => r.policy));
  const builtIn = (info.policies ?? []).filter((p) => simulatedOf(p) !== undefined && (did === undefined || did.has(p.name)));
  if (info.upkeep) {
    const ids = [...new Set(builtIn.map((p) => p.id)), ...own];
    return ids.length ? { kind: 'Recorded', basis: `${ids.join(', ')}: a real model’s responses from ${info.upkeep.recorded}` } : undefined;
  }
  const basis = [simulatedMemory(builtIn), ...own.map((id) => `${id} as its module simulates it`)].filter((b) => b !== undefined);
  return basis.length ? { kind: 'Simulated', basis: basis.join(', ') } : undefined;
}

/** The ids of the policies the run has that are not built in (see `builtInMemory`) and whose records show upkeep. */
function ownUpkeep(info: Partial<Pick<ReportInfo, 'policies'>>, records: UpkeepTotals): string[] {
  const did = new Set(records.filter((r) => r.auxTokens > 0).map((r) => r.policy));
  return [...new Set((info.policies ?? []).filter((p) => !builtInMemory(p.id) && did.has(p.name)).map((p) => p.id))];
}

/** Each remembering policy of `policies` with what its simulated upkeep rests on: `summary keep 1, facts recall 0.8`. */
function simulatedMemory(policies: readonly PolicyInfo[]): string | undefined {
  const byPolicy = new Map<string, string[]>();
  for (const p of policies) {
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
