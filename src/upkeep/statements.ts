/**
 * What a message states, as a real extractor or summarizer writes it: one
 * short third-person sentence per sentence of the message that says
 * something — of the speaker ("I went to a support group yesterday" →
 * "Caroline went to a support group on 7 May 2023"), of the one spoken to
 * ("you" → their name), of the task ("the order NW-558120 is late") — with
 * its relative times resolved (times.ts), each with a salience read from its
 * text alone. A verb said in the present agrees with the name written for
 * `I` or `you` ("I fly" → "the user flies"), and a sentence said without
 * its subject gets the speaker ("Lost my job" → "Jon lost Jon's job").
 * Questions, greetings, thanks and praise state nothing and are not
 * statements; an interjection, an acknowledgement or a name called at the
 * start of a sentence ("Wow,", "Got it,", "Thanks, Mel!") is left out of it.
 *
 * A hand-written reader: sentences are cut at `.`, `!`, `?` and line ends,
 * words are looked up in small lists (function words, interjections, praise),
 * and the fixed shapes (identifiers, e-mails, phone numbers, amounts, dates:
 * the regular expressions of shapes.ts) are found without a language
 * model. About a microsecond per word; see docs/performance.md.
 * @module
 */
import { normalize } from '../text/normalize.js';
import type { Message } from '../types.js';
import type { ReadingStore } from './readings.js';
import { shapeSpans, type SpanKind } from './shapes.js';
import { formatDay, headerDate, resolveTimes, type Day } from './times.js';

/** One thing a message states. */
export interface Statement {
  /** The sentence as memory writes it: third person, times resolved, no interjection. */
  readonly text: string;
  /** How much it tells, from its text alone (`salienceOf`). */
  readonly salience: number;
}

/** Who speaks a message and to whom: the names a statement is written with. */
export interface Voices {
  /** The speaker: a name (`Caroline`) or a role (`the user`). */
  speaker: string;
  /** The one spoken to (`you`). */
  listener: string;
}

/** Words that carry no fact of their own. */
const FUNCTION_WORDS = new Set(
  (
    'a an the and or but nor so yet if then than that this these those there here it its it’s it\'s is are was were be been being am ' +
    'do does did done doing have has had having will would shall should can could may might must ought to of in on at by for with ' +
    'from into onto upon about above below over under after before since until till while during through across against among ' +
    'between within without around as up down out off again further once all any both each few more most other some such no not ' +
    'only own same too very just also even ever still now what which who whom whose when where why how i me my mine myself we us ' +
    'our ours ourselves you your yours yourself yourselves he him his himself she her hers herself they them their theirs ' +
    'themselves one ones thing things stuff lot lots bit kind sort way really actually pretty quite totally definitely ' +
    'absolutely literally basically probably maybe perhaps much many something anything everything nothing someone anyone ' +
    'everyone got get gets getting go goes going gone went make makes made take takes took know knows knew think thinks thought ' +
    'feel feels felt say says said tell tells told see sees saw seen look looks looking like likes want wants wanted need needs ' +
    'needed let lets let’s let\'s im i’m i\'m ive i’ve ' +
    'i\'ve i’d i\'d i’ll i\'ll you’re you\'re you’ve you\'ve you’d you\'d you’ll you\'ll that’s that\'s it’ll there’s there\'s ' +
    'what’s what\'s don’t don\'t doesn’t doesn\'t didn’t didn\'t can’t can\'t won’t won\'t isn’t isn\'t wasn’t wasn\'t gonna ' +
    'wanna gotta kinda sorta yeah yes yep no nope ok okay sure well oh ah ahh aw aww wow whoa haha hehe lol hmm um uh hey hi ' +
    'hello bye thanks thank please sorry'
  ).split(' '),
);

/** Words of praise and feeling that say nothing checkable on their own ("That's so cool!"). */
const PRAISE = new Set(
  (
    'cool awesome amazing great good nice lovely wonderful fantastic fabulous incredible impressive beautiful gorgeous stunning ' +
    'sweet cute fun funny glad happy proud excited exciting thrilled inspiring inspired inspirational powerful super superb ' +
    'brilliant perfect best better love loved loving adore wish hope hoping congrats congratulations appreciate appreciated ' +
    'grateful thankful agree agreed true totally exactly indeed sounds sound seems seem wonderful awesome keep rock rocks ' +
    'important special meaningful interesting tough hard easy guess guesses mean means loves adores wishes hopes appreciates ' +
    'agrees keeps'
  ).split(' '),
);

/** Words that open a sentence as an interjection or a call, cut off with what follows them up to a comma, `!`, `.` or `:`. */
const INTERJECTIONS = /^(?:(?:oh|ah|aw+|wow|whoa|woah|hey|hi|hello|yeah|yes|yep|yup|no|nope|ok|okay|sure|well|haha|hehe|lol|hmm|um|uh|omg|gosh|thanks|thank you|sorry|got it|gotcha|noted|understood|great|cool|awesome|nice|absolutely|totally|definitely|exactly|indeed|right|so|anyway|btw|by the way)\b[^,!.?:]{0,24}?[,!.:]\s*)+/i;

/** A sentence a speaker says of themselves, their own, or the one spoken to. */
const PERSONAL = /(?<!\w-)\b(?:I|I’m|I'm|I’ve|I've|I’d|I'd|I’ll|I'll|[Mm]y|[Mm]e|[Mm]yself|[Mm]ine|[Ww]e|[Oo]ur|[Uu]s|[Yy]ou|[Yy]our|[Yy]ou’re|[Yy]ou're|[Yy]ourself)\b(?!-\w)/;

/** A name called at the end of a sentence (`…, Mel!`): left out when it is the listener's. */
const VOCATIVE_END = /,\s*(\p{Lu}\p{Ll}+)\s*([.!…]*)$/u;

/** A name called at the start of a sentence (`Gina, you won't believe it`): left out when it is the listener's. */
const VOCATIVE_START = /^(\p{Lu}\p{Ll}+),\s+(?=\S)/u;

/** Whether `name` calls `listener` (its name or the start of it: `Mel` for Melanie). */
const calls = (name: string, listener: string) => name.length >= 2 && listener.toLowerCase().startsWith(name.toLowerCase());

/** The least salience of a statement: a sentence with less states nothing worth keeping. */
const MIN_SALIENCE = 3;

const SHAPE_WEIGHT = 8;
const NUMBER_WEIGHT = 2;
const NAME_WEIGHT = 4;
/**
 * What a person is, has, prefers or must avoid, rather than what they did
 * once: a memory keeps it longest (an allergy, a favourite, a name, a
 * standing preference).
 */
const LASTING = /\b(?:allerg\w*|intoleran\w*|vegan|vegetarian|diabet\w*|favou?rite|prefers?|always|never|(?:is|am) called|name is|birthday|lives? in)\b/i;
const LASTING_WEIGHT = 4;

/** Informative words count up to this many: a long sentence is not worth more than an identifier. */
const MAX_WORDS = 6;

/**
 * The sentences of a text: its prose only (a fenced code block is not read),
 * paragraphs cut at blank lines and list items, a paragraph's lines joined
 * (a message wrapped at 80 columns is one paragraph), then cut after `.`,
 * `!`, `?` (and `…`) followed by a space.
 */
function sentencesOf(text: string): string[] {
  const out: string[] = [];
  const prose = text.includes('```') ? text.replace(/^\s*```[\s\S]*?(?:^\s*```[^\n]*$|(?![\s\S]))/gm, '\n\n') : text;
  for (const paragraph of prose.split(/\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)/)) {
    const line = paragraph.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').replace(/\s*\n\s*/g, ' ');
    // A dot after a single capital or a short title is not an end (`Mr. Okafor`, `J. Smith`).
    for (const s of line.split(/(?<=(?<!\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|[A-Z]))[.!?…]+["')\]]?)\s+/)) {
      const t = s.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

/** The parts of a sentence that each state a value of their own (`phone is 415-555-0132 and email is t@x.org`): cut at `and`, `;` and commas when every part holds a fixed-shape span. */
function partsOf(sentence: string): string[] {
  const parts = sentence.split(/\s*;\s*|,?\s+and\s+|,\s+/);
  if (parts.length < 2 || !parts.every((p) => shapeSpans(p).some((x) => x.kind !== 'number'))) return [sentence];
  return parts.map((p) => p.replace(/[.!]*$/, '.').replace(/^(\p{Ll})/u, (c) => c.toUpperCase()));
}

/** Words that only stress or soften (`really`, `so`, `just`): a note leaves them out. */
const FILLER = /\s*\b(?:really|so|just|pretty|totally|super|actually|definitely|truly|very|quite|literally|basically|kinda|sorta|honestly|seriously|absolutely|certainly|still|even)\b(?![’'-])/gi;

/** A sentence as a note writes it: fillers out, a leading `and`, `but`, `so` out. */
function terse(sentence: string): string {
  const t = sentence.replace(/^(?:and|but|so|also|plus|anyway|well|oh)\b,?\s*/i, '').replace(FILLER, '').replace(/\s+([,.;!])(?=\s|$)/g, '$1').trim();
  return t.replace(/^(\p{Ll})/u, (c) => c.toUpperCase()) || sentence;
}

/** The first- and second-person words `thirdPerson` rewrites (longest first where one starts another). */
const PERSON =
  /(?<!\w-)\b(?:I(?:’|')(?:m|ve|d|ll)|I am|I (?:have|do|don't|don’t|haven't|haven’t|was|wasn't|wasn’t)|I|[Mm]e|[Mm]yself|[Mm]y|[Yy]ou(?:’|')(?:re|ve|d|ll)|[Yy]ou are|[Yy]ourself|[Yy]our|[Yy]ou|[Ww]e(?:’|')(?:re|ve)|[Ww]e|[Oo]urselves|[Oo]ur|[Uu]s)\b(?!-\w)/g;

/** What each word of `PERSON` becomes (apostrophes straight, lower case but `I`): `S` the speaker, `L` the listener, `'s` their possessive. */
const PERSON_AS: Readonly<Record<string, string>> = {
  "I'm": 'S is', 'I am': 'S is', "I've": 'S has', "I'd": 'S would', "I'll": 'S will',
  'I have': 'S has', 'I do': 'S does', "I don't": "S doesn't", "I haven't": "S hasn't", 'I was': 'S was', "I wasn't": "S wasn't",
  I: 'S', me: 'S', myself: 'themselves', my: "S's",
  "you're": 'L is', 'you are': 'L is', "you've": 'L has', "you'd": 'L would', "you'll": 'L will',
  yourself: 'themselves', your: "L's", you: 'L',
  "we're": 'they are', "we've": 'they have', we: 'they', ourselves: 'themselves', our: 'their', us: 'them',
};

/**
 * Common verbs a speaker says in the present (`I fly`, `you want`), which a
 * note writes in the third person (`the user flies`, `Gina wants`); `have`,
 * `do` and `be` are `PERSON`'s. Verbs whose past is their base form (`read`,
 * `put`, `set`, `cut`, `let`, `hit`, `quit`, `bet`) are left as said.
 */
export const VERBS: ReadonlySet<string> = new Set(
  (
    'accept add admire adore agree aim allow appreciate apply argue arrange ask attend avoid bake believe belong blame borrow ' +
    'bring build buy call care carry catch celebrate change check choose clean climb coach collect come complain consider ' +
    'continue cook cope count crave create cry dance deal decide deserve design dream dress drink drive earn eat encourage ' +
    'enjoy expect explain feel fight figure find finish fix fly focus follow forget forgive get give go grow guess hang hate ' +
    'hear help hike hold hope host hug imagine intend invite join jump keep know laugh lead learn leave lend like listen live ' +
    'look lose love make manage mean meet mentor mind miss move need notice offer open order organize own paint pay perform ' +
    'pick plan plant play practice practise pray prefer prepare pretend promise protect prove realize realise recall receive ' +
    'recommend relax rely remember rent repair rest return ride run save say search see sell send serve share shop show sing ' +
    'sit skate ski sleep smile speak spend stand start stay stick stop struggle study suggest support suppose swim take talk ' +
    'teach tell tend thank think throw train travel treat try turn understand use visit volunteer wait wake walk want wash ' +
    'watch wear win wish wonder work worry write'
  ).split(' '),
);

/** A verb in the third person singular: `flies`, `goes`, `watches`, `plays`, `wants`. */
export const thirdSingular = (verb: string) =>
  /[^aeiou]y$/.test(verb) ? `${verb.slice(0, -1)}ies` : /(?:s|sh|ch|x|z|o)$/.test(verb) ? `${verb}es` : `${verb}s`;

/** `I` or `you`, the words that may stand between a subject and its verb (`I also love`), and the word after them. */
const SUBJECT_VERB = /(?<!\w-)\b(I|[Yy]ou)((?:\s+(?:also|always|never|often|usually|sometimes|finally|recently|already|only|mostly|rarely|generally|normally|now|then|probably|kinda|sorta))*)\s+([a-z]+)\b/g;

/** Where `you` starts a clause, so it is the subject of the verb after it (not `let you know`). */
const CLAUSE_START = /(?:^|[,;:–—]\s*|\b(?:and|but|so|because|cause|cuz|if|when|whenever|that|as|since|unless|until|till|while|though|although|where|once|how|what)\s+)$/i;

/** `and` joining a subject to another (`Mel and I`), not a clause to a clause (`…, and I pay`). */
const COSUBJECT = /(?<![,;]\s*)\b(?:and|or|nor)\s+$/i;

/** The verbs `I` and `you` say in the present, in the third person (`I fly` → `I flies`: `PERSON` then writes the subject); not when they share it (`Mel and I love`). */
function agreeing(sentence: string): string {
  return sentence.replace(SUBJECT_VERB, (all, subject: string, between: string, verb: string, at: number, whole: string) => {
    if (!VERBS.has(verb)) return all;
    const before = whole.slice(0, at);
    if (COSUBJECT.test(before) || (subject !== 'I' && !CLAUSE_START.test(before))) return all;
    return `${subject}${between} ${thirdSingular(verb)}`;
  });
}

/** Verbs in the past a speaker begins a sentence with, leaving themselves out (`Took a short trip to clear my mind`). */
const PAST =
  'went|took|got|made|saw|lost|found|bought|met|ran|came|began|gave|felt|left|kept|spent|sent|wrote|told|thought|brought|' +
  'caught|won|sold|built|paid|heard|had|did|ate|drove|flew|grew|knew|rode|sang|sat|slept|spoke|stood|swam|taught|threw|' +
  'understood|woke|wore';

/** What a speaker is or is doing, said without `I'm` (`Excited about my new job`, `Gonna paint`, `Working on my novel`). */
const STATES =
  'gonna|going to|planning to|trying to|hoping to|thinking (?:of|about)|looking forward|working on|heading (?:to|out|home|back)|getting ready|' +
  'excited|thrilled|stoked|pumped|psyched|tired|scared|worried|interested|amazed|blessed|bummed|hooked|stressed|exhausted|overwhelmed|' +
  'inspired|motivated|determined|surprised|relieved|impressed|honou?red|delighted|pleased|disappointed|frustrated|glad|proud|grateful|' +
  'thankful|ready';

/** A sentence a speaker begins with their state, what they have been, or what they did (a verb in the past, or one in `-ed` before its object). */
const UNSAID_SUBJECT = new RegExp(
  `^(?:(?<is>${STATES})|(?<has>been)|${PAST}|\\p{L}{2,}(?<!e)ed(?=\\s+(?:a|an|the|my|our|some|this|that|it|them|up|out|back|off)\\b)|can['’]t wait)\\b`,
  'iu',
);

/** A sentence with its speaker as the subject it was said without: `Lost my job` → `I lost my job`, `Excited for you` → `I'm excited for you`. */
function withSubject(sentence: string): string {
  const m = UNSAID_SUBJECT.exec(sentence);
  if (!m) return sentence;
  const head = m.groups?.is ? "I'm" : m.groups?.has ? "I've" : 'I';
  return `${head} ${sentence[0]!.toLowerCase()}${sentence.slice(1)}`;
}

/** Third person: the speaker's `I`, `my`, `me` and the listener's `you`, `your` by their names, their verbs agreeing; `we`, `our` by `they`, `their`; `myself`, `yourself` by `themselves`. */
function thirdPerson(sentence: string, { speaker, listener }: Voices): string {
  const written = agreeing(sentence).replace(PERSON, (word) => {
    const straight = word.replace('’', "'");
    const as = PERSON_AS[straight.startsWith('I') ? straight : straight.toLowerCase()]!;
    const curly = straight !== word;
    const who = as[0] === 'S' ? speaker : as[0] === 'L' ? listener : '';
    if (!who) return as;
    if (as.endsWith("'s")) return possessive(who);
    const rest = as.slice(1);
    return who + (curly ? rest.replace("'", '’') : rest);
  });
  return upper(written);
}

/** `the user` → `The user`. */
const upper = (s: string) => s.replace(/^(\p{Ll})/u, (c) => c.toUpperCase());

const possessive = (name: string) => (name.startsWith('the ') ? `${name}’s` : `${name}'s`);

/** Words of a sentence, lower case. */
const wordsOf = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];

/**
 * What `text` states, in order (see the module's description). `today`:
 * the day it was said, when the conversation has stated one. With `store`,
 * a text read in an earlier run is not read again.
 */
export function statementsOf(text: string, voices: Voices, today?: Day, store?: ReadingStore): readonly Statement[] {
  return notesOf(text, readingOf(voices, today), voices, today, store);
}

/** How a text is read for its statements (a store's `as`): by whom, to whom, on what day. */
const readingOf = (voices: Voices, today: Day | undefined) => `statements\0${voices.speaker}\0${voices.listener}\0${today ?? ''}`;

/** The statements of `statementsOf`, as their notes. */
function notesOf(text: string, as: string, voices: Voices, today: Day | undefined, store: ReadingStore | undefined): readonly Note[] {
  if (store) {
    withStore(store);
    // A store keeps each statement with its salience, and its note on its own: a rerun weighs nothing either.
    return Object.freeze(unpackStatements(store.get(as, text, () => packStatements(readStatements(text, voices, today), store)), store));
  }
  return Object.freeze(readStatements(text, voices, today).map((t) => noteOf(t)));
}

/** The notes of what message `m` states (`statementsOf`), read once per message in a run (again if read another way: other voices, another day). */
function messageNotes(m: Message, voices: Voices, today: Day | undefined, store: ReadingStore | undefined): readonly Note[] {
  const as = readingOf(voices, today);
  const last = read.get(m);
  if (last?.as === as && last.store === store) return last.notes;
  const notes = notesOf(m.content, as, voices, today, store);
  read.set(m, { as, store, notes });
  return notes;
}

/** Messages already read, with how (`readingOf`) and with what store: the summary policies and the fact sheet read the same messages, under every model of a run. */
const read = new WeakMap<Message, { as: string; store: ReadingStore | undefined; notes: readonly Note[] }>();

/** The statements of a text, as written (see `statementsOf`). */
function readStatements(text: string, voices: Voices, today: Day | undefined): string[] {
  const out: string[] = [];
  // A line that dates the session (`DATE: 1:56 pm on 8 May, 2023`) is no sentence, nor part of the next line's.
  const prose = text.includes('\n') ? text.split('\n').map((line) => (headerDate(line) === undefined ? line : '')).join('\n') : text;
  for (const raw of sentencesOf(prose)) {
    if (/\?["')\]]?$/.test(raw) || headerDate(raw) !== undefined) continue;
    const cut = raw.replace(INTERJECTIONS, '');
    const called = (
      cut.includes(',')
        ? cut.replace(VOCATIVE_END, (all, name: string, end: string) => (calls(name, voices.listener) ? end : all)).replace(VOCATIVE_START, (all, name: string) => (calls(name, voices.listener) ? '' : all))
        : cut
    ).trim();
    // "This is Olivia Dubois" introduces the speaker.
    const introduced = called.replace(/^(?:this is|it’s|it's|it is)\s+(?=\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)*[.!,]?$)/iu, 'I am ');
    // The fixed shapes are read once a sentence: only one with two values can have parts.
    const values = shapeSpans(introduced).filter((x) => x.kind !== 'number').length;
    const parts = values > 1 ? partsOf(introduced) : [introduced];
    for (const sentence of parts) {
      if (!sentence || !/\p{L}/u.test(sentence)) continue;
      // Only what a speaker says of themselves or of the one spoken to, or a sentence with an identifier, a date, an amount…
      const personal = PERSONAL.test(sentence);
      if (!personal && !(parts.length > 1 || values > 0)) continue;
      let written = personal ? thirdPerson(withSubject(terse(sentence)), voices) : terse(sentence);
      if (today !== undefined) written = upper(resolveTimes(written, today));
      written = /[.!…]$/.test(written) ? written.replace(/!+$/, '.') : `${written}.`;
      if (noteOf(written).salience >= MIN_SALIENCE) out.push(written);
    }
  }
  return out;
}

/**
 * The salience of a statement, from its text alone: each informative word
 * (not a function word, an interjection nor praise) counts one, up to six,
 * each identifier, e-mail, URL or path, phone number, amount, date or time
 * eight (a bare number two), each capitalised name four (the first word of
 * the sentence only when it is not an ordinary capitalised word), and a
 * lasting fact (`LASTING`) four more.
 */
export function salienceOf(sentence: string): number {
  return noteOf(sentence).salience;
}

/**
 * What upkeep weighs and compares of a statement, read once per text: its
 * salience and its gist. A run keeps one note per text (`noteOf`), and
 * statements are their notes: the text of a statement read in many messages
 * is one string, and what is made of it (its key) is made once.
 */
interface Note extends Statement {
  /** The text normalized (`ReadStatement.key`), made when first asked for. */
  key?: string;
  /** What `sameFact` compares (`gistOf`): a statement a reading gave with its salience is read further only when compared. */
  gist?: Gist;
  /** The store that keeps it: its gist is read from there when first asked for. */
  store?: ReadingStore;
}

/** A note whose gist is read. */
type Compared = Note & { gist: Gist };

/** What `sameFact` compares of a statement. */
interface Gist {
  /** Its informative words that are not part of a fixed-shape span. */
  words: Set<string>;
  /** The kinds of its fixed-shape spans, sorted. */
  kinds: string;
  /** Its bare numbers and single letters, sorted: with a span of a fixed shape, they tell which one it is (`code 1`, `code 2`, `fact B`). */
  labels: string;
  /** The words it is filed under in a memory (`Restatements`), made when first filed. */
  prefix?: readonly string[];
}

/** Statements already weighed, by text (the sheet weighs what the reader wrote, and compares each new statement with every entry); cleared when this many. */
const notes = new Map<string, Note>();
const NOTES = 20_000;

/** A statement's note: remembered, kept in `store` from an earlier run, or read now. */
function noteOf(text: string, store?: ReadingStore): Note {
  if (store) withStore(store);
  return notes.get(text) ?? remember(store ? unpackNote(text, keptNote(text, store)) : readNote(text));
}

/** The store the notes in memory came with. */
let notesStore: WeakRef<ReadingStore> | undefined;

/** Forgets the notes in memory when `store` is not theirs: a note keeps its store (to read its gist from), and no past run's store (its readings) is kept alive by one. */
function withStore(store: ReadingStore): void {
  if (notesStore?.deref() === store) return;
  notes.clear();
  notesStore = new WeakRef(store);
}

/** What `sameFact` compares of a statement: read from where its note is kept when first asked for. */
function gistOf(note: Note): Gist {
  return (note.gist ??= (note.store ? unpackNote(note.text, keptNote(note.text, note.store)) : readNote(note.text)).gist);
}

/** The note of `text` as `store` keeps it; `read` makes it when the store has none, and the store keeps it. */
const keptNote = (text: string, store: ReadingStore, read: () => Note = () => readNote(text)) => store.get('note', text, () => packNote(read()));

function remember(note: Note): Note {
  if (notes.size >= NOTES) notes.clear();
  notes.set(note.text, note);
  return note;
}

/** A note as a store keeps it: salience, words, kinds, labels. */
type PackedNote = [number, string[], string, string];

const packNote = (note: Note): PackedNote => {
  const { words, kinds, labels } = gistOf(note);
  return [note.salience, [...words], kinds, labels];
};
const unpackNote = (text: string, [salience, words, kinds, labels]: PackedNote): Compared => ({ text, salience, gist: { words: new Set(words), kinds, labels } });

/**
 * Statements as a store keeps them: each text, then its salience; each one's
 * note is kept on its own (a statement many messages make is kept once).
 */
function packStatements(texts: readonly string[], store: ReadingStore): (string | number)[] {
  const out: (string | number)[] = [];
  for (const t of texts) {
    const note = noteOf(t);
    if (note.store !== store) {
      keptNote(t, store, () => note);
      note.store = store;
    }
    out.push(t, note.salience);
  }
  return out;
}

/** The notes of the statements of `packStatements`: the run's own where it has one, else one whose gist `store` keeps. */
function unpackStatements(kept: readonly (string | number)[], store: ReadingStore): Note[] {
  const out: Note[] = [];
  for (let i = 0; i < kept.length; i += 2) {
    const text = kept[i] as string;
    out.push(notes.get(text) ?? remember({ text, salience: kept[i + 1] as number, store }));
  }
  return out;
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu;
const CAPITAL = /^\p{Lu}/u;
const ORDINARY_CAPITAL = /^\p{Lu}\p{Ll}+$/u;

/** One reading of a statement's fixed shapes and words gives both its salience and its gist. */
function readNote(text: string): Compared {
  let score = 0;
  const spans = shapeSpans(text);
  const inSpan = new Set<string>();
  const inShape = new Set<string>();
  const kinds = new Set<SpanKind>();
  const labels = new Set<string>();
  for (const x of spans) {
    score += x.kind === 'number' ? NUMBER_WEIGHT : SHAPE_WEIGHT;
    const words = wordsOf(x.text);
    for (const w of words) inSpan.add(w);
    if (x.kind === 'number') labels.add(x.text);
    else {
      kinds.add(x.kind);
      for (const w of words) inShape.add(w);
    }
  }
  let informative = 0;
  const words = new Set<string>();
  const tokens = text.match(WORD) ?? [];
  tokens.forEach((token, i) => {
    const w = token.toLowerCase();
    const plain = FUNCTION_WORDS.has(w) || PRAISE.has(w);
    if (!plain && !inShape.has(w)) {
      if (!/^\d/.test(w)) words.add(w);
      if (w.length === 1) labels.add(w);
    } else if (w.length === 1 && !FUNCTION_WORDS.has(w) && !inShape.has(w)) labels.add(w);
    if (plain || inSpan.has(w)) return;
    // A capitalised word inside the sentence is a name; the first word is one only when it is not a common word.
    if (CAPITAL.test(token) && (i > 0 || !ORDINARY_CAPITAL.test(token)) && token !== 'I') score += NAME_WEIGHT;
    else informative++;
  });
  const salience = score + Math.min(informative, MAX_WORDS) + (LASTING.test(text) ? LASTING_WEIGHT : 0);
  return { text, salience, gist: { words, kinds: [...kinds].sort().join(' '), labels: [...labels].sort().join(' ') } };
}

/**
 * Whether statement `later` restates the fact of `earlier`, so that it
 * replaces it, as a real extractor updates a fact rather than adding its new
 * value beside the old one: both hold spans of the same kinds (an e-mail, an
 * identifier…), the same bare numbers and single letters (which tell `code 1`
 * from `code 2`, `fact A` from `fact B`),
 * and half of their other informative words are shared ("The
 * user's email is a@x.org" → "The user's new email is b@y.org"), or, with no
 * such span, two thirds are ("For damaged items a photo helps them file it
 * with the carrier" → "… with the courier").
 */
export function sameFact(earlier: string, later: string): boolean {
  return restates(gistOf(noteOf(earlier)), gistOf(noteOf(later)));
}

function restates(a: Gist, b: Gist): boolean {
  if (a.kinds !== b.kinds || !a.words.size || !b.words.size) return false;
  // "The user's code 1 is K1-100" and "… code 2 is K2-107" are two facts, as are "fact A: /x" and "fact B: /y".
  if (a.kinds && a.labels !== b.labels) return false;
  let shared = 0;
  for (const w of a.words) if (b.words.has(w)) shared++;
  const jaccard = shared / (a.words.size + b.words.size - shared);
  return jaccard >= (a.kinds ? 0.5 : 2 / 3);
}

/**
 * The statements a memory holds (a summary's, a fact sheet's), by key, each
 * filed under a few of its informative words: `restatedBy` finds the
 * entries a new statement restates (`sameFact`) among those filed under the
 * same words, rather than comparing it with every entry. Two statements of
 * one fact share at least a share `t` of their words (the Jaccard bound of
 * `sameFact`), so each is filed under its first |words| − ⌈t·|words|⌉ + 1
 * words in one order (longest first, the roles every statement names —
 * `user`, `assistant` — last): any two that can restate each other share
 * one of those (prefix filtering), and the words nearly every statement
 * has are seldom among them.
 */
export class Restatements {
  private readonly entries = new Map<string, Filed>();
  /** The entries filed under each word: a few each, so a list (an entry is filed under a word once). */
  private readonly byWord = new Map<string, Filed[]>();
  private added = 0;
  /** Lookups so far: an entry met again in the same lookup (under another of its words) is passed over. */
  private lookups = 0;

  /** Files `key`'s statement (again, keeping its place, when it is filed already). */
  set(key: string, text: string): void {
    const was = this.entries.get(key);
    if (was) this.unfile(was);
    const gist = gistOf(noteOf(text));
    const e: Filed = { key, gist, at: was?.at ?? this.added++, filedUnder: prefixOf(gist), lookup: 0 };
    this.entries.set(key, e);
    for (const w of e.filedUnder) {
      const filed = this.byWord.get(w);
      if (filed) filed.push(e);
      else this.byWord.set(w, [e]);
    }
  }

  delete(key: string): void {
    const was = this.entries.get(key);
    if (!was) return;
    this.unfile(was);
    this.entries.delete(key);
  }

  /** The keys of the entries whose fact `text` states again, in the order they were filed. */
  restatedBy(text: string): readonly string[] {
    const gist = gistOf(noteOf(text));
    const lookup = ++this.lookups;
    // Most statements restate nothing and share no filing word: nothing is allocated for them.
    let out: Filed[] | undefined;
    for (const w of prefixOf(gist)) {
      const filed = this.byWord.get(w);
      if (!filed) continue;
      for (const e of filed) {
        if (e.lookup === lookup) continue;
        e.lookup = lookup;
        if (restates(e.gist, gist)) (out ??= []).push(e);
      }
    }
    if (!out) return NONE;
    return out.length > 1 ? out.sort((x, y) => x.at - y.at).map((x) => x.key) : [out[0]!.key];
  }

  private unfile(e: Filed): void {
    for (const w of e.filedUnder) {
      const filed = this.byWord.get(w)!;
      if (filed.length === 1) this.byWord.delete(w);
      else {
        // The last takes its place: the order within a word does not matter (`restatedBy` sorts by filing).
        filed[filed.indexOf(e)] = filed[filed.length - 1]!;
        filed.pop();
      }
    }
  }
}

/** A statement filed in `Restatements`. */
interface Filed {
  readonly key: string;
  readonly gist: Gist;
  /** Its place in the filing order. */
  readonly at: number;
  readonly filedUnder: readonly string[];
  /** The last lookup that met it. */
  lookup: number;
}

const NONE: readonly string[] = Object.freeze([]);

/** The words a statement is filed under (see `Restatements`), each with its spans' kinds: only statements of the same kinds can restate each other. */
function prefixOf(gist: Gist): readonly string[] {
  return (gist.prefix ??= wordsToFileUnder(gist));
}

/** Words nearly every statement has (`thirdPerson` writes the speaker and the listener by their roles): filed under last. */
const EVERYWHERE = new Set(['user', 'assistant', 'user’s', "user's", 'assistant’s', "assistant's"]);

function wordsToFileUnder(gist: Gist): string[] {
  const words = [...gist.words].sort((a, b) => +EVERYWHERE.has(a) - +EVERYWHERE.has(b) || b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
  const share = gist.kinds ? 0.5 : 2 / 3;
  // The least number of words two statements of one fact share, from below (a float may round the product up).
  const least = Math.max(1, Math.ceil(share * words.length - 1e-9));
  return words.slice(0, words.length - least + 1).map((w) => `${gist.kinds}\u0001${w}`);
}

/** A statement as upkeep reads it from a conversation's messages: its key (normalized text), text, salience and turn. */
export interface ReadStatement extends Statement {
  /** The text normalized (lower case, whitespace collapsed): one entry per key in a summary or a sheet. */
  readonly key: string;
  readonly turn: number | undefined;
}

/** Tool output lines worth a statement: one holding an error or a fixed-shape span. */
const ERROR_LINE = /(?:error|exception)\b|\b(?:fail(?:ed|ure|s)?|traceback|not found|denied|refused|timeout|timed out|warning|fixme|todo)\b/i;

/** A line that reports success (`PASSED`, `ok`): nothing to keep, whatever it names. */
const PASSING = /\b(?:passed|ok|succeeded|success)\b/i;

/** What a line needs to hold a fixed-shape span worth reading for: a code (`DEV-39564`, `E7795`), a long number, a path. Most lines of code or output hold none, and are passed over at once. */
const MAYBE_SHAPE = /[A-Za-z][\w-]*\d|\d{3,}|\w\/[\w.-]|\w\.[a-z]{2,4}\b|@/;

/**
 * The lines of a tool's result a memory keeps: the `RESULT_LINES` most
 * notable, in their order. A line is notable for an error word (four) and
 * each fixed-shape span (a code, an e-mail, an amount, a date: three; a path
 * or URL: one); a line that reports success is not.
 */
function notableLines(text: string): string[] {
  const scored: { line: string; at: number; score: number }[] = [];
  text.split('\n').forEach((raw, at) => {
    const line = raw.trim();
    if (!line || PASSING.test(line)) return;
    let score = ERROR_LINE.test(line) ? 4 : 0;
    if (MAYBE_SHAPE.test(line)) for (const x of shapeSpans(line)) score += x.kind === 'number' ? 0 : x.kind === 'url' ? 1 : 3;
    if (score > 0) scored.push({ line, at, score });
  });
  const kept = scored.sort((a, b) => b.score - a.score || a.at - b.at).slice(0, RESULT_LINES);
  return kept.sort((a, b) => a.at - b.at).map((k) => k.line);
}

/** The most statements a tool result gives, and the most characters of each line kept. */
const RESULT_LINES = 3;
const LINE_CHARS = 120;

/** Characters kept before the error or span a long line was kept for. */
const LEAD_CHARS = 40;

/** At most LINE_CHARS of a tool's result line, holding what it was kept for: its first error word or fixed-shape span, however far in. */
function excerpt(line: string): string {
  if (line.length <= LINE_CHARS) return line;
  const span = shapeSpans(line).find((x) => x.kind !== 'number');
  const at = Math.min(span ? line.indexOf(span.text) : Infinity, ERROR_LINE.exec(line)?.index ?? Infinity);
  const start = Number.isFinite(at) && at > LINE_CHARS - LEAD_CHARS ? at - LEAD_CHARS : 0;
  return `${start ? '…' : ''}${line.slice(start, start + LINE_CHARS)}${start + LINE_CHARS < line.length ? '…' : ''}`;
}

/**
 * What simulated upkeep reads in `messages` (oldest first): the statements
 * of each message (`statementsOf`: the user and the assistant by their
 * `name`, else as `the user` and `the assistant`), and of an agent's work,
 * one statement per tool call (`the assistant called read_file with
 * src/app.ts`) and up to three per tool result (its most notable lines,
 * `notableLines`: `run_tests returned: AssertionError [E7795]: …`). `today`: the day the
 * conversation last stated before these messages. A statement made again in
 * the same turn is read once, in another turn again. A message that states one
 * on a line of its own (a session's header) moves it on, and with `dates`
 * is a statement of its own (`On 8 May 2023, Caroline and Melanie talked.`,
 * as a summary tells when each part happened). Returns the statements and
 * the day after the last message.
 */
export function statementsIn(
  messages: readonly Message[],
  today: Day | undefined,
  options: { dates?: boolean; store?: ReadingStore | undefined } = {},
): { statements: ReadStatement[]; today: Day | undefined } {
  const { store } = options;
  const user = messages.find((m) => m.role === 'user')?.name ?? 'the user';
  const assistant = messages.find((m) => m.role === 'assistant')?.name ?? 'the assistant';
  const calls = new Map<string, string>();
  const statements: ReadStatement[] = [];
  const add = (note: Note, turn: number | undefined) => {
    const key = (note.key ??= normalize(note.text));
    // Read once per turn: a summary counts the turns that stated it.
    if (!statements.some((s) => s.key === key && s.turn === turn)) statements.push({ key, text: note.text, salience: note.salience, turn });
  };
  for (const m of messages) {
    const day = headerDate(m.content);
    if (day !== undefined) {
      today = day;
      if (options.dates) {
        const text = `On ${formatDay(day)}, ${user} and ${assistant} talked.`;
        add(noteOf(text, store), m.turn);
      }
    }
    if (m.role === 'tool') {
      const name = calls.get(m.toolCallId ?? '') ?? 'a tool';
      const lines = store ? store.get('tool result', m.content, () => notableLines(m.content).map(excerpt)) : notableLines(m.content).map(excerpt);
      for (const line of lines) {
        const text = `${name} returned: ${line}`;
        add(noteOf(text, store), m.turn);
      }
      continue;
    }
    const voices = m.role === 'user' ? { speaker: user, listener: assistant } : { speaker: assistant, listener: user };
    for (const note of messageNotes(m, voices, today, store)) add(note, m.turn);
    for (const c of m.toolCalls ?? []) {
      calls.set(c.id, c.name);
      const args = store ? store.get('tool call', c.arguments, () => argumentsOf(c.arguments)) : argumentsOf(c.arguments);
      const text = `${upper(assistant)} called ${c.name}${args.length ? ` with ${args.join(', ')}` : ''}.`;
      add(noteOf(text, store), m.turn);
    }
  }
  return { statements, today };
}

/** The values a tool call's arguments name (its first three fixed-shape spans). */
const argumentsOf = (args: string): string[] => shapeSpans(args).filter((s) => s.kind !== 'number').map((s) => s.text).slice(0, 3);
