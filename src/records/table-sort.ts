/** How the run table orders its rows: by cost (cheapest first, as the verdict reads), by retention (most first), by name, or in the study's order. */
export const TABLE_SORTS = ['cost', 'retention', 'name', 'study'] as const;
export type TableSort = (typeof TABLE_SORTS)[number];
