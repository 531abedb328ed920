import type { PolicyRecord } from '../records/registry.js';
import { severalModels, weightedRun } from '../records/digest.js';
import { costPer1000, dollars, grouped, moneyDecimals, plural } from '../records/format.js';
import type { ReportInfo } from '../records/info.js';
import { cheapestFirst, paretoOptimal } from './pareto.js';

/** The share of the probed facts a verdict's cheapest policy must keep unless told (`--min-retention`, the study's `minRetention`): 95%. */
export const DEFAULT_MIN_RETENTION = 0.95;

/** What the verdict needs of a policy row. */
type Row = Pick<PolicyRecord, 'policy' | 'model' | 'scenarios' | 'totalCost' | 'costPer1000' | 'probes' | 'retained' | 'retention' | 'answerRetention' | 'pareto' | 'memory'> & Partial<Pick<PolicyRecord, 'judgedUnsent'>>;

/** What the verdict needs of the run. */
export type VerdictInfo = Partial<Pick<ReportInfo, 'upkeep' | 'scenarios' | 'minRetention'>>;

/**
 * Which retention a run's figures are, in the words the verdict and the
 * tables use: answered (a real model's replies were scored), recorded
 * (memory made by a real model's upkeep), simulated (by ctxsim's simulated
 * upkeep) or plain (no policy remembers through upkeep: what is sent is
 * exact).
 */
export type RetentionKind = 'answered' | 'recorded' | 'simulated' | 'plain';

export function retentionKind(rows: readonly Pick<PolicyRecord, 'memory' | 'answerRetention'>[]): RetentionKind {
  if (rows.some((r) => r.answerRetention !== null && r.answerRetention !== undefined)) return 'answered';
  if (rows.some((r) => r.memory === 'recorded')) return 'recorded';
  return rows.some((r) => r.memory === 'simulated') ? 'simulated' : 'plain';
}

/** The retention the verdict reads of a row of `rows`: its answers' when a real model's replies were scored, else what was sent. */
export function readRetention(rows: readonly Pick<PolicyRecord, 'memory' | 'answerRetention'>[]): (r: Pick<PolicyRecord, 'retention' | 'answerRetention'>) => number | null {
  return retentionKind(rows) === 'answered' ? (r) => r.answerRetention : (r) => r.retention;
}

const KIND_TEXT: Record<RetentionKind, string> = {
  answered: 'answered retention (a real model’s reply to the probe held the fact)',
  recorded: 'retention from recorded upkeep (a fact counts when its value is in what is sent)',
  simulated: 'simulated retention (a fact counts when its value is in what is sent)',
  plain: 'retention (a fact counts when its value is in what is sent)',
};

/** How many conversations the means are over: `33 conversations`, and `, weighted to 57.5` when scenarios have weights. */
export function conversationsText(n: number, info: Partial<Pick<ReportInfo, 'scenarios'>>): string {
  const weighted = totalWeight(info);
  return `${plural(n, 'conversation')}${weighted === undefined ? '' : `, weighted to ${grouped(round(weighted, 3))}`}`;
}

/** The sum of the scenarios' weights when any is not 1 (then cost per conversation and retention are weighted means); undefined otherwise. */
export function totalWeight(info: Partial<Pick<ReportInfo, 'scenarios'>>): number | undefined {
  const s = info.scenarios ?? [];
  return s.some((c) => c.weight !== undefined) ? s.reduce((a, c) => a + (c.weight ?? 1), 0) : undefined;
}

/**
 * The verdict: one paragraph, in words to paste into a design document —
 * which retention it is and over how many conversations; the Pareto
 * frontier of cost and retention, cheapest first, each point's cost per
 * 1,000 conversations and retention; the cheapest policy that keeps at
 * least `minRetention` of the probed facts, and how its cost compares with
 * `full` on the same model. Figures are the tables' (weighted when the
 * scenarios have weights, and then it says so).
 */
export function verdict(rows: readonly Row[], info: VerdictInfo): string {
  if (!rows.length) return 'Verdict: no policy was run.';
  const kind = retentionKind(rows);
  const measure = readRetention(rows);
  const weighted = weightedRun(rows);
  const byModel = severalModels(rows);
  const name = (r: Row) => (byModel ? `${r.policy} on ${r.model}` : r.policy);
  const cost = (r: Row) => costPer1000(r);
  const decimals = moneyDecimals(rows.map(cost), 2);
  const money = (r: Row) => dollars(cost(r), decimals);
  const on = `Verdict: on ${conversationsText(rows[0]!.scenarios, info)},`;
  if (rows.every((r) => measure(r) === null)) {
    const cheapest = byCost(rows)[0]!;
    return `${on} no fact was probed, so retention decides nothing; the cheapest policy is ${name(cheapest)} at ${money(cheapest)} per 1,000 conversations${weighted ? ' (weighted)' : ''}.`;
  }
  const held = (r: Row) => measure(r) ?? 0;
  const frontier = frontierOf(rows, held, kind === 'answered');
  const points = frontier.slice(0, FRONTIER_SHOWN).map((r, i) => `${name(r)} (${money(r)}${i ? '' : ' per 1,000 conversations'}, ${share(held(r))})`);
  if (frontier.length > FRONTIER_SHOWN) points.push(`${frontier.length - FRONTIER_SHOWN} more`);
  const what = kind === 'answered' ? 'answered retention' : 'retention';
  const sentences = [`${on} with ${KIND_TEXT[kind]}, the Pareto frontier of ${weighted ? `cost and ${what} (both weighted)` : `cost and ${what}`} is ${list(points)}.`];
  const min = info.minRetention ?? DEFAULT_MIN_RETENTION;
  const enough = rows.filter((r) => held(r) >= min - 1e-12);
  const facts = kind === 'answered' ? 'of probed facts in its answers' : 'of probed facts';
  if (!enough.length) {
    const best = rows.reduce((a, r) => (held(r) > held(a) || (held(r) === held(a) && cost(r) < cost(a)) ? r : a));
    sentences.push(`No policy keeps ${share(min)} ${facts}; the most is ${name(best)}’s ${share(held(best))}, at ${money(best)}.`);
    return [...sentences, ...unsentSentence(rows, kind)].join(' ');
  }
  const pick = verdictPicks(rows, info)[0]!;
  const full = rows.find((r) => r.policy === 'full' && r.model === pick.model);
  const at = `at least ${share(min)}`;
  if (pick === full) sentences.push(`The cheapest policy that keeps ${at} ${facts} is ${name(pick)} (${share(held(pick))}, ${money(pick)}): no cheaper policy keeps as much.`);
  else sentences.push(`The cheapest policy that keeps ${at} ${facts} is ${name(pick)}: ${share(held(pick))} ${full ? `for ${compared(cost(pick), cost(full))} ${name(full)} (${money(pick)} against ${money(full)})` : `at ${money(pick)}`}.`);
  return [...sentences, ...unsentSentence(rows, kind)].join(' ');
}

/**
 * The rows the verdict recommends — today one: the cheapest row that keeps
 * at least `minRetention` of the probed facts by the verdict's measure
 * (answered retention when a real model's replies were scored); none when no
 * row does, or nothing was probed. The charts mark these rows, so they and
 * the verdict's words cannot disagree.
 */
export function verdictPicks<R extends Row>(rows: readonly R[], info: VerdictInfo): R[] {
  const measure = readRetention(rows);
  const min = info.minRetention ?? DEFAULT_MIN_RETENTION;
  if (rows.every((r) => measure(r) === null)) return [];
  const enough = rows.filter((r) => (measure(r) ?? 0) >= min - 1e-12);
  return enough.length ? [byCost(enough)[0]!] : [];
}

/** What a judge said yes to although the prompt did not hold the value: how many probes, of how many not retained, and which rows (those with any). */
export interface JudgedUnsent {
  count: number;
  notRetained: number;
  rows: { policy: string; model: string; count: number }[];
}

/** The rows' judge's yeses on values not sent (`judgedUnsent`); undefined when there are none (or no judge). */
export function judgedUnsentOf(rows: readonly (Pick<PolicyRecord, 'policy' | 'model' | 'probes' | 'retained'> & Partial<Pick<PolicyRecord, 'judgedUnsent'>>)[]): JudgedUnsent | undefined {
  const judged = rows.filter((r) => r.judgedUnsent !== null && r.judgedUnsent !== undefined);
  const count = judged.reduce((n, r) => n + r.judgedUnsent!, 0);
  if (!count) return undefined;
  return {
    count,
    notRetained: judged.reduce((n, r) => n + r.probes - r.retained, 0),
    rows: judged.filter((r) => r.judgedUnsent! > 0).map((r) => ({ policy: r.policy, model: r.model, count: r.judgedUnsent! })),
  };
}

/**
 * The verdict's warning when the judge said yes on probes whose value was
 * never sent: those count as unanswered (a yes the memory cannot have
 * earned), and the judge's other yeses are only as good as the judge.
 */
function unsentSentence(rows: readonly Row[], kind: RetentionKind): string[] {
  const unsent = kind === 'answered' ? judgedUnsentOf(rows) : undefined;
  if (!unsent) return [];
  return [
    `Warning: the judge said yes on ${grouped(unsent.count)} of the ${plural(unsent.notRetained, 'probe')} whose value was never sent (judged_unsent); they count as unanswered, since no memory sent the value, and the judge’s other yeses are worth checking before these figures are trusted.`,
  ];
}

/** How many frontier points the verdict names before saying how many more there are. */
const FRONTIER_SHOWN = 6;

/** The rows on the Pareto frontier of cost and the measure, cheapest first: the records' own flag, or, for answered retention, the frontier of cost and answers. */
function frontierOf(rows: readonly Row[], held: (r: Row) => number, answers: boolean): Row[] {
  const on = answers ? paretoOptimal(rows.map((r) => ({ cost: costPer1000(r), retention: held(r) }))) : rows.map((r) => r.pareto);
  return byCost(rows.filter((_, i) => on[i]));
}

/** Rows by cost, cheapest first; equal costs by retention, most first, then in the run's order. */
export function byCost<R extends Pick<Row, 'scenarios' | 'totalCost' | 'costPer1000' | 'retention'>>(rows: readonly R[]): R[] {
  return cheapestFirst(rows, (r) => ({ costPer1000: costPer1000(r), retention: r.retention }));
}

/** `27% less than`, `12% more than`, `the same cost as`; below 1% with one decimal. */
function compared(cost: bigint, base: bigint): string {
  if (cost === base || base === 0n) return cost === base ? 'the same cost as' : 'more than';
  const change = Number(cost - base) / Number(base);
  const size = Math.abs(change) * 100;
  const text = size >= 1 ? String(Math.round(size)) : size.toFixed(1);
  return `${text}% ${change < 0 ? 'less' : 'more'} than`;
}

/** A ratio as a percentage, one decimal unless whole: `97.5%`, `100%`. */
function share(r: number): string {
  const p = round(r * 100, 1);
  return `${p}%`;
}

function round(x: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(x * f) / f;
}

/** `a`, `a and b`, `a, b and c`. */
function list(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** Wraps a paragraph at `width` columns, breaking at spaces. */
export function wrap(text: string, width = 100): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}
