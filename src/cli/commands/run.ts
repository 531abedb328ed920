import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import { TABLE_OPTIONS } from '../_table.js';
import type { RunFlags } from '../run.js';

export function runCommand(io: IO): Command<RunFlags> {
  return {
    command: 'run [study]',
    describe: 'replay the study and write reports',
    examples: [
      ['ctxsim run', 'replay ./ctxsim.yaml or ./study.yaml when the folder has one, else the built-in default study into reports/'],
      ['ctxsim run study.yaml --out reports/', 'replay a study, write every report'],
      ['ctxsim run --scenario \'scenarios/*.yaml\' --policy full --policy \'window-tokens:budget=1000|2000\' --out - --format md', 'two policies (one a sweep), report.md on stdout'],
      ['ctxsim run study.yaml --save-baseline ctxsim-baseline.json', 'also save a baseline for `ctxsim check`'],
      ['ctxsim run study.yaml --upkeep record --dry-run', 'how many calls recording real upkeep would make, and their cost'],
    ],
    builder: async (y: Argv) => {
      const [{ STUDY_OPTIONS, REPORT_OPTIONS, RECORDS_OPTION }, { OUTPUT_FORMATS }] = await Promise.all([import('../_study-options.js'), import('../../report/outputs.js')]);
      return y
        .positional('study', { type: 'string', describe: 'study file (default: ./ctxsim.yaml or ./study.yaml, the first found, else the built-in default study)' })
        .options(STUDY_OPTIONS)
        .option('format', { type: 'string', choices: OUTPUT_FORMATS, describe: 'format of the single output (without --out: to stdout; --out - writes csv unless told)' })
        .option('records', RECORDS_OPTION)
        .option('quiet', { type: 'boolean', describe: 'no progress or notes on stderr, nor the lines that close a run (the billed-token check, the replay cache’s use, `wrote N files`); warnings still' })
        .option('save-baseline', { type: 'string', describe: 'also write a baseline JSON for `ctxsim check`' })
        .option('force', { type: 'boolean', describe: 'let --save-baseline replace an existing file' })
        .option('shard', { type: 'string', describe: 'run slice K/N of the scenario × model × policy work (combine with `ctxsim merge`); auto or auto/N reads K and N from the CI or batch engine (GitLab CI, Buildkite, CircleCI, AWS Batch, Kubernetes Indexed Job)' })
        .options(TABLE_OPTIONS)
        .options(REPORT_OPTIONS)
        .option('dry-run', { type: 'boolean', describe: 'with --upkeep record or live: print how many upkeep calls the recording needs and what they cost at most, send nothing, write nothing' });
    },
    handler: async (argv: RunFlags) => (await import('../run.js')).run(argv, io),
  };
}
