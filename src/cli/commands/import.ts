import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { ImportFlags } from '../import.js';

/** The command's own flags, which no importer option may take. */
const OWN_FLAGS = ['file', 'format', 'out', 'unlogged-prefix'];

export function importCommand(io: IO): Command<ImportFlags> {
  return {
    command: 'import <file>',
    describe: 'convert a dataset to scenario YAML (one file each with --out, else a YAML stream on stdout)',
    examples: [
      ['ctxsim import --format locomo locomo10.json --out scenarios/locomo', 'convert a dataset to one scenario file per conversation'],
    ],
    builder: async (y: Argv) => {
      const [{ IMPORTERS, importOptions }, { importerFlags }] = await Promise.all([import('../../scenario/import/index.js'), import('../_import-flags.js')]);
      // The importers' options, each a flag: declared (with its help) in the importer's option schema.
      const flags = importerFlags(importOptions(IMPORTERS.values()));
      const taken = OWN_FLAGS.filter((f) => f in flags);
      if (taken.length) throw new Error(`an importer option takes the import command's own flag --${taken.join(', --')}`);
      const billed = [...IMPORTERS.values()].filter((i) => i.billedCalls).map((i) => i.id);
      return y
        .positional('file', { type: 'string', demandOption: true, describe: 'dataset file' })
        .option('format', { type: 'string', demandOption: true, describe: [...IMPORTERS.keys()].join(' | ') })
        .option('out', { type: 'string', describe: 'folder for one <id>.yaml per conversation' })
        .options(flags)
        .option('unlogged-prefix', {
          type: 'string',
          choices: ['billed'],
          describe: `${billed.join(', ')} (the formats whose logs record each call’s billed usage): add a pinned stand-in for what the log leaves out of every prompt (system prompt, tool definitions), sized from the first call’s bill (an estimate); none when ctxsim counts the first call as billed (the log holds the whole prompt: DeepSeek’s, counted in its V3.2 format), which it says`,
        });
    },
    handler: async (argv: ImportFlags) => (await import('../import.js')).importCmd(argv, io),
  };
}
