import yargs, { type CommandModule } from 'yargs';
import { CtxsimError } from '../errors.js';
import { checkCommand } from './check.js';
import { explainCommand } from './explain.js';
import { mergeCommand } from './merge.js';
import { generateCommand } from './generate.js';
import { importCommand } from './import.js';
import type { Command } from './_command.js';
import { processIO, type IO } from './_io.js';
import { pricesCommand } from './prices.js';
import { runCommand } from './run.js';
import { tableCommand } from './table.js';

/**
 * Runs the CLI on `rawArgs` and returns the exit code: 0 ok, 1 a gate
 * tripped, 2 bad usage or input (one line per problem, no stack trace).
 * Unknown errors are rethrown so their stack is kept.
 */
export async function runMain(rawArgs: readonly string[], io: IO = processIO): Promise<number> {
  let code = 0;
  const setCode = (c: number) => {
    code = c;
  };
  const cli = yargs([...rawArgs])
    .scriptName('ctxsim')
    .usage('$0 <command> [options]')
    .command(wrap(runCommand(io), setCode))
    .command(wrap(explainCommand(io), setCode))
    .command(wrap(checkCommand(io), setCode))
    .command(wrap(mergeCommand(io), setCode))
    .command(wrap(pricesCommand(io), setCode))
    .command(wrap(generateCommand(io), setCode))
    .command(wrap(importCommand(io), setCode))
    .command(wrap(tableCommand(io), setCode))
    .demandCommand(1, 'name a command: run, explain, check, merge, prices, generate, import, table')
    .strict()
    .help()
    .version()
    .exitProcess(false)
    .fail((msg, err) => {
      throw err ?? new CtxsimError(msg, 'usage');
    })
    .wrap(Math.min(100, process.stdout.columns || 100));
  let helpText = '';
  try {
    await cli.parseAsync([...rawArgs], {}, (_err, _argv, output) => {
      helpText = output;
    });
    if (helpText) io.out(`${helpText}\n`);
  } catch (e) {
    if (e instanceof CtxsimError) {
      io.err(`ctxsim: ${e.message.split('\n').join('\nctxsim: ')}\n`);
      return e.exitCode;
    }
    throw e;
  }
  return code;
}

function wrap<A>(cmd: Command<A>, setCode: (c: number) => void): CommandModule {
  return { ...cmd, handler: async (argv) => setCode(await cmd.handler(argv as A)) };
}
