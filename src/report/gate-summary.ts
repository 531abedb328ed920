import { escapeControl } from '../errors.js';
import { seriesName, severalModels } from '../records/digest.js';
import { limitsText } from '../gate/limits.js';
import { change, type Cause, type GateResult, type RowComparison } from '../gate/compare.js';
import { bothAnswered, asideLines, causeTitle, lostLines, policyLine, regressions, type GateReportOptions, type Namer, type Place, type Placer } from './gate.js';

/**
 * The gate's result for GitHub's pages: the job's step summary
 * (`$GITHUB_STEP_SUMMARY`) and the comment a bot posts on a pull request.
 * Both group the regressions by cause (`result.causes`: a changed
 * scenario, policy, model or setting), each with its place and its worst
 * row, the rows it moved under a `<details>` block; and both stay under
 * their page's limit whatever the study's size: GitHub takes at most 1 MiB
 * of step summary and 65,536 characters of comment, so rows, causes and
 * differences are listed while there is room, and the rest counted.
 */

/** GitHub's limit on a step summary: 1 MiB. */
export const STEP_SUMMARY_LIMIT = 1024 * 1024;

/** The bytes the gate's step summary may take: room left under GitHub's limit for the line of what the cache served. */
export const STEP_SUMMARY_BYTES = 1_000_000;

/** The bytes a comment may take: under GitHub's 65,536 characters (a character is at least a byte). */
export const COMMENT_BYTES = 60_000;

/** What the step summary and the comment show besides the result. */
export interface GatePageOptions extends Pick<GateReportOptions, 'accept' | 'note'> {
  /** Where each change lies (`changePlaces`), shown beside its cause. */
  places?: Placer;
  /** The new run's verdict (the comment opens with it). */
  verdict?: string;
  /** The most bytes the page may take (default: the step summary's, or the comment's). */
  maxBytes?: number;
}

/** How big the parts of a page may be, from its byte budget. */
interface Sizes {
  maxBytes: number;
  /** The most bytes a line of prose may take (a longer one is cut, with `…`). */
  line: number;
  /** The most bytes a table cell of text may take (twice that for `why`). */
  cell: number;
  /** The most causes given a section of their own. */
  sections: number;
  /** The most differences listed. */
  differences: number;
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** `s` cut to at most `max` bytes (a whole character at a time), ending in `…` when cut. */
function cut(s: string, max: number): string {
  if (bytes(s) <= max) return s;
  let out = '';
  let used = 3; // `…`
  for (const ch of s) {
    const b = bytes(ch);
    if (used + b > max) break;
    out += ch;
    used += b;
  }
  return `${out}…`;
}

/** Text a study names, made safe for the page: control characters escaped, HTML's `<`, `>`, `&` written as entities (a name cannot close a `<details>`). */
const safe = (s: string) => escapeControl(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A place as the page shows it: `` `study.yaml` line 2 ``. */
const placeText = (p: Place) => `\`${safe(p.file).replace(/`/g, "'")}\`${p.line !== undefined ? ` line ${p.line}` : ''}`;

/** Lines kept within a byte budget: each added while it fits; what does not is counted. */
class Budget {
  readonly lines: string[] = [];
  used = 0;
  constructor(private readonly max: number) {}
  /** Adds `line` if it fits in what is left after `reserve` bytes; whether it did. */
  add(line: string, reserve = 0): boolean {
    const b = bytes(line) + 1;
    if (this.used + b + reserve > this.max) return false;
    this.lines.push(line);
    this.used += b;
    return true;
  }
}

/**
 * A cause's rows as a compact markdown table (the printed report's has
 * every figure; `why` says the ones that tripped the gate): scenario,
 * policy (model), the cost's change, retained before → after, why.
 */
function rowsTable(rows: readonly RowComparison[], byModel: boolean, fit: (text: string, wide?: boolean) => string, causeOf?: (r: RowComparison) => string): string[] {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `|${causeOf ? ' cause |' : ''} scenario | policy |${byModel ? ' model |' : ''} Δ cost | retained | why |`,
    `|${causeOf ? '---|' : ''}---|---|${byModel ? '---|' : ''}---:|---:|---|`,
    ...rows.map((r) => {
      const cells = [
        ...(causeOf ? [fit(cell(causeOf(r)))] : []),
        fit(cell(r.scenario)),
        fit(cell(r.policy)),
        ...(byModel ? [fit(cell(r.model))] : []),
        r.costChange === null ? '–' : change(r.costChange),
        `${r.before!.retained}/${r.before!.probes} → ${r.after!.retained}/${r.after!.probes}`,
        fit(cell(r.reasons.join('; ')), true),
      ];
      return `| ${cells.join(' | ')} |`;
    }),
  ];
}

/** Adds a table's rows to the page while they fit (`reserve` kept for what follows), then the line that counts those left out; how many it listed. */
function addRows(page: Budget, table: readonly string[], reserve: number): number {
  page.add(table[0]!);
  page.add(table[1]!);
  const rows = table.slice(2);
  let listed = 0;
  while (listed < rows.length && page.add(rows[listed]!, reserve + 200)) listed++;
  page.add('');
  if (listed < rows.length) page.add(`${rows.length - listed} more row${rows.length - listed === 1 ? '' : 's'} not listed here: every row is in \`--json\` and \`--junit\`.`, reserve);
  return listed;
}

/** A cause's section before its rows: a heading with its changes and count, its place, its worst row. */
function causeHead(c: Cause, i: number, places: Placer | undefined, name: Namer, z: Sizes): string[] {
  const place = c.changes.length ? places?.(c.changes[0]!) : undefined;
  const worst = c.rows[0]!;
  const also = c.changes.slice(1).map((ch) => safe(ch.text));
  return [
    cut(`#### ${i + 1}. ${safe(causeTitle(c))}: ${regressions(c.rows.length)}`, z.line),
    '',
    ...(place || also.length ? [cut([...(place ? [placeText(place)] : []), ...(also.length ? [`with ${also.join('; ')}`] : [])].join(' · '), z.line), ''] : []),
    cut(`The worst: ${safe(worst.scenario)} × ${safe(name(worst))}: ${safe(worst.reasons.join('; '))}`, z.line),
    '',
  ];
}

/** The page's opening: its title, the verdict, the limits, what retention rests on, and what changed. */
function opening(result: GateResult, opts: GatePageOptions, z: Sizes, byModel: boolean): string[] {
  const n = result.causes.reduce((sum, c) => sum + c.rows.length, 0);
  const causes = result.causes.length;
  const title = `### ctxsim check: ${result.failed ? `FAILED (${regressions(n)}, ${causes} cause${causes === 1 ? '' : 's'})` : 'passed'}`;
  const lines = [title, ''];
  if (opts.verdict) lines.push(cut(safe(opts.verdict), z.line * 4), '');
  lines.push(`Limits per scenario × policy${byModel ? ' × model' : ''}: ${limitsText(result.limits, bothAnswered(result))}.`, '');
  if (opts.note) lines.push(cut(safe(`${opts.note}.`), z.line * 2), '');
  const d = result.differences;
  if (!d.length) lines.push('Nothing in the study differs from the baseline\'s.', '');
  else {
    lines.push('The study differs from the baseline\'s:', '');
    for (const text of d.slice(0, z.differences)) lines.push(cut(`- ${safe(text)}`, z.line));
    if (d.length > z.differences) lines.push(`- and ${d.length - z.differences} more differences`);
    lines.push('');
  }
  return lines;
}

/** The command that accepts the change, for a failed gate. */
function closing(result: GateResult, opts: GatePageOptions): string[] {
  return result.failed && opts.accept ? ['To accept the change, save the new baseline:', '', `    ${escapeControl(opts.accept)}`, ''] : [];
}

/**
 * A page of the gate's result within `z.maxBytes`: the opening; when it
 * passed, a line per policy; when it failed, a section per cause (at most
 * `z.sections`, then how many more) with the rows it moved and the facts
 * they lost under `<details>`, as many rows as there is room for, each
 * cause in turn, the rest counted; then the command that accepts.
 */
function gatePage(result: GateResult, opts: GatePageOptions, z: Sizes): string {
  const byModel = severalModels(result.rows);
  const name: Namer = (r) => seriesName(r, byModel);
  const page = new Budget(z.maxBytes);
  const tail = closing(result, opts);
  const tailBytes = tail.reduce((b, l) => b + bytes(l) + 1, 0);
  for (const l of opening(result, opts, z, byModel)) page.add(l);
  if (!result.failed) {
    // One line per policy, then the rows on one side only, as the printed report has them.
    const lines = [...result.policies.map((p) => policyLine(p, name)), ...asideLines(result.rows, name)].map((l) => cut(safe(l), z.line));
    const shown = lines.findIndex((l) => !page.add(l, 200));
    if (shown >= 0) page.add(`- and ${lines.length - shown} more lines: every row is in \`--json\``);
    return `${page.lines.join('\n').trimEnd()}\n`;
  }
  const sections = result.causes.slice(0, z.sections);
  const heads = sections.map((c, i) => causeHead(c, i, opts.places, name, z));
  const fit = (t: string, wide?: boolean) => cut(safe(t), wide ? z.cell * 2 : z.cell);
  const tables = sections.map((c) => rowsTable(c.rows, byModel, fit));
  // What every section needs whatever rows it lists: its head, the table's header, the `<details>` around it and the line that counts the rest.
  const frame = (i: number) => heads[i]!.reduce((b, l) => b + bytes(l) + 1, 0) + bytes(tables[i]![0]!) + bytes(tables[i]![1]!) + 400;
  let reserved = tailBytes + heads.reduce((b, _, i) => b + frame(i), 0) + 400;
  sections.forEach((c, i) => {
    reserved -= frame(i);
    for (const l of heads[i]!) page.add(l);
    page.add(`<details><summary>The ${c.rows.length === 1 ? 'row' : `${c.rows.length} rows`} it moved</summary>`);
    page.add('');
    const listed = addRows(page, tables[i]!, reserved);
    const lost = lostLines(c.rows.slice(0, listed), name).map((l) => cut(safe(l), z.line));
    if (lost.length && page.add('Facts lost:', reserved + 200)) {
      page.add('', reserved);
      for (const l of lost) if (!page.add(l, reserved + 200)) break;
      page.add('', reserved);
    }
    page.add('</details>', reserved);
    page.add('', reserved);
  });
  // The causes past the sections: their rows in one table, each with its cause, while there is room.
  const rest = result.causes.slice(sections.length);
  if (rest.length) {
    const rows = rest.flatMap((c) => c.rows.map((r) => [r, c] as const));
    const of = new Map(rows.map(([r, c]) => [r, safe(causeTitle(c))]));
    const table = rowsTable(rows.map(([r]) => r), byModel, fit, (r) => of.get(r)!);
    const frame = bytes(table[0]!) + bytes(table[1]!) + 600;
    if (page.add(cut(`#### ${rest.length} more cause${rest.length === 1 ? '' : 's'}: ${regressions(rows.length)}`, z.line), tailBytes + frame)) {
      page.add('', tailBytes + frame);
      page.add('<details><summary>Their rows</summary>');
      page.add('');
      addRows(page, table, tailBytes);
      page.add('</details>');
      page.add('');
    }
  }
  for (const l of tail) page.add(l);
  return `${page.lines.join('\n').trimEnd()}\n`;
}

/**
 * The step summary `check` appends to `$GITHUB_STEP_SUMMARY`: the
 * verdict line, the limits, what changed, and per cause of regressions
 * its place, its worst row and the rows it moved (under `<details>`);
 * at most `STEP_SUMMARY_BYTES` (under GitHub's 1 MiB) at any study size.
 */
export function gateSummary(result: GateResult, opts: GatePageOptions = {}): string {
  return gatePage(result, opts, { maxBytes: opts.maxBytes ?? STEP_SUMMARY_BYTES, line: 1000, cell: 200, sections: 50, differences: 20 });
}

/**
 * The markdown a bot posts on a pull request (`check --comment FILE`):
 * the gate's result, the new run's verdict, what changed since the
 * baseline, and per cause of regressions what it moved; at most
 * `COMMENT_BYTES` (under GitHub's 65,536 characters).
 */
export function gateComment(result: GateResult, opts: GatePageOptions = {}): string {
  return gatePage(result, opts, { maxBytes: opts.maxBytes ?? COMMENT_BYTES, line: 300, cell: 80, sections: 10, differences: 10 });
}
