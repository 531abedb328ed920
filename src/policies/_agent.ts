import type { Message } from '../types.js';
import type { PromptPlan, ToolView } from './types.js';

/**
 * What the agent policies share: the names of the tools results answer,
 * placeholders that stand for a result left out, and views of a prompt.
 */

/** The names of the tools called, by call id: learnt from every message that calls one. */
export class ToolNames {
  private readonly names = new Map<string, string>();

  learn(messages: readonly Message[]): void {
    for (const m of messages) for (const c of m.toolCalls ?? []) this.names.set(c.id, c.name);
  }

  of(result: Message): string {
    return (result.toolCallId !== undefined && this.names.get(result.toolCallId)) || 'a tool';
  }
}

/**
 * Placeholders for tool results, one object per result (the same text each
 * time), so a prompt that replaces a result the same way on every call keeps
 * a stable prefix for caching. The placeholder keeps the result's role, call
 * id and turn: the call stays paired.
 */
export class Placeholders {
  private readonly made = new WeakMap<Message, Message>();

  constructor(private readonly text: (tool: string) => string) {}

  for(result: Message, tool: string): Message {
    let p = this.made.get(result);
    if (!p) this.made.set(result, (p = { ...result, content: this.text(tool) }));
    return p;
  }
}

/** Where the newest round of the current turn starts in `pending` (its length when the turn has no round yet). */
export function newestRoundStart(pending: readonly Message[]): number {
  for (let i = pending.length - 1; i > 0; i--) if (pending[i]!.role === 'assistant') return i;
  return pending.length;
}

/** The replacements of several views, applied in order, as one map from a message to what is sent. */
export function composeViews(views: readonly ToolView[], messages: readonly Message[], newest: number): Map<Message, Message> {
  const out = new Map<Message, Message>();
  let current: readonly Message[] = messages;
  for (const v of views) {
    const map = v.replace(current, newest);
    if (!map.size) continue;
    current = current.map((m) => map.get(m) ?? m);
    messages.forEach((m, i) => {
      if (current[i] !== m) out.set(m, current[i]!);
    });
  }
  return out;
}

/**
 * The plan of a policy that sends everything through views: the pinned
 * prompt, the stored messages and the current turn, each replaced as the
 * views say. The stable prefix runs to the oldest stored result still sent
 * verbatim: what is before it is replaced for good (a view replaces results
 * from the oldest on).
 */
export function viewPlan(views: readonly ToolView[], head: readonly Message[], stored: readonly Message[], pending: readonly Message[]): PromptPlan {
  const all = [...head, ...stored, ...pending];
  const map = composeViews(views, all, head.length + stored.length + newestRoundStart(pending));
  let stable = head.length;
  while (stable < head.length + stored.length && !(all[stable]!.role === 'tool' && !map.has(all[stable]!))) stable++;
  return { messages: all.map((m) => map.get(m) ?? m), overBudget: false, upkeep: [], stablePrefix: stable };
}
