import { z } from 'zod';
import { cascades, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { FactSheet, SHEET_TOKENS } from './_memory.js';
import { pinned, Transcript } from './_transcript.js';
import { definePolicy } from './define.js';
import { int, model as modelParam, probability } from './params.js';

/**
 * A pinned fact sheet ("Known facts: The user is Kavya. The user’s order
 * SE-10423 hasn't arrived.") plus the last `recent` exchanges. After each
 * turn one extraction call reads the turn and updates the sheet (the
 * simulated one writes each statement it finds; a later statement or value
 * of the same fact replaces the earlier one), and
 * the sheet stays within `sheetTokens`. The sheet is long-term
 * memory: it survives a session restart.
 */
export const facts = definePolicy({
  id: 'facts',
  describe: 'a fact sheet kept up to date by an extraction call each turn, plus recent exchanges',
  params: z.object({
    recent: int({ default: 4, min: 0, describe: 'exchanges sent verbatim after the fact sheet' }),
    extractModel: modelParam({ describe: 'model the extraction call runs on (default: the chat model)' }),
    recall: probability({ default: 1, describe: 'chance that the extractor finds each statement of a turn\'s messages (a short third-person sentence for each sentence that says something of a speaker, the one spoken to or the task; one draw each)' }),
    sheetTokens: int({ default: SHEET_TOKENS, min: 1, describe: 'most tokens the fact sheet may have; when it would be longer, statements are dropped: the least salient first, then the one found in the fewest turns, then the one found longest ago' }),
  }),
  start(conversation, params, deps) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const recent = params.recent;
    const sheet = new FactSheet(params, deps);
    const kept = () => history.messages(Math.max(0, history.exchanges.length - recent));
    return {
      prompt(pending) {
        const memory = sheet.messages();
        return { messages: head.concat(memory, kept(), pending), overBudget: false, upkeep: [], stablePrefix: head.length + memory.length };
      },
      commit(exchange, info) {
        if (moderated(params, info)) return [];
        const call = sheet.read(exchange, info);
        history.add(exchange);
        return [call];
      },
      // Cascade: the forgotten facts leave the sheet, and their values any other entry (a store edit, not a model call).
      forget(facts) {
        history.redact(valuesOf(facts));
        if (cascades(params)) sheet.erase(facts);
        return [];
      },
      artifacts: () => [transcriptArtifact(kept()), sheet.artifact()],
    };
  },
});
