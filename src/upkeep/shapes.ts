/**
 * The spans of a text that have a fixed shape: e-mails, URLs and file paths,
 * dates, times, phone numbers, amounts of money, codes and IDs, and plain
 * numbers, found by anchored regular expressions alone (no language model).
 * The statement reader (`statements.ts`) uses them to weigh a statement's
 * salience, to tell one fact from another (`sameFact`) and to keep a tool
 * call's arguments.
 *
 * Each character belongs to at most one span: the patterns claim characters
 * in the order of `PATTERNS`, then plain numbers. Rules:
 * - codes and IDs (`SE-10423`, `ERR_SIGNATURE_MISMATCH`, `7GAWK763`): letters
 *   mixed with digits, or capitals joined by `_`/`-`;
 * - phone numbers: one span when its digit groups are joined by one kind of
 *   separator (7–15 digits, 8+ when joined by spaces);
 * - money: `$`, `€`, `£`, `₹`, `¥`, `Rs 249`, `INR 500`, `249 rupees`;
 * - dates: `2025-03-12`, `12/03/2025`, `May 10, 2024`, `10th of May`, `May 2024`;
 * - numbers: `3e-06`, `5000ms`, `2-3`, `20%` are one span;
 * - a technology name with a dotted suffix (`Node.js`, `ASP.NET`) is claimed
 *   as a name, so that it is not read as a file name; names are never returned.
 * @module
 */

/**
 * What kind of span it is:
 * - `email`: an e-mail address;
 * - `url`: a web address (`https://…`, `www.…`) or a file path or route, the
 *   locators of tool output (`src/webhooks/routes.ts:11:21`, `/webhooks/paybridge`,
 *   `setup.py`: a path has a `/` and starts with `/`, `./`, `../`, `~/` or ends in
 *   a file extension; a bare file name ends in a common one);
 * - `id`: a code or identifier: letters mixed with digits, or capitals joined
 *   by `_`/`-` (`SE-10423`, `T-481`, `ERR_SIGNATURE_MISMATCH`, `gpt-4o`, a UUID);
 * - `phone`: a phone number, one span across its groups (`98450 12345`);
 * - `money`: an amount with its currency (`Rs 249`, `$1,250.50`);
 * - `date`: a date (`2025-03-12`, `May 10, 2024`);
 * - `time`: a clock time (`8 pm`, `10:30`);
 * - `number`: any other number, with its unit or suffix if attached (`44`, `3rd`, `5000ms`, `20%`).
 */
export type SpanKind = 'email' | 'url' | 'id' | 'phone' | 'money' | 'date' | 'time' | 'number';

/** One span: its exact text (a substring of the input) and its kind. */
export interface Span {
  readonly text: string;
  readonly kind: SpanKind;
}

/** A span found: [start, end) in the text, and its kind (`name` only for the dotted technology names, never returned). */
interface Found {
  start: number;
  end: number;
  kind: SpanKind | 'name';
}

const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
const DAY = '(?:[12]\\d|3[01]|0?[1-9])(?:st|nd|rd|th)?';

/** A text with no digit holds no date, time, phone number, amount or number. */
const DIGIT = /\d/;

/** Extensions that make a bare word a file name (`setup.py`, `README.md`). */
const FILE_EXTENSIONS = 'py|ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|ya?ml|md|rst|txt|toml|cfg|ini|lock|sh|ex|exs|heex|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|html|css|scss|sql|xml|csv|tsv|log|conf|pdf|png|jpe?g|gif|svg|zip|gz|tgz|whl|traj';

/** Whether a text can hold a span of a pattern: given the text and whether it has a digit. */
type Hint = (text: string, digit: boolean) => boolean;

const has =
  (re: RegExp): Hint =>
  (text) =>
    re.test(text);
const withDigit: Hint = (_, digit) => digit;

/**
 * The fixed-shape patterns, in the order they claim characters, each with a
 * character test that every text it can match passes (`@` for an e-mail, a
 * digit for a date…): a text that fails it is not scanned, so a sentence of
 * plain words costs a few character tests. Each pattern is anchored at a
 * token start by a look-behind, so a long run of code or data is scanned in
 * linear time.
 */
const PATTERNS: readonly (readonly [SpanKind | 'name', Hint, RegExp, ((s: string) => boolean)?])[] = [
  ['email', has(/@/), /(?<![\w.+-])[A-Za-z0-9](?:[\w.+-]*[A-Za-z0-9])?@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g],
  ['url', has(/:\/\/|www\./), /(?<![\w@/.-])(?:(?:https?|ftp|wss?|file):\/\/|www\.)[^\s<>"'`]+/g],
  // Technology names with a dotted suffix are one name (`Node.js`, `ASP.NET`), before file names take them.
  ['name', has(/\.(?:js|JS|NET|io)/), /(?<![\w.])[A-Z][A-Za-z0-9]*\.(?:js|JS|NET|io)(?!\w|\.\w)/g],
  ['url', has(/\.[a-z]/), new RegExp(`(?<![\\w.~/@:-])[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS})(?::\\d+){0,2}(?![\\w/]|\\.\\w)`, 'g')],
  [
    'url',
    has(/\//),
    /(?<![\w.~/@:-])(?:~|\.{1,2})?\/?(?:[\w.@+-]+\/)+[\w.@+-]*(?::\d+){0,2}/g,
    (s) => /^(?:~|\.{1,2})?\/[\w.@+-]/.test(s) || /\.[A-Za-z][A-Za-z0-9]{0,5}(?::\d+){0,2}$/.test(s),
  ],
  [
    'date',
    withDigit,
    new RegExp(
      [
        '(?<![\\w.:/-])\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?(?![\\w]|[-/]\\d)',
        '(?<![\\w.:/-])\\d{1,2}/\\d{1,2}/(?:\\d{4}|\\d{2})(?![\\w/]|\\.\\d)',
        '(?<![\\w.:/-])\\d{1,2}\\.\\d{1,2}\\.\\d{4}(?!\\w|\\.\\w)',
        `\\b${MONTH}\\.? ${DAY}(?:,? \\d{4})?(?![\\w:])`,
        `(?<![\\w.:/-])${DAY} (?:of )?${MONTH}\\.?(?:,? \\d{4})?\\b`,
        `\\b${MONTH} \\d{4}\\b`,
      ].join('|'),
      'g',
    ),
  ],
  [
    'time',
    withDigit,
    /(?<![\w:.])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:[ \u00a0]?(?:[ap]\.m\.|[AaPp][Mm]\b))?(?![\w:]|\.\d)|(?<![\w:.])(?:1[0-2]|0?[1-9])[ \u00a0]?(?:[ap]\.m\.|[AaPp][Mm]\b)/g,
  ],
  ['phone', withDigit, /(?<![\w.+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,6}(?:[ .-]\d{2,6}){1,4}(?![\w-]|[ .-]?\d)/g, isPhone],
  [
    'money',
    (text, digit) => digit && /[$€£₹¥]|Rs|INR|USD|EUR|GBP|JPY|CAD|AUD|CHF|dollar|euro|pound|rupee|cent/.test(text),
    /(?<![\w$€£₹¥])(?:(?:US|C|A)?\$|[€£₹¥]|\b(?:Rs\.?|INR|USD|EUR|GBP|JPY|CAD|AUD|CHF)[ \u00a0]?)[ \u00a0]?\d[\d,]*(?:\.\d+)?(?:[ \u00a0]?(?:[kKMB]n?|million|billion|thousand|lakh|crore)\b)?|(?<![\w.,])\d[\d,]*(?:\.\d+)?[ \u00a0]?(?:USD|EUR|GBP|INR|dollars?|euros?|pounds?|rupees?|cents?)\b/g,
  ],
  [
    'id',
    // Letters with digits, or capitals joined by `_`/`-`.
    (text, digit) => digit || /[A-Z0-9][_-][A-Z0-9]/.test(text),
    /(?<![\w.-])(?:(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?|[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+(?![\w-]))/g,
    (s) => !/^\d+(?:[.,]\d+)*(?:[eE][+-]?\d+)?[A-Za-z%]{0,3}$/.test(s),
  ],
];

/**
 * Numbers and ranges, with an attached suffix if any (`3e-06`, `2-3`, `5000ms`, `2.5L`, `3rd`, `20%`); claimed after the patterns. */
const NUMBER = /(?<![\w.,/-])-?\d+(?:[,_]\d{3})*(?:\.\d+)*(?:[eE][+-]?\d+)?(?:[-–]\d+(?:\.\d+)?(?![\w.-]))?(?:%|[A-Za-z]{1,3}\b)?/g;

/** A phone number: 7–15 digits, groups joined by one kind of separator; spaces only with 8+ digits in groups of 2+; dots only as 3-3-4. */
function isPhone(s: string): boolean {
  const digits = s.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  const body = s.replace(/^\+\d{1,3}[ .-]?/, '').replace(/^\(\d{1,5}\)[ .-]?/, '');
  const seps = new Set(body.replace(/\d/g, ''));
  if (seps.size > 1) return false;
  if (seps.has(' ')) return digits >= 8 && body.split(' ').every((g) => g.length >= 2);
  if (seps.has('.')) return /^\d{3}\.\d{3}\.\d{4}$/.test(body);
  return true;
}

/** Trailing characters never part of a span (closing brackets only when unbalanced). */
function trimEnd(text: string, start: number, end: number): number {
  while (end > start) {
    const c = text[end - 1]!;
    if ('.,;:!?\'"*_'.includes(c)) end--;
    else if (')]}'.includes(c)) {
      const open = c === ')' ? '(' : c === ']' ? '[' : '{';
      const s = text.slice(start, end);
      if (s.split(open).length >= s.split(c).length) break;
      end--;
    } else break;
  }
  return end;
}

/** Which characters of a text a span already holds. */
class Claims {
  /** Made at the first claim: most sentences have no span. */
  private held: Uint8Array | undefined;
  private readonly found: Found[] = [];
  constructor(private readonly length: number) {}
  /** Claims [start, end) for `kind` unless a character of it is held already. */
  claim(start: number, end: number, kind: Found['kind']): void {
    if (end <= start) return;
    const held = (this.held ??= new Uint8Array(this.length));
    for (let i = start; i < end; i++) if (held[i]) return;
    this.found.push({ start, end, kind });
    held.fill(1, start, end);
  }
  /** The spans claimed, in order of their start. */
  spans(): Found[] {
    return [...this.found].sort((x, y) => x.start - y.start);
  }
}

/** The fixed-shape spans of a text (identifiers, e-mails, URLs and paths, dates, times, phone numbers, amounts, numbers), in order of their start. */
function shapeClaims(text: string): Claims {
  const claims = new Claims(text.length);
  const digit = DIGIT.test(text);
  for (const [kind, hint, re, accept] of PATTERNS) {
    if (!hint(text, digit)) continue;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const end = trimEnd(text, m.index, m.index + m[0].length);
      if (!accept || accept(text.slice(m.index, end))) claims.claim(m.index, end, kind);
    }
  }
  if (!digit) return claims;
  NUMBER.lastIndex = 0;
  for (let m = NUMBER.exec(text); m; m = NUMBER.exec(text)) claims.claim(m.index, m.index + m[0].length, 'number');
  return claims;
}

/**
 * The spans of `text` that have a fixed shape, in order of appearance, each
 * once per occurrence, with no trailing punctuation; adjacent groups of one
 * value are one span (`98450 12345`, `8 pm`, `Rs 249`). Depends on `text` only.
 */
export function shapeSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const f of shapeClaims(text).spans()) if (f.kind !== 'name') out.push({ text: text.slice(f.start, f.end), kind: f.kind });
  return out;
}

