/** Lower case, whitespace collapsed: the same rule probe scoring uses to find a fact value in text. */
export function normalize(text: string): string {
  const lower = text.toLowerCase();
  // Only whitespace other than single spaces needs replacing (most texts have none: no copy).
  return (OTHER_WHITESPACE.test(lower) ? lower.replace(/\s+/g, ' ') : lower).trim();
}

/** Whitespace other than a single space (`[^\S ]`, spelled out: a third fewer instructions per text), or two spaces. */
const OTHER_WHITESPACE = /[\t-\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}/;

/**
 * Whether a normalized value occurs in a normalized text: the one comparison
 * probe scoring makes, and the loader makes to check that a turn states its facts.
 */
export function occursIn(normalizedText: string, normalizedValue: string): boolean {
  return normalizedText.includes(normalizedValue);
}

/** Letters and digits outside ASCII, decided once per code point. */
const WORD_POINT = /^[\p{L}\p{N}]$/u;
const otherPoints = new Map<number, boolean>();

/** Letters and digits among ASCII codes (1 = yes): most text is ASCII, decided by one load. */
const ASCII_WORD = Uint8Array.from({ length: 128 }, (_, c) => +((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90)));

/** Whether a code point outside ASCII is a letter or a digit (`[\p{L}\p{N}]`). */
function wordPoint(cp: number): boolean {
  let yes = otherPoints.get(cp);
  if (yes === undefined) otherPoints.set(cp, (yes = WORD_POINT.test(String.fromCodePoint(cp))));
  return yes;
}

/** Code units of the code point at `i`: 2 for a surrogate pair, else 1 (decided by its first unit unless that is a high surrogate). */
function width(s: string, i: number): number {
  const c = s.charCodeAt(i);
  return c >= 0xd800 && c < 0xdc00 && s.codePointAt(i)! > 0xffff ? 2 : 1;
}

/** Whether the code point at `i` is a letter or a digit: ASCII by its code unit, others by the code point. */
function isWordAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c < 128 ? ASCII_WORD[c] === 1 : wordPoint(s.codePointAt(i)!);
}

/** Where a run of letters and digits starting at `i` ends (`i` when there is none). */
function runEnd(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    // ASCII by code unit, a step of one; only other units need the code point (a surrogate pair is one).
    if (c < 128) {
      if (ASCII_WORD[c] === 0) break;
      i++;
    } else {
      if (!wordPoint(s.codePointAt(i)!)) break;
      i += width(s, i);
    }
  }
  return i;
}

/** The characters that join two runs into one word: ' - @ . */
const isJoiner = (c: number) => c === 39 || c === 45 || c === 64 || c === 46;

/** The text the word cursor reads (`wordStart`, `wordEnd`): lower-cased, with ’ read as ' (it's). */
export function wordText(text: string): string {
  const lower = text.toLowerCase();
  // Most texts have no ’, and need no second copy.
  return lower.includes('’') ? lower.replaceAll('’', "'") : lower;
}

/** Where the first word of a `wordText` at or after `i` starts (its length when there is none). */
export function wordStart(s: string, i: number): number {
  while (i < s.length && !isWordAt(s, i)) i += width(s, i);
  return i;
}

/** Where the word starting at `i` ends: its runs of letters and digits, and each joiner between two of them. */
export function wordEnd(s: string, i: number): number {
  let end = runEnd(s, i);
  while (isJoiner(s.charCodeAt(end))) {
    const next = runEnd(s, end + 1);
    if (next === end + 1) break;
    end = next;
  }
  return end;
}

/**
 * Words of a text, lower-cased. Identifiers stay whole: letters and digits
 * joined by `-`, `'`, `@` or `.` are one word (`se-10423`, `kavya@new.example`).
 * The same words as the regex `[\p{L}\p{N}]+(?:['\-@.][\p{L}\p{N}]+)*` with
 * flags gu would match, found by a scan (summaries and embeddings read every
 * message: a Unicode regex was most of their time).
 */
export function words(text: string): string[] {
  const out: string[] = [];
  eachWord(text, (s, start, end) => {
    out.push(s.slice(start, end));
    return true;
  });
  return out;
}

/**
 * Calls `visit` with each word of `words(text)` in order, as a span of its
 * `wordText` (so a caller that only hashes words need not copy them),
 * until it returns false.
 */
export function eachWord(text: string, visit: (lower: string, start: number, end: number) => boolean): void {
  const s = wordText(text);
  for (let start = wordStart(s, 0); start < s.length; ) {
    const end = wordEnd(s, start);
    if (!visit(s, start, end)) return;
    start = wordStart(s, end);
  }
}

/** Words that carry no topic: left out of embeddings and of summary topics. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own please same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will with ' +
    "would you your yours yourself yourselves ok okay yes yeah hi hey hello thanks thank sure i'm i've i'll i'd you're you've " +
    "you'll you'd it's that's there's what's let's don't doesn't didn't isn't wasn't aren't weren't can't couldn't won't " +
    "wouldn't shouldn't hasn't haven't hadn't he's she's we're we've they're they've"
  ).split(/\s+/),
);

/** The topic words of a text (its words without stopwords) in order: the first `max` that `keep` accepts. */
export function contentWords(text: string, max = Infinity, keep?: (word: string) => boolean): string[] {
  const out: string[] = [];
  if (max > 0) {
    eachWord(text, (s, start, end) => {
      const w = s.slice(start, end);
      if (!STOPWORDS.has(w) && (!keep || keep(w))) out.push(w);
      return out.length < max;
    });
  }
  return out;
}
