import type { TokenCounter } from '../tokens/counter.js';
import { toolDefTokens } from '../tokens/tools.js';
import type { Conversation } from '../types.js';

/**
 * The counter a policy session of `conversation` is given: the run's, whose
 * `carried` is what every call of the conversation sends besides its
 * messages — the tool definitions offered (`toolTokens`: the conversation's
 * own by default; a run gives those it offers, its own with them) and the
 * stand-in for what its log leaves out (`unlogged_prefix`). The one place a policy learns of them: its
 * budgets and thresholds count them as part of every prompt
 * (`promptTokens`, `fixedTokens`), as the provider does, so clearing at 30k
 * fires on a session whose prompts reach 44k with a 14k prefix. Every other
 * count is the run's counter's, so a prompt an upkeep call sends (a
 * summarizer's) carries nothing of the chat's.
 */
export function sessionTokens(
  tokens: TokenCounter,
  conversation: Pick<Conversation, 'unloggedTokens' | 'toolDefs'>,
  toolTokens = conversation.toolDefs?.length ? toolDefTokens(conversation.toolDefs, tokens) : 0,
): TokenCounter {
  return tokens.carrying((conversation.unloggedTokens ?? 0) + toolTokens);
}
