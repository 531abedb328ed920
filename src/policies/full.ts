import { z } from 'zod';
import { transcriptArtifact } from './_forget.js';
import { pinned, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';

/** Sends everything: the upper bound on cost and on memory. */
export const full = definePolicy({
  id: 'full',
  describe: 'send the whole conversation every turn',
  params: z.object({}),
  start(conversation, params) {
    const history = new Transcript(params.sessionCap);
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
});
