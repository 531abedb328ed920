import { describe, expect, it } from 'vitest';
import { fontFiles, textWidth } from '../src/report/font.js';
import { existsSync } from 'node:fs';

// DejaVu Sans has 2048 units per em, so at a font size of 2048 px a width in pixels is the advance in font units.
describe('chart font metrics', () => {
  it('come from the bundled DejaVu Sans files', () => {
    const f = fontFiles();
    expect(existsSync(f.regular) && existsSync(f.bold)).toBe(true);
    expect(f.regular).toMatch(/dejavu-fonts-ttf[\\/]ttf[\\/]DejaVuSans\.ttf$/);
  });

  it('read the advances the font declares', () => {
    // Every digit is 1303 units wide (tabular figures); space 651; M 1767; a 1255; … 2048.
    for (const d of '0123456789') expect(textWidth(d, 2048)).toBe(1303);
    expect(textWidth(' ', 2048)).toBe(651);
    expect(textWidth('M', 2048)).toBe(1767);
    expect(textWidth('a', 2048)).toBe(1255);
    expect(textWidth('…', 2048)).toBe(2048);
    // Bold: digits 1425, M 2038.
    expect(textWidth('0', 2048, true)).toBe(1425);
    expect(textWidth('M', 2048, true)).toBe(2038);
  });

  it('add up over a string and scale with the size', () => {
    expect(textWidth('', 11)).toBe(0);
    // "$0.5": 1303 ($) + 1303 (0) + 651 (.) + 1303 (5) = 4560 units; at 11 px: 4560 / 2048 × 11.
    expect(textWidth('$0.5', 11)).toBeCloseTo((4560 / 2048) * 11, 10);
    expect(textWidth('ab', 11)).toBeCloseTo(textWidth('a', 11) + textWidth('b', 11), 10);
  });

  it('give a missing glyph the width of ?', () => {
    expect(textWidth('\u{1F600}', 2048)).toBe(textWidth('?', 2048));
  });
});
