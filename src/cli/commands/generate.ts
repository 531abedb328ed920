import type { Argv } from 'yargs';
import { wholeNumberOption, type Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { GenerateFlags } from '../generate.js';

export function generateCommand(io: IO): Command<GenerateFlags> {
  return {
    command: 'generate',
    describe: 'write generated scenarios as YAML (one file each with --out, else a YAML stream on stdout)',
    examples: [
      ['ctxsim generate --profile support --count 20 --seed 7 --out scenarios/generated', 'twenty support chats, one scenario file each'],
      ['ctxsim generate --profile coding --count 1 --turns 30-40', 'one long coding session as YAML on stdout'],
    ],
    builder: async (y: Argv) => {
      const [{ PROFILES }, { MAX_GENERATE_COUNT }] = await Promise.all([import('../../scenario/generate/index.js'), import('../../study/sources.js')]);
      return y
        .option('profile', { type: 'string', demandOption: true, describe: [...PROFILES.keys()].join(' | ') })
        .option('count', wholeNumberOption('count', { min: 1, max: MAX_GENERATE_COUNT, default: 10, describe: 'how many conversations' }))
        .option('seed', wholeNumberOption('seed', { default: 42, describe: 'random seed' }))
        .option('turns', { type: 'string', describe: 'turns per conversation, MIN-MAX (default: the profile’s)' })
        .option('prefix', { type: 'string', describe: 'id prefix (default: the profile id)' })
        .option('set', { type: 'string', array: true, describe: 'profile parameter, e.g. correctionShare=0.5 (repeatable)' })
        .option('out', { type: 'string', describe: 'folder for one <id>.yaml per conversation' });
    },
    handler: async (argv: GenerateFlags) => (await import('../generate.js')).generate(argv, io),
  };
}
