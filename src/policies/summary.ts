import { z } from 'zod';
import type { UpkeepCall } from '../types.js';
import { TurnGate } from './_memory.js';
import { RunningSummary, SUMMARIZER_PARAMS } from './_summary.js';
import { pinned, sum } from './_transcript.js';
import { definePolicy } from './define.js';
import { int } from './params.js';

/**
 * "Compress when too long": the messages since the last summarization are
 * sent verbatim until they (with the new user message) exceed `threshold`
 * tokens; then one summarizer call folds them all, with the old summary, into
 * a new running summary, and only the new user message stays verbatim.
 */
export const summary = definePolicy({
  id: 'summary',
  describe: 'fold the whole history into a running summary when it exceeds a threshold',
  params: z.object({
    threshold: int({ default: 3000, min: 1, describe: 'tokens of unsummarized messages (with the new user message) above which they are folded' }),
    ...SUMMARIZER_PARAMS,
  }),
  start(conversation, params, deps) {
    const { tokens } = deps;
    const memory = new RunningSummary(params, deps);
    const head = pinned(conversation);
    const threshold = params.threshold;
    const gate = new TurnGate();
    return {
      prompt(pending, info) {
        const upkeep: UpkeepCall[] = [];
        const open = memory.openCount();
        if (gate.first(info) && open && memory.openTokens() + sum(tokens, pending) > threshold) {
          upkeep.push(memory.fold(open));
        }
        const summary = memory.message();
        return { messages: head.concat(summary, memory.history.messages(memory.folded), pending), overBudget: false, upkeep, stablePrefix: head.length + summary.length };
      },
      commit: memory.commit,
      forget: memory.forget,
      artifacts: memory.artifacts,
    };
  },
});
