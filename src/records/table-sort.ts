/** How the run table orders its rows: by cost (cheapest first, as the verdict reads), by retention (most first), by name, or in the study's order. */
export const TABLE_SORTS = ['cost', 'retention', 'name', 'study'] as const;
export type TableSort = (typeof TABLE_SORTS)[number];

/** The row orders, as the help of a `--sort` flag says them. */
export const SORT_HELP = `${TABLE_SORTS.join(' | ')} (cost: cheapest first; retention: most first; study: the study’s order)`;

/** What is wrong with a row order as a flag gives it (the words after `--sort: `), or nothing. */
export function sortProblem(sort: string): string | undefined {
  return (TABLE_SORTS as readonly string[]).includes(sort) ? undefined : `expected one of ${TABLE_SORTS.join('|')}, got ${sort}`;
}
