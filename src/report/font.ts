import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The one font charts are laid out and rasterized with: DejaVu Sans, from the
 * pinned `dejavu-fonts-ttf` package, so PNGs look the same on every machine
 * (no system fonts are consulted). Browsers showing the SVGs fall back to
 * Verdana, whose widths are close, then to any sans-serif.
 */
export const CHART_FONT = 'DejaVu Sans, Verdana, sans-serif';

/** The font's family name as the TTF files declare it. */
export const FONT_FAMILY = 'DejaVu Sans';

const require = createRequire(import.meta.url);

/** Absolute paths of the regular and bold TTF files. */
export function fontFiles(): { regular: string; bold: string } {
  return {
    regular: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
    bold: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
  };
}

/** Advance widths of one TTF, in em, by code point. */
export interface Metrics {
  advance(codePoint: number): number;
}

/**
 * Reads advance widths from a TrueType file: `head` (units per em), `hhea` +
 * `hmtx` (advances by glyph) and the Unicode BMP `cmap` subtable (format 4).
 * Code points the font lacks get the width of `?`, which is what a reader
 * would see replaced anyway.
 */
export function readMetrics(ttf: Uint8Array): Metrics {
  const v = new DataView(ttf.buffer, ttf.byteOffset, ttf.byteLength);
  const tables = new Map<string, number>();
  const numTables = v.getUint16(4);
  for (let i = 0; i < numTables; i++) {
    const rec = 12 + 16 * i;
    const tag = String.fromCharCode(ttf[rec]!, ttf[rec + 1]!, ttf[rec + 2]!, ttf[rec + 3]!);
    tables.set(tag, v.getUint32(rec + 8));
  }
  const at = (tag: string) => {
    const o = tables.get(tag);
    if (o === undefined) throw new Error(`font has no ${tag} table`);
    return o;
  };
  const unitsPerEm = v.getUint16(at('head') + 18);
  const numberOfHMetrics = v.getUint16(at('hhea') + 34);
  const hmtx = at('hmtx');
  const glyphAdvance = (g: number) => v.getUint16(hmtx + 4 * Math.min(g, numberOfHMetrics - 1)) / unitsPerEm;

  const cmap = at('cmap');
  let sub = -1;
  for (let i = 0; i < v.getUint16(cmap + 2); i++) {
    const rec = cmap + 4 + 8 * i;
    const platform = v.getUint16(rec);
    const encoding = v.getUint16(rec + 2);
    const offset = cmap + v.getUint32(rec + 4);
    if (((platform === 3 && encoding === 1) || platform === 0) && v.getUint16(offset) === 4) {
      sub = offset;
      break;
    }
  }
  if (sub < 0) throw new Error('font has no Unicode BMP cmap');
  const segments = v.getUint16(sub + 6) / 2;
  const ends = sub + 14;
  const starts = ends + 2 * segments + 2;
  const deltas = starts + 2 * segments;
  const rangeOffsets = deltas + 2 * segments;
  const glyph = (c: number): number => {
    for (let i = 0; i < segments; i++) {
      if (c > v.getUint16(ends + 2 * i)) continue;
      const start = v.getUint16(starts + 2 * i);
      if (c < start) return 0;
      const delta = v.getUint16(deltas + 2 * i);
      const ro = v.getUint16(rangeOffsets + 2 * i);
      if (ro === 0) return (c + delta) & 0xffff;
      const g = v.getUint16(rangeOffsets + 2 * i + ro + 2 * (c - start));
      return g === 0 ? 0 : (g + delta) & 0xffff;
    }
    return 0;
  };
  const cache = new Map<number, number>();
  const fallback = glyphAdvance(glyph(0x3f));
  return {
    advance(c) {
      let w = cache.get(c);
      if (w === undefined) {
        const g = c > 0xffff ? 0 : glyph(c);
        w = g === 0 ? fallback : glyphAdvance(g);
        cache.set(c, w);
      }
      return w;
    },
  };
}

let loaded: { regular: Metrics; bold: Metrics } | undefined;

function metrics(): { regular: Metrics; bold: Metrics } {
  if (!loaded) {
    const f = fontFiles();
    loaded = { regular: readMetrics(readFileSync(f.regular)), bold: readMetrics(readFileSync(f.bold)) };
  }
  return loaded;
}

/**
 * Width in pixels of one line of text in the chart font (no kerning). Vega
 * calls this instead of measuring on a canvas, so layout is the same on every
 * machine and matches the PNG's font.
 */
export function textWidth(text: string, fontSize: number, bold = false): number {
  const m = bold ? metrics().bold : metrics().regular;
  let em = 0;
  for (const ch of text) em += m.advance(ch.codePointAt(0)!);
  return em * fontSize;
}
