import { transcriptArtifact, transcriptMemory } from './_forget.js';
import { fixedTokens, pinned, sum, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/** The last `turns` exchanges, then the earliest dropped while the prompt is over `budget`. */
export const window: Policy = {
  id: 'window',
  describe: 'last N exchanges, then drop the earliest while over the token budget',
  params: {
    turns: { default: 10, kind: 'int', min: 0 },
    budget: { default: 2000, kind: 'int', min: 1 },
  },
  start(conversation, params, { tokens }) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    const budget = params.budget as number;
    const turns = params.turns as number;
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
};
