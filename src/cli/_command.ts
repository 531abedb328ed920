import type { Argv } from 'yargs';

/** A command: yargs wiring plus a handler that returns its exit code. */
export interface Command<A> {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv;
  handler: (argv: A) => number | Promise<number>;
}
