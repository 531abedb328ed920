import { ScenarioError, UsageError, type Problem } from '../../errors.js';
import { OPENAI_NAME } from '../../message-rules/provider.js';
import type { Conversation } from '../../types.js';
import { validateDocs, type ScenarioOut, type TurnOut } from '../docs.js';
import { turnDocText } from '../load.js';
import { SourceDoc } from '../../text/document.js';
import { normalize, occursIn } from '../../text/normalize.js';
import { abcd } from './abcd.js';
import { anthropic } from './anthropic.js';
import { claudeCode } from './claude-code.js';
import { locomo } from './locomo.js';
import { multiwoz } from './multiwoz.js';
import { openai } from './openai.js';
import { sgd } from './sgd.js';
import { sweAgent } from './swe-agent.js';
import { QuirkLog, type ImportInput, type Importer, type Quirk } from './types.js';

export type { ImportInput, Importer, ImportResult, Quirk } from './types.js';
export { UnreadableFile } from './_read.js';
export { importOptions, type ImportOption } from './options.js';

/** Every dataset format, by id. */
export const IMPORTERS: ReadonlyMap<string, Importer> = new Map<string, Importer>(
  [openai, locomo, abcd, multiwoz, claudeCode, sweAgent, anthropic, sgd].map((i) => [i.id, i]),
);

/** The importer for a format, or a usage error listing the known ones. */
export function importerFor(format: string): Importer {
  const i = IMPORTERS.get(format);
  if (!i) throw new UsageError(`unknown import format "${format}"; expected one of ${[...IMPORTERS.keys()].join(', ')}`);
  return i;
}

/** What an import produced: validated conversations, their documents, and a summary with the quirks. */
export interface Imported {
  docs: ScenarioOut[];
  conversations: Conversation[];
  report: ImportReport;
}

/** Returned as data and printed on stderr by the CLI. */
export interface ImportReport {
  format: string;
  file: string;
  conversations: number;
  turns: number;
  facts: number;
  probes: number;
  quirks: Quirk[];
  /** The models the transcripts were recorded on (their `model:`), with how many conversations name each and the alias the log wrote, if any. */
  models: RecordedModel[];
}

/** A model transcripts were recorded on, as an import found it. */
export interface RecordedModel {
  model: string;
  /** The name the log wrote, when it was an alias (SWE-agent's `gpt4`). */
  alias?: string;
  conversations: number;
}

/**
 * Imports a dataset: checks the options against the format's schema, reads,
 * and validates every conversation like a scenario file. Any problem throws
 * one ScenarioError: never a partial set.
 */
export function importDataset(format: string, input: ImportInput, rawOptions: Record<string, unknown> = {}): Imported {
  const importer = importerFor(format);
  const problems: Problem[] = [];
  const opts = SourceDoc.fromValue('options', rawOptions).check(importer.options, rawOptions, [], problems);
  if (!opts) throw new UsageError(`import ${format}: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  const read = importer.read(input, opts);
  const docs = read.docs;
  const quirks = [...read.quirks, ...dropUnstatedFacts(docs), ...addWarmStarts(docs)];
  if (!docs.length) throw new ScenarioError([{ file: input.file, path: '', message: 'no conversations in the file' }]);
  const conversations = validateDocs(docs, (d) => `${input.file}#${d.id}`);
  quirks.push(...openaiNames(conversations));
  let turns = 0;
  let facts = 0;
  let probes = 0;
  for (const c of conversations) {
    turns += c.turns.length;
    for (const t of c.turns) {
      facts += Object.keys(t.facts).length;
      probes += t.probe.length;
    }
  }
  return { docs, conversations, report: { format, file: input.file, conversations: conversations.length, turns, facts, probes, quirks, models: recordedModels(docs, read.aliases ?? new Map()) } };
}

/**
 * Names OpenAI's chat API refuses on a message (a speaker "José María"):
 * kept as the data wrote them, and counted, since the run does not blame a
 * policy for what the scenario wrote (message-rules/blame.ts).
 */
function openaiNames(conversations: readonly Conversation[]): Quirk[] {
  const log = new QuirkLog();
  for (const c of conversations) {
    const names = new Set<string>();
    for (const m of [...c.system, ...c.turns.flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])])]) if (m.name !== undefined) names.add(m.name);
    for (const name of names) {
      if (!OPENAI_NAME.test(name)) log.add('openai-name', "names OpenAI's chat API refuses (only letters, digits, _ and -: kept as written; under the openai rules they are the scenario's, not counted against a policy)", `${c.id} ${JSON.stringify(name)}`);
    }
  }
  return log.list();
}

/** The models the documents name, in order of first appearance. */
function recordedModels(docs: readonly ScenarioOut[], aliases: ReadonlyMap<string, string>): RecordedModel[] {
  const byName = new Map<string, RecordedModel>();
  for (const d of docs) {
    if (d.model === undefined) continue;
    const m = byName.get(d.model);
    if (m) m.conversations++;
    else {
      const alias = aliases.get(d.model);
      byName.set(d.model, { model: d.model, ...(alias !== undefined && { alias }), conversations: 1 });
    }
  }
  return [...byName.values()];
}

/**
 * A fact whose value its turn does not contain is an error in a scenario
 * file; in a dataset it is a quirk: the fact is dropped (with the probes and
 * forget entries that named only it) before validation, and counted.
 */
export function dropUnstatedFacts(docs: ScenarioOut[]): Quirk[] {
  const log = new QuirkLog();
  for (const doc of docs) {
    const stated = new Set<string>();
    const dropped = new Set<string>();
    const turns: ScenarioOut['turns'] = [];
    for (const item of doc.turns) {
      if ('forget' in item) {
        const forget = item.forget.filter((f) => stated.has(f) || !dropped.has(f));
        if (forget.length) turns.push({ forget });
        continue;
      }
      const t: TurnOut = { ...item };
      if (t.facts) {
        const text = normalize(turnDocText(t));
        const facts: Record<string, string> = {};
        for (const [name, value] of Object.entries(t.facts)) {
          if (occursIn(text, normalize(value))) {
            facts[name] = value;
            stated.add(name);
          } else {
            dropped.add(name);
            log.add('fact-not-in-turn', 'facts whose value their turn does not contain (dropped)', `${doc.id} ${name}`);
          }
        }
        if (Object.keys(facts).length) t.facts = facts;
        else delete t.facts;
      }
      if (t.probe) {
        const probe = t.probe.filter((p) => stated.has(p) || !dropped.has(p));
        if (probe.length < t.probe.length) log.add('probe-of-dropped-fact', 'probes of dropped facts (skipped)', `${doc.id} ${t.probe.filter((p) => !probe.includes(p)).join(', ')}`);
        if (probe.length) t.probe = probe;
        else delete t.probe;
      }
      turns.push(t);
    }
    doc.turns = turns;
  }
  return log.list();
}

/**
 * A transcript whose first model call found part of its prompt in the
 * provider's cache (an earlier session or call of the agent wrote it: its
 * system prompt and tools, most often) starts warm: `warm_start:` with the
 * tokens that call read, put before the turns of each such document. Only
 * the first call tells: a later one's reads may be this conversation's own
 * writes. Counted as a quirk, so the import report says so.
 */
function addWarmStarts(docs: ScenarioOut[]): Quirk[] {
  const log = new QuirkLog();
  docs.forEach((doc, i) => {
    const first = doc.turns.find((t): t is TurnOut => !('forget' in t));
    // The first call writes the first round, or the reply when the turn has no tools (a round without its usage: none known).
    const round = first?.tools?.[0];
    const usage = round ? ('calls' in round ? round.usage : undefined) : first?.usage;
    if (!usage?.cached) return;
    const { turns, ...head } = doc;
    docs[i] = { ...head, warm_start: { cached: usage.cached }, turns };
    log.add('warm-start', 'conversations whose first call found part of its prompt cached, written before it (warm_start: the replay starts with it cached; run --cold-start to start empty)', `${doc.id} ${usage.cached}`);
  });
  return log.list();
}

/** The report as lines: a count line, a line per model the transcripts were recorded on, then one line per quirk with examples. */
export function formatImportReport(r: ImportReport): string[] {
  const lines = [`${r.format} ${r.file}: ${r.conversations} conversations, ${r.turns} turns, ${r.facts} facts, ${r.probes} probes`];
  for (const m of r.models) {
    const many = r.conversations > 1 ? ` (${m.conversations} of ${r.conversations} conversations)` : '';
    lines.push(`  recorded on ${m.model}${m.alias !== undefined ? ` (the log names it ${m.alias}, a shortcut)` : ''}${many}: name it in the study's models: to replay on it`);
  }
  for (const q of r.quirks) lines.push(`  ${q.count} ${q.label}${q.examples.length ? ` (e.g. ${q.examples.join('; ')})` : ''}`);
  return lines;
}
