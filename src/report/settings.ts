import { z } from 'zod';
import { setting, written, type SettingMeta } from '../engine/spec.js';
import { REPORT_SETTINGS, type ReportSettings } from '../records/info.js';
import { SORT_HELP, sortProblem } from '../records/table-sort.js';
import { BUDGET_COLUMN_NAMES, budgetColumnsProblem } from './budget.js';

/**
 * The report settings: what the verdict and report.md's budget table read
 * of a study. What each holds is declared where the report info is
 * (`REPORT_SETTINGS`, records/info.ts), so that the report info and the
 * shard file hold them with nothing else to write; here, each one's meta
 * (`SettingMeta`, engine/spec.ts), as a run setting's is in `RUN_SPEC`,
 * from which their study keys, JSON Schema, flags and reading follow
 * (study/settings.ts, cli/_study-options.ts). They decide no record, so
 * they are not in the `RunSpec`: changing one replays nothing (no
 * replay-cache key holds it) and moves no baseline.
 */

/** A percentage as written: text (`95%`) or, to be refused with a reason, a number. */
const PERCENTAGE = z.union([z.string(), z.number()]);

/** What is wrong with a percentage as written (`what` names it), or nothing. */
function percentageProblem(value: string | number, what: string): string | undefined {
  const s = String(value).trim();
  const m = /^(-?\d+(?:\.\d+)?)\s*(%?)$/.exec(s);
  if (!m) return `expected ${what} as a percentage such as 5%, got ${JSON.stringify(value)}`;
  // Negative first: `-5` is refused for its sign, not its missing `%`.
  if (m[1]!.startsWith('-')) return `${what} is at least 0%, got ${s}`;
  if (!m[2]) return `write ${Number((Number(m[1]) * 100).toPrecision(12))}% or ${m[1]}% (a bare number could be a fraction or a percentage), got ${s}`;
  if (Number(m[1]) > 100) return `${what} is at most 100%, got ${s}`;
  return undefined;
}

/** A setting written as a percentage (`95%` holds 0.95). */
function percentage(what: string) {
  return written(
    PERCENTAGE,
    (v) => Number(/^\d+(?:\.\d+)?/.exec(String(v).trim())![0]) / 100,
    (v) => percentageProblem(v, what),
  );
}

/** `spec`, each field's meta registered (`setting`), as each of `RUN_SPEC`'s is: the type checker asks for the meta of every field. */
function withMeta<S extends z.ZodObject>(spec: S, meta: { readonly [K in keyof S['shape']]: SettingMeta }): S {
  for (const [name, m] of Object.entries(meta)) setting(spec.shape[name] as z.ZodType, m);
  return spec;
}

/**
 * The report settings (see above): each field of `REPORT_SETTINGS`
 * (records/info.ts: what it holds, its bounds and description), with its
 * meta: its study key, its flag, its written form.
 */
export const REPORT_SPEC = withMeta(REPORT_SETTINGS, {
  minRetention: {
    about: 'the share of the probed facts the verdict’s pick must keep, a percentage such as 90% (default 95%; --min-retention): the verdict names the cheapest policy that keeps at least this share',
    written: percentage('a share of the probed facts'),
    flag: { name: 'min-retention', describe: 'the share of the probed facts the verdict’s pick must keep, e.g. 90% (default: the study’s, else 95%)' },
  },
  minSaving: {
    about: 'the saving against full below which the verdict says no memory policy pays off, a percentage such as 10% (default 5%; --min-saving): it then recommends full, and says on which longer conversations the pick would save this much',
    written: percentage('a saving'),
    flag: { name: 'min-saving', describe: 'the saving against full below which the verdict says no memory policy pays off, e.g. 10% (default: the study’s, else 5%)' },
  },
  budgetColumns: {
    about: `the columns of report.md's budget table and of ctxsim table, in order (default: every figure in report.md, a page's width in ctxsim table): ${BUDGET_COLUMN_NAMES.join(', ')}`,
    problems: (value) => {
      const p = budgetColumnsProblem(value as readonly string[]);
      return p ? [{ path: [p.index], message: p.message }] : [];
    },
    // A flag of ctxsim table alone (the table it prints); the names comma-separated.
    flag: {
      name: 'columns',
      describe: `the table's columns, comma-separated, in that order (over the study's budgetColumns): ${BUDGET_COLUMN_NAMES.join(', ')}`,
      defaultDescription: 'md: policy, model (several models), cost_per_1000_conversations_usd, retention, answer_retention (measured), vs_full, pareto; csv: every column of the budget CSV',
      written: written(z.string(), columnNames, (v) => {
        const names = columnNames(v);
        return names.length ? budgetColumnsProblem(names)?.message : 'name at least one column, e.g. --columns policy,cost_per_1000_conversations_usd,retention';
      }),
    },
  },
  budgetSort: {
    about: 'the row order of report.md’s budget table and of ctxsim table: cost (cheapest first, the default), retention (most first), name, or study (the study’s order)',
    // A flag of ctxsim table alone (run's and merge's --sort orders the table they print, which no study key holds).
    flag: { name: 'sort', describe: `row order (over the study's budgetSort): ${SORT_HELP}`, defaultDescription: 'md: cost; csv: study', written: written(z.string(), undefined, sortProblem) },
  },
});

/** Column names as `--columns` writes them: comma-separated, blanks around and between them dropped. */
function columnNames(text: string): string[] {
  return text
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c);
}

/** The report settings' names, in declaration order. */
export const REPORT_SPEC_KEYS = Object.keys(REPORT_SPEC.shape) as (keyof ReportSettings)[];

/** The report settings `from` gives (a study), and only those: as the report info holds them. */
export function reportSettingsOf(from: ReportSettings): ReportSettings {
  const out: Record<string, unknown> = {};
  for (const k of REPORT_SPEC_KEYS) if (from[k] !== undefined) out[k] = from[k];
  return out as ReportSettings;
}
