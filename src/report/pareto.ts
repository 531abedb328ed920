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
