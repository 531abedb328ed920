/**
 * Dates as a conversation states them, and relative times resolved against
 * them: what a real extractor or summarizer does when it writes "Caroline
 * went to a support group on 7 May 2023" of "I went yesterday", said on
 * 8 May 2023. Text only: the date of a turn is the last date a conversation
 * stated on a line of its own (a session's header such as
 * `DATE: 1:56 pm on 8 May, 2023`), never a scenario's clock.
 * @module
 */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH_RE = '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

/** A calendar day (UTC), as days since 1970-01-01. */
export type Day = number;

const MS_DAY = 86_400_000;

/** The day of `year`-`month` (0-based)-`date`, or undefined when there is no such day. */
function dayOf(year: number, month: number, date: number): Day | undefined {
  const t = Date.UTC(year, month, date);
  const d = new Date(t);
  return d.getUTCMonth() === month && d.getUTCDate() === date ? t / MS_DAY : undefined;
}

/** `7 May 2023`. */
export function formatDay(day: Day): string {
  const d = new Date(day * MS_DAY);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

const monthIndex = (m: string) => ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].indexOf(m.slice(0, 3).toLowerCase());

/** A whole date written in any common way: `8 May, 2023`, `May 8, 2023`, `2023-05-08`, `8 May 2023`. */
const DATE_FORMS: readonly [RegExp, (m: RegExpExecArray) => Day | undefined][] = [
  [new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}\\.?,?\\s+(\\d{4})\\b`, 'i'), (m) => dayOf(Number(m[3]), monthIndex(m[2]!), Number(m[1]))],
  [new RegExp(`\\b${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'i'), (m) => dayOf(Number(m[3]), monthIndex(m[1]!), Number(m[2]))],
  [/\b(\d{4})-(\d{2})-(\d{2})\b/, (m) => dayOf(Number(m[1]), Number(m[2]) - 1, Number(m[3]))],
];

const YEAR = /\d{4}/;

/** The date a text states, if it states a whole one (the first). */
export function dateIn(text: string): Day | undefined {
  // Every whole date has its year.
  if (!YEAR.test(text)) return undefined;
  for (const [re, day] of DATE_FORMS) {
    const m = re.exec(text);
    if (m) {
      const d = day(m);
      if (d !== undefined) return d;
    }
  }
  return undefined;
}

/** Lines a conversation dates its sessions with: short, and holding a whole date (`DATE: 1:56 pm on 8 May, 2023`, `[8 May 2023]`). */
const HEADER_MAX = 60;

/** The words a date line may hold besides its date and a time of day (`DATE: 1:56 pm on 8 May, 2023`, `Session 3, 8 May 2023`). */
const HEADER_WORDS = new Set(['date', 'on', 'at', 'session', 'day', 'time', 'of', 'the', 'conversation', 'chat', 'sent']);

/** A time of day, as a date line writes it (`1:56 pm`). */
const CLOCK = /\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b/gi;

/**
 * The date a message states on a line of its own (the last such line), if
 * any: the day its turn happens on, and the next turns until another. A
 * date line is short and holds a whole date, and besides it and a time of
 * day only words such as `DATE`, `on`, `session`: "Your plan renews on
 * 2025-03-12." is a sentence, not a date line. Lines of a fenced code block
 * are not read.
 */
export function headerDate(text: string): Day | undefined {
  if (!YEAR.test(text)) return undefined;
  let found: Day | undefined;
  let code = false;
  for (const line of text.split('\n')) {
    // A fenced code block is not read (a changelog's `## [2.4.0] - 2024-05-21` dates nothing).
    if (/^\s*```/.test(line)) code = !code;
    if (code || line.length > HEADER_MAX) continue;
    const d = dateIn(line);
    if (d === undefined) continue;
    let rest = line;
    for (const [re] of DATE_FORMS) rest = rest.replace(re, ' ');
    const others = rest.replace(CLOCK, ' ').toLowerCase().match(/\p{L}+/gu) ?? [];
    if (others.every((w) => HEADER_WORDS.has(w))) found = d;
  }
  return found;
}

const DAY_RE = '(sunday|monday|tuesday|wednesday|thursday|friday|saturday)';

/**
 * The relative times of a sentence, resolved against `today`: each phrase
 * replaced by what it means, written as the references write it
 * (`yesterday` → `7 May 2023`, `last Saturday` → `the Saturday before
 * 8 May 2023`, `last week` → `the week before 8 May 2023`, `next month` →
 * `June 2023`, `last year` → `2022`, `two years ago` → `two years ago (before
 * 8 May 2023)`).
 */
export function resolveTimes(sentence: string, today: Day): string {
  if (!RELATIVE.test(sentence)) return sentence;
  const d = new Date(today * MS_DAY);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const on = formatDay(today);
  const monthName = (offset: number) => {
    const m = month + offset;
    return `${MONTHS[((m % 12) + 12) % 12]} ${year + Math.floor(m / 12)}`;
  };
  // A day stands after `on` unless a preposition is there already (`since yesterday`).
  const onDay = (day: Day) => (all: string, before: string | undefined) => `${before ?? ''}${before === undefined || !PREPOSITION.test(before) ? 'on ' : ''}${formatDay(day)}`;
  return sentence
    .replace(/(\b\w+\s+)?\byesterday\b/gi, onDay(today - 1))
    .replace(/(\b\w+\s+)?\b(?:today|tonight|this morning|this afternoon|this evening)\b/gi, onDay(today))
    .replace(/(\b\w+\s+)?\btomorrow\b/gi, onDay(today + 1))
    .replace(new RegExp(`\\b(?:last|this past)\\s+${DAY_RE}\\b`, 'gi'), (_, day: string) => `the ${cap(day)} before ${on}`)
    .replace(new RegExp(`\\b(?:next|this coming)\\s+${DAY_RE}\\b`, 'gi'), (_, day: string) => `the ${cap(day)} after ${on}`)
    .replace(/\b(?:last|past)\s+(week|weekend)\b/gi, (_, unit: string) => `the ${unit.toLowerCase()} before ${on}`)
    .replace(/\bnext\s+(week|weekend)\b/gi, (_, unit: string) => `the ${unit.toLowerCase()} after ${on}`)
    .replace(/\bthis\s+(week|weekend)\b/gi, (_, unit: string) => `the ${unit.toLowerCase()} of ${on}`)
    .replace(/\blast\s+month\b/gi, monthName(-1))
    .replace(/\bnext\s+month\b/gi, monthName(1))
    .replace(/\bthis\s+month\b/gi, monthName(0))
    .replace(/\blast\s+year\b/gi, String(year - 1))
    .replace(/\bnext\s+year\b/gi, String(year + 1))
    .replace(/\bthis\s+year\b/gi, String(year))
    .replace(/\b((?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)\s+(?:days?|weeks?|weekends?|months?|years?)\s+ago)\b/gi, (all: string) => `${all} (before ${on})`);
}

/** A word without which a sentence holds no relative time: most hold none, and are passed over at once. */
const RELATIVE = /\b(?:yesterday|today|tonight|tomorrow|this|last|next|past|ago)\b/i;

const PREPOSITION = /^(?:on|since|until|till|by|from|before|after|of|for)\s+$/i;

const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1).toLowerCase();
