import { summarize, type Summary } from '../upkeep/summarizer.js';
import type { UpkeepCall } from '../types.js';
import { artifact, Erasures, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { eraseFromSummary, factValues, injected, statedFacts, TurnGate } from './_memory.js';
import { pinned, sum, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/**
 * "Compress when too long": the messages since the last summarization are
 * sent verbatim until they (with the new user message) exceed `threshold`
 * tokens; then one summarizer call folds them all, with the old summary, into
 * a new running summary, and only the new user message stays verbatim.
 */
export const summary: Policy = {
  id: 'summary',
  describe: 'fold the whole history into a running summary when it exceeds a threshold',
  params: {
    threshold: { default: 3000, kind: 'int', min: 1 },
    summaryModel: { default: undefined, kind: 'string' },
    summaryTokens: { default: 200, kind: 'int', min: 1 },
    keep: { default: 1, kind: 'probability' },
  },
  start(conversation, params, { tokens, random, model }) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    const hidden = factValues(conversation);
    const threshold = params.threshold as number;
    const gate = new TurnGate();
    const erased = new Erasures();
    let folded = 0;
    let memory: Summary | undefined;
    return {
      prompt(pending, info) {
        const upkeep: UpkeepCall[] = [];
        const open = history.exchanges.slice(folded);
        if (gate.first(info) && open.length && sum(tokens, open.flat()) + sum(tokens, pending) > threshold) {
          const r = summarize({
            tokens,
            random,
            model: (params.summaryModel as string | undefined) ?? model,
            summaryTokens: params.summaryTokens as number,
            keep: params.keep as number,
            ...(memory && { previous: memory }),
            folded: open.flat(),
            stated: statedFacts(conversation, open, erased),
            hidden,
            injected: injected(conversation, open),
          });
          memory = r.summary;
          folded = history.exchanges.length;
          upkeep.push(r.call);
        }
        const before = [...head, ...(memory ? [memory.message] : []), ...history.messages(folded)];
        return { messages: [...before, ...pending], overBudget: false, upkeep, stablePrefix: head.length + (memory ? 1 : 0) };
      },
      commit(exchange, info) {
        if (moderated(params, info)) return [];
        // A new session starts blank: the running summary belongs to the session.
        if (history.add(exchange)) {
          folded = 0;
          memory = undefined;
        }
        return [];
      },
      forget(facts, info) {
        const values = valuesOf(facts);
        history.redact(values);
        erased.add(info.afterTurn, values);
        const r = eraseFromSummary(memory, facts, values, { tokens, params, model, hidden });
        memory = r.memory;
        return r.upkeep;
      },
      artifacts: () => [transcriptArtifact(history.messages(folded)), artifact('summary', memory ? [memory.message.content] : [])],
    };
  },
};
