import { Resvg } from '@resvg/resvg-js';
import { FONT_FAMILY, fontFiles } from './font.js';

/** Pixels per SVG unit in PNGs: 2 keeps text sharp on high-density screens and in docs. */
export const PNG_SCALE = 2;

/**
 * Rasterizes a chart SVG to PNG with the bundled chart font only (system
 * fonts are never loaded, so the image is the same on every machine).
 */
export function svgToPng(svg: string, scale = PNG_SCALE): Uint8Array {
  const f = fontFiles();
  const png = new Resvg(svg, {
    font: {
      loadSystemFonts: false,
      fontFiles: [f.regular, f.bold],
      defaultFontFamily: FONT_FAMILY,
      sansSerifFamily: FONT_FAMILY,
    },
    fitTo: { mode: 'zoom', value: scale },
    background: 'white',
    logLevel: 'off',
  })
    .render()
    .asPng();
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
}

/** Width and height from a PNG's IHDR chunk; undefined when it is not a PNG. */
export function pngSize(png: Uint8Array): { width: number; height: number } | undefined {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (png.length < 24 || signature.some((b, i) => png[i] !== b)) return undefined;
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  if (String.fromCharCode(...png.subarray(12, 16)) !== 'IHDR') return undefined;
  return { width: v.getUint32(16), height: v.getUint32(20) };
}
