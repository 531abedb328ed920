import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RoundOut, TurnOut } from '../src/scenario/docs.js';
import { ROOT } from './_shared.js';

/** The importers' fixtures. */
export const IMPORT_FIXTURES = join(ROOT, 'test', 'fixtures', 'import');

/** A fixture as an importer's input. */
export const importFixture = (file: string) => ({ path: join(IMPORT_FIXTURES, file), file, base: IMPORT_FIXTURES });

/** Writes an input file into `dir` (text, or JSON Lines of the values) and returns it as an importer's input. */
export function writeInput(dir: string, name: string, content: string | readonly unknown[]) {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : content.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
  return { path, file: name, base: dir };
}

/** A turn's rounds, whichever form its tools took. */
export const roundsOf = (t: TurnOut): RoundOut[] => (!t.tools?.length ? [] : 'calls' in t.tools[0]! ? (t.tools as RoundOut[]) : [{ calls: t.tools as RoundOut['calls'] }]);

/** Counts of an imported document: turns, rounds, calls, results, usages (rounds and replies). */
export function counts(turns: TurnOut[]) {
  const rounds = turns.flatMap(roundsOf);
  const calls = rounds.flatMap((r) => r.calls);
  return {
    turns: turns.length,
    rounds: rounds.length,
    calls: calls.length,
    results: calls.filter((c) => c.result !== undefined).length,
    usages: rounds.filter((r) => r.usage).length + turns.filter((t) => t.usage).length,
  };
}
