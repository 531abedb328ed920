import { moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { pinned, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/** Sends everything: the upper bound on cost and on memory. */
export const full: Policy = {
  id: 'full',
  describe: 'send the whole conversation every turn',
  params: {},
  start(conversation, params) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    return {
      prompt(pending) {
        const before = [...head, ...history.messages()];
        return { messages: [...before, ...pending], overBudget: false, upkeep: [], stablePrefix: before.length };
      },
      commit(exchange, info) {
        if (moderated(params, info)) return [];
        history.add(exchange);
        return [];
      },
      // Raw messages are its only artifact: cascade and naive erase the same.
      forget(facts) {
        history.redact(valuesOf(facts));
        return [];
      },
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
};
