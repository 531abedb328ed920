import { UsageError } from '../errors.js';
import { budgetCsv } from '../report/budget.js';
import { budgetMarkdown } from '../report/markdown.js';
import { runStudyPipeline } from '../study/pipeline.js';
import { digestSink } from '../study/sinks.js';
import { studyEvents, type IO } from './_io.js';
import { studyFromFlags, withFolderStudy, type StudyFlags } from './_study.js';

/** The formats of `ctxsim table`. */
export const FORMATS = ['md', 'csv'] as const;

export interface TableFlags extends StudyFlags {
  format: (typeof FORMATS)[number];
  quiet?: boolean;
}

/** `ctxsim table`: replays the study and prints the budget table on stdout (nothing else goes there). */
export async function table(flags: TableFlags, io: IO): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(flags.format)) throw new UsageError(`--format: expected md or csv, got ${flags.format}`);
  const { output } = await runStudyPipeline(await studyFromFlags(withFolderStudy(flags, io), io), digestSink(), studyEvents(io, flags.quiet));
  io.out(flags.format === 'csv' ? budgetCsv(output.results) : budgetMarkdown(output.results, output.info));
  return 0;
}
