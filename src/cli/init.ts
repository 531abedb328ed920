import { relative, resolve } from 'node:path';
import { scaffold } from '../study/init.js';
import { displayPath } from '../output/display.js';
import { shellWord, type IO } from './_io.js';

export interface InitFlags {
  dir?: string;
  force?: boolean;
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

