/**
 * The salient spans of a text: what a real summarizer or fact extractor would
 * likely keep from it (names, codes, numbers, contact details, dates, …),
 * found from the text alone.
 *
 * How: a few anchored regular expressions find the spans with a fixed shape
 * (e-mails, URLs and file paths, dates, times, phone numbers, amounts of money,
 * codes and IDs), then wink-nlp (`wink-nlp` with `wink-eng-lite-web-model`:
 * tokens, part of speech, its rule-based entities) adds what needs language:
 * dates, times and durations in words, number words, and names (proper nouns,
 * people, places, products). Each character belongs to at most one span:
 * the fixed shapes claim characters first (in the order of `PATTERNS`, then
 * plain numbers), then wink's entities (which may take over a plain number
 * they contain: `40 minutes`), then names.
 *
 * Rules added where the library misses (measured on the shipped scenarios and
 * the shared dialogue and agent samples):
 * - codes and IDs (`SE-10423`, `ERR_SIGNATURE_MISMATCH`, `7GAWK763`): wink
 *   splits `ERR_…` at the underscores and tags codes as proper nouns, so a
 *   regular expression finds them first;
 * - phone numbers: wink gives `98450 12345` as two numbers; one span here
 *   when its digit groups are joined by one kind of separator (7–15 digits,
 *   8+ when joined by spaces);
 * - money: wink knows `$`, `€`, `£` but not `Rs 249`, `INR 500`, `249 rupees`;
 * - dates: `May 10, 2024` is one span (wink gives `by May 10` and `2024`);
 *   wink's leading prepositions (`by`, `about`, `at`) are cut off;
 * - names: wink tags `New` in `New York` as a noun and some mid-sentence
 *   capitalised words as verbs (`Sparks, NV`), so every capitalised word that
 *   does not start a sentence counts as a name; at the start of a sentence
 *   only a word wink tags as a proper noun does (`Blue is my favorite
 *   color.`), never one of a short list of ordinary sentence openers (`The`,
 *   `Sorry`, `Yes`, `Okay`) nor an `-ing` word of the lexicon (wink tags
 *   `Coding is fun.` as a proper noun); adjacent name words joined by one
 *   space are one span (`Kavya Sharma`, `São Paulo Sucos`); `I`, `I'm` and
 *   other pronouns are never spans (wink tags `I'm` as a proper noun), nor
 *   `None`, `True`, capitalised SQL keywords, greetings; `Node.js`-style
 *   names are one span;
 * - numbers: `3e-06`, `5000ms`, `2-3` are one span (wink splits them); wink
 *   tokens cut out of a longer token are dropped (wink reads `:3` in
 *   `"points":318` as an emoticon and gives `18`); a bare number wink calls a
 *   date (`2048` in JSON) stays a number unless it could be a year;
 * - dropped: the number words `one`, `half`, `first`… (mostly not values:
 *   "one of them"), generic time words alone (`have a good day`), lower-case
 *   month abbreviations (`sep=','`).
 *
 * Known limits: a name starting with a lower-case letter (`iPhone`, `npm`) is
 * not a name; camelCase code identifiers are not spans, PascalCase ones are
 * names; a sentence-initial ordinary word that wink tags as a proper noun
 * counts (`Tab here.`).
 *
 * Speed (Node 20, one thread of a shared 2-core machine, after warm-up,
 * `node scripts/bench-salience.mjs`): about 650 µs per KB (1.5 MB/s) on a
 * 1 MB mix of the shared dialogue samples, the scenarios, agent transcripts
 * (tool output, code) and JSON, in message-sized texts; about 550–650 µs per
 * KB on dialogue prose alone; 1 MB in one call: 0.7 s. Linear in the length:
 * the text is cut into chunks of at most 16 KB at line ends, and runs of
 * 100+ characters without whitespace are cut into words before wink reads
 * them (wink's tokenizer is quadratic in such a run). The first call builds
 * wink's model: 60–150 ms and about 17 MB of heap, once per process, plus
 * about 60 ms to load the packages' code, which is required then too, not
 * imported: a command that reads no spans (`ctxsim prices`, `--help`) never
 * loads it.
 * @module
 */
import { createRequire } from 'node:module';
import type WinkNLP from 'wink-nlp';
import type WinkModel from 'wink-eng-lite-web-model';

/**
 * What kind of span it is, in the order a summarizer keeps them first:
 * - `email`: an e-mail address;
 * - `url`: a web address (`https://…`, `www.…`) or a file path or route, the
 *   locators of tool output (`src/webhooks/routes.ts:11:21`, `/webhooks/paybridge`,
 *   `setup.py`: a path has a `/` and starts with `/`, `./`, `../`, `~/` or ends in
 *   a file extension; a bare file name ends in a common one);
 * - `id`: a code or identifier: letters mixed with digits, or capitals joined
 *   by `_`/`-` (`SE-10423`, `T-481`, `ERR_SIGNATURE_MISMATCH`, `gpt-4o`, a UUID);
 * - `phone`: a phone number, one span across its groups (`98450 12345`);
 * - `money`: an amount with its currency (`Rs 249`, `$1,250.50`);
 * - `date`: a date or day (`2025-03-12`, `May 10, 2024`, `tomorrow`, `Friday`);
 * - `time`: a clock time or a duration (`8 pm`, `10:30`, `ten minutes`);
 * - `number`: any other number, with its unit or suffix if attached (`44`, `3rd`, `5000ms`, `four`, `20%`);
 * - `name`: a named entity, proper noun or product name (`Kavya`, `New York`, `TypeScript`, `DryFit`);
 * - `detail`: in what a user says of themselves (a sentence with `I`, `me`,
 *   `my`), a noun phrase: `kiwi fruit` in "I'm allergic to kiwi fruit",
 *   `iced cortado`, `bouldering` in "My hobby is bouldering" (never the
 *   noun right after `my`, which names the attribute: `hobby`). Only for
 *   a user's messages (`spansOf(text, { user: true })`).
 */
export type SpanKind = 'email' | 'url' | 'id' | 'phone' | 'money' | 'date' | 'time' | 'number' | 'name' | 'detail';

/** One salient span: its exact text (a substring of the input) and its kind. */
export interface Span {
  readonly text: string;
  readonly kind: SpanKind;
}

/** A span found in a chunk: [start, end) in the chunk, and its kind. */
interface Found {
  start: number;
  end: number;
  kind: SpanKind;
}

// ---------------------------------------------------------------------------
// wink-nlp, loaded on first use

/** The parts of wink-nlp used here, typed narrowly (the package's own types return unions). */
interface Wink {
  read(text: string): {
    spaces: string[];
    values: string[];
    types: string[];
    pos: string[];
    entities: { type: string; span: [number, number] }[];
  };
  /** Whether a (lower-case) word is in the model's lexicon. */
  known(word: string): boolean;
}

let wink: Wink | undefined;

/** wink-nlp with the English lite model: sentence boundaries, part of speech and entities (no sentiment, negation or custom entities). */
function loadWink(): Wink {
  const require = createRequire(import.meta.url);
  const winkNLP = require('wink-nlp') as typeof WinkNLP;
  const model = require('wink-eng-lite-web-model') as typeof WinkModel;
  const nlp = winkNLP(model, ['sbd', 'pos', 'ner']);
  const its = nlp.its;
  const lexicon = nlp.readDoc('');
  return {
    known: (word) => Boolean(lexicon.isLexeme(word)),
    read(text) {
      const doc = nlp.readDoc(text);
      const tokens = doc.tokens();
      const ents = doc.entities();
      const details = ents.out(its.detail) as { type: string }[];
      const spans = ents.out(its.span) as number[][];
      return {
        spaces: tokens.out(its.precedingSpaces) as string[],
        values: tokens.out() as string[],
        types: tokens.out(its.type) as string[],
        pos: tokens.out(its.pos) as string[],
        entities: details.map((d, i) => ({ type: d.type, span: [spans[i]?.[0] ?? 0, spans[i]?.[1] ?? -1] })),
      };
    },
  };
}

// ---------------------------------------------------------------------------
// Fixed-shape spans

const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
const DAY = '(?:[12]\\d|3[01]|0?[1-9])(?:st|nd|rd|th)?';

/** Extensions that make a bare word a file name (`setup.py`, `README.md`). */
const FILE_EXTENSIONS = 'py|ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|ya?ml|md|rst|txt|toml|cfg|ini|lock|sh|ex|exs|heex|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|html|css|scss|sql|xml|csv|tsv|log|conf|pdf|png|jpe?g|gif|svg|zip|gz|tgz|whl|traj';

/**
 * The fixed-shape patterns, in the order they claim characters. Each one is
 * anchored at a token start by a look-behind, so a long run of code or data
 * is scanned in linear time.
 */
const PATTERNS: readonly (readonly [SpanKind, RegExp, ((s: string) => boolean)?])[] = [
  ['email', /(?<![\w.+-])[A-Za-z0-9](?:[\w.+-]*[A-Za-z0-9])?@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g],
  ['url', /(?<![\w@/.-])(?:(?:https?|ftp|wss?|file):\/\/|www\.)[^\s<>"'`]+/g],
  // Technology names with a dotted suffix are one name (`Node.js`, `ASP.NET`), before file names take them.
  ['name', /(?<![\w.])[A-Z][A-Za-z0-9]*\.(?:js|JS|NET|io)(?!\w|\.\w)/g],
  ['url', new RegExp(`(?<![\\w.~/@:-])[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS})(?::\\d+){0,2}(?![\\w/]|\\.\\w)`, 'g')],
  [
    'url',
    /(?<![\w.~/@:-])(?:~|\.{1,2})?\/?(?:[\w.@+-]+\/)+[\w.@+-]*(?::\d+){0,2}/g,
    (s) => /^(?:~|\.{1,2})?\/[\w.@+-]/.test(s) || /\.[A-Za-z][A-Za-z0-9]{0,5}(?::\d+){0,2}$/.test(s),
  ],
  [
    'date',
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
    /(?<![\w:.])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:[ \u00a0]?(?:[ap]\.m\.|[AaPp][Mm]\b))?(?![\w:]|\.\d)|(?<![\w:.])(?:1[0-2]|0?[1-9])[ \u00a0]?(?:[ap]\.m\.|[AaPp][Mm]\b)/g,
  ],
  ['phone', /(?<![\w.+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,6}(?:[ .-]\d{2,6}){1,4}(?![\w-]|[ .-]?\d)/g, isPhone],
  [
    'money',
    /(?<![\w$€£₹¥])(?:(?:US|C|A)?\$|[€£₹¥]|\b(?:Rs\.?|INR|USD|EUR|GBP|JPY|CAD|AUD|CHF)[ \u00a0]?)[ \u00a0]?\d[\d,]*(?:\.\d+)?(?:[ \u00a0]?(?:[kKMB]n?|million|billion|thousand|lakh|crore)\b)?|(?<![\w.,])\d[\d,]*(?:\.\d+)?[ \u00a0]?(?:USD|EUR|GBP|INR|dollars?|euros?|pounds?|rupees?|cents?)\b/g,
  ],
  [
    'id',
    /(?<![\w.-])(?:(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?|[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+(?![\w-]))/g,
    (s) => !/^\d+(?:[.,]\d+)*(?:[eE][+-]?\d+)?[A-Za-z%]{0,3}$/.test(s),
  ],
];

/**
 * Numbers and ranges, with an attached suffix if any (`3e-06`, `2-3`, `5000ms`, `2.5L`, `3rd`, `20%`); claimed before wink's
 * entities (which split `3e-06`), which may then take them over when larger (`40 minutes`).
 */
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

// ---------------------------------------------------------------------------
// One chunk

/** Which characters of a chunk a span already holds. */
class Claims {
  /** 1 + the index in `found` of the span holding each character; 0 when free. */
  private readonly held: Int32Array;
  private readonly found: (Found | undefined)[] = [];
  constructor(length: number) {
    this.held = new Int32Array(length);
  }
  /**
   * Claims [start, end) for `kind` unless a character of it is held already;
   * with `overNumbers`, numbers lying wholly inside [start, end) give way
   * (wink's `40 minutes` over the regex's `40`). True when claimed.
   */
  claim(start: number, end: number, kind: SpanKind, overNumbers = false): boolean {
    if (end <= start) return false;
    const yielding: number[] = [];
    for (let i = start; i < end; i++) {
      const h = this.held[i]!;
      if (!h) continue;
      const f = this.found[h - 1]!;
      if (!overNumbers || f.kind !== 'number' || f.start < start || f.end > end) return false;
      if (yielding[yielding.length - 1] !== h - 1) yielding.push(h - 1);
      i = f.end - 1;
    }
    for (const k of yielding) this.found[k] = undefined;
    this.found.push({ start, end, kind });
    this.held.fill(this.found.length, start, end);
    return true;
  }
  isHeld(start: number, end: number): boolean {
    for (let i = start; i < end; i++) if (this.held[i]) return true;
    return false;
  }
  /** The spans claimed, in order of their start. */
  spans(): Found[] {
    return this.found.filter((f): f is Found => f !== undefined).sort((x, y) => x.start - y.start);
  }
}

const ENTITY_KIND: Readonly<Record<string, SpanKind>> = {
  DATE: 'date',
  TIME: 'time',
  DURATION: 'time',
  MONEY: 'money',
  PERCENT: 'number',
  ORDINAL: 'number',
  CARDINAL: 'number',
  MENTION: 'name',
};

/** Number words that are rarely a value: `one of them`, `half a size`, `the first scan`. */
const NUMBER_WORDS_DROPPED = /^(?:one|half|first|second|third|last|next)$/;

/** Whether [start, end) of `text` is glued to a letter or digit on either side. */
function inWord(text: string, start: number, end: number): boolean {
  return ALNUM.test(text.slice(start - 1, start)) || ALNUM.test(text.slice(end, end + 1));
}
const ALNUM = /^[\p{L}\p{N}]$/u;

/** Words wink puts at the front of a date, time or amount that are not part of it. */
const LEADING = new Set(['by', 'on', 'at', 'in', 'from', 'until', 'till', 'before', 'after', 'since', 'for', 'of', 'to', 'within', 'during', 'about', 'around', 'approximately', 'roughly', 'nearly', 'almost', 'over', 'under', 'than']);

/** Pronouns and their contractions: never a name, whatever wink says. */
const PRONOUN = /^(?:i|i'm|i'll|i've|i'd|i’m|i’ll|i’ve|i’d|me|my|mine|we|us|our|ours|you|your|yours|he|him|his|she|her|hers|it|its|they|them|their|theirs)$/;

/** Words never a name, wherever they stand (`Good Bye.`, `for 8 people Please.`). */
const NEVER = new Set(['bye', 'goodbye', 'please', 'thanks', 'thank', 'okay', 'ok', 'hi', 'hello', 'hey', 'yes', 'no', 'sorry', 'none', 'true', 'false', 'null', 'nil', 'undefined', 'nan', 'todo', 'fixme', 'id', 'ids']);

/** SQL keywords in capitals (`SELECT … WHERE`): never a name. */
const SQL = new Set('SELECT FROM WHERE AND OR NOT NULL INSERT INTO VALUES UPDATE SET DELETE JOIN LEFT INNER OUTER ON AS IN IS BY ORDER GROUP HAVING LIMIT OFFSET CASE WHEN THEN ELSE END EXISTS DISTINCT CREATE TABLE INDEX ALTER DROP PRIMARY KEY DEFAULT'.split(' '));

/** Generic time words that wink gives alone as a date, time or duration (`have a good day`): not spans alone. */
const GENERIC_TIME = /^(?:day|week|month|year|hour|minute|second|millisecond|microsecond|nanosecond|night|moment|time|decade|century|season|weekend|while)s?$/;

/** Ordinary words that open a sentence and are never names there, even when wink says proper noun. */
const OPENERS = new Set(
  (
    'the a an yes no yeah yep nope okay ok sorry hi hello hey thanks thank please sure well so and but or nor then now also ' +
    'actually oh ah great good fine nice cool done here there this that these those what when where why how who whom whose which ' +
    'if let let’s let\'s note remember maybe just first second next last finally however still yet again anyway alright right wait ' +
    'dear welcome bye goodbye perfect awesome unfortunately absolutely certainly of'
  ).split(' '),
);

/** Parts of speech that are never (part of) a name. */
const CLOSED = new Set(['PRON', 'DET', 'ADP', 'AUX', 'CCONJ', 'SCONJ', 'PART', 'INTJ', 'PUNCT', 'SYM', 'SPACE']);

const UPPER_START = /^\p{Lu}/u;
const HAS_LETTER = /\p{L}/u;

/** Runs without whitespace this long are cut into words for wink (see `forWink`). */
const LONG_RUN = /\S{100,}/g;
const NOT_ALNUM = /[^\p{L}\p{N}]/gu;

/**
 * The chunk as wink reads it: in each run of 100+ characters without
 * whitespace (minified JSON, base64, URLs, paths), every character that is
 * not a letter or digit becomes a space (as many as it has UTF-16 units, so
 * offsets stay). wink's tokenizer takes time quadratic in the length of such
 * a run (16 KB of `http://` repeated: about 2 minutes); the fixed-shape
 * patterns still read the original text.
 */
function forWink(text: string): string {
  LONG_RUN.lastIndex = 0;
  return LONG_RUN.test(text) ? text.replace(LONG_RUN, (run) => run.replace(NOT_ALNUM, (c) => ' '.repeat(c.length))) : text;
}

/** The fixed-shape spans of a text (identifiers, e-mails, URLs and paths, dates, times, phone numbers, amounts, numbers), claimed as `chunkSpans` claims them first. */
function shapeClaims(text: string): Claims {
  const claims = new Claims(text.length);
  for (const [kind, re, accept] of PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const end = trimEnd(text, m.index, m.index + m[0].length);
      if (!accept || accept(text.slice(m.index, end))) claims.claim(m.index, end, kind);
    }
  }
  NUMBER.lastIndex = 0;
  for (let m = NUMBER.exec(text); m; m = NUMBER.exec(text)) claims.claim(m.index, m.index + m[0].length, 'number');
  return claims;
}

/** The spans of `text` that have a fixed shape (no language model: regular expressions only), in order; no names nor details. */
export function shapeSpans(text: string): Span[] {
  return shapeClaims(text)
    .spans()
    .filter((f) => f.kind !== 'name')
    .map((f) => ({ text: text.slice(f.start, f.end), kind: f.kind }));
}

/** The spans of one chunk (at most CHUNK characters), offsets relative to it; with `user`, a user's details too. */
function chunkSpans(text: string, user: boolean): Found[] {
  const claims = shapeClaims(text);

  const masked = forWink(text);
  const doc = (wink ??= loadWink()).read(masked);
  const n = doc.values.length;
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = doc.values[i]!;
    at += doc.spaces[i]!.length;
    // wink keeps every character but the trailing whitespace; re-synchronise should it ever not.
    if (!masked.startsWith(v, at)) {
      const j = masked.indexOf(v, at);
      at = j < 0 ? at : j;
    }
    start[i] = at;
    at = Math.min(text.length, at + v.length);
    end[i] = at;
  }

  for (const { type, span } of doc.entities) {
    const kind = ENTITY_KIND[type];
    if (!kind) continue;
    let a = span[0];
    const b = span[1];
    while (a < b && LEADING.has(doc.values[a]!.toLowerCase())) a++;
    if (a > b || b >= n) continue;
    // wink sometimes cuts a token out of a longer one (`18` out of `:318`): not a span.
    if (inWord(text, start[a]!, end[b]!)) continue;
    let k = kind;
    if (a === b) {
      const v = doc.values[a]!;
      const lower = v.toLowerCase();
      if (type === 'CARDINAL' || type === 'ORDINAL' ? NUMBER_WORDS_DROPPED.test(lower) : GENERIC_TIME.test(lower)) continue;
      // wink gives a lower-case `sep`, `jun` (an argument, a key) as a month.
      if (type === 'DATE' && /^[a-z]{3}$/.test(v)) continue;
      // A bare number wink reads as a year (`2048` in JSON) is a date only when it could be a year.
      if (type === 'DATE' && /^[\d.]+$/.test(v) && !/^(?:19\d\d|20[0-3]\d)$/.test(v)) k = 'number';
    }
    claims.claim(start[a]!, trimEnd(text, start[a]!, end[b]!), k, true);
  }

  addNames(text, doc, (word) => wink!.known(word), start, end, claims);
  if (user) addDetails(doc, start, end, claims);
  return claims.spans();
}

/** Words that make a sentence a user's statement about themselves. */
const FIRST_PERSON = new Set(['i', "i'm", 'i’m', "i've", 'i’ve', "i'd", 'i’d', "i'll", 'i’ll', 'me', 'my', 'mine', 'myself']);
/** Possessives: the noun right after one names an attribute (`my hobby`), not its value. */
const POSSESSIVE = new Set(['my', 'our']);
/** Verbs after which a lone `-ing` word is what the user does (`I like hiking`, `My hobby is bouldering`). */
const LIKING = new Set(['like', 'likes', 'love', 'loves', 'enjoy', 'enjoys', 'prefer', 'hate', 'into']);
/** The most words a detail has: a longer run of nouns is a list or a label, not something a user says of themselves. */
const DETAIL_WORDS = 5;
/** Nouns too general to be a detail on their own. */
const VAGUE = new Set(
  'thing things question questions problem problems issue issues help lot bit way ways time times something anything everything nothing kind sort stuff idea one ones part end point case place'.split(' '),
);

/**
 * The details a user gives about themselves: in each sentence with a
 * first-person word, the runs of nouns, proper nouns and adjectives ending
 * in a noun (a participle before a noun counts: `iced cortado`), and a lone
 * `-ing` word after a form of `be` or a verb of liking; not the run right
 * after `my`/`our`, a lone vague noun, a run of more than five words, nor
 * what another span holds.
 */
function addDetails(doc: ReturnType<Wink['read']>, start: Int32Array, end: Int32Array, claims: Claims): void {
  const n = doc.values.length;
  const lower = doc.values.map((v) => v.toLowerCase());
  const ends = (i: number) => doc.types[i] === 'tabCRLF' || /^[.!?…;]$/.test(doc.values[i]!);
  for (let from = 0; from < n; ) {
    let to = from;
    while (to < n && !ends(to)) to++;
    let firstPerson = false;
    for (let i = from; i < to && !firstPerson; i++) firstPerson = FIRST_PERSON.has(lower[i]!);
    if (firstPerson) {
      const part = (i: number) => {
        if (doc.types[i] !== 'word' || PRONOUN.test(lower[i]!) || claims.isHeld(start[i]!, end[i]!)) return false;
        const pos = doc.pos[i]!;
        if (pos === 'NOUN' || pos === 'PROPN' || pos === 'ADJ') return true;
        return pos === 'VERB' && /(?:ing|ed)$/.test(lower[i]!) && i + 1 < to && doc.pos[i + 1] === 'NOUN' && doc.spaces[i + 1] === ' ';
      };
      for (let i = from; i < to; ) {
        if (!part(i)) {
          const lone = doc.pos[i] === 'VERB' && lower[i]!.endsWith('ing') && i > from && (doc.pos[i - 1] === 'AUX' || LIKING.has(lower[i - 1]!));
          if (lone && doc.types[i] === 'word' && !claims.isHeld(start[i]!, end[i]!) && !VAGUE.has(lower[i]!)) claims.claim(start[i]!, end[i]!, 'detail');
          i++;
          continue;
        }
        let j = i + 1;
        while (j < to && part(j) && doc.spaces[j] === ' ') j++;
        let last = j - 1;
        while (last >= i && doc.pos[last] === 'ADJ') last--;
        const attribute = i > 0 && POSSESSIVE.has(lower[i - 1]!);
        const vague = last === i && VAGUE.has(lower[i]!);
        if (last >= i && last - i < DETAIL_WORDS && !attribute && !vague && doc.pos[last] !== 'VERB') claims.claim(start[i]!, end[last]!, 'detail');
        i = j;
      }
    }
    from = to + 1;
  }
}

/** The name spans: proper nouns and capitalised words by the rules in the module comment, adjacent ones joined. */
function addNames(text: string, doc: ReturnType<Wink['read']>, known: (word: string) => boolean, start: Int32Array, end: Int32Array, claims: Claims): void {
  let initial = true;
  let terminator = -1;
  let runStart = -1;
  let runEnd = -1;
  const flush = () => {
    if (runStart >= 0) claims.claim(runStart, runEnd, 'name');
    runStart = -1;
  };
  for (let i = 0; i < doc.values.length; i++) {
    const v = doc.values[i]!;
    const type = doc.types[i]!;
    if (type === 'tabCRLF') {
      flush();
      initial = true;
      continue;
    }
    if (type !== 'word') {
      if (v === '.' || v === '!' || v === '?' || v === '…' || v === ':') {
        initial = true;
        terminator = i;
      }
      if (type === 'number') initial = false;
      flush();
      continue;
    }
    // `Node.js`, `e.g.x`: a word glued to the full stop does not start a sentence.
    const atStart = initial && !(terminator >= 0 && terminator === i - 1 && doc.spaces[i] === '');
    initial = false;
    const pos = doc.pos[i]!;
    const to = trimEnd(text, start[i]!, end[i]!); // `M.` → `M`
    const word = text.slice(start[i]!, to);
    const lower = word.toLowerCase();
    const isName =
      word.length > 1 &&
      UPPER_START.test(word) &&
      HAS_LETTER.test(word) &&
      !PRONOUN.test(lower) &&
      !NEVER.has(lower) &&
      !SQL.has(word) &&
      !claims.isHeld(start[i]!, to) &&
      !inWord(text, start[i]!, to) &&
      (atStart ? pos === 'PROPN' && !OPENERS.has(lower) && !(lower.endsWith('ing') && known(lower)) : pos === 'PROPN' || !CLOSED.has(pos));
    if (!isName) {
      flush();
      continue;
    }
    if (runStart >= 0 && doc.spaces[i] === ' ' && runEnd + 1 === start[i]) runEnd = to;
    else {
      flush();
      runStart = start[i]!;
      runEnd = to;
    }
    if (to < end[i]!) flush();
  }
  flush();
}

// ---------------------------------------------------------------------------
// Chunks and the cache

/** The longest chunk given to wink at once: memory stays small and the time linear. */
const CHUNK = 16_384;

/** Where the chunk starting at `from` ends: after the last line end in its second half, else after the last whitespace, else at CHUNK. */
function chunkEnd(text: string, from: number): number {
  const limit = from + CHUNK;
  if (limit >= text.length) return text.length;
  const half = from + CHUNK / 2;
  const nl = text.lastIndexOf('\n', limit - 1);
  if (nl >= half) return nl + 1;
  for (let i = limit - 1; i >= half; i--) if (/\s/.test(text[i]!)) return i + 1;
  // No whitespace in 8 KB: cut anyway, but never between the halves of a surrogate pair.
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** The most texts kept, and the most characters of them. */
const CACHE_ENTRIES = 4096;
const CACHE_CHARS = 8_000_000;
const cache = new Map<string, readonly Span[]>();
let cachedChars = 0;

/**
 * The salient spans of one text, in order of appearance, each once per
 * occurrence. Each span's text is an exact substring of `text`, with no
 * trailing punctuation; adjacent tokens of one entity are one span
 * (`Kavya Sharma`, `98450 12345`, `8 pm`, `Rs 249`, `New York`).
 *
 * Deterministic: the result depends on `text` only, never on what was
 * processed before (the text is cut into chunks at line ends by its own
 * content; wink keeps no state between documents).
 *
 * Memoized per string in a bounded least-recently-used cache (4,096 texts
 * and 8 million characters at most; a longer text is not kept): a caller
 * passes a message's text made afresh (`messageText(m)`), and the same text
 * recurs in other message objects (each policy and run replays copies of the
 * same turns), so a WeakMap by message object (which a caller may keep too)
 * would miss where equal strings hit. The result and its spans are frozen.
 *
 * With `user`, the text is a user's message: the details they give about
 * themselves are spans too (`detail`).
 */
export function spansOf(text: string, options: { user?: boolean } = {}): readonly Span[] {
  const user = options.user === true;
  // A user's text is kept under its own key: a NUL first, which no other key has there.
  const key = user ? `\0${text}` : text;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const spans: Span[] = [];
  for (let from = 0; from < text.length; ) {
    const to = chunkEnd(text, from);
    const chunk = text.slice(from, to);
    for (const f of chunkSpans(chunk, user)) spans.push(Object.freeze({ text: chunk.slice(f.start, f.end), kind: f.kind }));
    from = to;
  }
  const result = Object.freeze(spans);
  if (key.length <= CACHE_CHARS) {
    cache.set(key, result);
    cachedChars += key.length;
    for (const [key] of cache) {
      if (cache.size <= CACHE_ENTRIES && cachedChars <= CACHE_CHARS) break;
      cache.delete(key);
      cachedChars -= key.length;
    }
  }
  return result;
}
