import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { CheckUpkeepFlags } from '../check-upkeep.js';

export function checkUpkeepCommand(io: IO): Command<CheckUpkeepFlags> {
  return {
    command: 'check-upkeep <file>',
    describe: 'run the simulated extractor and summarizer over each conversation of a dataset and compare what they keep with what a real model kept (the dataset’s own observations and session summaries)',
    examples: [
      ['ctxsim check-upkeep locomo10.json --format locomo', 'the table: per conversation and in total, the answers each memory holds and how often the simulation agrees with the real one'],
      ['ctxsim check-upkeep locomo10.json --format locomo --json', 'the same as JSON'],
      ['ctxsim check-upkeep locomo10.json --format locomo --observations plain', 'against the observations without their sessions’ dates'],
    ],
    builder: (y: Argv) =>
      y
        .positional('file', { type: 'string', demandOption: true, describe: 'a dataset with a real model’s memories of its conversations (LoCoMo: observation, session_summary)' })
        .option('format', { type: 'string', demandOption: true, choices: ['locomo'], describe: 'the dataset’s format' })
        .option('observations', {
          type: 'string',
          choices: ['dated', 'plain'],
          default: 'dated',
          describe: 'the reference extraction: each observation after its session’s date-time, as LoCoMo stores them for retrieval (dated), or the observations alone (plain)',
        })
        .option('json', { type: 'boolean', describe: 'print the figures as JSON: {conversations: [...], total: {extraction, summary, junk, …}}' }),
    handler: async (argv: CheckUpkeepFlags) => (await import('../check-upkeep.js')).checkUpkeepCmd(argv, io),
  };
}
