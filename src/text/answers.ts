/**
 * Does a memory hold an answer? The rule `check-upkeep` judges a memory by,
 * on the words of both: an answer is held when every one of its content
 * words is among the memory's words. Words are compared normalised: lower
 * case, punctuation dropped (a possessive `'s` too), number words as digits
 * (`two` → `2`, `twenty-one` → `21`), ordinals as numbers (`7th` → `7`),
 * leading zeros dropped, month names whole (`Sept.` → `september`) and ISO
 * dates written out (`2023-05-07` → `7 may 2023`): so `7 May 2023`,
 * `May 7, 2023`, `2023-05-07` and `7 may, 2023` are the same words.
 * @module
 */

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** A month's short forms, to its name. */
const MONTH_OF = new Map<string, string>([...MONTHS.map((m) => [m.slice(0, 3), m] as const), ['sept', 'september']]);

const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** Number words to their digits. */
const NUMBER_OF = new Map<string, string>([...UNITS.map((w, i) => [w, String(i)] as const), ...TENS.map((w, i) => [w, String(20 + 10 * i)] as const)]);

/** `twenty-one`, `twenty one` → 21. */
const COMPOUND = new RegExp(`\\b(${TENS.join('|')})[- ](${UNITS.slice(1, 10).join('|')})\\b`, 'g');

/** ISO dates (`2023-05-07`), written out as words: day, month, year. */
const ISO_DATE = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g;

/** Words an answer is not judged by (unless it has no other). */
const STOP = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own please same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves ok okay yes yeah hi hey hello thanks thank sure'
  ).split(' '),
);

/** A word of text, then an apostrophe and letters (`don't`): one word. */
const WORD = /[\p{L}\p{N}]+(?:'\p{L}+)?/gu;

/** The normalised words of a text, in order (see the module's comment). */
export function answerWords(text: string): string[] {
  const lower = text
    .toLowerCase()
    .replaceAll('’', "'")
    .replace(ISO_DATE, (all: string, y: string, m: string, d: string) => (Number(m) >= 1 && Number(m) <= 12 ? `${Number(d)} ${MONTHS[Number(m) - 1]} ${y}` : all))
    .replace(COMPOUND, (_all: string, tens: string, unit: string) => String(Number(NUMBER_OF.get(tens)) + Number(NUMBER_OF.get(unit))))
    .replace(/'s\b/g, '');
  const out: string[] = [];
  for (const [raw] of lower.matchAll(WORD)) {
    const w = raw.replaceAll("'", '');
    const ordinal = /^(\d+)(?:st|nd|rd|th)$/.exec(w);
    if (ordinal) out.push(String(Number(ordinal[1])));
    else if (/^\d+$/.test(w)) out.push(w.length > 15 ? w.replace(/^0+(?=\d)/, '') : String(Number(w)));
    else out.push(NUMBER_OF.get(w) ?? MONTH_OF.get(w) ?? w);
  }
  return out;
}

/** The words an answer is judged by: its normalised words but stopwords, or all of them when it has nothing else (`No`). */
export function answerKeyWords(answer: string): string[] {
  const all = answerWords(answer);
  const content = all.filter((w) => !STOP.has(w));
  return content.length ? content : all;
}

/** The words of a memory, normalised, to look answers up in. */
export function memoryWords(text: string): Set<string> {
  return new Set(answerWords(text));
}

/** Whether a memory (its `memoryWords`) holds an answer: every one of the answer's key words is there. An answer with no words is not held. */
export function holdsAnswer(memory: ReadonlySet<string>, answer: string): boolean {
  const key = answerKeyWords(answer);
  return key.length > 0 && key.every((w) => memory.has(w));
}
