import type { Conversation, Message } from '../types.js';
import { checkPrompt, type PromptRules, type RuleSet, type Violation } from './provider.js';

/**
 * The violations a policy caused in a prompt: every provider rule the
 * prompt breaks, less the ones the scenario itself wrote in. ctxsim replays
 * scripted messages and cannot invent what the script left out, so these
 * are data, not the policy's doing:
 * - two messages in a row from the user's side where the first ends a
 *   scenario turn that has no assistant reply, and the second opens a later
 *   turn (a real backend would have had a reply between them; the turns in
 *   between, if any, were left out by the policy, e.g. dropped by moderation);
 * - an empty message the scenario wrote;
 * - a name the scenario wrote (the import reports names OpenAI refuses).
 *
 * `rules`: a rule set, or a session's `PromptRules` (its successive prompts checked as they grow).
 */
export function policyViolations(messages: readonly Message[], rules: RuleSet | PromptRules, conversation: Conversation): Violation[] {
  const found = typeof rules === 'string' ? checkPrompt(messages, rules) : rules.check(messages);
  return found.length ? found.filter((v) => !scripted(v, messages, conversation)) : found;
}

function scripted(v: Violation, messages: readonly Message[], conversation: Conversation): boolean {
  const m = messages[v.index]!;
  if (v.rule === 'empty-message') return !m.origin && m.turn !== undefined;
  // The scenario's names: on its turns' messages, and on its pinned system messages (which carry no turn).
  if (v.rule === 'invalid-name') return !m.origin && (m.turn !== undefined || conversation.system.includes(m));
  if (v.rule !== 'same-role-twice' || m.role !== 'user' || m.origin || m.turn === undefined) return false;
  const prev = messages[v.index - 1];
  if (!prev || prev.origin || prev.turn === undefined || prev.turn >= m.turn) return false;
  const t = conversation.turns[prev.turn - 1];
  if (!t || t.assistant) return false;
  const last = t.tools[t.tools.length - 1] ?? t.user;
  return prev.role === last.role && prev.toolCallId === last.toolCallId;
}
