import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import type { ScenarioOut } from '../docs.js';
import { DatasetIds, JsonSource, datasetId, parseJson, readText } from './_read.js';
import { datasetPrefix } from './_shared-options.js';
import { TurnBuilder } from './_turns.js';
import { QuirkLog, type Importer } from './types.js';

const options = z.strictObject({
  prefix: datasetPrefix('multiwoz'),
  ask: z.boolean().default(true).describe('end with a user turn asking for the booking references, which probes them'),
});

/** MultiWOZ (ConvLab unified format) import options. */
export type MultiwozOptions = z.output<typeof options>;

const span = z.looseObject({ intent: z.string(), domain: z.string(), slot: z.string(), value: z.string(), start: z.number().int().optional(), end: z.number().int().optional() });
const turn = z.looseObject({
  speaker: z.enum(['user', 'system']),
  utterance: z.string(),
  dialogue_acts: z.looseObject({ 'non-categorical': z.array(span).optional() }).optional(),
});
const dialogue = z.looseObject({
  dialogue_id: z.string(),
  original_id: z.string().optional(),
  domains: z.array(z.string()).optional(),
  turns: z.array(turn).min(1),
});

/**
 * MultiWOZ dialogues in ConvLab's unified format: user → user, system →
 * assistant. Each booking reference a system turn gives (a `ref` span) is a
 * fact stated on that turn; with `ask`, a final user turn asks for them all.
 */
export const multiwoz: Importer<MultiwozOptions> = {
  id: 'multiwoz',
  describe: 'MultiWOZ in ConvLab unified format (JSON array of dialogues); booking references as facts',
  options,
  read({ path, file }, opts) {
    const text = readText(path, file);
    const root = parseJson(text, file);
    const src = new JsonSource(file, text);
    if (!Array.isArray(root)) throw new ScenarioError([src.problem([], 'expected a JSON array of dialogues')]);
    const problems: Problem[] = [];
    const quirks = new QuirkLog();
    const docs: ScenarioOut[] = [];
    const ids = new DatasetIds(src);
    root.forEach((raw, i) => {
      const d = src.check(dialogue, raw, [i], problems);
      if (!d) return;
      const doc = dialogueDoc(d, opts, quirks);
      if (ids.add(doc.id, [i, d.original_id !== undefined ? 'original_id' : 'dialogue_id'], problems)) docs.push(doc);
    });
    if (problems.length) throw new ScenarioError(problems);
    return { docs, quirks: quirks.list() };
  },
};

function dialogueDoc(d: z.infer<typeof dialogue>, opts: MultiwozOptions, quirks: QuirkLog): ScenarioOut {
  const name = (d.original_id ?? d.dialogue_id).replace(/\.json$/i, '');
  const b = new TurnBuilder();
  const refs: { fact: string; domain: string; value: string }[] = [];
  for (const t of d.turns) {
    if (t.speaker === 'user') {
      b.user(t.utterance);
      continue;
    }
    if (b.assistant(t.utterance)) quirks.add('system-first', 'dialogues opened by the system (turn with an empty user message)', d.dialogue_id);
    for (const a of t.dialogue_acts?.['non-categorical'] ?? []) {
      if (a.slot !== 'ref') continue;
      // The reference as written in the utterance (the span), else the act's value.
      const written = a.start !== undefined && a.end !== undefined ? t.utterance.slice(a.start, a.end) : '';
      const value = written.toLowerCase() === a.value.toLowerCase() ? written : a.value;
      if (!t.utterance.toLowerCase().includes(value.toLowerCase())) {
        quirks.add('ref-not-in-text', 'booking references not in their utterance (skipped)', `${d.dialogue_id} ${a.value}`);
        continue;
      }
      if (refs.some((r) => r.value === value)) continue;
      const n = refs.filter((r) => r.domain === a.domain).length;
      const fact = `${a.domain}_ref${n ? `_${n + 1}` : ''}`;
      refs.push({ fact, domain: a.domain, value });
      b.fact(fact, value);
    }
  }
  if (opts.ask && refs.length) {
    const which = refs.length === 1 ? `my ${refs[0]!.domain} booking reference` : 'my booking references';
    b.push({
      user: `Before I go, could you repeat ${which}?`,
      probe: refs.map((r) => r.fact),
      assistant: refs.map((r) => `Your ${r.domain} reference is ${r.value}.`).join(' '),
    });
  }
  const domains = (d.domains ?? []).filter((x) => x !== 'general');
  return {
    id: datasetId(opts.prefix, name),
    ...(domains.length && { title: `MultiWOZ: ${domains.join(', ')}` }),
    turns: b.finish(),
  };
}
