import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import type { DocPath } from '../../text/document.js';
import type { ScenarioOut, ToolOut } from '../docs.js';
import { DatasetIds, JsonSource, datasetId, parseJson, readText } from './_read.js';
import { datasetPrefix } from './_shared-options.js';
import { TurnBuilder } from './_turns.js';
import { QuirkLog, type Importer } from './types.js';

const options = z.strictObject({
  prefix: datasetPrefix('sgd'),
});

/** Schema-Guided Dialogue (SGD) import options. */
export type SgdOptions = z.output<typeof options>;

const span = z.looseObject({ slot: z.string().min(1), start: z.number().int().min(0), exclusive_end: z.number().int().min(0) });
const action = z.looseObject({ act: z.string(), slot: z.string(), values: z.array(z.string()).optional() });
const frame = z.looseObject({
  service: z.string().min(1),
  slots: z.array(span).optional(),
  actions: z.array(action).optional(),
  state: z.looseObject({ slot_values: z.record(z.string(), z.array(z.string())).optional() }).optional(),
  service_call: z.looseObject({ method: z.string().min(1), parameters: z.record(z.string(), z.string()).optional() }).optional(),
  service_results: z.array(z.record(z.string(), z.unknown())).optional(),
});
const turn = z.looseObject({
  speaker: z.enum(['USER', 'SYSTEM']),
  utterance: z.string(),
  frames: z.array(frame).optional(),
});
const dialogue = z.looseObject({
  dialogue_id: z.string().min(1),
  services: z.array(z.string()).optional(),
  turns: z.array(turn).min(1),
});
type Dialogue = z.infer<typeof dialogue>;

/**
 * SGD dialogues (`dialogues_NNN.json`: a JSON array of `{dialogue_id,
 * services, turns}`), one conversation each: a USER utterance opens a turn,
 * the SYSTEM utterance after it is the reply. The values the user states
 * (the frames' `slots` character spans) are facts named `<service>.<slot>`;
 * a later turn whose system frame calls the service with that slot, while
 * the user's dialogue state still holds the stated value, probes it. Each
 * `service_call` is a tool call on its turn (method, parameters, and as
 * result the number of `service_results` and the first of them).
 */
export const sgd: Importer<SgdOptions> = {
  id: 'sgd',
  describe: 'Schema-Guided Dialogue (DSTC8; JSON array of dialogues); user slot values as facts, service calls as tool calls',
  options,
  read({ path, file }, opts) {
    const text = readText(path, file);
    const root = parseJson(text, file);
    const src = new JsonSource(file, text);
    if (!Array.isArray(root)) throw new ScenarioError([src.problem([], 'expected a JSON array of SGD dialogues')]);
    const problems: Problem[] = [];
    const quirks = new QuirkLog();
    const docs: ScenarioOut[] = [];
    const ids = new DatasetIds(src);
    root.forEach((raw, i) => {
      const d = src.check(dialogue, raw, [i], problems);
      if (!d) return;
      const bad = badSpans(d, [i]);
      if (bad.length) return void problems.push(...bad.map(([at, msg]) => src.problem(at, msg)));
      const doc = dialogueDoc(d, opts, quirks);
      if (ids.add(doc.id, [i, 'dialogue_id'], problems)) docs.push(doc);
    });
    if (problems.length) throw new ScenarioError(problems);
    return { docs, quirks: quirks.list() };
  },
};

/** Slot spans outside their utterance, or ending before they start: a path and message each. */
function badSpans(d: Dialogue, at: DocPath): [DocPath, string][] {
  const out: [DocPath, string][] = [];
  d.turns.forEach((t, k) => {
    const length = [...t.utterance].length;
    (t.frames ?? []).forEach((f, j) =>
      (f.slots ?? []).forEach((s, n) => {
        if (s.exclusive_end <= s.start || s.exclusive_end > length)
          out.push([[...at, 'turns', k, 'frames', j, 'slots', n], `span ${s.start}..${s.exclusive_end} is not inside the utterance (${length} characters)`]);
      }),
    );
  });
  return out;
}

/** The text of a slot span: SGD counts its offsets in characters (code points, as Python indexes a string), not UTF-16 units. */
function spanText(utterance: string, start: number, end: number): string {
  return [...utterance].slice(start, end).join('');
}

const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

function dialogueDoc(d: Dialogue, opts: SgdOptions, quirks: QuirkLog): ScenarioOut {
  const b = new TurnBuilder();
  /** The current value of each fact stated so far, by name (`service.slot`). */
  const stated = new Map<string, string>();
  /** The turn (1-based) where each fact got its current value. */
  const factTurn = new Map<string, number>();
  /** The user's latest dialogue state, by service. */
  const state = new Map<string, Record<string, string[]>>();
  const services = new Set(d.services ?? []);
  let last: 'USER' | 'SYSTEM' | undefined;
  for (const t of d.turns) {
    for (const f of t.frames ?? []) services.add(f.service);
    if (t.speaker === 'USER') {
      if (last === 'USER') quirks.add('user-twice', 'user utterances in a row (merged into one turn)', d.dialogue_id);
      b.user(t.utterance);
      last = 'USER';
      for (const f of t.frames ?? []) {
        if (f.state?.slot_values) state.set(f.service, f.state.slot_values);
        const spanned = new Set<string>();
        for (const s of f.slots ?? []) {
          spanned.add(s.slot);
          note(`${f.service}.${s.slot}`, spanText(t.utterance, s.start, s.exclusive_end));
        }
        // A value the user informs without a span (a categorical slot: "for one" is party_size 1) is a fact only if it is written as is.
        for (const a of f.actions ?? []) {
          if (a.act !== 'INFORM' || spanned.has(a.slot)) continue;
          for (const v of a.values ?? []) {
            const written = findWord(t.utterance, v);
            if (written) note(`${f.service}.${a.slot}`, written);
            else quirks.add('value-not-in-utterance', 'values the user informs that the utterance does not contain (no fact)', `${d.dialogue_id} ${f.service}.${a.slot}=${v}`);
          }
        }
      }
      continue;
    }
    const calls: ToolOut[] = [];
    for (const f of t.frames ?? []) {
      const call = f.service_call;
      if (!call) continue;
      const results = f.service_results ?? [];
      const params = call.parameters ?? {};
      calls.push({
        call: call.method,
        ...(Object.keys(params).length && { args: params }),
        result: results.length ? { count: results.length, first: results[0] } : { count: 0 },
      });
      // The call needs each stated fact of its service whose slot it passes, while the user's state still holds the stated value.
      const held = state.get(f.service) ?? {};
      for (const [slot, param] of Object.entries(params)) {
        const name = `${f.service}.${slot}`;
        const value = stated.get(name);
        if (value === undefined || b.turn === factTurn.get(name)) continue;
        if (same(param, value) || (held[slot] ?? []).some((v) => same(v, value))) b.probe(name);
      }
    }
    if (calls.length) {
      if (b.round()) quirks.add('system-first', 'dialogues opened by the system (turn with an empty user message)', d.dialogue_id);
      for (const c of calls) b.tool(c);
    }
    if (b.assistant(t.utterance)) quirks.add('system-first', 'dialogues opened by the system (turn with an empty user message)', d.dialogue_id);
    last = 'SYSTEM';
  }
  if (services.size > 1) quirks.add('several-services', 'dialogues with several services (facts named per service)', `${d.dialogue_id} ${[...services].join(', ')}`);
  return {
    id: datasetId(opts.prefix, d.dialogue_id),
    ...(services.size && { title: `SGD: ${[...services].join(', ')}` }),
    turns: b.finish(),
  };

  /** States a fact on the open turn, unless it restates the current value. */
  function note(name: string, value: string): void {
    const v = value.trim();
    if (!v) return;
    const cur = stated.get(name);
    if (cur !== undefined && same(cur, v)) return;
    stated.set(name, v);
    factTurn.set(name, b.turn);
    b.fact(name, v);
  }
}

/** `value` as written in `text` (case-insensitive, as a whole word or phrase), or undefined. */
function findWord(text: string, value: string): string | undefined {
  const v = value.trim();
  if (!v) return undefined;
  const m = new RegExp(`(?<![\\p{L}\\p{N}])${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'iu').exec(text);
  return m?.[0];
}
