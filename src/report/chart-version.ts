/**
 * The version of ctxsim's chart rendering (svg.ts, png.ts, font.ts): what
 * the chart cache's keys say of ctxsim's code, beside the spec and the
 * renderers' versions (Vega, Vega-Lite, resvg, the font). Bump it whenever
 * the same spec renders other bytes; nothing else of the code is in the key,
 * so editing a reporter keeps the charts cached.
 *
 * test/report-chart-version.test.ts holds it to `CHART_HASH`: the SHA-256 of
 * a fixed spec's SVG and PNG. When they change, that test fails and names the
 * new hash: bump CHART_VERSION and set CHART_HASH to it, in the same commit.
 */
export const CHART_VERSION = 1;

/** The SHA-256 of the fixed chart's SVG and PNG when CHART_VERSION was last set (see above). */
export const CHART_HASH = '28578d2a06c457318664e2794d629861be053e0e1bd946fa529a683234f501d4';
