import { z } from 'zod';
import { transcriptArtifact } from './_forget.js';
import { fixedTokens, pinned, sum, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { BUDGET, int } from './params.js';

/** The last `turns` exchanges, then the earliest dropped while the prompt is over `budget`. */
export const window = definePolicy({
  id: 'window',
  describe: 'last N exchanges, then drop the earliest while over the token budget',
  params: z.object({
    turns: int({ default: 10, min: 0, describe: 'exchanges sent at most before the current turn' }),
    budget: int({ default: 2000, min: 1, describe: BUDGET }),
  }),
  start(conversation, params, { tokens }) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const budget = params.budget;
    const turns = params.turns;
    return {
      prompt(pending) {
        const room = budget - fixedTokens(tokens, [...head, ...pending]);
        const exchanges = history.exchanges.slice(Math.max(0, history.exchanges.length - turns));
        const sizes = exchanges.map((e) => sum(tokens, e));
        let used = sizes.reduce((a, b) => a + b, 0);
        let first = 0;
        while (first < exchanges.length && used > Math.max(room, 0)) used -= sizes[first++]!;
        const kept = exchanges.slice(first).flat();
        return { messages: [...head, ...kept, ...pending], overBudget: room < 0, upkeep: [], stablePrefix: head.length };
      },
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(history.messages(Math.max(0, history.exchanges.length - turns)))],
    };
  },
});
