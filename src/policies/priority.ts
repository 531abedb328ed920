import { z } from 'zod';
import { transcriptArtifact } from './_forget.js';
import { fixedTokens, pinned, sum, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { BUDGET, int } from './params.js';
import type { Exchange } from './types.js';

/**
 * Fills `budget` by priority: the last `keepRecent` exchanges (newest first,
 * while they fit); then every older exchange that made tool calls — the
 * request, the calls with their results and the reply (newest first, each one
 * that fits); then the other older exchanges newest-first while they fit.
 * Exchanges are kept whole, so what is sent reads as the conversation did, in
 * its order.
 */
export const priority = definePolicy({
  id: 'priority',
  describe: 'recent exchanges, then every tool call with its result, then older exchanges, under a token budget',
  params: z.object({
    budget: int({ default: 2000, min: 1, describe: BUDGET }),
    keepRecent: int({ default: 2, min: 0, describe: 'newest exchanges taken first, while they fit' }),
  }),
  start(conversation, params, { tokens }) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const budget = params.budget;
    const keepRecent = params.keepRecent;
    // Per stored exchange, while it is the same object (a redaction or a restart replaces it): its tokens, and whether it made tool calls.
    const measured: Exchange[] = [];
    const sizes: number[] = [];
    const tooled: boolean[] = [];
    const measure = (ex: readonly Exchange[]) => {
      for (let i = 0; i < ex.length; i++) {
        if (measured[i] === ex[i]) continue;
        measured[i] = ex[i]!;
        sizes[i] = sum(tokens, ex[i]!);
        tooled[i] = ex[i]!.some((m) => m.toolCalls?.length);
      }
      measured.length = sizes.length = tooled.length = ex.length;
    };
    return {
      prompt(pending) {
        let room = budget - fixedTokens(tokens, [...head, ...pending]);
        if (room < 0) return { messages: [...head, ...pending], overBudget: true, upkeep: [], stablePrefix: head.length };
        const ex = history.exchanges;
        measure(ex);
        const chosen = new Uint8Array(ex.length);
        const take = (i: number) => {
          if (sizes[i]! > room) return false;
          room -= sizes[i]!;
          chosen[i] = 1;
          return true;
        };
        for (let i = ex.length - 1; i >= Math.max(0, ex.length - keepRecent); i--) if (!take(i)) break;
        for (let i = ex.length - 1; i >= 0; i--) if (!chosen[i] && tooled[i]) take(i);
        for (let i = ex.length - 1; i >= 0; i--) if (!chosen[i] && !take(i)) break;
        const messages = [...head];
        for (let i = 0; i < ex.length; i++) if (chosen[i]) for (const m of ex[i]!) messages.push(m);
        for (const m of pending) messages.push(m);
        return { messages, overBudget: false, upkeep: [], stablePrefix: head.length };
      },
      ...transcriptMemory(history, params),
      // A tool exchange of any age may come back: it stores the whole session.
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
});
