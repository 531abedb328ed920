import { z } from 'zod';
import { Placeholders, ToolNames, viewPlan } from './_agent.js';
import type { ToolView } from './types.js';
import { transcriptArtifact } from './_forget.js';
import { pinned, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { int } from './params.js';

/** The parameters of masking, as the policy and a pipeline stage read them. */
interface MaskParams {
  keep: number;
  batch: number;
}

/**
 * Masking as a view of a prompt: walking back from the newest result, `keep`
 * results stay verbatim (and the round being read, whatever `keep`); of the
 * older ones a whole number of `batch`es is replaced, the oldest first, by
 * "[output of read_file omitted]" — the same placeholder object every call.
 */
function maskView(params: MaskParams): ToolView {
  const names = new ToolNames();
  const placeholders = new Placeholders((tool) => `[output of ${tool} omitted]`);
  return {
    replace(messages, newest) {
      names.learn(messages);
      // Where the results are, newest first.
      const results: number[] = [];
      for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'tool') results.push(i);
      let verbatim = 0;
      while (verbatim < results.length && (results[verbatim]! >= newest || verbatim < params.keep)) verbatim++;
      const older = results.length - verbatim;
      const masked = older - (older % params.batch);
      return new Map(results.slice(results.length - masked).map((i) => [messages[i]!, placeholders.for(messages[i]!, names.of(messages[i]!))]));
    },
  };
}

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
  view: (params) => maskView(params),
  start(conversation, params) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const view = maskView(params);
    return {
      prompt: (pending) => viewPlan([view], head, history.flat, pending),
      // Every call of a stored turn was seen in a `pending` first: its tool names are known.
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
});
