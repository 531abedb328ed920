import type { Argv } from 'yargs';

/** A command: yargs wiring plus a handler that returns its exit code. */
export interface Command<A> {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv;
  /** Command lines shown under "Examples:" in its `--help`, each with what it does. */
  examples: readonly (readonly [command: string, description: string])[];
  handler: (argv: A) => number | Promise<number>;
}
