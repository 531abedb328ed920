import type { PolicyRecord, SummaryRecord } from '../records/registry.js';
import { severalModels, weightedRun } from '../records/digest.js';
import { costPer1000, dollars, grouped, moneyDecimals, plural } from '../records/format.js';
import type { ReportInfo } from '../records/info.js';
import { cheapestFirst, paretoOptimal } from './pareto.js';
import { terminalColumns } from '../text/columns.js';

/** The share of the probed facts a verdict's pick must keep unless told (`--min-retention`, the study's `minRetention`): 95%. */
export const DEFAULT_MIN_RETENTION = 0.95;

/** The saving against `full` below which the verdict says no memory policy pays off, unless told (`--min-saving`, the study's `minSaving`): 5%. */
export const DEFAULT_MIN_SAVING = 0.05;

/** What the verdict needs of a policy row. */
type Row = Pick<PolicyRecord, 'policy' | 'model' | 'scenarios' | 'turns' | 'totalCost' | 'costPer1000' | 'probes' | 'retained' | 'retention' | 'answerRetention' | 'pareto' | 'memory'> &
  Partial<Pick<PolicyRecord, 'judgedUnsent' | 'overflowTurns'>>;

/** What the verdict reads of a scenario's row (`summary.csv`): how long the conversation is, what it cost, what it weighs. */
export type VerdictScenario = Pick<SummaryRecord, 'scenario' | 'policy' | 'model' | 'turns' | 'totalCost' | 'weight'>;

/** What the verdict needs of the run. */
export type VerdictInfo = Partial<Pick<ReportInfo, 'upkeep' | 'scenarios' | 'minRetention' | 'minSaving'>>;

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
  return `${plural(n, 'conversation')}${weighted === undefined ? '' : `, weighted to ${weightText(weighted)}`}`;
}

/** A weight as reports write it: grouped, at most 3 decimals (`57.5`, `1,234.568`); one too small to show so, `<0.001` (never `5e-7`). */
export function weightText(w: number): string {
  const r = round(w, 3);
  return r === 0 && w > 0 ? '<0.001' : grouped(r);
}

/** The sum of the scenarios' weights when any is not 1 (then cost per conversation and retention are weighted means); undefined otherwise. */
export function totalWeight(info: Partial<Pick<ReportInfo, 'scenarios'>>): number | undefined {
  const s = info.scenarios ?? [];
  return s.some((c) => c.weight !== undefined) ? s.reduce((a, c) => a + (c.weight ?? 1), 0) : undefined;
}

/** How the verdict words one run: its rows, the retention it reads, its thresholds, and money and names as the tables give them. */
interface Reading {
  rows: readonly Row[];
  kind: RetentionKind;
  held: (r: Row) => number;
  min: number;
  minSaving: number;
  /** A row's name in a list of rows of every model (`summary on gpt-4.1` when the run has several). */
  name: (r: Row) => string;
  /** ` on gpt-4.1` when the run has several models, else nothing. */
  on: (model: string) => string;
  money: (r: Row) => string;
  facts: string;
  scenarios: readonly VerdictScenario[];
}

/**
 * The verdict: one paragraph, in words to paste into a design document. It
 * opens with the pick — the policy to use, on each model of the run: the
 * cheapest that keeps at least `minRetention` of the probed facts, with
 * its saving against `full` on the same model — or, when that saving is
 * under `minSaving`, `full`, since no memory policy pays off at the run's
 * length (and, from `scenarios`, the per-scenario rows, the conversations
 * long enough for the pick to save that much, when some are). Then the
 * evidence: which retention it is and over how many conversations, and the
 * Pareto frontier of cost and retention, cheapest first, each point's cost
 * per 1,000 conversations and retention. Figures are the tables' (weighted
 * when the scenarios have weights, and then it says so).
 */
export function verdict(rows: readonly Row[], info: VerdictInfo, scenarios: readonly VerdictScenario[] = []): string {
  if (!rows.length) return 'No policy was run.';
  const kind = retentionKind(rows);
  const measure = readRetention(rows);
  const weighted = weightedRun(rows);
  const byModel = severalModels(rows);
  const decimals = moneyDecimals(rows.map((r) => costPer1000(r)), 2);
  const reading: Reading = {
    rows,
    kind,
    held: (r) => measure(r) ?? 0,
    min: info.minRetention ?? DEFAULT_MIN_RETENTION,
    minSaving: info.minSaving ?? DEFAULT_MIN_SAVING,
    name: (r) => (byModel ? `${r.policy} on ${r.model}` : r.policy),
    on: (model) => (byModel ? ` on ${model}` : ''),
    money: (r) => dollars(costPer1000(r), decimals),
    facts: kind === 'answered' ? 'of probed facts in its answers' : 'of probed facts',
    scenarios,
  };
  const models = [...new Set(rows.map((r) => r.model))];
  const over = `On ${conversationsText(rows[0]!.scenarios, info)}`;
  if (rows.every((r) => measure(r) === null)) {
    return [...models.map((m) => cheapestSentence(reading, m)), `${over}, no fact was probed, so retention decides nothing.`].join(' ');
  }
  const frontier = frontierOf(rows, reading.held, kind === 'answered');
  const points = frontier.slice(0, FRONTIER_SHOWN).map((r, i) => `${reading.name(r)} (${reading.money(r)}${i ? '' : ' per 1,000 conversations'}, ${share(reading.held(r))})`);
  if (frontier.length > FRONTIER_SHOWN) points.push(`${frontier.length - FRONTIER_SHOWN} more`);
  const what = kind === 'answered' ? 'answered retention' : 'retention';
  const evidence = `${over}, with ${KIND_TEXT[kind]}, the Pareto frontier of ${weighted ? `cost and ${what} (both weighted)` : `cost and ${what}`} is ${list(points)}.`;
  return [...models.map((m) => pickSentences(reading, m)), evidence, ...unsentSentence(rows, kind)].join(' ');
}

/**
 * Without probes: the cheapest policy on `model`, and its saving against
 * `full`. A policy that went over the context window is cheaper by the calls
 * that would be rejected (they cost nothing), so the cheapest is of those
 * that never did, the cheaper ones that did named; when every one did, the
 * one that did least.
 */
function cheapestSentence(v: Reading, model: string): string {
  const rows = v.rows.filter((r) => r.model === model);
  const overflowed = (r: Row) => (r.overflowTurns ?? 0) > 0;
  const cheapest = byCost(rows.filter((r) => !overflowed(r)))[0];
  if (!cheapest) {
    const least = byCost(rows).sort((a, b) => a.overflowTurns! - b.overflowTurns!)[0]!;
    return `No policy${v.on(model)} stays within the context window: each went over it on some turns, whose calls would be rejected and cost nothing, so its cost is short by them; ${least.policy} went over it least, on ${plural(least.overflowTurns!, 'turn')} (${v.money(least)} per 1,000 conversations).`;
  }
  const full = rows.find((r) => r.policy === 'full');
  const against = full && full !== cheapest ? `, ${compared(costPer1000(cheapest), costPer1000(full))} full` : '';
  const cheaper = byCost(rows.filter((r) => overflowed(r) && costPer1000(r) < costPer1000(cheapest))).map((r) => `${r.policy} (over it on ${plural(r.overflowTurns!, 'turn')})`);
  const over = cheaper.length ? ` ${list(cheaper)} ${cheaper.length > 1 ? 'cost' : 'costs'} less only by the calls over it, which would be rejected.` : '';
  return `Use ${cheapest.policy}${v.on(model)}: it is the cheapest${cheaper.length ? ' within the context window' : ''}, ${v.money(cheapest)} per 1,000 conversations${against}.${over}`;
}

/**
 * The pick on one model, first: the policy to use and why, in a sentence
 * or two (see `verdict`).
 */
function pickSentences(v: Reading, model: string): string {
  const rows = v.rows.filter((r) => r.model === model);
  const { held, min, on, money, facts } = v;
  const { pick, full, saving, fullKeeps, use } = choiceOn(rows, held, min, v.minSaving);
  if (!pick) {
    const best = rows.reduce((a, r) => (held(r) > held(a) || (held(r) === held(a) && costPer1000(r) < costPer1000(a)) ? r : a));
    return `No policy${on(model)} keeps ${share(min)} ${facts}; the most is ${best.policy}, ${share(held(best))} at ${money(best)} per 1,000 conversations.`;
  }
  const at = `at least ${share(min)}`;
  if (!full) return `Use ${pick.policy}${on(model)}: it keeps ${share(held(pick))} ${facts} at ${money(pick)} per 1,000 conversations (the run has no full to compare it with).`;
  const [cost, base] = [costPer1000(pick), costPer1000(full)];
  if (pick === full) {
    // The nearest miss: of the policies cheaper than full, the one that keeps the most (the cheapest of equals).
    const cheaper = byCost(rows.filter((r) => costPer1000(r) < base));
    const closest = cheaper.reduce<Row | undefined>((a, r) => (a === undefined || held(r) > held(a) ? r : a), undefined);
    const near = closest && held(closest) > 0 ? `; ${closest.policy} comes closest, ${share(held(closest))} for ${compared(costPer1000(closest), base)} full (${money(closest)} against ${money(full)} per 1,000 conversations)` : '';
    return `Use full${on(model)}: no cheaper policy keeps ${at} ${facts}${near}.`;
  }
  if (use === full) {
    const turns = meanTurns(v, pick);
    const sentence =
      `Use full${on(model)}: no memory policy pays off at this length (${round(turns, 1)} turns a conversation on average): ` +
      `${pick.policy}, the cheapest that keeps ${at} ${facts}, saves only ${savingText(saving, v.minSaving)} against full (${money(pick)} against ${money(full)} per 1,000 conversations), under the ${share(v.minSaving)} threshold.`;
    return [sentence, ...lengthSentence(v, pick, full)].join(' ');
  }
  const fullShort = fullKeeps ? '' : `, which keeps only ${share(held(full))}`;
  return `Use ${pick.policy}${on(model)}: it keeps ${share(held(pick))} ${facts} for ${compared(cost, base)} full${fullShort}, ${money(pick)} against ${money(full)} per 1,000 conversations.`;
}

/**
 * What the verdict chooses among one model's rows: `pick`, the cheapest that
 * keeps at least `min` of the probed facts (none when no row does); `full`;
 * the pick's saving against full; and `use`, the row recommended: the pick,
 * or full when the pick saves less than `minSaving` against a full that
 * keeps `min` too (a saving not worth a memory policy).
 */
function choiceOn<R extends Row>(rows: readonly R[], held: (r: R) => number, min: number, minSaving: number): { pick?: R; full?: R; saving: number; fullKeeps: boolean; use?: R } {
  const pick = byCost(rows.filter((r) => held(r) >= min - 1e-12))[0];
  const full = rows.find((r) => r.policy === 'full');
  if (!pick || !full) return { ...(pick && { pick, use: pick }), ...(full && { full }), saving: 0, fullKeeps: false };
  const base = costPer1000(full);
  const saving = base > 0n ? Number(base - costPer1000(pick)) / Number(base) : 0;
  const fullKeeps = held(full) >= min - 1e-12;
  return { pick, full, saving, fullKeeps, use: pick !== full && fullKeeps && saving < minSaving - 1e-12 ? full : pick };
}

/**
 * How long the pick's conversations are on average, in turns: weighted by
 * the scenarios' weights as every other figure of the verdict is (from its
 * per-scenario rows; without them, the plain mean of its policy row).
 */
function meanTurns(v: Reading, pick: Row): number {
  const rows = v.scenarios.filter((s) => s.policy === pick.policy && s.model === pick.model);
  const weight = rows.reduce((a, s) => a + s.weight, 0);
  return weight > 0 ? rows.reduce((a, s) => a + s.weight * s.turns, 0) / weight : pick.turns / Math.max(1, pick.scenarios);
}

/**
 * What would make the pick pay, from the per-scenario rows: the saving
 * against `full` over the run's conversations of L turns or more (their
 * costs summed, times their weights), for each length L the run has; the
 * shortest L at which that saving reaches the threshold is named. None
 * reaches it: the saving on the longest. Nothing without the rows.
 */
function lengthSentence(v: Reading, pick: Row, full: Row): string[] {
  const of = (r: Row) => new Map(v.scenarios.filter((s) => s.policy === r.policy && s.model === r.model).map((s) => [s.scenario, s]));
  const [mine, theirs] = [of(pick), of(full)];
  const pairs = [...mine].flatMap(([id, s]) => {
    const f = theirs.get(id);
    return f ? [{ turns: s.turns, weight: s.weight, cost: Number(s.totalCost), full: Number(f.totalCost) }] : [];
  });
  if (!pairs.length) return [];
  const savingFrom = (length: number) => {
    const long = pairs.filter((p) => p.turns >= length);
    const full = long.reduce((a, p) => a + p.weight * p.full, 0);
    return { n: long.length, saving: full > 0 ? 1 - long.reduce((a, p) => a + p.weight * p.cost, 0) / full : 0 };
  };
  const lengths = [...new Set(pairs.map((p) => p.turns))].sort((a, b) => a - b);
  for (const length of lengths) {
    const { n, saving } = savingFrom(length);
    if (saving >= v.minSaving - 1e-12 && n < pairs.length) {
      const which = n === 1 ? 'the one conversation' : `the ${plural(n, 'conversation')}`;
      return [`It saves ${savingText(saving, v.minSaving)} on ${which} of ${length} turns or more: it would pay on conversations that long.`];
    }
  }
  const longest = lengths.at(-1)!;
  return [`It saves less than ${share(v.minSaving)} at every length this run has (${savingText(savingFrom(longest).saving, v.minSaving)} on the longest, ${plural(longest, 'turn')}).`];
}

/**
 * The rows the verdict recommends, one per model: on each model the
 * cheapest row that keeps at least `minRetention` of the probed facts by the
 * verdict's measure (answered retention when a real model's replies were
 * scored), or `full` when that row saves less than `minSaving` against it;
 * none on a model where no row keeps enough, or when nothing was probed.
 * The charts mark these rows, so they and the verdict's words cannot
 * disagree.
 */
export function verdictPicks<R extends Row>(rows: readonly R[], info: VerdictInfo): R[] {
  const measure = readRetention(rows);
  if (rows.every((r) => measure(r) === null)) return [];
  const held = (r: R) => measure(r) ?? 0;
  const [min, minSaving] = [info.minRetention ?? DEFAULT_MIN_RETENTION, info.minSaving ?? DEFAULT_MIN_SAVING];
  return [...new Set(rows.map((r) => r.model))].flatMap((model) => choiceOn(rows.filter((r) => r.model === model), held, min, minSaving).use ?? []);
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

/** `27% less than`, `2.6% more than`, `the same cost as`. */
function compared(cost: bigint, base: bigint): string {
  if (cost === base || base === 0n) return cost === base ? 'the same cost as' : 'more than';
  const change = Number(cost - base) / Number(base);
  return `${percentText(Math.abs(change))} ${change < 0 ? 'less' : 'more'} than`;
}

/** A saving as a percentage: whole from 10% (`27%`), else with one decimal unless whole (`2.6%`, `5%`, `0.8%`). */
function percentText(r: number): string {
  const p = r * 100;
  return `${round(p, Math.abs(p) >= 10 ? 0 : 1)}%`;
}

/**
 * A saving set against a threshold, as `percentText` writes it unless that
 * would put it on the other side of the threshold (a saving of 26.6% is
 * `27%`, under a 27% threshold): then with the decimals that keep it there.
 */
function savingText(r: number, threshold: number): string {
  const [p, t] = [r * 100, threshold * 100];
  for (let d = Math.abs(p) >= 10 ? 0 : 1; d < 4; d++) if (round(p, d) < t === p < t - 1e-10) return `${round(p, d)}%`;
  return `${round(p, 4)}%`;
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

/**
 * Wraps a paragraph at `width` terminal columns (as the run table is laid
 * out: a CJK character or an emoji takes two), breaking at `between` (a
 * space, or ` · ` between the parts of a caption); lines after the first
 * start with `indent`. A part longer than a line stays whole.
 */
export function wrap(text: string, width = 100, indent = '', between = ' '): string {
  const lines: string[] = [];
  let line = '';
  for (const part of text.split(between)) {
    const room = width - (lines.length ? terminalColumns(indent) : 0);
    if (line && terminalColumns(line) + terminalColumns(between) + terminalColumns(part) > room) {
      lines.push(line);
      line = part;
    } else line = line ? `${line}${between}${part}` : part;
  }
  return [...lines, line].map((l, i) => (i ? `${indent}${l}` : l)).join('\n');
}
