import { z } from 'zod';
import type { TokenCounter } from '../tokens/counter.js';
import type { Message } from '../types.js';
import { Placeholders, ToolNames, viewPlan } from './_agent.js';
import type { ToolView } from './types.js';
import { transcriptArtifact } from './_forget.js';
import { pinned, promptTokens, Transcript, transcriptMemory } from './_transcript.js';
import { definePolicy } from './define.js';
import { int, text } from './params.js';

/** The parameters of clearing, as the policy and a pipeline stage read them. */
interface ClearParams {
  trigger: number;
  keep: number;
  clearAtLeast: number;
  exclude?: string | undefined;
}

/**
 * Clearing as a view of a prompt: once the prompt exceeds `trigger` tokens
 * (the whole prompt, tool definitions and an unlogged prefix included),
 * every tool result but those of the newest `keep` tool uses, of the round
 * being read and of the `exclude`d tools is replaced by "[result of read_file
 * cleared]" — unless that frees fewer than `clearAtLeast` tokens.
 */
function clearView(params: ClearParams, tokens: TokenCounter): ToolView {
  const names = new ToolNames();
  const placeholders = new Placeholders((tool) => `[result of ${tool} cleared]`);
  const exclude = new Set((params.exclude ?? '').split('+').map((s) => s.trim()).filter(Boolean));
  return {
    replace(messages, newest) {
      names.learn(messages);
      const cleared = new Map<Message, Message>();
      if (promptTokens(tokens, messages) <= params.trigger) return cleared;
      let kept = 0;
      let freed = 0;
      // The newest `keep` tool uses stay (walking back from the newest result), and so does the round being read.
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]!;
        if (m.role !== 'tool') continue;
        if (i >= newest || kept < params.keep) {
          kept++;
          continue;
        }
        const tool = names.of(m);
        if (exclude.has(tool)) continue;
        const p = placeholders.for(m, tool);
        freed += tokens.message(m) - tokens.message(p);
        cleared.set(m, p);
      }
      return freed > 0 && freed >= params.clearAtLeast ? cleared : new Map();
    },
  };
}

/**
 * Anthropic's context editing (`clear_tool_uses_20250919`), call by call as
 * the API applies it: once the prompt would exceed `trigger` tokens, every
 * tool result but those of the newest `keep` tool uses (and of the tools in
 * `exclude`) is replaced by a placeholder, "[result of read_file cleared]" —
 * unless that would clear fewer than `clearAtLeast` tokens, in which case
 * nothing is cleared. Clearing changes the prompt's prefix, so the cache is
 * written again from the first newly cleared result on.
 */
export const clearToolResults = definePolicy({
  id: 'clear-tool-results',
  describe: 'past `trigger` tokens, tool results but the newest `keep` tool uses replaced by a placeholder (Anthropic context editing)',
  params: z.object({
    trigger: int({ default: 100000, min: 1, describe: 'prompt tokens above which old tool results are cleared' }),
    keep: int({ default: 3, min: 0, describe: 'newest tool uses whose results stay (the round being read is always sent whole)' }),
    clearAtLeast: int({ default: 0, min: 0, describe: 'fewest tokens a clearing must free, or nothing is cleared (clearing rewrites the cached prefix)' }),
    exclude: text({ describe: 'tools whose results are never cleared, names joined by + (e.g. web_search+read_file)' }),
  }),
  view: (params, tokens) => clearView(params, tokens),
  start(conversation, params, { tokens }) {
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const view = clearView(params, tokens);
    return {
      prompt: (pending) => viewPlan([view], head, history.flat, pending),
      ...transcriptMemory(history, params),
      artifacts: () => [transcriptArtifact(history.messages())],
    };
  },
});
