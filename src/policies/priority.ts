import type { Message } from '../types.js';
import { fixedTokens, pinned, sum, Transcript, type Exchange } from './_transcript.js';
import type { Policy } from './types.js';

/** An exchange without its final reply: the user message, the tool calls and their results. */
function toolPart(e: Exchange): Message[] {
  return e.filter((m) => !isReply(m));
}

function isReply(m: Message): boolean {
  return m.role === 'assistant' && !m.toolCalls?.length;
}

/**
 * Fills `budget` by priority: the last `keepRecent` exchanges (newest first,
 * while they fit); then every older tool call with its results and the user
 * message that asked for it (newest first, each one that fits); then older
 * exchanges newest-first while they fit. What is chosen is sent in the
 * conversation's order.
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
        // Per exchange: 0 not sent, 1 its tool part only, 2 whole.
        const level = new Array<0 | 1 | 2>(ex.length).fill(0);
        for (let i = ex.length - 1; i >= Math.max(0, ex.length - keepRecent); i--) {
          const size = sum(tokens, ex[i]!);
          if (size > room) break;
          room -= size;
          level[i] = 2;
        }
        for (let i = ex.length - 1; i >= 0; i--) {
          if (level[i] || !ex[i]!.some((m) => m.toolCalls?.length)) continue;
          const size = sum(tokens, toolPart(ex[i]!));
          if (size > room) continue;
          room -= size;
          level[i] = 1;
        }
        for (let i = ex.length - 1; i >= 0; i--) {
          if (level[i] === 2) continue;
          const size = sum(tokens, level[i] === 1 ? ex[i]!.filter(isReply) : ex[i]!);
          if (size > room) break;
          room -= size;
          level[i] = 2;
        }
        const kept = ex.flatMap((e, i) => (level[i] === 2 ? e : level[i] === 1 ? toolPart(e) : []));
        return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length };
      },
      commit(exchange) {
        history.add(exchange);
        return [];
      },
    };
  },
};
