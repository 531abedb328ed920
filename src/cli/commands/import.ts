import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { ImportFlags } from '../import.js';

export function importCommand(io: IO): Command<ImportFlags> {
  return {
    command: 'import <file>',
    describe: 'convert a dataset to scenario YAML (one file each with --out, else a YAML stream on stdout)',
    examples: [
      ['ctxsim import --format locomo locomo10.json --out scenarios/locomo', 'convert a dataset to one scenario file per conversation'],
    ],
    builder: async (y: Argv) => {
      const { IMPORTERS } = await import('../../scenario/import/index.js');
      return y
        .positional('file', { type: 'string', demandOption: true, describe: 'dataset file' })
        .option('format', { type: 'string', demandOption: true, describe: [...IMPORTERS.keys()].join(' | ') })
        .option('out', { type: 'string', describe: 'folder for one <id>.yaml per conversation' })
        .option('prefix', { type: 'string', describe: 'id prefix' })
        .option('user', { type: 'string', describe: 'locomo: speaker_a | speaker_b plays the user' })
        .option('fact-value', { type: 'string', describe: 'locomo: text | answer (what a probed fact is)' })
        .option('system', { type: 'string', describe: 'abcd: system prompt for every conversation' })
        .option('annotations', { type: 'string', describe: 'openai, claude-code, swe-agent, anthropic: side file of facts and probes by conversation id' })
        .option('fact', { type: 'string', array: true, describe: 'openai, claude-code, swe-agent, anthropic: name=value for every conversation (repeatable)' })
        .option('probe', { type: 'string', array: true, describe: 'openai, claude-code, swe-agent, anthropic: TURN:name[,name] for every conversation (repeatable)' })
        .option('ask', { type: 'boolean', describe: 'multiwoz: end with a turn asking for the booking references (default on; --no-ask)' })
        .option('unlogged-prefix', {
          type: 'string',
          choices: ['billed'],
          describe: 'claude-code, swe-agent, openai, anthropic: add a pinned stand-in for what the log leaves out of every prompt (system prompt, tool definitions), sized from the first call’s bill (an estimate)',
        });
    },
    handler: async (argv: ImportFlags) => (await import('../import.js')).importCmd(argv, io),
  };
}
