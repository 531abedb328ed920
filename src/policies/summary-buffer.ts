import { summarize, type Summary } from '../upkeep/summarizer.js';
import type { UpkeepCall } from '../types.js';
import { artifact, Erasures, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { eraseFromSummary, factValues, injected, newestExchangesThatFit, statedFacts, systemMessageTokens, TurnGate } from './_memory.js';
import { fixedTokens, pinned, sum, Transcript } from './_transcript.js';
import type { Policy } from './types.js';

/**
 * System prompt + running summary + the recent exchanges verbatim, under
 * `budget`. Exchanges that leave the buffer are folded into the summary in
 * batches: the buffer may grow to `keepRecent + batch` exchanges (batch
 * defaults to `keepRecent`); then, or as soon as the prompt would break the
 * budget, one summarizer call folds everything but the newest `keepRecent`
 * exchanges (fewer if those would not fit next to a full-size summary).
 */
export const summaryBuffer: Policy = {
  id: 'summary-buffer',
  describe: 'running summary + the last exchanges verbatim, under a token budget; folds in batches',
  params: {
    budget: { default: 2000, kind: 'int', min: 1 },
    keepRecent: { default: 4, kind: 'int', min: 0 },
    batch: { default: undefined, kind: 'int', min: 1 },
    summaryModel: { default: undefined, kind: 'string' },
    summaryTokens: { default: 200, kind: 'int', min: 1 },
    keep: { default: 1, kind: 'probability' },
  },
  start(conversation, params, { tokens, random, model }) {
    const history = new Transcript(params.sessionCap as number | undefined);
    const head = pinned(conversation);
    const hidden = factValues(conversation);
    const budget = params.budget as number;
    const keepRecent = params.keepRecent as number;
    const batch = (params.batch as number | undefined) ?? Math.max(1, keepRecent);
    const summaryTokens = params.summaryTokens as number;
    const gate = new TurnGate();
    const erased = new Erasures();
    let folded = 0;
    let memory: Summary | undefined;

    return {
      prompt(pending, info) {
        const upkeep: UpkeepCall[] = [];
        const fixed = fixedTokens(tokens, [...head, ...pending]);
        let open = history.exchanges.slice(folded);
        if (gate.first(info) && open.length > keepRecent) {
          const current = fixed + (memory ? tokens.message(memory.message) : 0) + sum(tokens, open.flat());
          if (open.length >= keepRecent + batch || current > budget) {
            const room = budget - fixed - systemMessageTokens(tokens, summaryTokens);
            const stay = newestExchangesThatFit(tokens, open, room, keepRecent);
            const leaving = open.slice(0, open.length - stay);
            const r = summarize({
              tokens,
              random,
              model: (params.summaryModel as string | undefined) ?? model,
              summaryTokens,
              keep: params.keep as number,
              ...(memory && { previous: memory }),
              folded: leaving.flat(),
              stated: statedFacts(conversation, leaving, erased),
              hidden,
              injected: injected(conversation, leaving),
            });
            memory = r.summary;
            folded += leaving.length;
            open = open.slice(leaving.length);
            upkeep.push(r.call);
          }
        }
        // Fit the budget: the summary first, then the newest buffered exchanges that fit.
        let room = budget - fixed;
        if (room < 0) return { messages: [...head, ...pending], overBudget: true, upkeep, stablePrefix: head.length };
        const sent = memory && tokens.message(memory.message) <= room ? [memory.message] : [];
        if (sent.length) room -= tokens.message(sent[0]!);
        const n = newestExchangesThatFit(tokens, open, room);
        return {
          messages: [...head, ...sent, ...open.slice(open.length - n).flat(), ...pending],
          overBudget: false,
          upkeep,
          stablePrefix: head.length + sent.length,
        };
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
