import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { CHART_HASHES, CHART_VERSION } from '../src/report/chart-version.js';
import { svgToPng } from '../src/report/png.js';
import { renderSvg } from '../src/report/svg.js';
import { FIXTURES } from './fixtures/report/run.js';

/**
 * The chart cache's keys hold a chart's spec, the renderers' versions and
 * CHART_VERSION, not a hash of ctxsim's files: this test keeps that honest.
 * A fixed spec (a copy of an early golden chart, never refreshed) is rendered
 * to SVG and PNG and held to the last of CHART_HASHES; rendering that changes fails it
 * until its hash is appended (which bumps CHART_VERSION).
 */

describe('CHART_VERSION', () => {
  it('moves when the same spec renders other bytes', async () => {
    const spec = JSON.parse(readFileSync(join(FIXTURES, 'chart-version.vl.json'), 'utf8')) as Parameters<typeof renderSvg>[0];
    const svg = await renderSvg(spec);
    const hash = createHash('sha256').update(svg).update('\0').update(svgToPng(svg)).digest('hex');
    if (hash !== CHART_HASHES.at(-1)) {
      throw new Error(
        `chart rendering changed: append '${hash}' to CHART_HASHES in src/report/chart-version.ts (CHART_VERSION becomes ${CHART_VERSION + 1})`,
      );
    }
  });
});
