import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { TableFlags } from '../table.js';

export function tableCommand(io: IO): Command<TableFlags> {
  return {
    command: 'table [study]',
    describe: 'print the budget table for docs (markdown or CSV)',
    examples: [
      ['ctxsim table study.yaml --format md', 'the budget table of a study, as markdown for docs (what fits a page)'],
      ['ctxsim table --columns policy,tokens_turn_10,retention --sort retention', 'the columns named, most retained first'],
    ],
    builder: async (y: Argv) => {
      const [{ STUDY_OPTIONS, BUDGET_TABLE_OPTIONS }, { FORMATS }] = await Promise.all([import('../_study-options.js'), import('../table.js')]);
      // The table goes to stdout: no --out.
      const { out: _out, ...options } = STUDY_OPTIONS;
      return y
        .positional('study', { type: 'string', describe: 'study file (default: ./ctxsim.yaml or ./study.yaml, the first found, else the built-in default study)' })
        .options(options)
        .option('format', { type: 'string', choices: FORMATS, default: 'md', describe: 'md: GitHub markdown with a caption; csv: plain numbers' })
        .options(BUDGET_TABLE_OPTIONS)
        .option('quiet', { type: 'boolean', describe: 'no progress or notes on stderr; warnings still' });
    },
    handler: async (argv: TableFlags) => (await import('../table.js')).table(argv, io),
  };
}
