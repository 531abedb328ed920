import { normalize } from '../text/normalize.js';

/** What an erased value is replaced by in stored text. */
export const FORGOTTEN = '[forgotten]';

/** True when the text holds one of the (normalized) values, by the rule probe scoring uses. */
export function holds(text: string, values: readonly string[]): boolean {
  if (!values.length) return false;
  const t = normalize(text);
  return values.some((v) => t.includes(v));
}

/** A normalized value as a pattern: any case, any run of whitespace where the value has one space. */
function pattern(value: string): RegExp {
  const parts = value.split(' ').map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('\\s+'), 'gi');
}

/**
 * The text with every (normalized) value replaced by `[forgotten]`. Should
 * case folding ever let a value slip past the pattern, the whole text is
 * replaced: an erased value must not survive.
 */
export function redactText(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of values) out = out.replace(pattern(v), FORGOTTEN);
  return holds(out, values) ? FORGOTTEN : out;
}
