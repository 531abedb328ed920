import { z } from 'zod';
import type { Message, UpkeepCall } from '../types.js';
import type { Summary } from '../upkeep/summarizer.js';
import { roundsOf } from '../scenario/rounds.js';
import { artifact, moderated, redactMessage, transcriptArtifact, valuesOf } from './_forget.js';
import { eraseFromSummary, injected, upkeepOf } from './_memory.js';
import { pinned, promptTokens, Transcript } from './_transcript.js';
import { definePolicy } from './define.js';
import { int, model, probability } from './params.js';
import type { Exchange } from './types.js';

/** Context window assumed when neither the price table nor `window` gives one. */
const DEFAULT_WINDOW = 128_000;

/**
 * A coding agent's auto-compaction: everything is sent until a call's prompt
 * (the whole prompt, tool definitions and an unlogged prefix included) would
 * pass `at` of the model's context window; then one summarizer call
 * (the user waits for it) replaces the history — earlier turns and the
 * earlier rounds of the current turn — with a summary, keeping the newest
 * `keepRecent` steps (turns or rounds) and the round being read verbatim.
 * Compaction may happen on any call, inside a long turn too.
 */
export const compact = definePolicy({
  id: 'compact',
  describe: 'everything until the prompt nears the context window, then a summary of all but the newest steps (auto-compaction)',
  params: z.object({
    at: probability({ default: 0.8, describe: 'share of the context window a prompt may reach before the history is compacted' }),
    window: int({ min: 1, describe: 'context window in tokens (default: the chat model’s, else 128000)' }),
    keepRecent: int({ default: 2, min: 0, describe: 'newest steps (turns or rounds of tool calls) kept verbatim beside the summary' }),
    summaryTokens: int({ default: 2000, min: 1, describe: 'most tokens the summary may have, its statements included' }),
    keep: probability({ default: 1, describe: 'chance that each compaction keeps each statement it read (simulated upkeep)' }),
    summaryModel: model({ describe: 'model the summarizer runs on (default: the chat model)' }),
  }),
  start(conversation, params, deps) {
    const { tokens } = deps;
    const head = pinned(conversation);
    const upkeep = upkeepOf(deps);
    const limit = Math.floor(params.at * (params.window ?? deps.contextWindow ?? DEFAULT_WINDOW));
    const history = new Transcript(params.sessionCap);
    /** The turns the moderation classifier flagged, as they were committed: a compaction quotes them. */
    const flagged = new Set<number>();
    let summary: Summary | undefined;
    /** Steps not compacted: earlier turns, each without the rounds a compaction inside it took. */
    let open: Exchange[] = [];
    /** The turn under way, and how many of its rounds a compaction took. */
    let turn = 0;
    let taken = 0;

    const memory = (): Message[] => (summary ? [summary.message] : []);
    const build = (user: Message, rounds: readonly Message[][]): Message[] => [...head, ...memory(), ...open.flat(), user, ...rounds.slice(taken).flat()];

    return {
      prompt(pending, info) {
        if (info.turn.index !== turn) [turn, taken] = [info.turn.index, 0];
        const [user, ...rest] = pending;
        const rounds = roundsOf(rest);
        const calls: UpkeepCall[] = [];
        let messages = build(user!, rounds);
        if (promptTokens(tokens, messages) > limit) {
          // Steps oldest first: earlier turns, then this turn's rounds but the one being read; the newest keepRecent stay.
          const steps: Exchange[] = [...open, ...rounds.slice(taken, rounds.length - 1)];
          const folded = steps.slice(0, Math.max(0, steps.length - params.keepRecent));
          if (folded.length) {
            const r = upkeep.summarize({
              tokens,
              random: deps.random,
              model: params.summaryModel ?? deps.model,
              summaryTokens: params.summaryTokens,
              keep: params.keep,
              ...(summary && { previous: summary }),
              folded: folded.flat(),
              injected: injected(flagged, folded.filter((s) => s[0]?.role === 'user')),
            });
            summary = r.summary;
            calls.push(r.call);
            const fromOpen = Math.min(folded.length, open.length);
            open = open.slice(fromOpen);
            taken += folded.length - fromOpen;
            messages = build(user!, rounds);
          }
        }
        return { messages, overBudget: false, upkeep: calls, stablePrefix: head.length + memory().length };
      },
      commit(exchange, info) {
        if (moderated(params, info)) return [];
        if (info.turn.injection) flagged.add(info.turn.index);
        if (history.add(exchange)) {
          // A new session starts blank.
          [summary, open] = [undefined, []];
          return [];
        }
        // The turn as it stays: its user message, the rounds no compaction took, its reply.
        const [user, ...rest] = exchange;
        const rounds = roundsOf(rest);
        const reply = rest.filter((m) => m.role === 'assistant' && !m.toolCalls?.length);
        open.push([user!, ...rounds.slice(taken).flat(), ...reply]);
        taken = 0;
        return [];
      },
      forget(facts) {
        const values = valuesOf(facts);
        history.redact(values);
        open = open.map((s) => s.map((m) => redactMessage(m, values)));
        const r = eraseFromSummary(summary, facts, values, { tokens, params, model: deps.model, upkeep });
        summary = r.memory;
        return r.upkeep;
      },
      artifacts: () => [transcriptArtifact(open.flat()), artifact('summary', summary ? [summary.message.content] : [])],
    };
  },
});
