import type { PromptPlan } from '../src/policies/types.js';
import type { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message } from '../src/types.js';

/**
 * The promises every policy makes about one prompt; returns the broken ones.
 * `pending` is the current turn so far; `budget` where the policy has one.
 */
export function brokenInvariants(
  conv: Conversation,
  plan: PromptPlan,
  pending: readonly Message[],
  tokens: TokenCounter,
  budget?: number,
): string[] {
  const broken: string[] = [];
  const msgs = plan.messages;
  if (conv.system && msgs[0] !== conv.system) broken.push('system prompt not first');
  if (msgs.slice(1).includes(conv.system!)) broken.push('system prompt sent twice');
  const tail = msgs.slice(msgs.length - pending.length);
  if (tail.length !== pending.length || tail.some((m, i) => m !== pending[i])) broken.push('current turn not sent last in full');
  const firstOther = msgs.find((m) => m.role !== 'system');
  if (firstOther && firstOther.role !== 'user') broken.push(`first non-system message is ${firstOther.role}`);
  const calls = new Map<string, number>();
  msgs.forEach((m, i) => m.toolCalls?.forEach((c) => calls.set(c.id, i)));
  const answered = new Set<string>();
  msgs.forEach((m, i) => {
    if (m.role !== 'tool') return;
    const at = calls.get(m.toolCallId!);
    if (at === undefined || at > i) broken.push(`tool result ${m.toolCallId} without its call`);
    answered.add(m.toolCallId!);
  });
  for (const id of calls.keys()) if (!answered.has(id)) broken.push(`tool call ${id} without its result`);
  if (budget !== undefined) {
    const sent = tokens.prompt(msgs);
    const fixed = tokens.prompt([...(conv.system ? [conv.system] : []), ...pending]);
    if (sent > budget && !plan.overBudget) broken.push(`budget ${budget} exceeded (${sent}) without over_budget`);
    if (plan.overBudget && fixed <= budget) broken.push('over_budget flagged though the fixed part fits');
    if (plan.overBudget && sent !== fixed) broken.push('over budget but sent more than the system prompt and the current turn');
  }
  return broken;
}
