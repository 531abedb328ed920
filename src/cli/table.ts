import { UsageError } from '../errors.js';
import { budgetCsv } from '../report/budget.js';
import { budgetMarkdown } from '../report/markdown.js';
import { runStudyPipeline } from '../study/pipeline.js';
import { digestSink } from '../output/sinks.js';
import { studyEvents, type IO } from './_io.js';
import { budgetTableSettings } from './_setting-flags.js';
import { studyFromFlags, withFolderStudy, type StudyFlags } from './_study.js';

/** The formats of `ctxsim table`. */
export const FORMATS = ['md', 'csv'] as const;

export interface TableFlags extends StudyFlags {
  format: (typeof FORMATS)[number];
  quiet?: boolean;
  /** As given (column names, comma-separated; a row order): `budgetTableSettings` reads them as `budgetColumns` and `budgetSort`. */
  columns?: string;
  sort?: string;
}

/**
 * `ctxsim table`: replays the study and prints the budget table on stdout
 * (nothing else goes there): its columns and order are the flags', else
 * the study's (`budgetColumns`, `budgetSort`), else for markdown what fits
 * a docs page and for CSV every column the file has had.
 */
export async function table(flags: TableFlags, io: IO): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(flags.format)) throw new UsageError(`--format: expected md or csv, got ${flags.format}`);
  const { budgetColumns: columns, budgetSort: sort } = budgetTableSettings(flags);
  const { output } = await runStudyPipeline(await studyFromFlags(withFolderStudy(flags, io), io), digestSink(), studyEvents(io, flags.quiet));
  const chosen = columns ?? output.info.budgetColumns;
  const order = sort ?? output.info.budgetSort;
  const options = { ...(chosen && { columns: chosen }), ...(order && { sort: order }) };
  io.out(flags.format === 'csv' ? budgetCsv(output.results, options) : budgetMarkdown(output.results, output.info, { ...options, narrow: true }));
  return 0;
}
