import { UsageError } from '../errors.js';
import type { TableOptions } from '../report/text.js';
import { TABLE_SORTS, type TableSort } from '../report/table-sort.js';

/** The flags of the table `run` and `merge` print. */
export const TABLE_OPTIONS = {
  sort: { type: 'string', describe: `row order of the printed table: ${TABLE_SORTS.join(' | ')} (cost: cheapest first; retention: most first; study: the study’s order)`, defaultDescription: 'cost' },
  wide: { type: 'boolean', describe: 'print every column of the table, not only what fits in 100 columns' },
} as const;

/** The table's layout from the flags, checked. */
export function tableOptions(flags: { sort?: string; wide?: boolean }): TableOptions {
  if (flags.sort !== undefined && !(TABLE_SORTS as readonly string[]).includes(flags.sort)) {
    throw new UsageError(`--sort: expected one of ${TABLE_SORTS.join('|')}, got ${flags.sort}`);
  }
  return { ...(flags.sort !== undefined && { sort: flags.sort as TableSort }), ...(flags.wide && { wide: true }) };
}
