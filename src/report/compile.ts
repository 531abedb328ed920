import { compile, type TopLevelSpec } from 'vega-lite';

/** A compiled chart: the Vega spec a Vega-Lite spec becomes (what Vega renders, on the server or in a browser). */
export type VegaSpec = ReturnType<typeof compile>['spec'];

/** Vega-Lite → Vega, failing on any compiler warning (a warning means a chart a reader would trip on). */
export function toVega(spec: TopLevelSpec): VegaSpec {
  const problems: string[] = [];
  const logger = {
    level: () => logger,
    error: (...m: unknown[]) => (problems.push(m.join(' ')), logger),
    warn: (...m: unknown[]) => (problems.push(m.join(' ')), logger),
    info: () => logger,
    debug: () => logger,
  };
  const out = compile(spec, { logger: logger as never }).spec;
  if (problems.length) throw new Error(`vega-lite: ${problems.join('; ')}`);
  return out;
}
