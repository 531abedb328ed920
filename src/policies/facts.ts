import type { Message } from '../types.js';
import { extract } from '../upkeep/extractor.js';
import { holds, redactText } from '../upkeep/redact.js';
import { artifact, cascades, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { pinned, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/**
 * A pinned fact sheet ("Known facts: name: Kavya; order_id: SE-10423") plus
 * the last `recent` exchanges. After each turn one extraction call reads the
 * turn and updates the sheet; a later value of a fact replaces the earlier
 * one. The sheet is long-term memory: it survives a session restart.
 */
export const facts: Policy = {
  id: 'facts',
  describe: 'a fact sheet kept up to date by an extraction call each turn, plus recent exchanges',
  params: {
    recent: { default: 4, kind: 'int', min: 0 },
    extractModel: { default: undefined, kind: 'string' },
    recall: { default: 1, kind: 'probability' },
  },
  start(conversation, params, { tokens, random, model }) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    const recent = params.recent as number;
    const known = new Map<string, string>();
    // One message object per version of the sheet, so it is counted once and stays a stable prefix.
    let sheet: Message | undefined;
    const write = () => {
      sheet = known.size ? { role: 'system', content: `Known facts: ${[...known].map(([k, v]) => `${k}: ${v}`).join('; ')}`, origin: 'facts' } : undefined;
    };
    const kept = () => history.messages(Math.max(0, history.exchanges.length - recent));
    return {
      prompt(pending) {
        const memory = sheet ? [sheet] : [];
        return { messages: head.concat(memory, kept(), pending), overBudget: false, upkeep: [], stablePrefix: head.length + memory.length };
      },
      commit(exchange, info) {
        if (moderated(params, info)) return [];
        const r = extract({
          tokens,
          random,
          model: (params.extractModel as string | undefined) ?? model,
          recall: params.recall as number,
          exchange,
          stated: Object.entries(info.turn.facts),
          injection: info.turn.injection,
        });
        let changed = false;
        for (const [name, value] of r.found) {
          if (known.get(name) === value) continue;
          known.set(name, value);
          changed = true;
        }
        if (changed) write();
        history.add(exchange);
        return [r.call];
      },
      // Cascade: the forgotten facts leave the sheet, and their values any other entry (a store edit, not a model call).
      forget(facts) {
        const values = valuesOf(facts);
        history.redact(values);
        if (!cascades(params)) return [];
        const names = new Set(facts.map((f) => f.name));
        let changed = false;
        for (const [name, value] of [...known]) {
          if (names.has(name)) known.delete(name);
          else if (holds(value, values)) known.set(name, redactText(value, values));
          else continue;
          changed = true;
        }
        if (changed) write();
        return [];
      },
      artifacts: () => [transcriptArtifact(kept()), artifact('facts', sheet ? [sheet.content] : [])],
    };
  },
};
