import { UsageError } from '../errors.js';
import type { TableOptions } from '../report/text.js';
import { SORT_HELP, sortProblem, type TableSort } from '../records/table-sort.js';
import type { IO } from './_io.js';

/** The flags of the table `run` and `merge` print. */
export const TABLE_OPTIONS = {
  sort: { type: 'string', describe: `row order of the printed table: ${SORT_HELP}`, defaultDescription: 'cost' },
  wide: { type: 'boolean', describe: 'print every column of the table, each note on one line, not only what fits the terminal (100 columns when stdout is not one)' },
} as const;

/** The narrowest width output is laid out for: a narrower terminal wraps what is printed. */
const MIN_WIDTH = 40;

/** The width printed output is laid out for: the terminal's, when stdout is one (at least 40 columns), else 100. */
export function outputWidth(io: Pick<IO, 'outColumns'>): number {
  return io.outColumns === undefined ? 100 : Math.max(MIN_WIDTH, io.outColumns);
}

/** `--sort` of `run` and `merge` (the order of the table they print), checked. */
function sortFlag(sort: string | undefined): TableSort | undefined {
  const problem = sort === undefined ? undefined : sortProblem(sort);
  if (problem !== undefined) throw new UsageError(`--sort: ${problem}`);
  return sort as TableSort | undefined;
}

/** The table's layout from the flags, checked, at the width of `io`'s stdout. */
export function tableOptions(flags: { sort?: string; wide?: boolean }, io: Pick<IO, 'outColumns'>): TableOptions {
  const sort = sortFlag(flags.sort);
  return { ...(sort !== undefined && { sort }), ...(flags.wide ? { wide: true } : { width: outputWidth(io) }) };
}
