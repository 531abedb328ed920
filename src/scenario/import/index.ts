import { ScenarioError, UsageError, type Problem } from '../../errors.js';
import type { Conversation } from '../../types.js';
import { validateDocs, type ScenarioOut } from '../docs.js';
import { SourceDoc } from '../../text/document.js';
import { abcd } from './abcd.js';
import { locomo } from './locomo.js';
import { multiwoz } from './multiwoz.js';
import { openai } from './openai.js';
import type { ImportInput, Importer, Quirk } from './types.js';

export type { ImportInput, Importer, ImportResult, Quirk } from './types.js';

/** Every dataset format, by id. */
export const IMPORTERS: ReadonlyMap<string, Importer> = new Map<string, Importer>(
  [openai, locomo, abcd, multiwoz].map((i) => [i.id, i as unknown as Importer]),
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
  const { docs, quirks } = importer.read(input, opts);
  if (!docs.length) throw new ScenarioError([{ file: input.file, path: '', message: 'no conversations in the file' }]);
  const conversations = validateDocs(docs, (d) => `${input.file}#${d.id}`);
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
  return { docs, conversations, report: { format, file: input.file, conversations: conversations.length, turns, facts, probes, quirks } };
}

/** The report as lines: a count line, then one line per quirk with examples. */
export function formatImportReport(r: ImportReport): string[] {
  const lines = [`${r.format} ${r.file}: ${r.conversations} conversations, ${r.turns} turns, ${r.facts} facts, ${r.probes} probes`];
  for (const q of r.quirks) lines.push(`  ${q.count} ${q.label}${q.examples.length ? ` (e.g. ${q.examples.join('; ')})` : ''}`);
  return lines;
}
