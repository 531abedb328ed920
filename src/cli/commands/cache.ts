import type { Argv } from 'yargs';
import type { Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { CacheFlags } from '../cache.js';

export function cacheCommand(io: IO): Command<CacheFlags> {
  return {
    command: 'cache <action>',
    describe: 'show (info) or empty (clear) the cache folder: token counts, replayed units and rendered charts',
    examples: [
      ['ctxsim cache info', 'entries and bytes of the cache folder'],
      ['ctxsim cache clear --token-cache /tmp/c', 'empty the cache folder /tmp/c'],
    ],
    builder: async (y: Argv) => {
      const [{ ACTIONS, actionOf }, { settingOption }] = await Promise.all([import('../cache.js'), import('../_study-options.js')]);
      return y
        .positional('action', {
          type: 'string',
          choices: ACTIONS,
          // Checked here, before yargs checks the choices: its message would name the positional as a flag (--action).
          coerce: actionOf,
          describe: 'info: what the cache holds; clear: remove it all',
        })
        .option('token-cache', settingOption('token-cache', { describe: 'the cache folder' }));
    },
    handler: async (argv: CacheFlags) => (await import('../cache.js')).cache(argv, io),
  };
}
