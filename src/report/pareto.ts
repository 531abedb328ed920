/** A policy's place in the cost/retention trade-off. */
export interface TradeOff {
  cost: number | bigint;
  retention: number;
}

/**
 * Which points are Pareto-optimal: a point is dominated when another is
 * cheaper-or-equal and retains-more-or-equal, strictly better in one of the
 * two. Equal points do not dominate each other. O(n²), n = policies.
 */
export function paretoOptimal(points: readonly TradeOff[]): boolean[] {
  return points.map((p) => !points.some((q) => q.cost <= p.cost && q.retention >= p.retention && (q.cost < p.cost || q.retention > p.retention)));
}

/**
 * Rows in the order the verdict and the report tables read them: cheapest
 * first (cost per 1,000 conversations), equal costs by retention (most
 * first), then in the run's order.
 */
export function cheapestFirst<R>(rows: readonly R[], of: (r: R) => { costPer1000: bigint; retention: number | null }): R[] {
  return rows
    .map((r, i) => ({ r, i, k: of(r) }))
    .sort((a, b) => (a.k.costPer1000 < b.k.costPer1000 ? -1 : a.k.costPer1000 > b.k.costPer1000 ? 1 : 0) || (b.k.retention ?? -1) - (a.k.retention ?? -1) || a.i - b.i)
    .map((x) => x.r);
}
