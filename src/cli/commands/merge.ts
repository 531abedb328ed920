import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import { TABLE_OPTIONS } from '../_table.js';
import type { MergeFlags } from '../merge.js';

export function mergeCommand(io: IO): Command<MergeFlags> {
  return {
    command: 'merge <dirs..>',
    describe: 'combine the outputs of `run --shard K/N` into the files an unsharded run writes',
    examples: [
      ['ctxsim merge shard-1 shard-2 shard-3 --out reports', 'combine the outputs of `run --shard K/3` into the unsharded run\'s files'],
      ['ctxsim merge shard-* --save-baseline ctxsim-baseline.json --force', 'and save the baseline of the whole run for `ctxsim check`'],
    ],
    builder: async (y: Argv) => {
      const { RECORDS_OPTION, settingOption } = await import('../_study-options.js');
      return y
        .positional('dirs', { type: 'string', array: true, describe: 'folders (or files) holding shard-K-of-N.json' })
        .option('out', settingOption('out', { describe: 'output folder', defaultDescription: 'reports' }))
        .option('records', RECORDS_OPTION)
        .option('save-baseline', { type: 'string', describe: 'also write the baseline of the merged run for `ctxsim check`, as `run --save-baseline` does' })
        .option('force', { type: 'boolean', describe: 'let --save-baseline replace an existing file' })
        .option('quiet', { type: 'boolean', describe: 'no summary line on stderr' })
        .options(TABLE_OPTIONS);
    },
    handler: async (argv: MergeFlags) => (await import('../merge.js')).merge(argv, io),
  };
}
