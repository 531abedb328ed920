import yargs, { type Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { commandLine } from '../src/cli/_app.js';
import { capture } from './_io.js';

/**
 * The command line's start-up skips a step of yargs: before it runs a
 * command's handler, yargs formats that command's whole help (50–70 ms for
 * `run`'s options), which ctxsim never shows then. yargs has no option for
 * it, so the CLI replaces an internal method (`skipHelpCache` in
 * src/cli/_app.ts). These tests fail when the yargs package.json pins stops
 * calling that method, or the CLI's parser stops replacing it: the speed
 * would be lost without a word.
 */

/** The internal part of yargs the skip rests on: its usage instance, which formats and caches the help. */
interface Usage {
  cacheHelpMessage: () => void;
  hasCachedHelpMessage: () => boolean;
}

/** The parser's usage instance (an internal of yargs: undefined where a yargs lacks it). */
function usageOf(cli: Argv): Usage | undefined {
  return (cli as unknown as { getInternalMethods?: () => { getUsageInstance?: () => Usage } }).getInternalMethods?.().getUsageInstance?.();
}

/** Counts the calls of `usage.cacheHelpMessage`, each passed on to the method in place (yargs' own, or the CLI's). */
function countCalls(usage: Usage): () => number {
  let calls = 0;
  const inPlace = usage.cacheHelpMessage;
  usage.cacheHelpMessage = function (this: Usage) {
    calls += 1;
    inPlace.call(this);
  };
  return () => calls;
}

describe('the CLI skips yargs’ help cache before a command runs', () => {
  it('yargs (as pinned) formats and caches a command’s help before its handler through usage.cacheHelpMessage', async () => {
    let ran = false;
    const cli = yargs(['go'])
      .command('go', 'a command', {}, () => {
        ran = true;
      })
      .exitProcess(false);
    const usage = usageOf(cli);
    expect(typeof usage?.cacheHelpMessage, 'yargs no longer has getInternalMethods().getUsageInstance().cacheHelpMessage: skipHelpCache does nothing').toBe('function');
    const calls = countCalls(usage!);
    await cli.parseAsync();
    expect(ran).toBe(true);
    expect(calls(), 'yargs no longer calls cacheHelpMessage before a handler: skipHelpCache can go').toBe(1);
    expect(usage!.hasCachedHelpMessage()).toBe(true);
  });

  it('the CLI’s parser has it replaced: yargs calls the replacement, the command runs, and no help is formatted', async () => {
    const io = capture();
    let code: number | undefined;
    const args = ['prices', 'gpt-4o-mini'];
    const cli = commandLine(args, io, (c) => {
      code = c;
    });
    const usage = usageOf(cli);
    expect(typeof usage?.cacheHelpMessage).toBe('function');
    const calls = countCalls(usage!);
    await cli.parseAsync(args, {}, () => {});
    expect(code).toBe(0);
    expect(io.stdout).toContain('gpt-4o-mini');
    expect(calls()).toBe(1);
    expect(usage!.hasCachedHelpMessage()).toBe(false);
  });
});
