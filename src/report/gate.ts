import { escapeControl } from '../errors.js';
import { MONEY_DECIMALS } from '../records/format.js';
import { seriesName, severalModels } from '../records/digest.js';
import { usdOfMicro, type BaselineRow } from '../gate/baseline.js';
import { limitsText } from '../gate/limits.js';
import { change, microDollars, type Cause, type Change, type GateResult, type PolicyComparison, type RowComparison } from '../gate/compare.js';

const money = (micro: number | undefined) => (micro === undefined ? '–' : microDollars(micro));
const pct = (c: number | null) => (c === null ? '–' : change(c));
const retained = (r: RowComparison['before']) => (r ? `${r.retained}/${r.probes}` : '–');
const overflows = (r: RowComparison['before']) => (r ? String(r.overflowTurns) : '–');
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** What the gate report shows besides the result. */
export interface GateReportOptions {
  /** Every scenario × policy row, not only the failing ones (or, when it passes, one line per policy). */
  verbose?: boolean;
  /** The command that makes the run the new baseline, shown when the gate fails. */
  accept?: string;
  /** What retention rests on when the run has simulated memory (`simulatedNote`), under the limits. */
  note?: string;
}

/** How the gate names a row or a policy: with its model when the rows are of several. */
export type Namer = (r: { policy: string; model: string }) => string;

function table(rows: readonly RowComparison[], byModel: boolean): string[] {
  return [
    `| verdict | scenario | policy |${byModel ? ' model |' : ''} cost before | cost after | Δ cost | retained before | retained after | overflows before | overflows after | why |`,
    `|---|---|---|${byModel ? '---|' : ''}---:|---:|---:|---:|---:|---:|---:|---|`,
    ...rows.map((r) =>
      [
        r.verdict,
        r.scenario,
        r.policy,
        ...(byModel ? [r.model] : []),
        money(r.before?.costMicroUsd),
        money(r.after?.costMicroUsd),
        pct(r.costChange),
        retained(r.before),
        retained(r.after),
        overflows(r.before),
        overflows(r.after),
        r.reasons.join('; '),
      ]
        .map(cell)
        .join(' | ')
        .replace(/^/, '| ')
        .concat(' |'),
    ),
  ];
}

/** One policy's totals on one line. */
export function policyLine(p: PolicyComparison, name: Namer): string {
  const over = `${p.scenarios} scenario${p.scenarios === 1 ? '' : 's'}`;
  const a = p.answers;
  const answered = a ? `, answered ${a.answeredBefore}/${a.probesBefore} → ${a.answeredAfter}/${a.probesAfter}` : '';
  return `- ${name(p)}: cost ${microDollars(p.costBefore)} → ${microDollars(p.costAfter)} (${change(p.costChange)}), retained ${p.retainedBefore}/${p.probesBefore} → ${p.retainedAfter}/${p.probesAfter}${answered} (${over})`;
}

/** How many scenarios a line of rows on one side only names before it counts the rest. */
const ASIDE_NAMED = 3;

/**
 * The rows on one side only (added since the baseline, or removed), one
 * line per policy and verdict: `- window-tokens:budget=50: added for
 * kavya-late-order and noah-amnesia`; past three scenarios, their count and
 * the first three (`added for 33 scenarios: a, b, c, …`).
 */
export function asideLines(rows: readonly RowComparison[], name: Namer): string[] {
  const groups = new Map<string, string[]>();
  for (const r of rows) {
    if (r.verdict !== 'added' && r.verdict !== 'removed') continue;
    const key = `${name(r)}: ${r.verdict}`;
    const scenarios = groups.get(key);
    if (scenarios) scenarios.push(r.scenario);
    else groups.set(key, [r.scenario]);
  }
  return [...groups].map(([key, s]) => {
    if (s.length > ASIDE_NAMED) return `- ${key} for ${s.length} scenarios: ${s.slice(0, ASIDE_NAMED).join(', ')}, …`;
    return `- ${key} for ${s.length > 1 ? `${s.slice(0, -1).join(', ')} and ${s.at(-1)}` : s[0]}`;
  });
}

/** The facts failing rows lost, one line each: `- noah-amnesia, window-turns:turns=3: name at turn 5 (missing)`. */
export function lostLines(rows: readonly RowComparison[], name: Namer): string[] {
  const lines: string[] = [];
  for (const r of rows) {
    if (!r.lostFacts?.length) continue;
    const facts = r.lostFacts.map((f) => `\`${f.fact}\` at turn ${f.turn} (${f.outcome})`).join(', ');
    lines.push(`- ${r.scenario}, ${name(r.after!)}: ${facts}`);
  }
  return lines;
}

/**
 * The gate's report as GitHub markdown (also what `check` prints). Passing:
 * one line per policy (its totals before → after); failing: the failing
 * rows, the facts they lost and the command that accepts the change.
 * `verbose`: every row, worst first.
 */
export function gateMarkdown(result: GateResult, opts: GateReportOptions = {}): string {
  const failing = result.rows.filter((r) => r.verdict === 'fail');
  const n = failing.length;
  const byModel = severalModels(result.rows);
  const name: Namer = (r) => seriesName(r, byModel);
  const lines = [`### ctxsim check: ${result.failed ? `FAILED (${n} regression${n === 1 ? '' : 's'})` : 'passed'}`, '', `Limits per scenario × policy${byModel ? ' × model' : ''}: ${limitsText(result.limits, bothAnswered(result))}.`, ''];
  // One line at a time: a study's rows may be more than a call's arguments can hold (push(...rows)).
  const add = (more: readonly string[]) => {
    for (const l of more) lines.push(l);
  };
  if (opts.note) lines.push(`${opts.note}.`, '');
  if (result.differences.length) add(['The study differs from the baseline\'s:', '', ...result.differences.map((d) => `- ${d}`), '']);
  if (opts.verbose) add([...table(result.rows, byModel), '']);
  else if (result.failed) add([...table(failing, byModel), '']);
  else {
    add(result.policies.map((p) => policyLine(p, name)));
    add([...asideLines(result.rows, name), '']);
  }
  const lost = lostLines(failing, name);
  if (lost.length) add(['Facts lost:', '', ...lost, '']);
  if (result.failed && opts.accept) lines.push('To accept the change, save the new baseline:', '', `    ${opts.accept}`, '');
  // One line each, whatever a scenario names: a fact's name with a newline in it could otherwise start a line a CI runner reads as a command (`::error::…`), and an escape sequence would drive the terminal.
  return `${lines.map((l) => escapeControl(l)).join('\n').trimEnd()}\n`;
}

/** Whether both runs measured answers on some compared row: the limits then name the answer limit. */
export const bothAnswered = (result: GateResult): boolean => result.rows.some((r) => r.before?.answered !== undefined && r.after?.answered !== undefined);

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** JUnit XML: the limits and what differs from the baseline's study as the suite's properties, then one testcase per scenario × policy; regressions are failures, added/removed rows skipped. */
export function gateJunit(result: GateResult): string {
  const failures = result.rows.filter((r) => r.verdict === 'fail').length;
  const skipped = result.rows.filter((r) => r.verdict === 'added' || r.verdict === 'removed').length;
  const byModel = severalModels(result.rows);
  const properties: [string, string][] = [['limits', limitsText(result.limits, bothAnswered(result))], ...result.differences.map((d): [string, string] => ['difference', d])];
  const cases = result.rows.map((r) => {
    const open = `    <testcase classname="${xml(r.scenario)}" name="${xml(seriesName(r, byModel))}"`;
    if (r.verdict === 'fail') {
      const msg = xml(r.reasons.join('; '));
      const lost = (r.lostFacts ?? []).map((f) => `\nlost ${f.fact} at turn ${f.turn} (${f.outcome})`).join('');
      return `${open}>\n      <failure message="${msg}">${msg}${xml(lost)}</failure>\n    </testcase>`;
    }
    if (r.verdict !== 'pass') return `${open}>\n      <skipped message="${r.verdict} since the baseline"/>\n    </testcase>`;
    return `${open}/>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="ctxsim" tests="${result.rows.length}" failures="${failures}" skipped="${skipped}">`,
    `  <testsuite name="ctxsim check" tests="${result.rows.length}" failures="${failures}" skipped="${skipped}">`,
    '    <properties>',
    ...properties.map(([name, value]) => `      <property name="${name}" value="${xml(value)}"/>`),
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** A workflow command's message, escaped as GitHub Actions reads it: `%`, CR and LF. */
const commandData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/** A workflow command's property value, escaped: as its message, and `:` and `,`. */
const commandProperty = (s: string) => commandData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

/** Where a change lies: a file (as the reader names it) and, when known, its line. */
export interface Place {
  file: string;
  line?: number;
}

/** The place of each change the gate blames (`changePlaces` makes one from a study); undefined: nowhere to point. */
export type Placer = (change: Change) => Place | undefined;

/** Where the annotations point: the study file (for a change with no place of its own), and each change's place. */
export interface AnnotationPlaces {
  study?: string;
  places?: Placer;
}

/** The most error annotations GitHub shows for one step: the gate makes no more. */
export const MAX_ANNOTATIONS = 10;

/** A cause's changes in a few words: the first, and how many more. */
export function causeTitle(c: Cause): string {
  if (!c.changes.length) return 'regressions with no change to the study';
  const more = c.changes.length - 1;
  return `${c.changes[0]!.text}${more ? ` (and ${more} more change${more === 1 ? '' : 's'})` : ''}`;
}

/** How many regressions, in words. */
export const regressions = (n: number) => `${n} regression${n === 1 ? '' : 's'}`;

/** A workflow command's place properties (`file=…,line=…,`), or none. */
function placeProperties(place: Place | undefined): string {
  if (!place) return '';
  return `file=${commandProperty(place.file)},${place.line !== undefined ? `line=${place.line},` : ''}`;
}

/**
 * The tripped gate as GitHub Actions error annotations, one line each and
 * one per cause (`result.causes`): a changed scenario, policy, model or
 * setting, pointing at the file and line that changed (`places`; the study
 * file when a change has none), titled with the change, its message the
 * number of rows it moved and the worst of them. At most
 * `MAX_ANNOTATIONS` (GitHub shows no more): past it, the last says how
 * many more causes and rows the job's summary holds. Empty when it passed.
 * A string for `where` is the study file (as before causes were told apart).
 */
export function gateAnnotations(result: GateResult, where: string | AnnotationPlaces = {}): string {
  const { study, places } = typeof where === 'string' ? { study: where, places: undefined } : where;
  const fallback: Place | undefined = study === undefined ? undefined : { file: study };
  const byModel = severalModels(result.rows);
  const causes = result.causes.length > MAX_ANNOTATIONS ? result.causes.slice(0, MAX_ANNOTATIONS - 1) : result.causes;
  const lines = causes.map((c) => {
    const worst = c.rows[0]!;
    const lost = (worst.lostFacts ?? []).map((f) => `; lost ${f.fact} at turn ${f.turn} (${f.outcome})`).join('');
    const others = c.rows.length - 1;
    const message = `${regressions(c.rows.length)}; the worst, ${worst.scenario} × ${seriesName(worst, byModel)}: ${worst.reasons.join('; ')}${lost}${others ? `; the ${others} other${others === 1 ? '' : 's'} in the job summary` : ''}`;
    const place = (c.changes.length ? places?.(c.changes[0]!) : undefined) ?? fallback;
    return `::error ${placeProperties(place)}title=${commandProperty(`ctxsim check: ${causeTitle(c)}`)}::${commandData(message)}\n`;
  });
  const rest = result.causes.slice(causes.length);
  if (rest.length) {
    const rows = rest.reduce((n, c) => n + c.rows.length, 0);
    lines.push(`::error ${placeProperties(fallback)}title=${commandProperty(`ctxsim check: ${rest.length} more causes`)}::${commandData(`${regressions(rows)} from ${rest.length} other changes; every one is in the job summary`)}\n`);
  }
  // A name with a control character could otherwise end the command's line early.
  return lines.map((l) => `${escapeControl(l.slice(0, -1))}\n`).join('');
}

/** What the money fields of the gate's JSON hold, as results.json says it. */
const MONEY = `USD, exact decimal strings with ${MONEY_DECIMALS} decimals`;


/** A baseline row for the JSON: its cost as `totalCost`, a USD string, as results.json names it. */
function rowJson(r: BaselineRow | undefined) {
  if (!r) return undefined;
  const { costMicroUsd, ...rest } = r;
  return { ...rest, totalCost: usdOfMicro(costMicroUsd) };
}

/** A relative change for JSON, where Infinity has no number. */
const changeJson = (c: number | null) => (c === Infinity ? 'Infinity' : c);

/**
 * The gate's result as JSON: money as USD decimal strings (`costBefore`,
 * `costAfter`, a row's `before.totalCost` and `after.totalCost`), as
 * every JSON output of ctxsim writes it.
 */
export function gateJson(result: GateResult): string {
  return `${JSON.stringify(
    {
      failed: result.failed,
      money: MONEY,
      limits: result.limits,
      differences: result.differences,
      policies: result.policies.map((p) => ({ ...p, costBefore: usdOfMicro(p.costBefore), costAfter: usdOfMicro(p.costAfter), costChange: changeJson(p.costChange) })),
      rows: result.rows.map((r) => ({ ...r, before: rowJson(r.before), after: rowJson(r.after), costChange: changeJson(r.costChange) })),
    },
    null,
    2,
  )}\n`;
}
