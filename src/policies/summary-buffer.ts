import { z } from 'zod';
import type { UpkeepCall } from '../types.js';
import { systemMessageTokens, TurnGate } from './_memory.js';
import { RunningSummary, SUMMARIZER_PARAMS, summaryTokensParam } from './_summary.js';
import { fixedTokens, pinned, sum } from './_transcript.js';
import { definePolicy } from './define.js';
import { BUDGET, int } from './params.js';

/**
 * System prompt + running summary + the recent exchanges verbatim, under
 * `budget`. Exchanges that leave the buffer are folded into the summary in
 * batches, so a fold folds at least `batch` exchanges (batch defaults to
 * `keepRecent`), unless it folds an exchange too large ever to be sent: one
 * summarizer call folds everything but the newest `keepRecent` exchanges when
 * the buffer reaches `keepRecent + batch` exchanges, when `batch` buffered
 * exchanges no longer fit the prompt, or when a buffered exchange alone
 * (with the pinned prompt) breaks the budget. Fewer than `keepRecent` stay
 * when they would not fit next to the new summary, and the summary is
 * shorter than `summaryTokens` when even that would not fit next to the
 * current turn: the summary and what stays always fit the budget. A
 * `summaryTokens` of `budget` or more is refused when the variant is
 * resolved: such a summary could never be sent at its size, so every fold
 * would shorten it to the room its turn left, and a later, longer turn would
 * leave it out.
 */
export const summaryBuffer = definePolicy({
  id: 'summary-buffer',
  describe: 'running summary + the last exchanges verbatim, under a token budget; folds in batches',
  params: z
    .object({
      budget: int({ default: 2000, min: 1, describe: BUDGET }),
      keepRecent: int({ default: 4, min: 0, describe: 'exchanges kept verbatim after a fold (fewer when they would not fit next to the summary)' }),
      batch: int({ min: 1, describe: 'exchanges the buffer grows by before it is folded (default: `keepRecent`, at least 1)' }),
      ...SUMMARIZER_PARAMS,
      summaryTokens: summaryTokensParam('; less than `budget`, which also holds the system prompt and the current turn'),
    })
    // The summary is sent beside the pinned prompt and the current turn, within the budget: one of budget tokens or more never fits at its size.
    .check((ctx) => {
      const { budget, summaryTokens } = ctx.value;
      if (summaryTokens >= budget) {
        ctx.issues.push({
          code: 'custom',
          input: ctx.value,
          message: `summaryTokens (${summaryTokens}) must leave room in budget (${budget}) for the system prompt and the current turn: give summaryTokens below ${budget}, or a larger budget`,
        });
      }
    }),
  start(conversation, params, deps) {
    const { tokens } = deps;
    const memory = new RunningSummary(params, deps);
    const head = pinned(conversation);
    const budget = params.budget;
    const keepRecent = params.keepRecent;
    const batch = params.batch ?? Math.max(1, keepRecent);
    const summaryTokens = params.summaryTokens;
    const headTokens = fixedTokens(tokens, head);
    const gate = new TurnGate();
    /** The summary, if it fits in `room`, and how many of the newest open exchanges fit beside it. */
    const fit = (room: number) => {
      const summary = memory.message().filter((m) => tokens.message(m) <= room);
      return { summary, n: memory.newestOpenThatFit(room - sum(tokens, summary)) };
    };
    /** Whether an open exchange alone (with the pinned prompt) breaks the budget. */
    const tooLarge = () => {
      for (let i = 0; i < memory.openCount(); i++) if (headTokens + memory.openExchangeTokens(i) > budget) return true;
      return false;
    };

    return {
      prompt(pending, info) {
        const upkeep: UpkeepCall[] = [];
        const fixed = headTokens + sum(tokens, pending);
        const open = memory.openCount();
        if (gate.first(info) && open) {
          const { n } = fit(budget - fixed);
          const full = open >= keepRecent + batch || open - n >= batch;
          if (full || tooLarge()) {
            // The new summary must fit beside this turn: shorter than summaryTokens when the budget is tight.
            const size = Math.max(1, Math.min(summaryTokens, budget - fixed - systemMessageTokens(tokens, 0)));
            const stay = Math.min(n, memory.newestOpenThatFit(budget - fixed - systemMessageTokens(tokens, size), keepRecent));
            upkeep.push(memory.fold(open - stay, size));
          }
        }
        // Fit the budget: the summary first, then the newest buffered exchanges that fit.
        const room = budget - fixed;
        if (room < 0) return { messages: head.concat(pending), overBudget: true, upkeep, stablePrefix: head.length };
        const { summary, n } = fit(room);
        return {
          messages: head.concat(summary, memory.history.messages(memory.history.exchanges.length - n), pending),
          overBudget: false,
          upkeep,
          stablePrefix: head.length + summary.length,
        };
      },
      commit: memory.commit,
      forget: memory.forget,
      artifacts: memory.artifacts,
    };
  },
});
