import type { Message } from '../types.js';

/** A provider rule broken by a prompt: data, not an exception. */
export interface Violation {
  rule: Rule;
  /** Index of the offending message in the prompt. */
  index: number;
  detail: string;
}

export type Rule =
  | 'orphan-tool-result'
  | 'unanswered-tool-call'
  | 'first-not-user'
  | 'same-role-twice'
  | 'system-not-first'
  | 'empty-message';

export type RuleSet = 'openai' | 'anthropic' | 'gemini';
export const RULE_SETS: readonly RuleSet[] = ['openai', 'anthropic', 'gemini'];

/**
 * What each provider's chat API rejects. Anthropic and Gemini take system text
 * apart from the turns, want the turns to start with the user and alternate;
 * Anthropic sends tool results as user turns, Gemini as function turns.
 */
const PROVIDERS: Record<RuleSet, { leadingSystemOnly: boolean; userFirst: boolean; alternate: boolean; toolRole: string }> = {
  openai: { leadingSystemOnly: false, userFirst: false, alternate: false, toolRole: 'tool' },
  anthropic: { leadingSystemOnly: true, userFirst: true, alternate: true, toolRole: 'user' },
  gemini: { leadingSystemOnly: true, userFirst: true, alternate: true, toolRole: 'function' },
};

/**
 * The rule set a chat model follows, from its `litellm_provider` in the price
 * table: Anthropic's API, Bedrock (its Converse API holds every model to
 * Anthropic's shape) and Claude on Vertex AI → `anthropic`; Gemini, and
 * Gemini models on Vertex AI → `gemini`; everything else speaks OpenAI's
 * chat format → `openai`.
 */
export function ruleSetFor(provider: string, model: string): RuleSet {
  if (provider === 'anthropic' || provider.startsWith('bedrock') || provider === 'vertex_ai-anthropic_models') return 'anthropic';
  if (provider === 'gemini' || (provider.startsWith('vertex_ai') && /gemini/i.test(model))) return 'gemini';
  return 'openai';
}

/** Checks one prompt against a provider's message rules. */
export function checkPrompt(messages: readonly Message[], ruleSet: RuleSet): Violation[] {
  const p = PROVIDERS[ruleSet];
  const out: Violation[] = [];
  // Most prompts have no tool messages: the tables are made on the first one.
  let calls: Map<string, number> | undefined;
  let answered: Set<string> | undefined;
  let seenOther = false;
  let firstOther = true;
  let prevRole: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (!m.content.trim() && !m.toolCalls?.length) out.push({ rule: 'empty-message', index: i, detail: `${m.role} message at ${i} is empty` });
    if (m.role === 'system') {
      if (p.leadingSystemOnly && seenOther) out.push({ rule: 'system-not-first', index: i, detail: `system message at ${i} after the conversation started` });
      continue;
    }
    seenOther = true;
    if (firstOther && p.userFirst && m.role !== 'user') out.push({ rule: 'first-not-user', index: i, detail: `first turn is ${m.role}` });
    firstOther = false;
    if (m.toolCalls?.length) {
      calls ??= new Map();
      for (const c of m.toolCalls) calls.set(c.id, i);
    }
    if (m.role === 'tool') {
      const at = calls?.get(m.toolCallId ?? '');
      if (at === undefined) out.push({ rule: 'orphan-tool-result', index: i, detail: `tool result ${m.toolCallId} at ${i} has no tool call before it` });
      (answered ??= new Set()).add(m.toolCallId ?? '');
    }
    const role = m.role === 'tool' ? p.toolRole : m.role;
    // Several tool results in a row answer one call message: that is one turn.
    if (p.alternate && role === prevRole && !(m.role === 'tool' && messages[i - 1]?.role === 'tool')) {
      out.push({ rule: 'same-role-twice', index: i, detail: `two ${role} turns in a row at ${i - 1} and ${i}` });
    }
    prevRole = role;
  }
  for (const [id, i] of calls ?? []) {
    if (!answered?.has(id)) out.push({ rule: 'unanswered-tool-call', index: i, detail: `tool call ${id} at ${i} has no result` });
  }
  return out.length > 1 ? out.sort((a, b) => a.index - b.index || (a.rule < b.rule ? -1 : 1)) : out;
}
