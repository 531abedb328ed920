import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { CalibrateFlags } from '../calibrate.js';

export function calibrateCommand(io: IO): Command<CalibrateFlags> {
  return {
    command: 'calibrate <transcripts..>',
    describe: 'fit a tokenFactor per model from the billed usage of imported transcripts, with its leave-one-out error, and print the study line to paste',
    examples: [
      ['ctxsim calibrate transcripts/*.yaml', 'fit each model’s tokenFactor from what the provider billed for the transcripts’ calls'],
      ['ctxsim calibrate session.yaml --model claude-sonnet-4-5', 'fit them as the model the study names, whatever the transcripts say'],
    ],
    builder: async (y: Argv) => {
      const { settingOption } = await import('../_study-options.js');
      return y
        .positional('transcripts', {
          type: 'string',
          array: true,
          demandOption: true,
          describe: 'scenario files or globs of imported transcripts with billed usage (ctxsim import … --unlogged-prefix billed)',
        })
        .option('model', settingOption('model', { one: true, describe: 'fit every transcript as this model (default: the model each one names)' }))
        .option('prices', settingOption('prices', { describe: 'LiteLLM-format price table JSON laid over the builtin one (for model names)' }));
    },
    handler: async (argv: CalibrateFlags) => (await import('../calibrate.js')).calibrate(argv, io),
  };
}
