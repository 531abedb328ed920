import type { TopLevelSpec } from 'vega-lite';

/**
 * A spec as its `.vl.json` file: indented JSON in which anything short enough
 * (a data record, a dash array, a small encoding) stays on one line, so a
 * spec with thousands of points stays readable and diffs line by line.
 */
export function specJson(spec: TopLevelSpec): string {
  return `${prettyJson(spec, '')}\n`;
}

const LINE = 120;

function prettyJson(v: unknown, indent: string): string {
  const compact = JSON.stringify(v);
  if (v === null || typeof v !== 'object' || compact.length <= LINE) return compact;
  const inner = `${indent}  `;
  if (Array.isArray(v)) return `[\n${v.map((x) => inner + prettyJson(x, inner)).join(',\n')}\n${indent}]`;
  const entries = Object.entries(v).filter(([, x]) => x !== undefined);
  return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${prettyJson(x, inner)}`).join(',\n')}\n${indent}}`;
}
