import yargs, { type Argv, type CommandModule } from 'yargs';
import { CtxsimError, escapeControl, UsageError } from '../errors.js';
import { ctxsimVersion } from '../process.js';
import { onStagingNotice } from '../output/files.js';
import { displayPath } from '../output/display.js';
import { editDistance } from '../text/distance.js';
import { noCacheAlias } from './_cache-folder.js';
import type { Command } from './_command.js';
import { processIO, reasonOf, type IO } from './_io.js';
import { cacheCommand } from './commands/cache.js';
import { calibrateCommand } from './commands/calibrate.js';
import { checkCommand } from './commands/check.js';
import { checkPolicyCommand } from './commands/check-policy.js';
import { checkUpkeepCommand } from './commands/check-upkeep.js';
import { explainCommand } from './commands/explain.js';
import { generateCommand } from './commands/generate.js';
import { importCommand } from './commands/import.js';
import { initCommand } from './commands/init.js';
import { mergeCommand } from './commands/merge.js';
import { pricesCommand } from './commands/prices.js';
import { runCommand } from './commands/run.js';
import { tableCommand } from './commands/table.js';

/**
 * Runs the CLI on `rawArgs` and returns the exit code: 0 ok, 1 a gate
 * tripped, 2 bad usage or input (one line per problem, no stack trace), 70
 * an internal error (one line asking for a bug report; the stack only with
 * `CTXSIM_DEBUG=1`).
 */
export async function runMain(rawArgs: readonly string[], io: IO = processIO): Promise<number> {
  rawArgs = noCacheAlias(rawArgs);
  // A staging folder left as it is (not made by a run of this user's) is said where the command's warnings go.
  const notice = onStagingNotice((line) => io.err(`ctxsim: warning: ${escapeControl(line)}\n`));
  try {
    return await parseAndRun(rawArgs, io);
  } finally {
    onStagingNotice(notice);
  }
}

/**
 * What yargs says of a flag's value that starts with a minus and a digit
 * (`--min-retention -5%`, `--cache-ttl -5m`): it reads the word as short
 * options ("Unknown arguments: 5, %"). Said as what it is, with how to
 * write it (`--min-retention=-5%`, which the flag's own check then reads).
 * A bare negative number (`--seed -3`) yargs reads as a value.
 */
function minusValue(args: readonly string[], message: string): string | undefined {
  if (!message.startsWith('Unknown argument')) return undefined;
  const end = args.indexOf('--');
  const i = args.findIndex((a, k) => k > 0 && (end < 0 || k < end) && /^-[\d.]/.test(a) && !/^-(?:\d+(?:\.\d+)?|\.\d+)$/.test(a) && /^--[^=]+$/.test(args[k - 1]!));
  if (i < 0) return undefined;
  const [flag, value] = [args[i - 1]!, args[i]!];
  return `${value}: a word that starts with a minus is read as options; if it is ${flag}'s value, join the two: ${flag}=${value}`;
}

/**
 * yargs' "Unknown argument: quite" of a flag a typo or two away from one the
 * command takes, with the flag it likely meant (`did you mean --quiet?`);
 * its "Missing required argument: format" when a flag given is a typo of
 * it (`--fromat`); a mistyped command, with the command (`ctxsim rnu`).
 * `usage` is what yargs hands `.fail`: its descriptions are the flags of
 * the command being parsed, its commands ctxsim's.
 */
function meant(args: readonly string[], message: string, usage: unknown): string {
  const typed = args.flatMap((a) => /^--([^=]+)/.exec(a)?.[1] ?? []);
  const unknown = /^Unknown arguments?: (.+)$/.exec(message)?.[1];
  // A mistyped command (`ctxsim rnu`) is the first word, and yargs says so as an unknown argument.
  const command = args[0];
  if (unknown !== undefined && command !== undefined && unknown.split(', ')[0] === command) {
    const commands = ((usage as { getCommands?: () => unknown[][] } | undefined)?.getCommands?.() ?? []).map((c) => String(c[0]).split(' ')[0]!);
    const near = nearest(command, commands);
    if (near) return `unknown command "${command}" (did you mean ${near}?)`;
  }
  if (unknown !== undefined) {
    // yargs names a kebab-case flag twice (min-retenion, minRetenion): the one typed is the one to say.
    const named = unknown.split(', ').filter((n) => typed.includes(n));
    if (named.length !== 1) return message;
    const flags = Object.keys((usage as { getDescriptions?: () => Record<string, unknown> } | undefined)?.getDescriptions?.() ?? {});
    const near = nearest(named[0]!, flags);
    return `Unknown argument: ${named[0]}${near ? ` (did you mean --${near}?)` : ''}`;
  }
  const missing = /^Missing required arguments?: (.+)$/.exec(message)?.[1];
  for (const name of missing?.split(', ') ?? []) {
    const near = nearest(name, typed);
    if (near) return `${message} (is --${near} a typo of --${name}?)`;
  }
  return message;
}

/** The one of `names` a typo or two away from `word` (one for a word of four letters or fewer; two letters swapped are one), if any. */
function nearest(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let least = Infinity;
  const letters = (w: string) => [...w].sort().join('');
  for (const name of names) {
    const edits = editDistance(word, name);
    // Two letters swapped (`rnu`, `--trun`) count as one typo.
    const d = edits === 2 && letters(word) === letters(name) ? 1 : edits;
    if (d > 0 && d < least) [best, least] = [name, d];
  }
  return least <= (word.length > 4 ? 2 : 1) ? best : undefined;
}

async function parseAndRun(rawArgs: readonly string[], io: IO): Promise<number> {
  let code = 0;
  const cli = commandLine(rawArgs, io, (c) => {
    code = c;
  });
  let helpText = '';
  try {
    await cli.parseAsync([...rawArgs], {}, (_err, _argv, output) => {
      helpText = output;
    });
    if (helpText) io.out(`${helpText}\n`);
  } catch (caught) {
    // yargs hands a refused value to .fail only while it parses synchronously: after an async builder it arrives here.
    const e = refusedValue(caught);
    if (e instanceof CtxsimError) {
      io.err(`ctxsim: ${e.message.split('\n').join('\nctxsim: ')}\n`);
      // What a policy threw is the cause of its error: its stack is for whoever debugs the policy.
      if (debugging() && e.cause instanceof Error && e.cause.stack) io.err(`${e.cause.stack}\n`);
      return e.exitCode;
    }
    const failed = systemFailure(e);
    if (failed) {
      io.err(`ctxsim: ${failed}\n`);
      return 2;
    }
    return internalError(e, io);
  }
  return code;
}

/**
 * The command line's parser: every command, ctxsim's own messages and
 * checks, the help at the terminal's width, and yargs' help cache skipped
 * (`skipHelpCache`). `setCode` gets the exit code a command's handler
 * returns.
 */
export function commandLine(rawArgs: readonly string[], io: IO, setCode: (c: number) => void): Argv {
  const cli = yargs([...rawArgs])
    .scriptName('ctxsim')
    // A repeatable flag takes one value per occurrence (--model a --model b): a word after it is a positional,
    // as in `ctxsim check --model gpt-4o study.yaml`, not a second value.
    .parserConfiguration({ 'greedy-arrays': false })
    .usage('$0 <command> [options]')
    .command(wrap(runCommand(io), setCode))
    .command(wrap(explainCommand(io), setCode))
    .command(wrap(checkCommand(io), setCode))
    .command(wrap(checkPolicyCommand(io), setCode))
    .command(wrap(checkUpkeepCommand(io), setCode))
    .command(wrap(mergeCommand(io), setCode))
    .command(wrap(pricesCommand(io), setCode))
    .command(wrap(generateCommand(io), setCode))
    .command(wrap(importCommand(io), setCode))
    .command(wrap(calibrateCommand(io), setCode))
    .command(wrap(tableCommand(io), setCode))
    .command(wrap(initCommand(io), setCode))
    .command(wrap(cacheCommand(io), setCode))
    .demandCommand(1, 'name a command: run, explain, check, merge, prices, generate, import, calibrate, table, init, cache')
    .strict()
    .check(onlyOnce)
    .help()
    // ctxsim's own version: yargs would look for a package.json above its own folder, which in a project that installed ctxsim is the project's.
    .version(ctxsimVersion())
    .exitProcess(false)
    // yargs' invalid-choice message spans two lines (a heading, then the value): one line per flag instead
    // (the heading becomes blank, which oneLinePerProblem drops; an empty string would leave it as it was).
    .updateStrings({ 'Invalid values:': ' ', 'Argument: %s, Given: %s, Choices: %s': '--%s: %s is not one of %s' })
    .fail((msg, err, usage) => {
      throw err ? refusedValue(err) : new CtxsimError(minusValue(rawArgs, msg) ?? meant(rawArgs, oneLinePerProblem(msg), usage), 'usage');
    })
    .wrap(Math.min(100, process.stdout.columns || 100));
  skipHelpCache(cli);
  return cli;
}

/** What an option's coerce threw (a value it refused) arrives as a YError with the same message: a usage error. */
function refusedValue(e: unknown): unknown {
  return e instanceof Error && e.name === 'YError' ? new CtxsimError(e.message, 'usage') : e;
}

/** A yargs message as one line per problem: its blank lines and indents dropped. */
function oneLinePerProblem(msg: string): string {
  return msg
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}

/** Reports an error that is a bug (one line, the stack only with `CTXSIM_DEBUG=1`); returns its exit code. */
export function internalError(e: unknown, io: IO): number {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  io.err(`ctxsim: internal error: ${escapeControl(message.split('\n')[0]!)} — please report it with the command that caused it (CTXSIM_DEBUG=1 shows the stack)\n`);
  if (debugging() && e instanceof Error && e.stack) io.err(`${e.stack}\n`);
  return EXIT_INTERNAL;
}

/** Whether `CTXSIM_DEBUG` asks for stacks. */
const debugging = () => !!process.env.CTXSIM_DEBUG && process.env.CTXSIM_DEBUG !== '0';

/** The exit code of an internal error (a bug): sysexits' EX_SOFTWARE, apart from 1 (regression) and 2 (bad input). */
const EXIT_INTERNAL = 70;

/**
 * yargs turns a repeated flag into a list; a flag that takes one value must
 * then be given once (`--model a --model b` is a mistake, not a choice).
 * A flag whose setting lets the last one count (`SettingFlag.lastWins`:
 * `--token-cache`) keeps the last as yargs reads it, so is one value here.
 */
function onlyOnce(argv: Record<string, unknown>, options: unknown): true {
  const { key = {}, array = [] } = options as { key?: Record<string, unknown>; array?: string[] };
  const lists = new Set(array);
  for (const name of Object.keys(key)) {
    if (lists.has(name) || !Array.isArray(argv[name])) continue;
    throw new UsageError(`--${name}: give --${name} once (got ${(argv[name] as unknown[]).map(String).join(', ')})`);
  }
  return true;
}

/**
 * A failed system call (a full disk, a read-only folder, a missing file) as
 * one line naming the path and the reason; undefined for any other error.
 */
function systemFailure(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const err = e as NodeJS.ErrnoException & { dest?: string };
  if (typeof err.code !== 'string' || typeof err.syscall !== 'string' || !/^E[A-Z]+$/.test(err.code)) return undefined;
  const path = err.dest ?? err.path;
  const verb = /^(read|scandir|stat|lstat|readlink|opendir)$/.test(err.syscall) ? 'cannot read' : err.syscall === 'open' ? 'cannot open' : 'cannot write';
  return path === undefined ? `${verb}: ${reasonOf(err)}` : `${verb} ${displayPath(path)}: ${reasonOf(err)}`;
}

function wrap<A>(cmd: Command<A>, setCode: (c: number) => void): CommandModule {
  const { command, describe, builder, examples, handler } = cmd;
  return {
    command,
    describe,
    builder: async (y) => examples.reduce((z, [line, what]) => z.example(line, what), await builder(y)),
    handler: async (argv) => setCode(await handler(argv as A)),
  };
}

/**
 * Before it runs a command's handler, yargs formats the command's whole
 * help, in case the handler asks to show it: 50–70 ms for `run`'s options,
 * on every run. No ctxsim handler does, and a failure prints one line, never
 * the help (`.fail` above), so that text is never read: the step is skipped.
 * yargs offers no option for it; with a yargs that lacks the internal
 * method, nothing changes but the time, and test/cli-help-cache.test.ts
 * fails (it holds the pinned yargs to calling this method, on the parser
 * `commandLine` makes).
 */
function skipHelpCache(cli: Argv): void {
  const internal = cli as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } };
  const usage = internal.getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => {};
}
