import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
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
      const [{ settingOption }, { GENERATE_SETTINGS }] = await Promise.all([import('../_study-options.js'), import('../../study/sources.js')]);
      // A generate source's fields (`GENERATE_SPEC`): the flags write what a study's `generate:` entry does.
      const field = (name: string, told: Parameters<typeof settingOption>[1] = {}) => settingOption(name, told, GENERATE_SETTINGS);
      return y
        .option('profile', field('profile', { demandOption: true }))
        .option('count', field('count', { default: 10 }))
        .option('seed', field('seed', { default: 42 }))
        .option('turns', field('turns'))
        .option('prefix', field('prefix'))
        .option('set', field('set'))
        .option('out', { type: 'string', describe: 'folder for one <id>.yaml per conversation' });
    },
    handler: async (argv: GenerateFlags) => (await import('../generate.js')).generate(argv, io),
  };
}
