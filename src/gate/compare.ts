import type { ProbeRecord } from '../records/registry.js';
import { DEFAULT_ANSWER_DROP, LIMIT_KEYS, limitPercent, limitsOfWords, limitsWords, type GateLimits, type LimitsText, type RetentionLimit } from './limits.js';
import { probeName, type Baseline, type BaselineRow, type StudyFingerprint } from './baseline.js';

export type Verdict = 'fail' | 'pass' | 'added' | 'removed';

export interface RowComparison {
  scenario: string;
  policy: string;
  /** The run's chat model (the baseline's, for a removed row). */
  model: string;
  verdict: Verdict;
  /** Why it failed, in words. */
  reasons: string[];
  before?: BaselineRow;
  after?: BaselineRow;
  /** Relative cost change (0.1 = +10%), null when it cannot be computed. */
  costChange: number | null;
  /** Change in probes not retained (positive = forgets more). */
  lostChange: number;
  /** When it retains fewer probes than its baseline: the facts the new run lost that the baseline retained, at which turn (all it lost, against a baseline that does not say which it lost). */
  lostFacts?: LostFact[];
}

/** A fact a probe found not retained: at which turn, and how (`stale`, `missing`, `overflow`). */
export interface LostFact {
  fact: string;
  turn: number;
  outcome: string;
}

/** Totals of one policy on one model over its scenarios found in both the baseline and the run. */
export interface PolicyComparison {
  policy: string;
  model: string;
  scenarios: number;
  costBefore: number;
  costAfter: number;
  /** Relative cost change, as for a row. */
  costChange: number;
  probesBefore: number;
  retainedBefore: number;
  probesAfter: number;
  retainedAfter: number;
  /** Probes answered before and after, over the rows where both runs measured answers (absent when none did). */
  answers?: { probesBefore: number; answeredBefore: number; probesAfter: number; answeredAfter: number };
}

/**
 * A change between the baseline's study and the run's that can move a row
 * both have, as the report says it (`text`, e.g. `model: gpt-4o-mini →
 * gpt-4o`, `scenario changed: noah-amnesia`): a scenario's content, a
 * policy's parameters (its old variant compared with its new one) or its
 * module's file, a row's model, or a setting of the whole run (`key`: the
 * fingerprint's field — `tokenizer`, `prices`, `cache`, `rules`, `seed`,
 * `toolDefs`, `upkeep`, `engine` — or the name of a setting under its `settings`).
 */
export type Change = { text: string } & (
  | { kind: 'scenario'; scenario: string }
  | { kind: 'policy'; before: string; after: string }
  | { kind: 'module'; policy: string }
  | { kind: 'model'; before: string; after: string }
  | { kind: 'setting'; key: string }
);

/**
 * What regressions have in common: the changes that moved them, and the
 * failing rows they moved, worst first. A row is put down to the most
 * general of its changes: a model or a setting of the run (which move
 * every row), else its policy's, else its scenario's; `changes` is empty
 * when nothing in the study changed for the row (another ctxsim, say).
 */
export interface Cause {
  changes: Change[];
  rows: RowComparison[];
}

export interface GateResult {
  /** What differs between the baseline's study and this one, e.g. `model: gpt-4o-mini → gpt-4o`. */
  differences: string[];
  rows: RowComparison[];
  /** The failing rows grouped by what moved them, in the order of their worst row (none when it passed). */
  causes: Cause[];
  /** Per policy (a re-parameterized one as `old → new`), in the run's order: totals of its compared rows. */
  policies: PolicyComparison[];
  limits: GateLimits;
  failed: boolean;
}

/** Micro-dollars as dollars with 6 decimals. */
export const microDollars = (micro: number) => `$${(micro / 1e6).toFixed(6)}`;
/** A relative change with one decimal: `+12.5%`. */
export const change = (c: number) => (c === Infinity ? '+∞' : `${c >= 0 ? '+' : ''}${(c * 100).toFixed(1)}%`);
const share = (retained: number, probes: number) => `${(probes ? (retained / probes) * 100 : 100).toFixed(1)}%`;

const lost = (r: BaselineRow) => r.probes - r.retained;
const retention = (r: BaselineRow) => (r.probes ? r.retained / r.probes : 1);

const relative = (before: number, after: number) => (before > 0 ? after / before - 1 : after > 0 ? Infinity : 0);

function compareRow(before: BaselineRow, after: BaselineRow, limits: GateLimits): RowComparison {
  const reasons: string[] = [];
  const costChange = relative(before.costMicroUsd, after.costMicroUsd);
  // A tiny epsilon keeps float noise from tripping an exact-threshold comparison.
  if (costChange > limits.maxCostIncrease + 1e-9) {
    reasons.push(`cost ${microDollars(before.costMicroUsd)} → ${microDollars(after.costMicroUsd)} (${change(costChange)}, limit +${limitPercent(limits.maxCostIncrease)})`);
  }
  const lostChange = lost(after) - lost(before);
  const lim = limits.maxRetentionDrop;
  const retainedText = `retained ${before.retained}/${before.probes} → ${after.retained}/${after.probes}`;
  if ('probes' in lim && lostChange > lim.probes) {
    reasons.push(`${retainedText} (${lostChange} more probe${lostChange === 1 ? '' : 's'} lost, limit ${lim.probes})`);
  }
  if ('points' in lim) {
    const drop = retention(before) - retention(after);
    if (drop > lim.points + 1e-9) {
      reasons.push(`${retainedText} (${share(before.retained, before.probes)} → ${share(after.retained, after.probes)}, limit −${limitPercent(lim.points)} points)`);
    }
  }
  reasons.push(...answerDrop(before, after, limits.maxAnswerDrop ?? DEFAULT_ANSWER_DROP));
  if (after.overflowTurns > before.overflowTurns) reasons.push(`overflow turns ${before.overflowTurns} → ${after.overflowTurns}`);
  return {
    scenario: after.scenario,
    policy: after.policy,
    model: after.model,
    verdict: reasons.length ? 'fail' : 'pass',
    reasons,
    before,
    after,
    costChange,
    lostChange,
  };
}

/** Why a row answers too few, as retention is judged, when both runs measured answers (none otherwise). */
function answerDrop(before: BaselineRow, after: BaselineRow, lim: RetentionLimit): string[] {
  if (before.answered === undefined || after.answered === undefined) return [];
  const more = after.probes - after.answered - (before.probes - before.answered);
  const text = `answered ${before.answered}/${before.probes} → ${after.answered}/${after.probes}`;
  if ('probes' in lim) return more > lim.probes ? [`${text} (${more} more probe${more === 1 ? '' : 's'} unanswered, limit ${lim.probes})`] : [];
  const rate = (r: BaselineRow) => (r.probes ? r.answered! / r.probes : 1);
  const drop = rate(before) - rate(after);
  return drop > lim.points + 1e-9 ? [`${text} (${share(before.answered, before.probes)} → ${share(after.answered, after.probes)}, limit −${limitPercent(lim.points)} points)`] : [];
}

/**
 * What differs between two study fingerprints, one line per difference.
 * Policies in `renamed` (old and new variants compared with each other) are
 * not listed as added or removed.
 */
export function studyDifferences(a: StudyFingerprint, b: StudyFingerprint, renamed: ReadonlySet<string> = new Set()): string[] {
  return fingerprintChanges(a, b, renamed).map((d) => d.text);
}

/** The differences of two fingerprints in the order the report lists them: each its text, and the change it is when it can move a row both runs have. */
function fingerprintChanges(a: StudyFingerprint, b: StudyFingerprint, renamed: ReadonlySet<string>): ({ text: string } & ({ change: Change } | { change?: undefined }))[] {
  const out: ({ text: string } & ({ change: Change } | { change?: undefined }))[] = [];
  const setting = (key: string, text: string) => out.push({ text, change: { kind: 'setting', key, text } });
  if (a.model !== b.model) out.push({ text: `model: ${a.model} → ${b.model}` });
  for (const key of ['tokenizer', 'prices', 'cache', 'rules', 'seed'] as const) {
    if (a[key] !== b[key]) setting(key, `${key}: ${a[key]} → ${b[key]}`);
  }
  if (a.toolDefs !== b.toolDefs) setting('toolDefs', a.toolDefs === undefined ? 'tool definitions added' : b.toolDefs === undefined ? 'tool definitions removed' : 'tool definitions changed');
  const [was, is] = [a.settings ?? {}, b.settings ?? {}];
  for (const key of [...new Set([...Object.keys(was), ...Object.keys(is)])]) {
    if (was[key] !== is[key]) setting(key, `${key}: ${was[key] === undefined ? 'set' : is[key] === undefined ? 'removed' : 'changed'}`);
  }
  const upkeep = [a.upkeep ?? 'simulated', b.upkeep ?? 'simulated'];
  if (upkeep[0] !== upkeep[1]) setting('upkeep', `upkeep: ${upkeep[0]} → ${upkeep[1]}`);
  // A baseline saved before the engine's version was recorded cannot tell.
  if (a.engine !== undefined && b.engine !== undefined && a.engine !== b.engine) {
    setting('engine', `engine: ${a.engine} → ${b.engine} (another ctxsim, whose records of the same study differ)`);
  }
  const added = b.policies.filter((p) => !a.policies.includes(p) && !renamed.has(p));
  const removed = a.policies.filter((p) => !b.policies.includes(p) && !renamed.has(p));
  for (const [id, hash] of Object.entries(b.modules ?? {})) {
    const before = a.modules?.[id];
    if (before === undefined) continue;
    // A file the module imports: told by baselines that record them (a baseline saved before cannot tell, and names none).
    const imports = before === hash && a.moduleImports !== undefined && a.moduleImports[id] !== b.moduleImports?.[id];
    const text = `policy implementation changed: ${id}${imports ? ' (a file it imports)' : ''}`;
    if (before !== hash || imports) out.push({ text, change: { kind: 'module', policy: id, text } });
  }
  if (added.length) out.push({ text: `policies added: ${added.join(', ')}` });
  if (removed.length) out.push({ text: `policies removed: ${removed.join(', ')}` });
  for (const [id, hash] of Object.entries(b.scenarios)) {
    const text = id in a.scenarios ? `scenario changed: ${id}` : `scenario added: ${id}`;
    if (!(id in a.scenarios)) out.push({ text });
    else if (a.scenarios[id] !== hash) out.push({ text, change: { kind: 'scenario', scenario: id, text } });
  }
  for (const id of Object.keys(a.scenarios)) if (!(id in b.scenarios)) out.push({ text: `scenario removed: ${id}` });
  return out;
}

/**
 * The study's gate limits that differ from those the baseline recorded, each
 * with the limit that applied when it is not the study's (`appliedLimits`):
 * `gate.maxCostIncrease: 5% → 50% (…)`. None when the baseline recorded none.
 */
function limitChanges(recorded: LimitsText | undefined, study: LimitsText | undefined, applied: GateLimits): string[] {
  if (!recorded || !study) return [];
  // Each in the words `limitsWords` gives it: a baseline's `5.0%` is the study's `5%`.
  const [before, after, now] = [limitsWords(limitsOfWords(recorded)), limitsWords(limitsOfWords(study)), limitsWords(applied)];
  return LIMIT_KEYS.flatMap((k) => {
    if (before[k] === after[k]) return [];
    const why = now[k] === after[k] ? '' : now[k] === before[k] ? `; the baseline's ${before[k]} applies until a baseline saved with ${after[k]} is committed` : `; ${now[k]} applies, as the command line gives it`;
    return [`gate.${k}: ${before[k]} → ${after[k]}${why}`];
  });
}

/** A policy variant's id: its name up to the first `:` (`window-turns:turns=3` → `window-turns`). */
const policyId = (name: string) => name.split(':')[0]!;

/**
 * The failing rows grouped by cause (see `Cause`), in the order of their
 * worst row: `rows` sorted worst first, `changes` the fingerprints'
 * differences that can move a row.
 */
function causesOf(rows: readonly RowComparison[], changes: readonly Change[]): Cause[] {
  const runWide = changes.filter((c) => c.kind === 'setting');
  const modules = new Map(changes.flatMap((c) => (c.kind === 'module' ? [[c.policy, c] as const] : [])));
  const scenarios = new Map(changes.flatMap((c) => (c.kind === 'scenario' ? [[c.scenario, c] as const] : [])));
  const by = new Map<string, Cause>();
  for (const row of rows) {
    if (row.verdict !== 'fail') continue;
    const { before, after } = row as Required<Pick<RowComparison, 'before' | 'after'>>;
    const model: Change[] = before.model === after.model ? [] : [{ kind: 'model', before: before.model, after: after.model, text: `model: ${before.model} → ${after.model}` }];
    const module = modules.get(policyId(after.policy));
    const policy: Change[] = [
      ...(before.policy !== after.policy ? [{ kind: 'policy' as const, before: before.policy, after: after.policy, text: `policy: ${before.policy} → ${after.policy}` }] : []),
      ...(module ? [module] : []),
    ];
    const scenario = scenarios.get(after.scenario);
    const general = [...model, ...runWide];
    const own = general.length ? general : policy.length ? policy : scenario ? [scenario] : [];
    const key = own.map((c) => c.text).join('\n');
    let cause = by.get(key);
    if (!cause) by.set(key, (cause = { changes: own, rows: [] }));
    cause.rows.push(row);
  }
  return [...by.values()];
}

const ORDER: Record<Verdict, number> = { fail: 0, pass: 1, added: 2, removed: 3 };

/**
 * Pairs rows left unmatched whose policy was re-parameterized: within a
 * scenario and model, the one variant of a policy id the baseline has and
 * the one the run has. A policy swept over several values on either side is
 * never paired: a sweep whose values moved (`keep: [1, 2]` → `[2, 3]`) added
 * one variant and removed another, and comparing those would judge one
 * setting against another.
 */
function pairRenamed(removed: BaselineRow[], added: BaselineRow[], model: (r: BaselineRow) => string, before: readonly BaselineRow[], after: readonly BaselineRow[]): [BaselineRow, BaselineRow][] {
  const id = (r: BaselineRow) => r.policy.split(':')[0];
  const pairs: [BaselineRow, BaselineRow][] = [];
  for (const old of removed) {
    const same = (r: BaselineRow) => r.scenario === old.scenario && model(r) === model(old) && id(r) === id(old);
    const a = added.filter(same);
    if (a.length === 1 && before.filter(same).length === 1 && after.filter(same).length === 1) pairs.push([old, a[0]!]);
  }
  return pairs;
}

/**
 * How rows are paired by model: each with the same model, except that when
 * the baseline has a model the run has not and the run one the baseline has
 * not (the model was changed), those two are paired with each other.
 */
function modelPairing(baseline: Baseline, current: Baseline): (r: BaselineRow) => string {
  const before = new Set(baseline.rows.map((r) => r.model));
  const after = new Set(current.rows.map((r) => r.model));
  const gone = [...before].filter((m) => !after.has(m));
  const come = [...after].filter((m) => !before.has(m));
  if (gone.length !== 1 || come.length !== 1) return (r) => r.model;
  return (r) => (r.model === gone[0] ? come[0]! : r.model);
}

/**
 * Compares a run with a baseline, row by row (scenario × policy × model). A
 * policy whose parameters changed is compared with its old variant, and a
 * changed model with the old one; other rows on one side only are listed as
 * added or removed, never failed. Worst first. `lost`, the run's probes
 * that were not retained, names the facts a row that retains fewer probes
 * than its baseline lost.
 */
export function compare(baseline: Baseline, current: Baseline, limits: GateLimits, lost: readonly ProbeRecord[] = []): GateResult {
  const model = modelPairing(baseline, current);
  const key = (r: BaselineRow) => `${r.scenario}\0${r.policy}\0${model(r)}`;
  const now = new Map(current.rows.map((r) => [key(r), r]));
  const old = new Map(baseline.rows.map((r) => [key(r), r]));
  const rows: RowComparison[] = [];
  for (const after of current.rows) {
    const before = old.get(key(after));
    if (before) rows.push(compareRow(before, after, limits));
  }
  const removed = baseline.rows.filter((r) => !now.has(key(r)));
  const added = current.rows.filter((r) => !old.has(key(r)));
  const paired = new Set<BaselineRow>();
  const renames = new Set<string>();
  const renamed = new Set<string>();
  for (const [before, after] of pairRenamed(removed, added, model, baseline.rows, current.rows)) {
    const rename = `${before.policy} → ${after.policy}`;
    rows.push({ ...compareRow(before, after, limits), policy: rename });
    paired.add(before).add(after);
    renames.add(`policy: ${rename}`);
    renamed.add(before.policy).add(after.policy);
  }
  const found = fingerprintChanges(baseline.study, current.study, renamed);
  const differences = [...limitChanges(baseline.study.gate, current.study.gate, limits), ...found.map((d) => d.text), ...renames];
  for (const after of added.filter((r) => !paired.has(r))) {
    rows.push({ scenario: after.scenario, policy: after.policy, model: after.model, verdict: 'added', reasons: [], after, costChange: null, lostChange: 0 });
  }
  for (const before of removed.filter((r) => !paired.has(r))) {
    rows.push({ scenario: before.scenario, policy: before.policy, model: before.model, verdict: 'removed', reasons: [], before, costChange: null, lostChange: 0 });
  }
  for (const row of rows) {
    if (row.verdict !== 'fail' || row.after!.retained >= row.before!.retained) continue;
    const { scenario, policy, model: m } = row.after!;
    const before = row.before!;
    // Lost before too: not lost by this change (a baseline that lost some without naming them cannot tell: all are listed).
    const lostBefore = new Set(before.lost);
    row.lostFacts = lost
      .filter((p) => p.scenario === scenario && p.policy === policy && p.model === m && !lostBefore.has(probeName(p)))
      .map((p) => ({ fact: p.fact, turn: p.turn, outcome: p.outcome }));
  }
  const policies = policyTotals(rows, current.rows);
  rows.sort(
    (a, b) =>
      ORDER[a.verdict] - ORDER[b.verdict] ||
      (b.costChange ?? -Infinity) - (a.costChange ?? -Infinity) ||
      b.lostChange - a.lostChange ||
      (a.scenario < b.scenario ? -1 : a.scenario > b.scenario ? 1 : 0) ||
      (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0) ||
      (a.model < b.model ? -1 : a.model > b.model ? 1 : 0),
  );
  const causes = causesOf(rows, found.flatMap((d) => (d.change ? [d.change] : [])));
  return { differences, rows, causes, policies, limits, failed: rows.some((r) => r.verdict === 'fail') };
}

/** Per policy × model totals of the compared rows, in the order the run's rows name them. */
function policyTotals(rows: readonly RowComparison[], order: readonly BaselineRow[]): PolicyComparison[] {
  const key = (r: { policy: string; model: string }) => `${r.policy}\0${r.model}`;
  const rank = new Map<string, number>();
  for (const r of order) if (!rank.has(key(r))) rank.set(key(r), rank.size);
  const by = new Map<string, PolicyComparison>();
  for (const r of rows) {
    if (r.verdict !== 'pass' && r.verdict !== 'fail') continue;
    const before = r.before!;
    const after = r.after!;
    let p = by.get(key(r));
    if (!p) {
      p = { policy: r.policy, model: r.model, scenarios: 0, costBefore: 0, costAfter: 0, costChange: 0, probesBefore: 0, retainedBefore: 0, probesAfter: 0, retainedAfter: 0 };
      by.set(key(r), p);
    }
    p.scenarios++;
    p.costBefore += before.costMicroUsd;
    p.costAfter += after.costMicroUsd;
    p.probesBefore += before.probes;
    p.retainedBefore += before.retained;
    p.probesAfter += after.probes;
    p.retainedAfter += after.retained;
    if (before.answered !== undefined && after.answered !== undefined) {
      p.answers ??= { probesBefore: 0, answeredBefore: 0, probesAfter: 0, answeredAfter: 0 };
      p.answers.probesBefore += before.probes;
      p.answers.answeredBefore += before.answered;
      p.answers.probesAfter += after.probes;
      p.answers.answeredAfter += after.answered;
    }
  }
  const policies = [...by.values()];
  for (const p of policies) p.costChange = relative(p.costBefore, p.costAfter);
  // A renamed policy (`old → new`) sorts where its new variant runs.
  const at = (p: PolicyComparison) => rank.get(key({ policy: p.policy.split(' → ').pop()!, model: p.model })) ?? Infinity;
  return policies.sort((a, b) => at(a) - at(b));
}
