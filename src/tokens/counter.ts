import type { Message } from '../types.js';
import { overheadFor, textCounter, type EncodingName, type Overhead, type TextCounter } from './encoding.js';

/** The text of a message that is tokenized: content, then each tool call's name and JSON arguments. */
export function messageText(m: Message): string {
  if (!m.toolCalls?.length) return m.content;
  const calls = m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join('\n');
  return m.content ? `${m.content}\n${calls}` : calls;
}

/**
 * Counts tokens once: every distinct text goes through the tokenizer a single
 * time per run; message and prompt counts are sums of cached text counts.
 */
export class TokenCounter {
  private readonly memo = new Map<string, number>();
  private readonly messageMemo = new WeakMap<Message, number>();
  /** How many times the underlying tokenizer ran. */
  tokenizerCalls = 0;

  constructor(
    readonly encoding: EncodingName,
    readonly overhead: Overhead = overheadFor(encoding),
    private readonly raw: TextCounter = textCounter(encoding),
  ) {}

  /** Tokens of a text, without chat overhead. */
  text(text: string): number {
    let n = this.memo.get(text);
    if (n === undefined) {
      this.tokenizerCalls++;
      n = this.raw(text);
      this.memo.set(text, n);
    }
    return n;
  }

  /** Tokens of a message in a prompt: overhead + role + text (+ name + 1). */
  message(m: Message): number {
    let n = this.messageMemo.get(m);
    if (n !== undefined) return n;
    const o = this.overhead;
    n = this.text(messageText(m));
    if (o.perMessage) n += o.perMessage + this.text(m.role);
    if (m.name !== undefined && o.perMessage) n += this.text(m.name) + o.perName;
    this.messageMemo.set(m, n);
    return n;
  }

  /** Tokens a model writes for a message: its text alone. */
  output(m: Message): number {
    return this.text(messageText(m));
  }

  /** Tokens of a whole prompt: its messages plus reply priming. */
  prompt(messages: readonly Message[]): number {
    let n = this.overhead.replyPriming;
    for (const m of messages) n += this.message(m);
    return n;
  }

  /** Distinct texts counted so far, and their total characters. */
  get distinct(): number {
    return this.memo.size;
  }
}
