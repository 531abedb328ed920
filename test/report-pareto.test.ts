import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paretoOptimal, type TradeOff } from '../src/report/pareto.js';

const dominates = (q: TradeOff, p: TradeOff) => q.cost <= p.cost && q.retention >= p.retention && (q.cost < p.cost || q.retention > p.retention);

describe('Pareto frontier', () => {
  it('marks a hand-made set', () => {
    const points: TradeOff[] = [
      { cost: 1, retention: 0.5 }, // A: optimal
      { cost: 2, retention: 0.5 }, // B: A is cheaper and retains as much
      { cost: 2, retention: 0.9 }, // C: optimal
      { cost: 3, retention: 0.9 }, // D: C is cheaper and retains as much
      { cost: 1, retention: 0.5 }, // E: equal to A, neither dominates the other
      { cost: 0.5, retention: 0.1 }, // F: cheapest, optimal
      { cost: 3, retention: 1 }, // G: retains most, optimal
    ];
    expect(paretoOptimal(points)).toEqual([true, false, true, false, true, true, true]);
  });

  it('takes bigint costs (pico-dollars)', () => {
    expect(paretoOptimal([{ cost: 10n, retention: 1 }, { cost: 11n, retention: 1 }])).toEqual([true, false]);
  });

  it('no optimal point is dominated, and every dominated point is dominated by an optimal one', () => {
    const point = fc.record({ cost: fc.integer({ min: 0, max: 20 }), retention: fc.integer({ min: 0, max: 10 }).map((r) => r / 10) });
    fc.assert(
      fc.property(fc.array(point, { minLength: 1, maxLength: 12 }), (points) => {
        const optimal = paretoOptimal(points);
        expect(optimal.some(Boolean)).toBe(true);
        points.forEach((p, i) => {
          const dominated = points.some((q) => dominates(q, p));
          expect(optimal[i]).toBe(!dominated);
          if (dominated) expect(points.some((q, j) => optimal[j] && dominates(q, p))).toBe(true);
        });
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
