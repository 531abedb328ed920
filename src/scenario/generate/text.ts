import type { Stream } from './stream.js';

/** Slot values: one string, a list to pick from, or a function of the stream. */
export type Slot = string | readonly string[] | ((rng: Stream) => string);
export type Slots = Readonly<Record<string, Slot>>;

/**
 * Expands a template: `[a|b|c]` picks one alternative (nesting allowed),
 * `{name}` fills a slot (slot values are templates too).
 */
export function expand(template: string, rng: Stream, slots: Slots = {}): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const next = nextSpecial(template, i);
    if (next < 0) return out + template.slice(i);
    out += template.slice(i, next);
    if (template[next] === '[') {
      const end = closing(template, next);
      out += expand(rng.pick(splitTop(template.slice(next + 1, end))), rng, slots);
      i = end + 1;
    } else {
      const end = template.indexOf('}', next);
      const name = template.slice(next + 1, end);
      const slot = slots[name];
      if (slot === undefined) throw new Error(`template slot {${name}} has no value`);
      const v = typeof slot === 'string' ? slot : typeof slot === 'function' ? slot(rng) : rng.pick(slot);
      out += nextSpecial(v, 0) >= 0 ? expand(v, rng, slots) : v;
      i = end + 1;
    }
  }
  return out;
}

function nextSpecial(t: string, from: number): number {
  const a = t.indexOf('[', from);
  const b = t.indexOf('{', from);
  return a < 0 ? b : b < 0 ? a : Math.min(a, b);
}

function closing(t: string, start: number): number {
  let depth = 0;
  for (let i = start; i < t.length; i++) {
    if (t[i] === '[') depth++;
    else if (t[i] === ']' && --depth === 0) return i;
  }
  throw new Error(`unbalanced [ in template: ${t}`);
}

function splitTop(t: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (c === '[') depth++;
    else if (c === ']') depth--;
    else if (c === '|' && depth === 0) {
      parts.push(t.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(t.slice(start));
  return parts;
}

/** Whitespace-separated words: the unit of the length distributions. */
export function wordCount(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const ws = text.charCodeAt(i) <= 32;
    if (!ws && !inWord) n++;
    inWord = !ws;
  }
  return n;
}

/** Upper-cases the first letter (templates may start with a slot). */
export function capitalize(s: string): string {
  return s ? s[0]!.toUpperCase() + s.slice(1) : s;
}

/** How long a message should be: a log-normal word count, at least 1, at most `max`. */
export function targetWords(rng: Stream, median: number, sigma: number, max = median * 12): number {
  return Math.max(1, Math.min(max, Math.round(rng.logNormal(median, sigma))));
}

/**
 * Builds a message around its required sentences: filler sentences drawn
 * from `fillers` are added before (a `leadShare` of them) or after the core until the message
 * reaches `target` words. The core is always kept whole, so facts stay literal.
 */
export function compose(rng: Stream, core: readonly string[], fillers: readonly string[], slots: Slots, target: number, leadShare = 0.25): string {
  const before: string[] = [];
  const after: string[] = [];
  let words = core.reduce((n, s) => n + wordCount(s), 0);
  const seen = new Set<string>();
  for (let guard = 0; words < target && guard < 200 && fillers.length; guard++) {
    // A sentence is not repeated within a message while the pool has others left.
    const s = capitalize(expand(fillers[rng.int(0, fillers.length - 1)]!, rng, slots));
    if (seen.has(s) && guard < 60) continue;
    seen.add(s);
    (rng.chance(leadShare) ? before : after).push(s);
    words += wordCount(s);
  }
  const sentences = [...before, ...core.map(capitalize), ...after];
  return paragraphs(rng, sentences);
}

/** Joins sentences with spaces, breaking long messages into paragraphs now and then. */
function paragraphs(rng: Stream, sentences: readonly string[]): string {
  let out = '';
  let run = 0;
  for (const s of sentences) {
    if (out) out += run > 45 && rng.chance(0.5) ? '\n\n' : ' ';
    if (out.endsWith('\n\n')) run = 0;
    out += s;
    run += wordCount(s);
  }
  return out;
}
