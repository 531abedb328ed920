import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { IO } from '../src/cli/_io.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';

/** The built CLI's entry (`npm run build`). */
export const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

/** Whether dist/ holds the CLI and it is no older than each of these sources (paths under src/). */
export function builtSince(...sources: string[]): boolean {
  return existsSync(MAIN) && sources.every((s) => statSync(MAIN).mtimeMs >= statSync(join(ROOT, 'src', s)).mtimeMs);
}

type RunMain = (rawArgs: readonly string[], io: IO) => Promise<number>;

let app: Promise<RunMain> | undefined;

/**
 * Runs the built CLI's command line (dist/cli/_app.js, what
 * dist/cli/main.js runs) in this process: its exit code and what it
 * printed. Built, a run replays on worker threads (`--jobs`), which a run
 * from the sources never does; loaded once per test process, it costs no
 * Node start-up and no import of ctxsim per command. `env` is set, and
 * `cwd` entered, for the command only. For what only a process of its own
 * shows (its exit status, signals, stdin, start-up, a preload), spawn
 * `node dist/cli/main.js` instead.
 */
export async function runBuilt(args: readonly string[], options: { cwd?: string; env?: Readonly<Record<string, string>> } = {}): Promise<{ code: number; out: string; err: string }> {
  const runMain = await (app ??= (import(join(ROOT, 'dist', 'cli', '_app.js')) as Promise<{ runMain: RunMain }>).then((m) => m.runMain));
  const env = Object.entries(options.env ?? {});
  const before = env.map(([k]) => [k, process.env[k]] as const);
  const cwd = process.cwd();
  const io = capture();
  for (const [k, v] of env) process.env[k] = v;
  if (options.cwd) process.chdir(options.cwd);
  try {
    const code = await runMain(args, io);
    return { code, out: io.stdout, err: io.stderr };
  } finally {
    process.chdir(cwd);
    for (const [k, v] of before) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
