/**
 * The SHA-256 of a fixed chart spec's SVG and PNG at each version of
 * ctxsim's chart rendering (svg.ts, png.ts, font.ts), oldest first.
 * test/report-chart-version.test.ts holds the last to what rendering makes
 * now; when the same spec renders other bytes, that test fails and names the
 * new hash, to append here in the same commit.
 */
export const CHART_HASHES = ['28578d2a06c457318664e2794d629861be053e0e1bd946fa529a683234f501d4'] as const;

/**
 * The version of ctxsim's chart rendering: what the chart cache's keys say of
 * ctxsim's code, beside the spec and the renderers' versions (Vega,
 * Vega-Lite, resvg, the font), one more with each hash above. Nothing else
 * of the code is in the key, so editing a reporter keeps the charts cached.
 */
export const CHART_VERSION = CHART_HASHES.length;
