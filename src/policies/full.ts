import { transcriptArtifact, transcriptMemory } from './_forget.js';
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
        const stored = history.flat;
        return { messages: head.concat(stored, pending), overBudget: false, upkeep: [], stablePrefix: head.length + stored.length };
      },
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
};
