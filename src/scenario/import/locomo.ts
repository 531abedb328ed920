import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { formatDuration, normalizeText as normalize, type ScenarioOut, type TurnOut } from '../docs.js';
import { DEFAULT_GAP_SECONDS } from '../load.js';
import { DatasetIds, JsonSource, datasetId, parseJson, readText, slug } from './_read.js';
import { datasetPrefix } from './_shared-options.js';
import { TurnBuilder } from './_turns.js';
import { QuirkLog, type ImportInput, type Importer } from './types.js';

const options = z.strictObject({
  user: z.enum(['speaker_a', 'speaker_b']).default('speaker_a').describe('the speaker who plays the user; the other is the assistant'),
  factValue: z
    .enum(['text', 'answer'])
    .default('text')
    .describe('what a probed fact is: text (each evidence turn’s text) or answer (the question’s answer, at the first evidence turn that holds it, else text)'),
  questions: z
    .enum(['after', 'each'])
    .default('after')
    .describe(
      'how the questions are asked: after (one scenario: the dialogue, then every question as a probe turn of its own with no reply; each question’s prompt also holds the questions before it) or each (one scenario per question: the dialogue, then that question alone, as LoCoMo and mem0 ask them; about 100 times the turns)',
    ),
  prefix: datasetPrefix('locomo'),
});

/** LoCoMo import options. */
export type LocomoOptions = z.output<typeof options>;

const utterance = z.looseObject({ speaker: z.string(), dia_id: z.string(), text: z.string(), blip_caption: z.string().optional() });
const qaItem = z.looseObject({
  question: z.string(),
  answer: z.union([z.string(), z.number()]).optional(),
  adversarial_answer: z.union([z.string(), z.number()]).optional(),
  evidence: z.array(z.string()).optional(),
  category: z.number().optional(),
});
const sample = z.looseObject({
  sample_id: z.union([z.string(), z.number()]),
  conversation: z.looseObject({ speaker_a: z.string(), speaker_b: z.string() }),
  qa: z.array(qaItem).optional(),
});
/** What a real model remembered of a sample, as the release ships it: observations per session and speaker, a summary per session. */
const memories = z.looseObject({
  observation: z.record(z.string(), z.record(z.string(), z.array(z.tuple([z.string(), z.union([z.string(), z.array(z.string())])])))),
  session_summary: z.record(z.string(), z.string()),
});

/** A LoCoMo question as the file has it. */
export type LocomoQuestion = z.output<typeof qaItem>;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * Parses a LoCoMo session date-time such as `1:56 pm on 8 May, 2023` to
 * seconds since 1970 (UTC; only differences matter). Undefined if unreadable.
 */
export function parseLocomoDate(text: string): number | undefined {
  const m = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*$/i.exec(text);
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[5]!.slice(0, 3).toLowerCase());
  const hour12 = Number(m[1]);
  const day = Number(m[4]);
  if (month < 0 || hour12 < 1 || hour12 > 12 || Number(m[2]) > 59 || day < 1 || day > 31) return undefined;
  const hour = (hour12 % 12) + (m[3]!.toLowerCase() === 'p' ? 12 : 0);
  return Date.UTC(Number(m[6]), month, day, hour, Number(m[2])) / 1000;
}

/** Splits an evidence entry into dialogue ids: `"D8:6; D9:17"` → `["D8:6", "D9:17"]`. */
export function evidenceIds(entry: string): string[] {
  return entry.split(/[\s;,]+/).filter(Boolean);
}

/** The canonical form of a dialogue id (`D03:007` → `D3:7`), or undefined if it is not one. */
export function canonicalDiaId(id: string): string | undefined {
  const m = /^D\s*:?\s*(\d+)\s*:\s*(\d+)$/i.exec(id.trim());
  return m ? `D${Number(m[1])}:${Number(m[2])}` : undefined;
}

/**
 * The line that opens a session in the conversation, as LoCoMo's own
 * question-answering prompt writes it (`DATE: 1:56 pm on 8 May, 2023`).
 */
export function sessionDateLine(dateTime: string): string {
  return `DATE: ${dateTime.trim()}`;
}

/** An image an utterance shares, written as LoCoMo's prompt writes it after the utterance: `[shares a photo of …]`. */
export function sharedImageLine(caption: string): string {
  return `[shares ${caption.trim()}]`;
}

/** A dialogue turn: where an utterance landed, and its text. */
interface Located {
  turn: number;
  /** The utterance's `text`, trimmed. */
  text: string;
  /** What a model sees of it: the text, and the image line when it shares one. */
  shown: string;
}

/** A session of the dialogue: its number, its date-time as written, and the dialogue turns it spans (1-based, inclusive). */
export interface LocomoSession {
  n: number;
  dateTime?: string;
  first: number;
  last: number;
}

/** What a real model remembered of a sample (the release's `observation` and `session_summary`), by session number. */
export interface LocomoMemories {
  /** The observations' texts, per session, every speaker's, in file order. */
  observations: ReadonlyMap<number, readonly string[]>;
  /** The summary of each session. */
  summaries: ReadonlyMap<number, string>;
}

/** One LoCoMo sample as read: its dialogue as scenario turns (no facts, no questions), its sessions and its questions. */
export interface LocomoSample {
  /** Its `sample_id`, as text. */
  id: string;
  /** The id as scenario ids write it (`conv-26`): a-z, 0-9 and `-`. */
  slug: string;
  /** Where it is in the file (0-based). */
  index: number;
  userName: string;
  assistantName: string;
  /** The user's id in a scenario (`caroline`). */
  user: string;
  /** The dialogue: every session's turns, each session opened by its date line. */
  dialogue: TurnOut[];
  sessions: LocomoSession[];
  /** Dialogue ids (canonical) → the turn holding the utterance and its text. */
  where: ReadonlyMap<string, Located>;
  questions: LocomoQuestion[];
  /** Present when asked for (`readLocomo(…, {memories: true})`). */
  memories?: LocomoMemories;
}

/** What `readLocomo` makes of a file: its samples and the dataset quirks it met. */
export interface LocomoRead {
  samples: LocomoSample[];
  quirks: QuirkLog;
}

/**
 * Reads a LoCoMo file: a JSON array of samples, each a two-person
 * conversation over many sessions plus questions with evidence. Each
 * sample's dialogue becomes scenario turns: the speaker `user` names plays
 * the user, the other the assistant, every message named by its speaker;
 * a session starts a new turn whose gap brings the simulated clock to the
 * session's date-time, and its first user message opens with the date
 * line; an image's caption follows its utterance's text. With `memories`,
 * the real model's observations and session summaries are read too (and
 * must be there). Every problem of the file throws one ScenarioError.
 */
export function readLocomo(input: Pick<ImportInput, 'path' | 'file'>, opts: Pick<LocomoOptions, 'user'> & Partial<Pick<LocomoOptions, 'prefix'>>, read: { memories?: boolean } = {}): LocomoRead {
  const text = readText(input.path, input.file);
  const root = parseJson(text, input.file);
  const src = new JsonSource(input.file, text);
  const problems: Problem[] = [];
  if (!Array.isArray(root)) throw new ScenarioError([src.problem([], 'expected a JSON array of LoCoMo samples')]);
  const quirks = new QuirkLog();
  const samples: LocomoSample[] = [];
  // Every scenario id of a sample starts with this one.
  const ids = new DatasetIds(src);
  root.forEach((raw, i) => {
    const s = src.check(sample, raw, [i], problems);
    const m = read.memories ? src.check(memories, raw, [i], problems) : undefined;
    if (!s) return;
    const one = readSample(s, raw as { conversation: Record<string, unknown> }, i, src, opts, problems, quirks);
    if (!one || !ids.add(`${opts.prefix ?? 'locomo'}-${one.slug}`, [i, 'sample_id'], problems)) return;
    if (m) one.memories = memoriesOf(m, one.id, quirks);
    samples.push(one);
  });
  if (problems.length) throw new ScenarioError(problems);
  return { samples, quirks };
}

/**
 * LoCoMo: a JSON array of samples, each a two-person conversation over many
 * sessions plus questions with evidence. Speakers map to user/assistant,
 * sessions to gaps and a date line, each question to a probe turn after the
 * dialogue with no reply: one scenario per question (`questions: each`), or
 * every question after one dialogue (`after`).
 */
export const locomo: Importer<LocomoOptions> = {
  id: 'locomo',
  describe: 'LoCoMo long-conversation benchmark (JSON array of samples with sessions and QA)',
  options,
  read(input, opts) {
    const { samples, quirks } = readLocomo(input, opts);
    return { docs: samples.flatMap((s) => sampleDocs(s, opts, quirks)), quirks: quirks.list() };
  },
};

function readSample(
  s: z.infer<typeof sample>,
  raw: { conversation: Record<string, unknown> },
  i: number,
  src: JsonSource,
  opts: Pick<LocomoOptions, 'user'>,
  problems: Problem[],
  quirks: QuirkLog,
): LocomoSample | undefined {
  const conv = raw.conversation;
  const userName = s.conversation[opts.user];
  const assistantName = s.conversation[opts.user === 'speaker_a' ? 'speaker_b' : 'speaker_a'];
  const sampleId = String(s.sample_id);
  const numbers = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const before = problems.length;
  const b = new TurnBuilder();
  const where = new Map<string, Located>();
  const sessions: LocomoSession[] = [];
  /** Simulated time at the start of the latest turn, once a session date is known. */
  let clock: number | undefined;
  for (const n of numbers) {
    const key = `session_${n}`;
    const utts = src.check(z.array(utterance), conv[key], [i, 'conversation', key], problems);
    if (!utts) continue;
    if (!utts.length) {
      quirks.add('empty-session', 'sessions without turns (skipped)', `${sampleId} ${key}`);
      continue;
    }
    // Gap: the simulated clock reaches this session's date-time when its first turn starts.
    const dateText = conv[`${key}_date_time`];
    const dateTime = typeof dateText === 'string' && dateText.trim() ? dateText : undefined;
    const start = dateTime === undefined ? undefined : parseLocomoDate(dateTime);
    if (start === undefined) quirks.add('bad-date', 'session date-times missing or unreadable (default gap used)', `${sampleId} ${key}`);
    if (b.turn > 0) {
      let gap: number | undefined;
      if (start !== undefined && clock !== undefined) {
        if (start < clock) quirks.add('date-order', 'sessions dated before the previous one ended (gap 0s)', `${sampleId} ${key}`);
        gap = Math.max(0, start - clock);
      }
      b.breakTurn(gap === undefined ? undefined : formatDuration(gap));
      clock = start ?? (clock === undefined ? undefined : clock + DEFAULT_GAP_SECONDS);
    } else clock = start;
    const first = b.turn + 1;
    // The date, as text where LoCoMo's prompt puts it: the first line of the session.
    if (dateTime !== undefined) b.user(sessionDateLine(dateTime));
    let spoke = false;
    utts.forEach((u, j) => {
      if (u.speaker !== userName && u.speaker !== assistantName) {
        problems.push(src.problem([i, 'conversation', key, j, 'speaker'], `expected ${userName} or ${assistantName}, got ${JSON.stringify(u.speaker)}`));
        return;
      }
      const caption = u.blip_caption?.trim() ? sharedImageLine(u.blip_caption) : undefined;
      const shown = caption === undefined ? u.text : u.text.trim() ? `${u.text}\n${caption}` : caption;
      if (u.speaker === userName) b.user(shown, false, userName);
      else {
        b.assistant(shown, assistantName);
        if (!spoke) quirks.add('assistant-first', `sessions opened by ${opts.user === 'speaker_a' ? 'speaker_b' : 'speaker_a'} (a turn whose user message holds no utterance)`, `${sampleId} ${u.dia_id}`);
      }
      spoke = true;
      const id = canonicalDiaId(u.dia_id) ?? u.dia_id;
      where.set(id, { turn: b.turn, text: u.text.trim(), shown: shown.trim() });
    });
    sessions.push({ n, ...(dateTime !== undefined && { dateTime }), first, last: b.turn });
    if (clock !== undefined) clock += DEFAULT_GAP_SECONDS * (b.turn - first);
  }
  if (problems.length > before) return undefined;
  if (b.turn === 0) {
    problems.push(src.problem([i, 'conversation'], 'expected at least one session_N with turns'));
    return undefined;
  }
  return { id: sampleId, slug: datasetId('', sampleId), index: i, userName, assistantName, user: slug(userName) || 'user', dialogue: b.finish(), sessions, where, questions: s.qa ?? [] };
}

function memoriesOf(m: z.infer<typeof memories>, sampleId: string, quirks: QuirkLog): LocomoMemories {
  const observations = new Map<number, string[]>();
  for (const [key, bySpeaker] of Object.entries(m.observation)) {
    const n = /^session_(\d+)_observation$/.exec(key);
    if (!n) {
      quirks.add('unknown-memory-key', 'observation or session_summary keys naming no session (ignored)', `${sampleId} ${key}`);
      continue;
    }
    observations.set(Number(n[1]), Object.values(bySpeaker).flatMap((list) => list.map(([text]) => text)));
  }
  const summaries = new Map<number, string>();
  for (const [key, text] of Object.entries(m.session_summary)) {
    const n = /^session_(\d+)_summary$/.exec(key);
    if (!n) quirks.add('unknown-memory-key', 'observation or session_summary keys naming no session (ignored)', `${sampleId} ${key}`);
    else summaries.set(Number(n[1]), text);
  }
  return { observations, summaries };
}

/** A question's probe: the facts it names, each stated at a dialogue turn. */
interface Probe {
  facts: { turn: number; name: string; value: string }[];
}

/** The facts and probe of question `j`, by the importer's options; quirks noted. */
function probeOf(s: LocomoSample, q: LocomoQuestion, j: number, opts: LocomoOptions, quirks: QuirkLog): Probe {
  const ids: string[] = [];
  const evidence = q.evidence ?? [];
  const none = opts.questions === 'each' ? 'no scenario' : 'no probe';
  if (!evidence.length) quirks.add('empty-evidence', `questions with an empty evidence list (${none})`, `${s.id} qa[${j}]`);
  for (const entry of evidence) {
    const parts = evidenceIds(entry);
    if (parts.length > 1) quirks.add('multi-id-evidence', 'evidence strings holding several ids (split)', `${s.id} "${entry}"`);
    for (const p of parts) {
      const id = canonicalDiaId(p);
      if (!id || !s.where.has(id)) quirks.add('unresolved-evidence', 'evidence ids that resolve to no dialogue turn (ignored)', `${s.id} ${p}`);
      else if (!ids.includes(id)) ids.push(id);
    }
  }
  const answer = q.answer ?? q.adversarial_answer;
  if (typeof answer === 'number') quirks.add('numeric-answer', 'numeric answers (read as text)', `${s.id} qa[${j}]`);
  if (q.answer === undefined) quirks.add('no-answer', 'questions without an answer (adversarial: their evidence is probed)', `${s.id} qa[${j}]`);
  if (opts.factValue === 'answer' && answer !== undefined && ids.length) {
    const a = normalize(String(answer));
    const hit = ids.map((id) => s.where.get(id)!).find((l) => a && normalize(l.shown).includes(a));
    // A question that states its own answer would find it in its own message: its evidence is probed instead.
    if (hit && normalize(q.question).includes(a)) quirks.add('answer-in-question', 'answers their own question states (evidence text used)', `${s.id} qa[${j}]`);
    else if (hit) return { facts: [{ turn: hit.turn, name: `qa-${j + 1}`, value: String(answer) }] };
    else quirks.add('answer-not-in-evidence', 'answers found in none of their evidence turns (evidence text used)', `${s.id} qa[${j}]`);
  }
  const facts: Probe['facts'] = [];
  for (const id of ids) {
    const l = s.where.get(id)!;
    if (!l.text) {
      quirks.add('empty-evidence-text', 'evidence turns with no text (not a fact)', `${s.id} ${id}`);
      continue;
    }
    facts.push({ turn: l.turn, name: id, value: l.text });
  }
  if (evidence.length && !facts.length) quirks.add('unprobed-question', `questions none of whose evidence is a fact (${none})`, `${s.id} qa[${j}]`);
  return { facts };
}

/** The dialogue's turns with `facts` stated where they are: a copy of each turn that gets one, the others shared. */
function withFacts(dialogue: readonly TurnOut[], facts: readonly Probe['facts'][number][]): TurnOut[] {
  const turns = [...dialogue];
  for (const f of facts) {
    const t = turns[f.turn - 1]!;
    turns[f.turn - 1] = { ...t, facts: { ...t.facts, [f.name]: f.value } };
  }
  return turns;
}

/** A question as a turn: the question as the user message, probing its facts; never a reply (the answer is the key, not the conversation). */
function questionTurn(q: LocomoQuestion, probe: Probe): TurnOut {
  const names = [...new Set(probe.facts.map((f) => f.name))];
  return { user: q.question, ...(names.length && { probe: names }) };
}

/** The scenarios of a sample: one per question with something to probe (`each`), or the dialogue with every question after it (`after`). */
function sampleDocs(s: LocomoSample, opts: LocomoOptions, quirks: QuirkLog): ScenarioOut[] {
  const base = { title: `${s.userName} and ${s.assistantName}`, user: s.user };
  const id = `${opts.prefix}-${s.slug}`;
  const probes = s.questions.map((q, j) => probeOf(s, q, j, opts, quirks));
  if (opts.questions === 'after') {
    const turns = withFacts(s.dialogue, probes.flatMap((p) => p.facts));
    return [{ id, ...base, turns: [...turns, ...s.questions.map((q, j) => questionTurn(q, probes[j]!))] }];
  }
  if (!probes.some((p) => p.facts.length)) {
    quirks.add('no-question', 'samples with no question to probe (the dialogue alone)', s.id);
    return [{ id, ...base, turns: s.dialogue }];
  }
  const width = Math.max(3, String(s.questions.length).length);
  const docs: ScenarioOut[] = [];
  s.questions.forEach((q, j) => {
    const probe = probes[j]!;
    if (!probe.facts.length) return;
    docs.push({
      id: `${id}-q${String(j + 1).padStart(width, '0')}`,
      title: `${base.title}, question ${j + 1}`,
      user: base.user,
      turns: [...withFacts(s.dialogue, probe.facts), questionTurn(q, probe)],
    });
  });
  return docs;
}

