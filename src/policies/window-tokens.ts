import { z } from 'zod';
import { transcriptArtifact } from './_forget.js';
import { fixedTokens, fromFirstUser, newestThatFit, pinned, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { BUDGET, int } from './params.js';

/** The newest messages that fit `budget`, then no leading reply or tool result. */
export const windowTokens = definePolicy({
  id: 'window-tokens',
  describe: 'newest messages that fit the token budget',
  params: z.object({
    budget: int({ default: 2000, min: 1, describe: BUDGET }),
  }),
  start(conversation, params, { tokens }) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const budget = params.budget;
    return {
      prompt(pending) {
        const room = budget - fixedTokens(tokens, [...head, ...pending]);
        const kept = room > 0 ? fromFirstUser(newestThatFit(tokens, history.flat, room)) : [];
        return { messages: [...head, ...kept, ...pending], overBudget: room < 0, upkeep: [], stablePrefix: head.length };
      },
      ...transcriptMemory(history, params),
      // A message older than the newest that fit the budget next to the system prompt alone can never be sent again.
      artifacts: () => [transcriptArtifact(newestThatFit(tokens, history.flat, budget - fixedTokens(tokens, head)))],
    };
  },
});
