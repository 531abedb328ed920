import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngSize, PNG_SCALE, svgToPng } from '../src/report/png.js';
import { svgSize } from '../src/report/svg.js';
import { PACKAGE_DIR } from '../src/process.js';

const svg = readFileSync(join(PACKAGE_DIR, 'test/golden/report/cost-by-turn.svg'), 'utf8');

describe('PNG charts', () => {
  it('are PNGs at twice the SVG size', () => {
    const png = svgToPng(svg);
    // The 8-byte PNG signature, then the IHDR chunk.
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(String.fromCharCode(...png.subarray(12, 16))).toBe('IHDR');
    expect(PNG_SCALE).toBe(2);
    // The golden SVG is 866 × 420 (its width and height attributes); the PNG doubles both.
    expect(svgSize(svg)).toEqual({ width: 866, height: 420 });
    expect(pngSize(png)).toEqual({ width: 1732, height: 840 });
  });

  it('come out the same on every render (no system fonts consulted)', () => {
    expect(Buffer.from(svgToPng(svg)).equals(Buffer.from(svgToPng(svg)))).toBe(true);
  });

  it('pngSize rejects what is not a PNG', () => {
    expect(pngSize(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeUndefined();
    expect(pngSize(new Uint8Array(4))).toBeUndefined();
  });

  it('a scale of 1 gives the SVG size', () => {
    expect(pngSize(svgToPng(svg, 1))).toEqual({ width: 866, height: 420 });
  });
});
