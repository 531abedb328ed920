import { UsageError } from '../errors.js';
import { streamFor } from '../engine/replay.js';
import { blocks } from '../policies/blocks.js';
import { drain, SessionDriver } from '../policies/driver.js';
import { REGISTRY } from '../policies/index.js';
import { startSession } from '../policies/session.js';
import { resolvePolicy } from '../policies/spec.js';
import { validateDocs, type TurnOut } from '../scenario/docs.js';
import { readLocomo, type LocomoSample } from '../scenario/import/locomo.js';
import type { ImportInput } from '../scenario/import/types.js';
import { holdsAnswer, memoryWords } from '../text/answers.js';
import { TokenCounter } from '../tokens/counter.js';
import type { ArtifactKind, Conversation } from '../types.js';

/**
 * How close the simulated memory is to a real model's: `check-upkeep` runs
 * the simulated extractor and summarizer — the `facts` and `summary`
 * policies, driven turn by turn as a replay drives them — over each
 * conversation of a LoCoMo-format file, and compares what they keep with
 * what a real model kept of the same conversation (the file's
 * `observation` and `session_summary`), on the answers to the questions of
 * categories 1, 2 and 4 (multi-hop, temporal, single-hop). A memory holds
 * an answer when it has every content word of it (`holdsAnswer`).
 *
 * The reference extraction is each observation as LoCoMo's own code
 * stores it for retrieval (`get_facts.py`: the session's date-time, a full
 * stop, the observation: `1:56 pm on 8 May, 2023. Caroline attended an
 * LGBTQ support group.`), so that it knows when what it holds happened, as
 * the simulated extractor does when it resolves `yesterday`;
 * `observations: 'plain'` takes the observations alone.
 *
 * The simulated memory reads the dialogue alone (speakers, texts, image
 * captions, session dates: the conversation `ctxsim import --format locomo`
 * makes), never the observations, summaries, events or questions; the
 * reference gives it only its size.
 * @module
 */

/** The questions judged: LoCoMo's categories 1 (multi-hop), 2 (temporal) and 4 (single-hop). */
const CATEGORIES: ReadonlySet<number> = new Set([1, 2, 4]);

/** The dialogue of one conversation as the simulated memory may read it: the whole of it, and each session alone. */
export interface UpkeepDialogue {
  /** The whole dialogue, as `ctxsim import --format locomo` writes it, without facts or questions. */
  conversation: Conversation;
  /** Each session's dialogue alone, in order, then one turn of its own (`.`), at which a summary policy folds the session. */
  sessions: Conversation[];
}

/** The sizes the simulated memory is given: the reference's own, in tokens. */
export interface UpkeepBudgets {
  /** The fact sheet's: the tokens of the conversation's observations (each counted alone, summed). */
  sheetTokens: number;
  /** Each session's summary's (as `sessions`): the tokens of its reference summary; 0 when it has none (not summarized). */
  summaryTokens: number[];
}

/** What the simulated upkeep keeps of a conversation. */
export interface SimulatedMemory {
  /** The fact sheet's entries at the end of the dialogue, each as its text (a label such as `name:` left out). */
  sheet: string[];
  /** Each session's summary (as `sessions`), its text; empty for a session not summarized. */
  summaries: string[];
}

/** What `simulateMemory` runs with. */
export interface SimulateOptions {
  tokens: TokenCounter;
  seed: number;
  /** The chat model the policies are told of (its upkeep runs on it). */
  model: string;
}

/**
 * The simulated memory of one conversation: the code the `facts`, `summary`
 * and `summary-buffer` policies run, with no path of its own. The `facts`
 * policy (`recent: 0`, `sheetTokens` the reference's) reads the whole
 * dialogue turn by turn; its sheet at the end is the extraction. The
 * `summary` policy (`summaryTokens` the reference's for that session) reads
 * each session alone, its `threshold` the session's tokens, so it folds the
 * whole session once, at the turn after it; the sessions' summaries are the
 * summary memory.
 */
export function simulateMemory(dialogue: UpkeepDialogue, budgets: UpkeepBudgets, options: SimulateOptions): SimulatedMemory {
  const sheet = budgets.sheetTokens > 0 ? drive(dialogue.conversation, 'facts', { recent: 0, sheetTokens: budgets.sheetTokens }, 'facts', options) : [];
  const summaries = dialogue.sessions.map((session, i) => {
    const summaryTokens = budgets.summaryTokens[i] ?? 0;
    if (summaryTokens <= 0) return '';
    const folded = session.turns.slice(0, -1).flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])]);
    const threshold = Math.max(1, blocks.sumTokens(options.tokens, folded));
    const summary = drive(session, 'summary', { threshold, summaryTokens }, 'summary', options).join('\n');
    if (!summary) throw new Error(`check-upkeep: ${session.id}: the summary policy folded nothing`);
    return summary;
  });
  return { sheet: sheet.flatMap(memoryEntries), summaries };
}

/** Replays `conversation` through a built-in policy with `params`, as a run does; returns the texts of its artifacts of `kind` at the end. */
function drive(conversation: Conversation, id: string, params: Record<string, unknown>, kind: ArtifactKind, options: SimulateOptions): string[] {
  const variants = resolvePolicy(REGISTRY.get(id)!, Object.entries(params));
  if (typeof variants === 'string') throw new Error(`check-upkeep: ${id}: ${variants}`);
  const variant = variants[0]!;
  const deps = { tokens: options.tokens, random: streamFor(options.seed, conversation.id, variant.name), model: options.model, blocks };
  const driver = new SessionDriver(conversation, (start) => startSession(variant.policy, start, variant.params, deps, variant.name));
  const artifacts = drain(driver.turns({ end: () => undefined }));
  return artifacts.flatMap((a) => (a.kind === kind ? a.texts : []));
}

/**
 * The entries of a memory's text: its statements and list items (split at
 * `;` and at the end of each sentence), each without a leading label
 * (`Known facts:`, `name:`) or closing punctuation. What `junk` counts.
 */
export function memoryEntries(text: string): string[] {
  return text
    .split(/;\s+|(?<=[.!?])\s+/)
    .map((part) => part.replace(/^(?:\p{L}[\p{L} ]{0,29}:\s+)+/u, '').replace(/[\s.;,!?]+$/, '').trim())
    .filter(Boolean);
}

/** Words said to express a feeling or a reaction, not a fact: an entry of one of them is junk. */
const INTERJECTIONS: ReadonlySet<string> = new Set(
  (
    'ah aha ahh alas aw aww awww bravo bye cheers congrats congratulations damn dang darn eh er gee geez gosh ha haha hahaha ' +
    'hey hi hm hmm hmmm hooray huh hurray jeez lol meh nah nope oh ohh omg ooh oooh oops ouch phew sheesh shoot ugh uh um umm ' +
    'welp whew whoa whoo woah woo woohoo wow yay yeah yep yes yikes yo yup okay ok thanks'
  ).split(' '),
);

/** The words the speakers write in lower case somewhere (`gonna`, `pottery`): an entry of one of them alone is no name, and junk. */
function lowerCaseWords(texts: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const text of texts) for (const [w] of text.replaceAll('’', "'").matchAll(/\p{L}[\p{L}'-]*/gu)) if (w === w.toLowerCase()) out.add(w);
  return out;
}

/** Whether an entry is junk: a single word the conversation also writes in lower case, or an interjection. */
function isJunk(entry: string, lower: ReadonlySet<string>): boolean {
  const word = entry.replaceAll('’', "'");
  if (!/^\p{L}[\p{L}'-]*$/u.test(word)) return false;
  const w = word.toLowerCase();
  return INTERJECTIONS.has(w) || lower.has(w);
}

/** A memory judged against a reference: the shares of the answers each holds, and of the questions where they agree. */
export interface UpkeepShares {
  /** The share of the answers the reference (a real model's memory) holds. */
  reference: number;
  /** The share the simulated memory holds, at the reference's size. */
  simulated: number;
  /** The share of questions where both hold the answer or both lose it. */
  agreement: number;
}

/** The check of one conversation. */
export interface ConversationUpkeepCheck {
  /** The sample's id (`conv-26`). */
  id: string;
  /** The questions judged (categories 1, 2 and 4 with an answer). */
  questions: number;
  /** Shares of the answers the dialogue itself holds: its utterances' text (`text`), and all a memory reads of it with the images' captions and the sessions' date lines (`shown`). */
  dialogue: { text: number; shown: number };
  /** The fact sheet against the observations, at `sheetTokens`. */
  extraction: UpkeepShares & { sheetTokens: number };
  /** The sessions' summaries against the real ones, at `summaryTokens` (their sum). */
  summary: UpkeepShares & { summaryTokens: number };
  /** The share of questions where the two real memories (observations, summaries) agree: how often two real memories agree. */
  references: number;
  /** The share of the simulated entries (sheet entries, summary statements and items) that are junk. */
  junk: number;
  /** How many simulated entries there are. */
  entries: number;
}

/** The totals of a check: every question (and entry) of every conversation pooled. */
export interface UpkeepCheckTotal {
  questions: number;
  dialogue: { text: number; shown: number };
  extraction: UpkeepShares;
  summary: UpkeepShares;
  references: number;
  junk: number;
  entries: number;
}

/** What `checkUpkeep` found: per conversation and in total; shares are numbers from 0 to 1. */
export interface UpkeepCheck {
  conversations: ConversationUpkeepCheck[];
  /** Every question pooled, and (`categories`, by category: `1` multi-hop, `2` temporal, `4` single-hop) the questions of each category pooled, their `junk` and `entries` 0. */
  total: UpkeepCheckTotal & { categories: Record<string, UpkeepCheckTotal> };
}

/** What `checkUpkeep` reads and runs with. */
export interface CheckUpkeepOptions {
  /** The file's format: `locomo` (the only one). */
  format: string;
  /** Counts the budgets and the policies' tokens (default: o200k_base, gpt-4o-mini's). */
  tokens?: TokenCounter;
  /** The seed of the policies' streams (default 42). */
  seed?: number;
  /** The chat model the policies are told of (default gpt-4o-mini). */
  model?: string;
  /** The reference extraction: each observation with its session's date-time, as LoCoMo stores it (`dated`, the default), or the observations alone (`plain`). */
  observations?: ObservationForm;
}

/** How the reference extraction writes an observation: `dated` (`1:56 pm on 8 May, 2023. Caroline …`) or `plain`. */
export type ObservationForm = 'dated' | 'plain';

/** The formats `check-upkeep` reads. */
export const CHECK_UPKEEP_FORMATS = ['locomo'] as const;

/**
 * Checks the simulated extractor and summarizer against a real model's
 * memories of the conversations of a LoCoMo-format file (see the module's
 * comment): `readUpkeepCases`, then `simulateMemory` and `judgeUpkeep` for
 * each conversation. A file that is not one — or has no `observation` and
 * `session_summary` — throws a ScenarioError naming every problem.
 */
export function checkUpkeep(input: Pick<ImportInput, 'path' | 'file'>, options: CheckUpkeepOptions): UpkeepCheck {
  const tokens = options.tokens ?? new TokenCounter('o200k_base');
  const run = { tokens, seed: options.seed ?? 42, model: options.model ?? 'gpt-4o-mini' };
  const conversations = readUpkeepCases(input, { ...options, tokens }).map((c) => judgeUpkeep(c, simulateMemory(c.dialogue, c.budgets, run)));
  return { conversations, total: totalOf(conversations) };
}

/** One conversation of a file as `check-upkeep` reads it: what the simulation may read, its budgets, and what it is judged against. */
export interface UpkeepCase {
  /** The sample's id (`conv-26`). */
  id: string;
  /** All the simulated memory reads. */
  dialogue: UpkeepDialogue;
  /** The sizes of the reference, in `tokens`. */
  budgets: UpkeepBudgets;
  /** A real model's memories: every observation (with its session's date-time unless `plain`), and each session's summary. */
  reference: { observations: string[]; summaries: string[] };
  /** The answers of the questions judged (categories 1, 2 and 4 with an answer), as text. */
  answers: string[];
  /** Each answer's question's category (1 multi-hop, 2 temporal, 4 single-hop). */
  categories: number[];
  /** The utterances' texts, without captions or dates. */
  texts: string[];
}

/** Reads a LoCoMo-format file's conversations, each as an `UpkeepCase`, its budgets counted with `tokens`. */
export function readUpkeepCases(input: Pick<ImportInput, 'path' | 'file'>, options: { format: string; tokens: TokenCounter; observations?: ObservationForm }): UpkeepCase[] {
  if (!(CHECK_UPKEEP_FORMATS as readonly string[]).includes(options.format)) {
    throw new UsageError(`check-upkeep: format ${JSON.stringify(options.format)}: expected one of ${CHECK_UPKEEP_FORMATS.join(', ')}`);
  }
  const { tokens } = options;
  return readLocomo(input, { user: 'speaker_a' }, { memories: true }).samples.map((s) => {
    const memories = s.memories!;
    const dated = (options.observations ?? 'dated') === 'dated';
    const observations = [...memories.observations].flatMap(([n, list]) => {
      const dateTime = dated ? s.sessions.find((x) => x.n === n)?.dateTime : undefined;
      return dateTime === undefined ? list : list.map((o) => `${dateTime}. ${o}`);
    });
    const sessions = s.sessions.map((x) => memories.summaries.get(x.n));
    return {
      id: s.id,
      dialogue: dialogueOf(s),
      budgets: {
        sheetTokens: observations.reduce((n, o) => n + tokens.text(o), 0),
        summaryTokens: sessions.map((summary) => (summary === undefined ? 0 : tokens.text(summary))),
      },
      reference: { observations, summaries: [...memories.summaries.values()] },
      ...judged(s.questions),
      texts: [...s.where.values()].map((l) => l.text),
    };
  });
}

/** The questions judged (categories 1, 2 and 4 with an answer): their answers as text, and their categories. */
function judged(questions: LocomoSample['questions']): { answers: string[]; categories: number[] } {
  const kept = questions.filter((q) => q.category !== undefined && CATEGORIES.has(q.category) && q.answer !== undefined);
  return { answers: kept.map((q) => String(q.answer)), categories: kept.map((q) => q.category!) };
}

/** Counts behind one conversation's shares, and those of each category's questions, kept to pool them. */
const counted = new WeakMap<ConversationUpkeepCheck, { all: Counts; categories: Map<number, Counts> }>();

interface Counts {
  questions: number;
  text: number;
  shown: number;
  extraction: Held;
  summary: Held;
  references: number;
  junk: number;
  entries: number;
}

interface Held {
  reference: number;
  simulated: number;
  agreement: number;
}

const noCounts = (): Counts => ({
  questions: 0,
  text: 0,
  shown: 0,
  extraction: { reference: 0, simulated: 0, agreement: 0 },
  summary: { reference: 0, simulated: 0, agreement: 0 },
  references: 0,
  junk: 0,
  entries: 0,
});

/** Judges one conversation's simulated memory against its reference. */
export function judgeUpkeep(c: UpkeepCase, simulated: SimulatedMemory): ConversationUpkeepCheck {
  const shown = c.dialogue.conversation.turns.flatMap((t) => [t.user.content, ...(t.assistant ? [t.assistant.content] : [])]);
  const words = {
    text: memoryWords(c.texts.join('\n')),
    shown: memoryWords(shown.join('\n')),
    observations: memoryWords(c.reference.observations.join('\n')),
    summaries: memoryWords(c.reference.summaries.join('\n')),
    sheet: memoryWords(simulated.sheet.join('\n')),
    simulatedSummaries: memoryWords(simulated.summaries.join('\n')),
  };
  const n = noCounts();
  const categories = new Map<number, Counts>();
  const judge = (held: Held, reference: boolean, sim: boolean) => {
    held.reference += +reference;
    held.simulated += +sim;
    held.agreement += +(reference === sim);
  };
  c.answers.forEach((answer, i) => {
    const has = (w: ReadonlySet<string>) => holdsAnswer(w, answer);
    const category = c.categories[i]!;
    if (!categories.has(category)) categories.set(category, noCounts());
    for (const k of [n, categories.get(category)!]) {
      k.questions++;
      k.text += +has(words.text);
      k.shown += +has(words.shown);
      judge(k.extraction, has(words.observations), has(words.sheet));
      judge(k.summary, has(words.summaries), has(words.simulatedSummaries));
      k.references += +(has(words.observations) === has(words.summaries));
    }
  });
  // What the speakers wrote, not the captions, which write every name in lower case.
  const lower = lowerCaseWords(c.texts);
  const entries = [...simulated.sheet, ...simulated.summaries.flatMap(memoryEntries)];
  n.entries = entries.length;
  n.junk = entries.filter((e) => isJunk(e, lower)).length;
  const shares = sharesOf(n);
  const check: ConversationUpkeepCheck = {
    id: c.id,
    ...shares,
    extraction: { ...shares.extraction, sheetTokens: c.budgets.sheetTokens },
    summary: { ...shares.summary, summaryTokens: c.budgets.summaryTokens.reduce((a, b) => a + b, 0) },
  };
  counted.set(check, { all: n, categories });
  return check;
}

/** The shares of counts: each a number from 0 to 1, to four decimals (0 of nothing). */
function sharesOf(c: Counts): UpkeepCheckTotal {
  const share = (n: number, of: number) => (of ? Math.round((n / of) * 10_000) / 10_000 : 0);
  const q = c.questions;
  const shares = (h: Held): UpkeepShares => ({ reference: share(h.reference, q), simulated: share(h.simulated, q), agreement: share(h.agreement, q) });
  return {
    questions: q,
    dialogue: { text: share(c.text, q), shown: share(c.shown, q) },
    extraction: shares(c.extraction),
    summary: shares(c.summary),
    references: share(c.references, q),
    junk: share(c.junk, c.entries),
    entries: c.entries,
  };
}

/** Every conversation's counts pooled: the total's shares, and each category's (its questions alone; no entries). */
function totalOf(checks: readonly ConversationUpkeepCheck[]): UpkeepCheckTotal & { categories: Record<string, UpkeepCheckTotal> } {
  const t = noCounts();
  const byCategory = new Map<number, Counts>();
  for (const check of checks) {
    const c = counted.get(check)!;
    add(t, c.all);
    for (const [category, counts] of c.categories) {
      if (!byCategory.has(category)) byCategory.set(category, noCounts());
      add(byCategory.get(category)!, counts);
    }
  }
  const categories = Object.fromEntries([...byCategory].sort(([a], [b]) => a - b).map(([category, counts]) => [String(category), sharesOf(counts)]));
  return { ...sharesOf(t), categories };
}

/** Adds counts `c` to `t`. */
function add(t: Counts, c: Counts): void {
  t.questions += c.questions;
  t.text += c.text;
  t.shown += c.shown;
  for (const k of ['extraction', 'summary'] as const) for (const f of ['reference', 'simulated', 'agreement'] as const) t[k][f] += c[k][f];
  t.references += c.references;
  t.junk += c.junk;
  t.entries += c.entries;
}

/** The categories' names in the table. */
const CATEGORY_NAMES: Readonly<Record<string, string>> = { '1': 'multi-hop', '2': 'temporal', '4': 'single-hop' };

/** A sample's dialogue as the simulated memory reads it: the whole, and each session alone with one turn after it. */
function dialogueOf(s: LocomoSample): UpkeepDialogue {
  const doc = (id: string, turns: TurnOut[]) => ({ id, title: `${s.userName} and ${s.assistantName}`, user: s.user, turns });
  const docs = [doc(`locomo-${s.slug}`, s.dialogue), ...s.sessions.map((x) => doc(`locomo-${s.slug}-s${x.n}`, [...s.dialogue.slice(x.first - 1, x.last), { user: '.' }]))];
  const [conversation, ...sessions] = validateDocs(docs, (d) => `${s.id}#${d.id}`);
  return { conversation: conversation!, sessions };
}

/** Two decimals, for the table. */
const fixed = (x: number) => x.toFixed(2);

/**
 * The check as a table, one row per conversation and one for the total:
 * the questions judged, the shares the dialogue holds, and for the
 * extraction and the summary the reference's share, the simulation's and
 * their agreement; then the real memories' agreement with each other and
 * the simulated entries' junk; under the total, a row per category of
 * question (its questions alone, every conversation's).
 */
export function upkeepCheckReport(check: UpkeepCheck): string {
  const header = [
    ['', '', 'dialogue', '', 'extraction', '', '', 'summary', '', '', 'real', ''],
    ['conversation', 'questions', 'text', 'shown', 'reference', 'simulated', 'agreement', 'reference', 'simulated', 'agreement', 'agreement', 'junk'],
  ];
  const row = (id: string, c: UpkeepCheckTotal) => [
    id,
    String(c.questions),
    fixed(c.dialogue.text),
    fixed(c.dialogue.shown),
    fixed(c.extraction.reference),
    fixed(c.extraction.simulated),
    fixed(c.extraction.agreement),
    fixed(c.summary.reference),
    fixed(c.summary.simulated),
    fixed(c.summary.agreement),
    fixed(c.references),
    fixed(c.junk),
  ];
  const categories = Object.entries(check.total.categories).map(([k, c]) => [...row(`  ${CATEGORY_NAMES[k] ?? k} (${k})`, c).slice(0, -1), '']);
  const rows = [...header, ...check.conversations.map((c) => row(c.id, c)), row('total', check.total), ...categories];
  const widths = rows[1]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  return `${rows.map(line).join('\n')}\n`;
}
