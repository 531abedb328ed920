import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { formatDuration, normalizeText as normalize, type ScenarioOut } from '../docs.js';
import { DEFAULT_GAP_SECONDS } from '../load.js';
import { JsonSource, parseJson, readText } from './_read.js';
import { datasetPrefix } from './_shared-options.js';
import { TurnBuilder } from './_turns.js';
import { QuirkLog, type Importer } from './types.js';

const options = z.strictObject({
  user: z.enum(['speaker_a', 'speaker_b']).default('speaker_a').describe('the speaker who plays the user; the other is the assistant'),
  factValue: z
    .enum(['text', 'answer'])
    .default('text')
    .describe('what a probed fact is: text (each evidence turn’s text) or answer (the question’s answer, at the first evidence turn that holds it, else text)'),
  prefix: datasetPrefix('locomo'),
});

/** LoCoMo import options. */
export type LocomoOptions = z.output<typeof options>;

const utterance = z.looseObject({ speaker: z.string(), dia_id: z.string(), text: z.string() });
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

interface Located {
  turn: number;
  text: string;
}

/**
 * LoCoMo: a JSON array of samples, each a two-person conversation over many
 * sessions plus questions with evidence. Speakers map to user/assistant,
 * sessions to gaps, questions to final probe turns.
 */
export const locomo: Importer<LocomoOptions> = {
  id: 'locomo',
  describe: 'LoCoMo long-conversation benchmark (JSON array of samples with sessions and QA)',
  options,
  read({ path, file }, opts) {
    const text = readText(path, file);
    const root = parseJson(text, file);
    const src = new JsonSource(file, text);
    const problems: Problem[] = [];
    if (!Array.isArray(root)) throw new ScenarioError([src.problem([], 'expected a JSON array of LoCoMo samples')]);
    const quirks = new QuirkLog();
    const docs: ScenarioOut[] = [];
    root.forEach((raw, i) => {
      const s = src.check(sample, raw, [i], problems);
      if (!s) return;
      const doc = sampleDoc(s, raw as { conversation: Record<string, unknown> }, i, src, opts, problems, quirks);
      if (doc) docs.push(doc);
    });
    if (problems.length) throw new ScenarioError(problems);
    return { docs, quirks: quirks.list() };
  },
};

function sampleDoc(
  s: z.infer<typeof sample>,
  raw: { conversation: Record<string, unknown> },
  i: number,
  src: JsonSource,
  opts: LocomoOptions,
  problems: Problem[],
  quirks: QuirkLog,
): ScenarioOut | undefined {
  const conv = raw.conversation;
  const userName = s.conversation[opts.user];
  const assistantName = s.conversation[opts.user === 'speaker_a' ? 'speaker_b' : 'speaker_a'];
  const sampleId = String(s.sample_id);
  const sessions = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const before = problems.length;
  const b = new TurnBuilder();
  const where = new Map<string, Located>();
  /** Simulated time at the start of the latest turn, once a session date is known. */
  let clock: number | undefined;
  for (const n of sessions) {
    const key = `session_${n}`;
    const utts = src.check(z.array(utterance), conv[key], [i, 'conversation', key], problems);
    if (!utts) continue;
    if (!utts.length) {
      quirks.add('empty-session', 'sessions without turns (skipped)', `${sampleId} ${key}`);
      continue;
    }
    // Gap: the simulated clock reaches this session's date-time when its first turn starts.
    const dateText = conv[`${key}_date_time`];
    const start = typeof dateText === 'string' ? parseLocomoDate(dateText) : undefined;
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
    utts.forEach((u, j) => {
      if (u.speaker !== userName && u.speaker !== assistantName) {
        problems.push(src.problem([i, 'conversation', key, j, 'speaker'], `expected ${userName} or ${assistantName}, got ${JSON.stringify(u.speaker)}`));
        return;
      }
      if (u.speaker === userName) b.user(u.text);
      else if (b.assistant(u.text)) quirks.add('assistant-first', `sessions opened by ${opts.user === 'speaker_a' ? 'speaker_b' : 'speaker_a'} (turn with an empty user message)`, `${sampleId} ${u.dia_id}`);
      const id = canonicalDiaId(u.dia_id) ?? u.dia_id;
      where.set(id, { turn: b.turn, text: u.text.trim() });
    });
    if (clock !== undefined) clock += DEFAULT_GAP_SECONDS * (b.turn - first);
  }
  if (problems.length > before) return undefined;
  if (b.turn === 0) {
    problems.push(src.problem([i, 'conversation'], 'expected at least one session_N with turns'));
    return undefined;
  }

  // Questions become final turns that probe their evidence.
  (s.qa ?? []).forEach((q, j) => {
    const ids: string[] = [];
    const evidence = q.evidence ?? [];
    if (!evidence.length) quirks.add('empty-evidence', 'questions with an empty evidence list (no probe)', `${sampleId} qa[${j}]`);
    for (const entry of evidence) {
      const parts = evidenceIds(entry);
      if (parts.length > 1) quirks.add('multi-id-evidence', 'evidence strings holding several ids (split)', `${sampleId} "${entry}"`);
      for (const p of parts) {
        const id = canonicalDiaId(p);
        if (!id || !where.has(id)) quirks.add('unresolved-evidence', 'evidence ids that resolve to no dialogue turn (ignored)', `${sampleId} ${p}`);
        else if (!ids.includes(id)) ids.push(id);
      }
    }
    const answer = q.answer ?? q.adversarial_answer;
    if (typeof answer === 'number') quirks.add('numeric-answer', 'numeric answers (written as text)', `${sampleId} qa[${j}]`);
    const probe: string[] = [];
    let byAnswer = false;
    if (opts.factValue === 'answer' && answer !== undefined && ids.length) {
      const a = normalize(String(answer));
      const hit = ids.map((id) => where.get(id)!).find((l) => a && normalize(l.text).includes(a));
      if (hit) {
        const name = `qa-${j + 1}`;
        b.factAt(hit.turn, name, String(answer));
        probe.push(name);
        byAnswer = true;
      } else quirks.add('answer-not-in-evidence', 'answers found in none of their evidence turns (evidence text used)', `${sampleId} qa[${j}]`);
    }
    if (!byAnswer) {
      for (const id of ids) {
        const l = where.get(id)!;
        if (!l.text) {
          quirks.add('empty-evidence-text', 'evidence turns with no text (not a fact)', `${sampleId} ${id}`);
          continue;
        }
        b.factAt(l.turn, id, l.text);
        probe.push(id);
      }
    }
    if (q.answer === undefined) quirks.add('no-answer', 'questions without an answer (adversarial: no reply)', `${sampleId} qa[${j}]`);
    b.push({ user: q.question, ...(probe.length && { probe }), ...(q.answer !== undefined && { assistant: String(q.answer) }) });
  });

  return {
    id: `${opts.prefix}-${slug(sampleId)}`,
    title: `${userName} and ${assistantName}`,
    user: slug(userName) || 'user',
    turns: b.finish(),
  };
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}
