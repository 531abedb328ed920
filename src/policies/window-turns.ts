import { transcriptArtifact, transcriptMemory } from './_forget.js';
import { pinned, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/**
 * The last `turns` exchanges (with their tool messages), plus the current turn.
 * `naive: true` instead slices the last 2 × `turns` messages with no repair —
 * the common bug that orphans tool results; kept to show what it breaks.
 */
export const windowTurns: Policy = {
  id: 'window-turns',
  describe: 'last N exchanges (user + assistant, with their tool messages)',
  params: {
    turns: { default: 10, kind: 'int', min: 0 },
    naive: { default: false, kind: 'boolean' },
  },
  start(conversation, params) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    const turns = params.turns as number;
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
};
