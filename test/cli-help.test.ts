import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';

/** Every command's --help describes each option and shows an example. */

const COMMANDS = ['run', 'explain', 'check', 'check-policy', 'check-upkeep', 'merge', 'prices', 'generate', 'import', 'calibrate', 'table', 'init', 'cache'];

async function help(command: string): Promise<string> {
  const io = capture();
  expect(await runMain([command, '--help'], io)).toBe(0);
  return io.stdout;
}

describe('--help', () => {
  it('the commands checked below are every command ctxsim has', async () => {
    const io = capture();
    expect(await runMain(['--help'], io)).toBe(0);
    expect([...io.stdout.matchAll(/^ {2}ctxsim ([a-z-]+)/gm)].map((m) => m[1])).toEqual(COMMANDS);
  });

  it.each(COMMANDS)('%s: every option has a description, and there is an example', async (command) => {
    const text = await help(command);
    // An option line with nothing between the flag and its [type] has no description.
    expect(text.split('\n').filter((l) => /^\s+--[a-z-]+\s+\[/.test(l))).toEqual([]);
    expect(text).toMatch(/\nExamples:\n {2}ctxsim /);
  });

  it('says what --quiet leaves out: run, the billed-token check, the replay cache line and `wrote N files` beside the progress; check, its reports: line', async () => {
    const quiet = (text: string) => /--quiet\s+([\s\S]*?)\[boolean\]/.exec(text)![1]!.replace(/\s+/g, ' ');
    const run = quiet(await help('run'));
    for (const said of ['progress', 'notes', 'billed-token check', 'replay cache', '`wrote N files`', 'warnings still']) expect(run).toContain(said);
    const check = quiet(await help('check'));
    for (const said of ['progress', '`reports:` line', 'warnings and the replay cache’s use still']) expect(check).toContain(said);
  });

  it('lists every policy with its parameters, read from the schemas', async () => {
    const text = (await help('run')).replace(/\s+/g, ' ');
    expect(text).toContain('window-turns (turns=10, naive=false)');
    expect(text).toContain('every one also takes sessionCap, forget, moderation');
  });
});
