import { transcriptArtifact, transcriptMemory } from './_forget.js';
import { fixedTokens, pinned, sum, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/**
 * Fills `budget` by priority: the last `keepRecent` exchanges (newest first,
 * while they fit); then every older exchange that made tool calls — the
 * request, the calls with their results and the reply (newest first, each one
 * that fits); then the other older exchanges newest-first while they fit.
 * Exchanges are kept whole, so what is sent reads as the conversation did, in
 * its order.
 */
export const priority: Policy = {
  id: 'priority',
  describe: 'recent exchanges, then every tool call with its result, then older exchanges, under a token budget',
  params: {
    budget: { default: 2000, kind: 'int', min: 1 },
    keepRecent: { default: 2, kind: 'int', min: 0 },
  },
  start(conversation, params, { tokens }) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    const budget = params.budget as number;
    const keepRecent = params.keepRecent as number;
    return {
      prompt(pending) {
        let room = budget - fixedTokens(tokens, [...head, ...pending]);
        if (room < 0) return { messages: [...head, ...pending], overBudget: true, upkeep: [], stablePrefix: head.length };
        const ex = history.exchanges;
        const chosen = new Array<boolean>(ex.length).fill(false);
        const take = (i: number) => {
          const size = sum(tokens, ex[i]!);
          if (size > room) return false;
          room -= size;
          chosen[i] = true;
          return true;
        };
        for (let i = ex.length - 1; i >= Math.max(0, ex.length - keepRecent); i--) if (!take(i)) break;
        for (let i = ex.length - 1; i >= 0; i--) if (!chosen[i] && ex[i]!.some((m) => m.toolCalls?.length)) take(i);
        for (let i = ex.length - 1; i >= 0; i--) if (!chosen[i] && !take(i)) break;
        const kept = ex.filter((_, i) => chosen[i]).flat();
        return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };
      },
      ...transcriptMemory(history, params),
      // A tool exchange of any age may come back: it stores the whole session.
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
};
