import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { PricesFlags } from '../prices.js';

export function pricesCommand(io: IO): Command<PricesFlags> {
  return {
    command: 'prices [patterns..]',
    describe: 'show the prices, context windows, cache rules and latency figures in use',
    examples: [
      ['ctxsim prices gpt-4o-mini claude-sonnet-4-5', 'prices, context windows, cache rules and latency of two models'],
      ['ctxsim prices qwen', 'every model whose name holds qwen (case ignored)'],
      ["ctxsim prices 'groq/*'", 'every model a glob matches (* any characters, / included; ? one)'],
      ['ctxsim prices --all', 'every model of the price table'],
      ['ctxsim prices --check --prices my-prices.json', 'the prices that look like unit mistakes, in the builtin table and the file laid over it'],
    ],
    builder: async (y: Argv) => {
      // The settings' flags, as every command that reads a study takes them (the command reads them as run does: studyFromFlags).
      const { settingOption } = await import('../_study-options.js');
      return y
        .positional('patterns', {
          type: 'string',
          array: true,
          describe: 'models to show: a model name, a glob (groq/*) or a part of names (qwen) (default: the models the study uses)',
        })
        .option('study', { type: 'string', describe: 'study file whose prices, cache and latency settings apply' })
        .option('prices', settingOption('prices', { describe: 'LiteLLM-format price table JSON laid over the builtin one' }))
        .option('cache', settingOption('cache'))
        .option('all', { type: 'boolean', describe: 'every model in the table' })
        .option('check', { type: 'boolean', describe: 'list the prices that look wrong (at least 100× the median of the same model elsewhere, or above $1,000 per million tokens) of the models named, else of the whole table' });
    },
    handler: async (argv: PricesFlags) => (await import('../prices.js')).prices(argv, io),
  };
}
