/**
 * The contract every policy keeps, checked by replaying conversations
 * through it the way a run does (a model call after the user message and
 * one more after tool results, then the exchange is stored, then the
 * forget events that follow the turn):
 *
 * - `system-pinned`: the scenario's system messages are the first messages,
 *   in order, and every other system message (policy-made memories) comes
 *   right after them, before the first other one;
 * - `first-user`: the first message after the system messages is a user message;
 * - `current-turn-last`: the current turn is sent last: its user message,
 *   then its rounds of tool calls in order, the newest in full; an earlier
 *   round may be left out whole, or sent with a result replaced by a
 *   placeholder that keeps its call id (an agent's context management acts
 *   inside a long turn);
 * - `tool-pairs`: a tool call is followed right away by its results, one for
 *   each call id, in any order (providers match them by id), and no tool
 *   result is sent without its call;
 * - `whole-turns`: an earlier turn is sent whole or not at all, in the
 *   conversation's order, once — its user message, its rounds of tool calls
 *   (an agent's memory may leave out a round whole, or replace a result by a
 *   placeholder), its reply; no later turn is sent;
 * - `budget`: a policy with a `budget` parameter sends no more tokens unless
 *   the plan says `overBudget`, which it says only when the system prompt and
 *   the current turn alone exceed it (and then sends only those: an earlier
 *   round of the current turn may be left out or shortened as
 *   `current-turn-last` allows);
 * - `plan`: the stable prefix lies between the system prompt and the current
 *   turn; a message's origin, when it has one, is summary, retrieved or facts;
 *   upkeep has whole token counts; a returned prompt is not changed
 *   afterwards;
 * - `provider-rules`: no other provider message rule (same role twice, empty
 *   message) is broken by the policy, under any rule set;
 * - `determinism`: the same seed gives the same prompts, upkeep and artifacts;
 * - `isolation`: replayed with another conversation's turns in between, a
 *   conversation gives the same records as alone;
 * - `forget-cascade`: under `forget: cascade`, after a forget event no
 *   artifact and no later prompt (before the current turn) holds an erased
 *   value, until a turn states it again;
 * - `moderation`: under `moderation: drop`, nothing of a turn flagged
 *   `injection: true` is stored, and storing it costs no upkeep.
 *
 * The rules one call tells are checked by plan-checks.ts (on every call of a
 * run too, through guard.ts); the whole contract, across a conversation's
 * calls and replays, by checker.ts.
 */

export type ContractRule =
  | 'system-pinned'
  | 'first-user'
  | 'current-turn-last'
  | 'tool-pairs'
  | 'whole-turns'
  | 'budget'
  | 'plan'
  | 'provider-rules'
  | 'determinism'
  | 'isolation'
  | 'forget-cascade'
  | 'moderation';

/** Every rule, in the order they are listed above. */
export const CONTRACT_RULES: readonly ContractRule[] = [
  'system-pinned',
  'first-user',
  'current-turn-last',
  'tool-pairs',
  'whole-turns',
  'budget',
  'plan',
  'provider-rules',
  'determinism',
  'isolation',
  'forget-cascade',
  'moderation',
];

/** One broken rule: which variant, where, and what was seen. */
export interface ContractViolation {
  /** The variant's canonical name, e.g. `window-tokens:budget=200`. */
  policy: string;
  rule: ContractRule;
  scenario: string;
  /** The turn (0: before the first turn; one past the last: the end of the conversation). */
  turn: number;
  detail: string;
}

/** `policy:rule scenario turn N: detail`, one line. */
export function formatContractViolation(v: ContractViolation): string {
  return `${v.policy}: ${v.rule}: ${v.scenario} turn ${v.turn}: ${v.detail}`;
}
