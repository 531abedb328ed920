import { UsageError } from '../errors.js';
import { budgetColumnsProblem, budgetCsv } from '../report/budget.js';
import { budgetMarkdown } from '../report/markdown.js';
import { runStudyPipeline } from '../study/pipeline.js';
import { digestSink } from '../output/sinks.js';
import { studyEvents, type IO } from './_io.js';
import { studyFromFlags, withFolderStudy, type StudyFlags } from './_study.js';
import { sortFlag } from './_table.js';

/** The formats of `ctxsim table`. */
export const FORMATS = ['md', 'csv'] as const;

export interface TableFlags extends StudyFlags {
  format: (typeof FORMATS)[number];
  quiet?: boolean;
  /** Column names, comma-separated. */
  columns?: string;
  sort?: string;
}

/** `--columns`, checked: the names in order. */
function columnsFlag(columns: string | undefined): string[] | undefined {
  if (columns === undefined) return undefined;
  const names = columns.split(',').map((c) => c.trim());
  if (!names.some((n) => n)) throw new UsageError('--columns: name at least one column, e.g. --columns policy,cost_per_1000_conversations_usd,retention');
  const problem = budgetColumnsProblem(names.filter((n) => n));
  if (problem) throw new UsageError(`--columns: ${problem.message}`);
  return names.filter((n) => n);
}

/**
 * `ctxsim table`: replays the study and prints the budget table on stdout
 * (nothing else goes there): its columns and order are the flags', else
 * the study's (`budgetColumns`, `budgetSort`), else for markdown what fits
 * a docs page and for CSV every column the file has had.
 */
export async function table(flags: TableFlags, io: IO): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(flags.format)) throw new UsageError(`--format: expected md or csv, got ${flags.format}`);
  const columns = columnsFlag(flags.columns);
  const sort = sortFlag(flags.sort);
  const { output } = await runStudyPipeline(await studyFromFlags(withFolderStudy(flags, io), io), digestSink(), studyEvents(io, flags.quiet));
  const chosen = columns ?? output.info.budgetColumns;
  const order = sort ?? output.info.budgetSort;
  const options = { ...(chosen && { columns: chosen }), ...(order && { sort: order }) };
  io.out(flags.format === 'csv' ? budgetCsv(output.results, options) : budgetMarkdown(output.results, output.info, { ...options, narrow: true }));
  return 0;
}
