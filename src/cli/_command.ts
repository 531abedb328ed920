import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';

/**
 * A command: yargs wiring plus a handler that returns its exit code. Only
 * the wiring is loaded when the command line starts: yargs runs a builder
 * only for the command given, so a builder whose descriptions list what the
 * library holds (the policies, the profiles) imports it then (and returns a
 * promise), and the handler imports the command's implementation.
 */
export interface Command<A> {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv | Promise<Argv>;
  /** Command lines shown under "Examples:" in its `--help`, each with what it does. */
  examples: readonly (readonly [command: string, description: string])[];
  handler: (argv: A) => Promise<number>;
}

/**
 * A whole-number option, at least `min` and at most `max`. yargs' number
 * type turns `abc` into NaN, so the value is read as given and converted
 * here: a bad one is refused as typed (`--seed: expected a whole number, got
 * "abc"`). Only safe integers pass: beyond 2^53 a number is no longer the
 * one typed.
 */
export function wholeNumberOption<const O extends { describe: string; default?: number; demandOption?: boolean; defaultDescription?: string }>(
  flag: string,
  options: O & { min?: number; max?: number },
) {
  const { min, max, ...rest } = options;
  const expected = `a whole number${min !== undefined && max !== undefined ? ` from ${min} to ${max}` : min !== undefined ? ` ≥ ${min}` : ''}`;
  const one = (raw: unknown): number => {
    const text = String(raw).trim();
    const n = text === '' ? NaN : Number(text);
    if (Number.isSafeInteger(n) && (min === undefined || n >= min) && (max === undefined || n <= max)) return n;
    // A whole number past 2^53 − 1 is refused for its size, which the range says (it is ≥ min, so "≥ min" alone would not).
    const huge = Number.isInteger(n) && !Number.isSafeInteger(n) && (min === undefined || n >= min);
    const range = huge ? `a whole number from ${min ?? -Number.MAX_SAFE_INTEGER} to ${max ?? Number.MAX_SAFE_INTEGER}` : expected;
    // A number out of range is shown as it is; any other text quoted, so an empty or odd value is seen.
    throw new UsageError(`--${flag}: expected ${range}, got ${Number.isFinite(n) ? text : JSON.stringify(raw)}`);
  };
  return {
    ...rest,
    // No type: yargs' number type would make the text NaN, its string type would label the flag [string] in --help.
    // The flag takes the next word as its value (so `--seed -5` is a seed).
    requiresArg: true,
    // Given twice it is a list, which the once-only check refuses with both values.
    coerce: (raw: unknown): number => (Array.isArray(raw) ? (raw.map(one) as unknown as number) : one(raw)),
  } as const;
}
