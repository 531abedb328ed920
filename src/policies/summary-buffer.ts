import { z } from 'zod';
import type { UpkeepCall } from '../types.js';
import { newestExchangesThatFit, systemMessageTokens, TurnGate } from './_memory.js';
import { RunningSummary, SUMMARIZER_PARAMS } from './_summary.js';
import { fixedTokens, pinned, sum } from './_transcript.js';
import { definePolicy } from './define.js';
import { BUDGET, int } from './params.js';

/**
 * System prompt + running summary + the recent exchanges verbatim, under
 * `budget`. Exchanges that leave the buffer are folded into the summary in
 * batches: the buffer may grow to `keepRecent + batch` exchanges (batch
 * defaults to `keepRecent`); then, or as soon as the prompt would break the
 * budget, one summarizer call folds everything but the newest `keepRecent`
 * exchanges (fewer if those would not fit next to a full-size summary).
 */
export const summaryBuffer = definePolicy({
  id: 'summary-buffer',
  describe: 'running summary + the last exchanges verbatim, under a token budget; folds in batches',
  params: z.object({
    budget: int({ default: 2000, min: 1, describe: BUDGET }),
    keepRecent: int({ default: 4, min: 0, describe: 'exchanges kept verbatim after a fold' }),
    batch: int({ min: 1, describe: 'exchanges the buffer grows by before it is folded (default: `keepRecent`, at least 1)' }),
    ...SUMMARIZER_PARAMS,
  }),
  start(conversation, params, deps) {
    const { tokens } = deps;
    const memory = new RunningSummary(conversation, params, deps);
    const head = pinned(conversation);
    const budget = params.budget;
    const keepRecent = params.keepRecent;
    const batch = params.batch ?? Math.max(1, keepRecent);
    const summaryTokens = params.summaryTokens;
    const gate = new TurnGate();

    return {
      prompt(pending, info) {
        const upkeep: UpkeepCall[] = [];
        const fixed = fixedTokens(tokens, [...head, ...pending]);
        let open = memory.open();
        if (gate.first(info) && open.length > keepRecent) {
          const current = fixed + sum(tokens, memory.message()) + sum(tokens, open.flat());
          if (open.length >= keepRecent + batch || current > budget) {
            const room = budget - fixed - systemMessageTokens(tokens, summaryTokens);
            const stay = newestExchangesThatFit(tokens, open, room, keepRecent);
            upkeep.push(memory.fold(open.length - stay));
            open = memory.open();
          }
        }
        // Fit the budget: the summary first, then the newest buffered exchanges that fit.
        let room = budget - fixed;
        if (room < 0) return { messages: [...head, ...pending], overBudget: true, upkeep, stablePrefix: head.length };
        const sent = memory.message().filter((m) => tokens.message(m) <= room);
        if (sent.length) room -= tokens.message(sent[0]!);
        const n = newestExchangesThatFit(tokens, open, room);
        return {
          messages: [...head, ...sent, ...open.slice(open.length - n).flat(), ...pending],
          overBudget: false,
          upkeep,
          stablePrefix: head.length + sent.length,
        };
      },
      commit: memory.commit,
      forget: memory.forget,
      artifacts: memory.artifacts,
    };
  },
});
