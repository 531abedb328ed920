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
 * result once masked stays masked, so the masked prefix stays cached; but
 * each newly masked result changes the prompt from there on, so with prompt
 * caching `batch` masks results `batch` at a time, breaking the cache less often.
 */
export const maskObservations = definePolicy({
  id: 'mask-observations',
  describe: 'everything, but tool results older than the newest `keep` replaced by a placeholder (the calls stay)',
  params: z.object({
    keep: int({ default: 10, min: 0, describe: 'newest tool results sent verbatim (the round being read is always sent whole)' }),
    batch: int({ default: 1, min: 1, describe: 'results masked at a time: more than `keep` may stay verbatim until `batch` more can go, so the cached prefix breaks less often' }),
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
        // Walking back from the newest result, `keep` results stay (and the round being read, whatever `keep`);
        // of the older ones, a whole number of batches is masked, the oldest first.
        const newest = history.flat.length + newestRoundStart(pending);
        const results: number[] = [];
        for (let i = all.length - 1; i >= 0; i--) if (all[i]!.role === 'tool') results.push(i);
        let verbatim = 0;
        while (verbatim < results.length && (results[verbatim]! >= newest || verbatim < params.keep)) verbatim++;
        const older = results.length - verbatim;
        const masked = older - (older % params.batch);
        for (const i of results.slice(results.length - masked)) all[i] = placeholders.for(all[i]!, names.of(all[i]!));
        // The prefix up to the oldest result still sent verbatim is masked for good: stable.
        const oldestVerbatim = results[results.length - masked - 1];
        const stable = oldestVerbatim === undefined ? history.flat.length : Math.min(oldestVerbatim, history.flat.length);
        return { messages: [...head, ...all], overBudget: false, upkeep: [], stablePrefix: head.length + stable };
      },
      // Every call of a stored turn was seen in a `pending` first: its tool names are known.
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
});
