/** Characters a terminal draws two columns wide: East Asian wide and fullwidth ones (CJK, kana, hangul) and emoji. */
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;

/** Characters a terminal draws in no column of their own: combining marks (variation selectors too) and format characters (zero-width joiners). */
const ZERO = /\p{M}|\p{Cf}/u;

/**
 * The terminal columns a text takes: what tables are aligned and lines
 * wrapped by (a text's length counts code units, so a CJK name, an emoji
 * or an accent written apart would misalign a table or overrun a line).
 */
export function terminalColumns(text: string): number {
  // Most text is ASCII: its length is its width.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  let n = 0;
  for (const c of text) n += ZERO.test(c) ? 0 : WIDE.test(c) ? 2 : 1;
  return n;
}
