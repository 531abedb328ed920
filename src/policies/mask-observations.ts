import { z } from 'zod';
import type { Message } from '../types.js';
import { newestRoundStart, Placeholders, ToolNames } from './_agent.js';
import { transcriptArtifact } from './_forget.js';
import { pinned, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { int } from './params.js';

/**
 * The whole conversation, but only the newest `keep` tool results verbatim
 * (and every result of the round the model is reading now): older results
 * are replaced by a short placeholder, "[output of read_file omitted]", while
 * the calls themselves stay — observation masking, which on SWE-bench halves
 * an agent's cost against the raw transcript (Lindenbauer et al., 2025). A
 * result once masked stays masked, so the masked prefix stays cached.
 */
export const maskObservations = definePolicy({
  id: 'mask-observations',
  describe: 'everything, but tool results older than the newest `keep` replaced by a placeholder (the calls stay)',
  params: z.object({
    keep: int({ default: 10, min: 0, describe: 'newest tool results sent verbatim (the round being read is always sent whole)' }),
  }),
  start(conversation, params) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const names = new ToolNames();
    const placeholders = new Placeholders((tool) => `[output of ${tool} omitted]`);
    return {
      prompt(pending) {
        names.learn(pending);
        const all: Message[] = [...history.flat, ...pending];
        // Walking back from the newest result, `keep` results stay (and the round being read, whatever `keep`); older ones are masked.
        const newest = history.flat.length + newestRoundStart(pending);
        let kept = 0;
        let stable = history.flat.length;
        for (let i = all.length - 1; i >= 0; i--) {
          const m = all[i]!;
          if (m.role !== 'tool') continue;
          if (i >= newest || kept < params.keep) {
            kept++;
            // The prefix up to the oldest result still sent verbatim is masked for good: stable.
            if (i < history.flat.length) stable = i;
          } else all[i] = placeholders.for(m, names.of(m));
        }
        return { messages: [...head, ...all], overBudget: false, upkeep: [], stablePrefix: head.length + stable };
      },
      // Every call of a stored turn was seen in a `pending` first: its tool names are known.
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
});
