import type { Pico } from '../types.js';
import type { Results } from '../records/registry.js';
import { digestOf, policyNames, weightedRun, type Digested } from '../records/digest.js';
import { csvLine } from '../records/csv.js';
import { answersMeasured, columnsFrom, rowLabels } from './text.js';
import { byCost } from './verdict.js';
import { cheapestFirst } from './pareto.js';
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
}

export interface BudgetTable {
  /** The `BUDGET_TURNS` that at least one conversation reaches. */
  turns: number[];
  rows: BudgetRow[];
}

/**
 * The budget table: per policy, mean tokens sent at turns 1, 5, 10, 20, 50
 * (over the conversations that reach each), the mean cost of a conversation
 * and of 1,000 conversations (exact, rounded once), retention and overflows.
 */
export function budgetTable(results: Pick<Results, 'policies'> & Digested): BudgetTable {
  const series = digestOf(results).inputTokensByTurn;
  const longest = Math.max(0, ...[...series.values()].map((s) => s.length));
  const turns = BUDGET_TURNS.filter((t) => t <= longest);
  const names = policyNames(results);
  const rows = results.policies.map((p, i): BudgetRow => {
    const s = series.get(names[i]!) ?? [];
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
    };
  });
  return { turns, rows };
}

/** The budget table as CSV: plain numbers (USD with fixed decimals), one row per policy; `answered` and `answer_retention` when answers were measured. */
export function budgetCsv(results: Pick<Results, 'policies'> & Digested): string {
  const t = budgetTable(results);
  const answers = answersMeasured(t.rows);
  const header = [
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
    ...(answers ? ['answered', 'answer_retention'] : []),
    'upkeep_tokens_per_conversation',
    'pareto',
  ];
  const rows = t.rows.map((r) => [
    r.policy,
    ...r.tokensAt,
    usd(r.costPerConversation, 8),
    usd(r.costPer1000, 4),
    r.probes,
    r.retained,
    fraction(r.retention),
    r.overflowTurns,
    r.scenarios,
    r.overflowProbes,
    r.model,
    ...(answers ? [r.answered, fraction(r.answerRetention)] : []),
    r.upkeepTokens,
    r.pareto,
  ]);
  return [header, ...rows].map(csvLine).join('');
}

/** The budget table as display text: header, rows, and which columns are numeric (right-aligned). */
export interface DisplayTable {
  header: string[];
  rows: string[][];
  numeric: ReadonlySet<number>;
}

/**
 * The budget table as people read it, cheapest first: tokens with
 * thousands separators, money as `$1,234.5678` with one precision per
 * column (three significant digits of its smallest value), retention as
 * `92.5% (37/40)` — with `, 3 overflowed` when probes fell on calls over the
 * context window —, whether the policy is on the Pareto frontier, its mean
 * upkeep tokens per conversation, and overflows as the turns that went over
 * it. Figures that are weighted means say so in their header.
 */
export function budgetDisplay(results: Pick<Results, 'policies'> & Digested): DisplayTable {
  const t = budgetTable(results);
  const rows = cheapestFirst(t.rows, (r) => r);
  const perConversation = moneyDecimals(rows.map((r) => r.costPerConversation), 4);
  const per1000 = moneyDecimals(rows.map((r) => r.costPer1000), 2);
  const labels = rowLabels(rows);
  const answers = answersMeasured(rows);
  const weighted = weightedRun(results.policies) ? ' (weighted)' : '';
  const header = [
    ...labels.header,
    ...t.turns.map((n) => `tokens @ turn ${n}`),
    `cost / conversation${weighted}`,
    `cost / 1,000 conversations${weighted}`,
    `retention${weighted}`,
    ...(answers ? [`answer retention${weighted}`] : []),
    'pareto',
    'upkeep tokens / conversation',
    'overflows',
  ];
  const cells = rows.map((r) => [
    ...labels.cells(r),
    ...r.tokensAt.map((n) => grouped(n)),
    dollars(r.costPerConversation, perConversation),
    dollars(r.costPer1000, per1000),
    r.probes ? `${percent(r.retention)} (${retainedOf(r)})` : '-',
    ...(answers ? [r.probes && r.answered !== null ? `${percent(r.answerRetention)} (${r.answered}/${r.probes})` : '-'] : []),
    r.pareto ? 'yes' : '-',
    grouped(r.upkeepTokens),
    grouped(r.overflowTurns),
  ]);
  const pareto = header.indexOf('pareto');
  return { header, rows: cells, numeric: new Set([...columnsFrom(header, labels.header.length)].filter((i) => i !== pareto)) };
}

/** What the latency, storage and safety table's columns mean, for its caption. */
export const DETAILS_CAPTION =
  "latency: 95th percentile of the time until a turn's reply is complete (in seconds when any policy's is 10 s or more) · stored: bytes kept at the end of a conversation · zombies: forgotten values still held at the end (artifacts), sent (turns) or found by a probe · injection exposure: turns whose prompt still held an earlier injection · rule violations: provider message rules broken";

/**
 * Per policy, what the budget table leaves out: the 95th-percentile turn
 * latency, the bytes stored at the end of a conversation (mean and 95th
 * percentile), and the safety counts — zombie artifacts, prompts and
 * probes, injection exposure and provider rule violations.
 */
export function detailsDisplay(results: Pick<Results, 'policies'>): DisplayTable {
  const policies = byCost(results.policies);
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
export function callsDisplay(results: Pick<Results, 'policies'> & Digested): DisplayTable | null {
  const sums = digestOf(results).calls;
  const names = policyNames(results);
  const all = results.policies.map((p, i) => ({ p, c: sums.get(names[i]!) ?? { turns: 0, calls: 0, multiCallTurns: 0, inputTokens: 0, cost: 0n, latencyMs: 0 } }));
  if (!all.some(({ c }) => c.multiCallTurns > 0)) return null;
  // In the budget table's order.
  const rows = cheapestFirst(all, ({ p }) => ({ costPer1000: costPer1000(p), retention: p.retention }));
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
