import * as vega from 'vega';
import type { TopLevelSpec } from 'vega-lite';
import { toVega } from './compile.js';
import { textWidth } from './font.js';

/** The part of vega's text measurement we replace (not in vega's type declarations). */
interface TextMetrics {
  width: (item: { fontSize?: number; fontWeight?: string | number }, text: unknown) => number;
}

const metrics = (vega as unknown as { textMetrics: TextMetrics }).textMetrics;

function pinnedWidth(item: { fontSize?: number; fontWeight?: string | number }, text: unknown): number {
  const size = item.fontSize != null ? Number(item.fontSize) || 0 : 11;
  const weight = item.fontWeight;
  const bold = weight === 'bold' || weight === 'bolder' || (typeof weight === 'number' && weight >= 600) || weight === '700';
  const s = text == null ? '' : String(text).trim();
  return textWidth(s, size, bold);
}

/**
 * Renders a Vega-Lite spec to SVG, server-side and byte-identically: text
 * widths come from the chart font's own metrics (never a canvas; this sets
 * vega's text measurement for the whole process), and the SVG's clip-path ids
 * restart at each render.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  // Set, never restored: a restore could race with a concurrent render.
  metrics.width = pinnedWidth;
  const parsed = vega.parse(toVega(spec));
  vega.resetSVGDefIds();
  const view = new vega.View(parsed, { renderer: 'none', logLevel: vega.Warn });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}

/** An SVG's pixel size, from its root `width` and `height` attributes. */
export function svgSize(svg: string): { width: number; height: number } {
  const m = /^<svg[^>]*\swidth="(\d+(?:\.\d+)?)"[^>]*\sheight="(\d+(?:\.\d+)?)"/.exec(svg);
  if (!m) throw new Error('not an SVG with width and height');
  return { width: Number(m[1]), height: Number(m[2]) };
}
