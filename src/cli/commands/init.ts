import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { InitFlags } from '../init.js';

export function initCommand(io: IO): Command<InitFlags> {
  return {
    command: 'init [dir]',
    describe: 'scaffold a project: a study, two scenarios, a policy of your own and a CI workflow',
    examples: [
      ['ctxsim init my-study', 'write a study, two scenarios, an example policy and a CI workflow into my-study/'],
      ['ctxsim init --force', 'scaffold the current folder, replacing those files where they exist'],
    ],
    builder: (y: Argv) =>
      y
        .positional('dir', { type: 'string', describe: 'the project folder, made if missing (default: the current folder)' })
        .option('force', { type: 'boolean', describe: 'replace files that exist (without it, nothing is written if any does)' }),
    handler: async (argv: InitFlags) => (await import('../init.js')).init(argv, io),
  };
}
