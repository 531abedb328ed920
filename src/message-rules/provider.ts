import type { Message } from '../types.js';
import { extendsList } from '../tokens/resume.js';

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
  | 'empty-message'
  | 'invalid-name';

export type RuleSet = 'openai' | 'anthropic' | 'gemini';
export const RULE_SETS: readonly RuleSet[] = ['openai', 'anthropic', 'gemini'];

/**
 * What each provider's chat API rejects. Anthropic and Gemini take system text
 * apart from the turns, want the turns to start with the user and alternate;
 * Anthropic sends tool results as user turns, Gemini as function turns.
 * OpenAI's messages carry a participant's `name`, which its API refuses
 * (400, "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'")
 * unless it is letters, digits, `_` and `-`; the others send no names.
 */
const PROVIDERS: Record<RuleSet, { leadingSystemOnly: boolean; userFirst: boolean; alternate: boolean; toolRole: string; names: boolean }> = {
  openai: { leadingSystemOnly: false, userFirst: false, alternate: false, toolRole: 'tool', names: true },
  anthropic: { leadingSystemOnly: true, userFirst: true, alternate: true, toolRole: 'user', names: false },
  gemini: { leadingSystemOnly: true, userFirst: true, alternate: true, toolRole: 'function', names: false },
};

/** A message `name` OpenAI's chat API takes. */
export const OPENAI_NAME = /^[a-zA-Z0-9_-]+$/;

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
  return new PromptRules(ruleSet).check(messages);
}

/**
 * `checkPrompt` over the successive prompts of one session. The rules are
 * checked left to right, each message against what came before it, so a
 * prompt that starts with the whole previous prompt (the same message
 * objects, as a growing transcript sends them) is checked from where the
 * previous one ended: only its new messages are read, and it finds what
 * `checkPrompt` finds. Prompts must not change after they are checked
 * (PromptPlan says so).
 */
export class PromptRules {
  private readonly p: (typeof PROVIDERS)[RuleSet];
  /** The last prompt checked: the state below has read all of it. */
  private last: readonly Message[] = [];
  /** Violations found so far, but the unanswered calls (known only at the end). */
  private found: Violation[] = [];
  /** Tool call id → the message it is in; the ids with a result; how many calls have none yet. Most prompts have no tool messages: made on the first one. */
  private calls: Map<string, number> | undefined;
  private answered: Set<string> | undefined;
  private unanswered = 0;
  private seenOther = false;
  private firstOther = true;
  private prevRole: string | undefined;

  constructor(ruleSet: RuleSet) {
    this.p = PROVIDERS[ruleSet];
  }

  check(messages: readonly Message[]): Violation[] {
    const from = extendsList(messages, this.last) ? this.last.length : this.restart();
    this.last = messages;
    this.scan(messages, from);
    if (!this.found.length && !this.unanswered) return [];
    const out = [...this.found];
    if (this.unanswered) {
      for (const [id, i] of this.calls!) {
        if (!this.answered?.has(id)) out.push({ rule: 'unanswered-tool-call', index: i, detail: `tool call ${id} at ${i} has no result` });
      }
    }
    return out.length > 1 ? out.sort((a, b) => a.index - b.index || (a.rule < b.rule ? -1 : 1)) : out;
  }

  /** Forgets what was read; returns where reading starts again (0). */
  private restart(): number {
    this.found = [];
    this.calls = undefined;
    this.answered = undefined;
    this.unanswered = 0;
    this.seenOther = false;
    this.firstOther = true;
    this.prevRole = undefined;
    return 0;
  }

  /** Reads the messages from `from` on. */
  private scan(messages: readonly Message[], from: number): void {
    const { p, found: out } = this;
    for (let i = from; i < messages.length; i++) {
      const m = messages[i]!;
      if (!m.content.trim() && !m.toolCalls?.length) out.push({ rule: 'empty-message', index: i, detail: `${m.role} message at ${i} is empty` });
      if (p.names && m.name !== undefined && !OPENAI_NAME.test(m.name)) {
        out.push({ rule: 'invalid-name', index: i, detail: `${m.role} message at ${i} has name ${JSON.stringify(m.name)} (OpenAI takes only letters, digits, _ and -)` });
      }
      if (m.role === 'system') {
        if (p.leadingSystemOnly && this.seenOther) out.push({ rule: 'system-not-first', index: i, detail: `system message at ${i} after the conversation started` });
        continue;
      }
      this.seenOther = true;
      if (this.firstOther && p.userFirst && m.role !== 'user') out.push({ rule: 'first-not-user', index: i, detail: `first turn is ${m.role}` });
      this.firstOther = false;
      if (m.toolCalls?.length) {
        const calls = (this.calls ??= new Map());
        for (const c of m.toolCalls) {
          if (!calls.has(c.id) && !this.answered?.has(c.id)) this.unanswered++;
          calls.set(c.id, i);
        }
      }
      if (m.role === 'tool') {
        const id = m.toolCallId ?? '';
        const at = this.calls?.get(id);
        if (at === undefined) out.push({ rule: 'orphan-tool-result', index: i, detail: `tool result ${m.toolCallId} at ${i} has no tool call before it` });
        const answered = (this.answered ??= new Set());
        if (at !== undefined && !answered.has(id)) this.unanswered--;
        answered.add(id);
      }
      const role = m.role === 'tool' ? p.toolRole : m.role;
      // Several tool results in a row answer one call message: that is one turn.
      if (p.alternate && role === this.prevRole && !(m.role === 'tool' && messages[i - 1]?.role === 'tool')) {
        out.push({ rule: 'same-role-twice', index: i, detail: `two ${role} turns in a row at ${i - 1} and ${i}` });
      }
      this.prevRole = role;
    }
  }
}
