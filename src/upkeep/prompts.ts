import { messageText } from '../tokens/counter.js';
import type { Message } from '../types.js';
import type { ChatMessage, UpkeepRequest } from './request.js';
import type { Fact } from './types.js';

/**
 * The instructions of the upkeep calls. `{summaryTokens}` stands for the
 * summary's size and `{facts}` for the names of the facts to erase. A study
 * may replace any of them (`upkeep: {prompts: …}`); simulated upkeep counts
 * them as the input they are, a real model is sent them.
 */
export interface UpkeepPrompts {
  /** The summarizer's: fold new messages into the running summary. */
  summary: string;
  /** The re-summarization's that erases facts the user asked to forget. */
  forget: string;
  /** The fact extractor's. */
  extract: string;
  /**
   * The judge's (`judge:` in a study): whether a chat model's reply to a
   * probe turn gives the fact's value; `{question}` is the probe turn's user
   * message, `{value}` the fact's current value, `{reply}` the reply.
   */
  judge: string;
}

export const DEFAULT_PROMPTS: UpkeepPrompts = {
  summary:
    'Update the running summary of this conversation with the new messages below, in about {summaryTokens} tokens. ' +
    'Keep every name, number, identifier and preference the user stated, with its latest value.',
  forget: 'Rewrite the summary below without these facts, which the user asked to erase: {facts}. Keep everything else as it is.',
  extract:
    'Extract the facts the user states about themselves or their requests (names, numbers, identifiers, addresses, preferences) ' +
    'from the messages below. Answer with one line "name: value; name: value", or "none".',
  judge:
    'A user asked an assistant the question below. Does the assistant\'s answer give this value: {value}? ' +
    'It may be worded differently (other word order, formatting or spelling, a paraphrase), but it must be the same value; ' +
    'an answer that gives another value, or none, does not. Reply with one word: yes or no.\n\n' +
    'Question: {question}\n\nAnswer: {reply}',
};

/** The placeholders each prompt may hold. */
export const PROMPT_PLACEHOLDERS: Readonly<Record<keyof UpkeepPrompts, readonly string[]>> = {
  summary: ['{summaryTokens}'],
  forget: ['{facts}'],
  extract: [],
  judge: ['{question}', '{value}', '{reply}'],
};

const instructions = new Map<string, Message>();

/** An instruction as a `system` message, one object per text, so it is counted once. */
export function instruction(text: string): Message {
  let m = instructions.get(text);
  if (!m) instructions.set(text, (m = { role: 'system', content: text }));
  return m;
}

/** The summarizer's instruction for a summary of `summaryTokens`. */
export function summaryInstruction(summaryTokens: number, prompt = DEFAULT_PROMPTS.summary): Message {
  return instruction(prompt.replaceAll('{summaryTokens}', String(summaryTokens)));
}

/** The instruction of a re-summarization that erases the named facts (it names them, never their values). */
export function forgetInstruction(names: readonly string[], prompt = DEFAULT_PROMPTS.forget): Message {
  return instruction(prompt.replaceAll('{facts}', names.join(', ')));
}

/**
 * Messages as a model reads them in an upkeep request: one line each, its
 * speaker first (`user: …`, `assistant: …`, `assistant called lookup({…})`,
 * `tool result: …`).
 */
export function transcript(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === 'tool') lines.push(`tool result${m.name ? ` (${m.name})` : ''}: ${m.content}`);
    else {
      if (m.content || !m.toolCalls?.length) lines.push(`${m.role}: ${m.role === 'system' ? messageText(m) : m.content}`);
      for (const c of m.toolCalls ?? []) lines.push(`${m.role} called ${c.name}(${c.arguments})`);
    }
  }
  return lines.join('\n');
}

const chat = (system: string, user: string): ChatMessage[] => [
  { role: 'system', content: system },
  { role: 'user', content: user },
];

/** The summarizer's request: the instruction, then the summary so far and the new messages. */
export function summaryRequest(model: string, summaryTokens: number, previous: string | undefined, folded: readonly Message[], prompt: string): UpkeepRequest {
  const body = `${previous === undefined ? '' : `Summary so far:\n${previous}\n\n`}New messages:\n${transcript(folded)}`;
  return { kind: 'summary', model, messages: chat(summaryInstruction(summaryTokens, prompt).content, body), maxTokens: summaryTokens };
}

/** The request of a re-summarization that erases the named facts from a summary. */
export function forgetRequest(model: string, summaryTokens: number, previous: string, names: readonly string[], prompt: string): UpkeepRequest {
  return { kind: 'summary', model, messages: chat(forgetInstruction(names, prompt).content, `Summary:\n${previous}`), maxTokens: summaryTokens };
}

/** The extractor's request: the instruction, then the turn's messages. */
export function extractRequest(model: string, exchange: readonly Message[], maxTokens: number, prompt: string): UpkeepRequest {
  return { kind: 'extract', model, messages: chat(prompt, `Messages:\n${transcript(exchange)}`), maxTokens };
}

/** The judge's answer is at most this many tokens: a verdict is one word. */
export const JUDGE_MAX_TOKENS = 10;

/**
 * The judge's request: its instruction with the probe turn's question, the
 * fact's expected value and the chat model's reply put in (in one pass, so a
 * reply that holds a placeholder's name is sent as written), as one user
 * message.
 */
export function judgeRequest(model: string, question: string, value: string, reply: string, prompt: string): Extract<UpkeepRequest, { kind: 'judge' }> {
  const fill: Record<string, string> = { '{question}': question, '{value}': value, '{reply}': reply };
  const content = prompt.replace(/\{(?:question|value|reply)\}/g, (p) => fill[p]!);
  return { kind: 'judge', model, messages: [{ role: 'user', content }], maxTokens: JUDGE_MAX_TOKENS };
}

/**
 * The judge's verdict: yes when its reply's first word is `yes` (any case,
 * punctuation around it ignored); anything else — `no`, another word, an
 * empty reply — is no.
 */
export function judgedYes(reply: string): boolean {
  return /^[^\p{L}\p{N}]*yes(?![\p{L}\p{N}])/iu.test(reply);
}

/**
 * The facts of an extractor's answer: `name: value` pairs separated by `;`
 * or new lines (list bullets and numbering ignored); `none`, or a line
 * without a colon, states nothing.
 */
export function parseFacts(answer: string): Fact[] {
  const out: Fact[] = [];
  for (const part of answer.split(/[;\n]/)) {
    const s = part.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').trim();
    const colon = s.indexOf(':');
    if (colon <= 0) continue;
    const name = s.slice(0, colon).trim();
    const value = s.slice(colon + 1).trim().replace(/\.$/, '').trim();
    if (name && value && value.toLowerCase() !== 'none') out.push([name, value]);
  }
  return out;
}
