import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { budgetCsv } from '../report/budget.js';
import { budgetMarkdown } from '../report/markdown.js';
import { runStudyPipeline } from '../study/pipeline.js';
import { digestSink } from '../study/sinks.js';
import type { Command } from './_command.js';
import { studyEvents, type IO } from './_io.js';
import { STUDY_OPTIONS, studyFromFlags, type StudyFlags } from './_study.js';

const FORMATS = ['md', 'csv'] as const;

export interface TableFlags extends StudyFlags {
  format: (typeof FORMATS)[number];
  quiet?: boolean;
}

export function tableCommand(io: IO): Command<TableFlags> {
  const { out: _out, ...options } = STUDY_OPTIONS;
  return {
    command: 'table [study]',
    describe: 'print the budget table for docs (markdown or CSV)',
    examples: [
      ['ctxsim table study.yaml --format md', 'the budget table of a study, as markdown for docs'],
    ],
    builder: (y: Argv) =>
      y
        .positional('study', { type: 'string', describe: 'study file (default: the built-in default study)' })
        .options(options)
        .option('format', { type: 'string', choices: FORMATS, default: 'md', describe: 'md: GitHub markdown with a caption; csv: plain numbers' })
        .option('quiet', { type: 'boolean', describe: 'no progress on stderr' }),
    handler: (argv: TableFlags) => table(argv, io),
  };
}

/** `ctxsim table`: replays the study and prints the budget table on stdout (nothing else goes there). */
export async function table(flags: TableFlags, io: IO): Promise<number> {
  if (!(FORMATS as readonly string[]).includes(flags.format)) throw new UsageError(`--format: expected md or csv, got ${flags.format}`);
  const { output } = await runStudyPipeline(await studyFromFlags(flags), digestSink(), studyEvents(io, flags.quiet));
  io.out(flags.format === 'csv' ? budgetCsv(output.results) : budgetMarkdown(output.results, output.info));
  return 0;
}
