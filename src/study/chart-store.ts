import { ReplayCache } from '../engine/replay-cache.js';
import { packageVersion } from '../process.js';
import type { ChartStore, StoredChart } from '../report/outputs.js';

/** What a chart's SVG and PNG depend on besides ctxsim's code (which every key of the cache holds) and its spec. */
const RENDERERS = ['vega', 'vega-lite', '@resvg/resvg-js', 'dejavu-fonts-ttf'];

function isChart(v: unknown): v is StoredChart {
  const c = v as Partial<StoredChart> | null;
  return !!c && typeof c === 'object' && typeof c.svg === 'string' && (c.png === undefined || c.png instanceof Uint8Array);
}

/**
 * Rendered charts kept in the replay cache in `dir`, each by its spec and
 * the renderers' versions: an unchanged rerun renders no chart (and loads
 * neither Vega nor resvg). A damaged entry is rendered again, and a failed
 * write leaves the run as it is: both are lines in `warnings`.
 */
export function replayChartStore(dir: string): ChartStore & { readonly warnings: readonly string[] } {
  const cache = new ReplayCache(dir);
  const kind = `chart ${RENDERERS.map((p) => `${p}@${packageVersion(p)}`).join(' ')}`;
  return {
    get: (spec) => cache.getValue(cache.keyOf(kind, spec), isChart, 'a rendered chart', 'rendering it again'),
    set: (spec, chart) => cache.putValue(cache.keyOf(kind, spec), chart),
    warnings: cache.warnings,
  };
}
