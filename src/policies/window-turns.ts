import { z } from 'zod';
import { transcriptArtifact } from './_forget.js';
import { pinned, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { boolean, int } from './params.js';

/**
 * The last `turns` exchanges (with their tool messages), plus the current turn.
 * `naive: true` instead slices the last 2 × `turns` messages with no repair —
 * the common bug that orphans tool results; kept to show what it breaks.
 */
export const windowTurns = definePolicy({
  id: 'window-turns',
  describe: 'last N exchanges (user + assistant, with their tool messages)',
  params: z.object({
    turns: int({ default: 10, min: 0, describe: 'exchanges sent before the current turn' }),
    naive: boolean({ default: false, describe: 'slice the last 2 × `turns` messages with no repair: the common bug that orphans tool results' }),
  }),
  start(conversation, params) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const turns = params.turns;
    // What the next prompt draws from, and all the policy needs to store.
    const kept = () =>
      !params.naive
        ? history.messages(Math.max(0, history.exchanges.length - turns))
        : turns > 0
          ? history.flat.slice(-2 * turns)
          : [];
    return {
      prompt(pending) {
        return { messages: head.concat(kept(), pending), overBudget: false, upkeep: [], stablePrefix: head.length };
      },
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(kept())],
    };
  },
});
