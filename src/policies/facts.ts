import { z } from 'zod';
import type { Message } from '../types.js';
import { extract } from '../upkeep/extractor.js';
import { holds, redactText } from '../upkeep/redact.js';
import { artifact, cascades, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { pinned, Transcript } from './_transcript.js';
import { definePolicy } from './define.js';
import { int, model as modelParam, probability } from './params.js';

/**
 * A pinned fact sheet ("Known facts: name: Kavya; order_id: SE-10423") plus
 * the last `recent` exchanges. After each turn one extraction call reads the
 * turn and updates the sheet; a later value of a fact replaces the earlier
 * one. The sheet is long-term memory: it survives a session restart.
 */
export const facts = definePolicy({
  id: 'facts',
  describe: 'a fact sheet kept up to date by an extraction call each turn, plus recent exchanges',
  params: z.object({
    recent: int({ default: 4, min: 0, describe: 'exchanges sent verbatim after the fact sheet' }),
    extractModel: modelParam({ describe: 'model the extraction call runs on (default: the chat model)' }),
    recall: probability({ default: 1, describe: 'chance that the extractor finds each fact a turn states' }),
  }),
  start(conversation, params, { tokens, random, model }) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const recent = params.recent;
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
          model: params.extractModel ?? model,
          recall: params.recall,
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
});
