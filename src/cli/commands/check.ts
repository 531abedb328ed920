import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { CheckFlags } from '../check.js';

export function checkCommand(io: IO): Command<CheckFlags> {
  return {
    command: 'check [study]',
    describe: 'rerun the study and fail (exit 1) on cost or retention regressions against a baseline',
    examples: [
      ['ctxsim check study.yaml --baseline ctxsim-baseline.json', 'fail (exit 1) if a scenario × policy costs more or forgets more than the baseline'],
      ['ctxsim check study.yaml --baseline ctxsim-baseline.json --max-cost-increase 10% --junit gate.xml', 'a looser cost limit, and JUnit XML for CI'],
      ['ctxsim check study.yaml --comment comment.md', 'also the markdown for a pull request comment'],
    ],
    builder: async (y: Argv) => {
      const { GATE_OPTIONS, STUDY_OPTIONS, settingOption } = await import('../_study-options.js');
      return y
        .positional('study', { type: 'string', describe: 'study file (default: ./ctxsim.yaml or ./study.yaml, the first found, else the built-in default study)' })
        .options(GATE_OPTIONS)
        .option('junit', { type: 'string', describe: 'also write JUnit XML here' })
        .option('comment', { type: 'string', describe: 'also write here the markdown a bot would post on the pull request: the verdict, what changed, the gate’s result by cause' })
        .option('json', { type: 'boolean', describe: 'print the result as JSON instead of a table' })
        .option('verbose', { type: 'boolean', describe: 'print every scenario × policy row, also when it passes' })
        .option('quiet', { type: 'boolean', describe: 'no progress or notes on stderr, nor the `reports:` line; warnings and the replay cache’s use still' })
        .options(STUDY_OPTIONS)
        .option('out', settingOption('out', { describe: 'also write the new run\'s reports: a folder, or one file (.csv .json .md .html)' }));
    },
    handler: async (argv: CheckFlags) => (await import('../check.js')).check(argv, io),
  };
}
