import seedrandom from 'seedrandom';
import type { PolicyVariant } from '../src/policies/spec.js';
import type { PromptPlan } from '../src/policies/types.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message } from '../src/types.js';

export interface DrivenCall {
  turn: number;
  pending: Message[];
  plan: PromptPlan;
}

/** Drives a policy session through a conversation exactly as the engine does, keeping every call. */
export function drive(conv: Conversation, v: PolicyVariant, tokens = new TokenCounter('chars4')): DrivenCall[] {
  const session = v.policy.start(conv, v.params, { tokens, random: seedrandom('test'), model: 'gpt-4o-mini' });
  const calls: DrivenCall[] = [];
  let time = 0;
  for (const turn of conv.turns) {
    if (turn.index > 1) time += turn.gapSeconds;
    const info = { turn, time };
    const pendings = turn.tools.length ? [[turn.user], [turn.user, ...turn.tools]] : [[turn.user]];
    for (const pending of pendings) calls.push({ turn: turn.index, pending, plan: session.prompt(pending, info) });
    session.commit([turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])], info);
  }
  return calls;
}
