import { packageVersion } from '../process.js';
import { CHART_VERSION } from '../report/chart-version.js';
import type { ChartStore, StoredChart } from '../report/outputs.js';
import { CacheSpace } from '../store/store.js';

/** What a chart's SVG and PNG depend on besides its spec and CHART_VERSION. */
const RENDERERS = ['vega', 'vega-lite', '@resvg/resvg-js', 'dejavu-fonts-ttf'];

function isChart(v: unknown): v is StoredChart {
  const c = v as Partial<StoredChart> | null;
  return !!c && typeof c === 'object' && typeof c.svg === 'string' && (c.png === undefined || c.png instanceof Uint8Array);
}

/**
 * Rendered charts kept in the `charts` namespace of the store in the cache
 * folder `dir`, each by its spec, CHART_VERSION and the renderers' versions:
 * an unchanged rerun renders no chart (and loads neither Vega nor resvg). A
 * damaged entry is rendered again, and a failed write leaves the run as it
 * is: both are lines in `warnings`.
 */
export function cachedCharts(dir: string): ChartStore & { readonly warnings: readonly string[] } {
  const space = new CacheSpace(dir, 'charts');
  const kind = `chart@${CHART_VERSION} ${RENDERERS.map((p) => `${p}@${packageVersion(p)}`).join(' ')}`;
  return {
    get: (spec) => space.getValue(space.keyOf(kind, spec), isChart, 'a rendered chart', 'rendering it again'),
    set: (spec, chart) => void space.putValue(space.keyOf(kind, spec), chart),
    warnings: space.warnings,
  };
}
