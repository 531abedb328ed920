import { relative, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { scaffold } from '../study/init.js';
import { displayPath } from '../study/study.js';
import type { Command } from './_command.js';
import { shellWord, type IO } from './_io.js';

interface InitFlags {
  dir?: string;
  force?: boolean;
}

export function initCommand(io: IO): Command<InitFlags> {
  return {
    command: 'init [dir]',
    describe: 'scaffold a project: a study, two scenarios, a policy of your own and a CI workflow',
    examples: [
      ['ctxsim init my-study', 'write a study, two scenarios, an example policy and a CI workflow into my-study/'],
      ['ctxsim init --force', 'scaffold the current folder, replacing those files where they exist'],
    ],
    builder: (y: Argv) =>
      y
        .positional('dir', { type: 'string', describe: 'the project folder, made if missing (default: the current folder)' })
        .option('force', { type: 'boolean', describe: 'replace files that exist (without it, nothing is written if any does)' }),
    handler: (argv: InitFlags) => init(argv, io),
  };
}

/** `ctxsim init`: writes the template files, then prints them and the command to run next. */
export function init(flags: InitFlags, io: IO): number {
  const dir = resolve(flags.dir ?? '.');
  const written = scaffold(dir, { force: flags.force === true });
  for (const path of written) io.out(`wrote ${displayPath(path)}\n`);
  const cd = relative(process.cwd(), dir) === '' ? '' : `cd ${shellWord(displayPath(dir))} && `;
  io.out(`next: ${cd}npx ctxsim run study.yaml\n`);
  return 0;
}

