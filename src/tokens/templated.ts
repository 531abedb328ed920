import type { Message, ToolDef } from '../types.js';
import { chatMessage, chatTools, type TemplateMessage, type ChatTokenizer } from './chat-template.js';
import type { Overhead } from './encoding.js';

/**
 * A rendered prompt as the provider's cache sees it: its pieces in order
 * (the texts between special tokens, and the special tokens), each by an id
 * that is the same for the same text within a scenario, and the tokens of
 * its first k pieces (`sums[k]`). Two prompts share a cached prefix of as
 * many tokens as their leading pieces in common.
 */
export interface PromptSequence {
  ids: Int32Array;
  sums: Float64Array;
}

/** A prompt's exact tokens under a chat template, whether they are an estimate (see `TemplatePrompts.count`), and its pieces when it was rendered. */
export interface TemplateCount {
  tokens: number;
  estimated: boolean;
  sequence?: PromptSequence;
}

/**
 * Prompts laid out by a model's own chat template. A call's input tokens are
 * the tokens of the prompt the template renders (special tokens, default
 * system prompt, date header and generation prompt included); the texts
 * between its special tokens are counted by `text`, the run's counter, so
 * each is tokenized once however many prompts repeat it.
 *
 * Templates that refuse a prompt's shape (Gemma and Mistral insist that user
 * and assistant alternate after one system message; some render no tool
 * calls) are given the prompt as a team serving them would send it: every
 * system message joined into the first, then consecutive messages of one
 * role joined; then, if still refused, tool calls and results as text. The
 * last is flagged an estimate, as is a prompt no adaptation renders (counted
 * by the per-message rule instead).
 */
export class TemplatePrompts {
  /** Per-message framing and the prompt's fixed tokens, measured on the template: the per-message rule policies budget with. */
  readonly overhead: Overhead;
  private readonly tools = new WeakMap<readonly ToolDef[], { defs: ReturnType<typeof chatTools>; tokens: number }>();
  private readonly shaped = new WeakMap<Message, readonly TemplateMessage[]>();
  /** Message objects numbered, and the prompts of the scenario counted so far by their messages' numbers and tools. */
  private readonly ids = new WeakMap<object, number>();
  private nextId = 0;
  private counted = new Map<string, TemplateCount>();
  /** The ids of the pieces met in the scenario. */
  private pieceIds = new Map<string, number>();

  constructor(
    readonly chat: ChatTokenizer,
    private readonly text: (text: string) => number,
  ) {
    this.overhead = this.measureOverhead();
  }

  /** A rendered prompt's tokens and its pieces as a sequence (ids, running sums). */
  private sequenceOf(rendered: string): { tokens: number; sequence: PromptSequence } {
    const pieces = this.chat.pieces(rendered);
    const ids = new Int32Array(pieces.length);
    const sums = new Float64Array(pieces.length + 1);
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i]!;
      let id = this.pieceIds.get(p);
      if (id === undefined) this.pieceIds.set(p, (id = this.pieceIds.size));
      ids[i] = id;
      sums[i + 1] = sums[i]! + this.text(p);
    }
    return { tokens: sums[pieces.length]!, sequence: { ids, sums } };
  }

  /**
   * Framing per message and fixed tokens, from two renders: one user message,
   * and user–assistant–user. What the second adds beyond its two texts and
   * roles, halved, is a message's framing; what the first has beyond its
   * message is the prompt's own (BOS, default system prompt, generation prompt).
   */
  private measureOverhead(): Overhead {
    const [a, b] = ['Hello', 'Hi'];
    const one = this.sequenceOf(this.chat.render([{ role: 'user', content: a }])).tokens;
    const three = this.sequenceOf(this.chat.render([{ role: 'user', content: a }, { role: 'assistant', content: b }, { role: 'user', content: a }])).tokens;
    const user = this.text('user');
    const perMessage = Math.max(0, Math.round((three - one - this.text(a) - this.text(b) - user - this.text('assistant')) / 2));
    const replyPriming = Math.max(0, one - this.text(a) - user - perMessage);
    return { perMessage, perName: 0, replyPriming };
  }

  /** The tool definitions' tokens: what they add to a one-message prompt. */
  toolTokens(defs: readonly ToolDef[]): number {
    return this.toolsOf(defs).tokens;
  }

  private toolsOf(defs: readonly ToolDef[]): { defs: ReturnType<typeof chatTools>; tokens: number } {
    let t = this.tools.get(defs);
    if (!t) {
      const chat = chatTools(defs);
      const probe: TemplateMessage[] = [{ role: 'user', content: 'Hello' }];
      t = { defs: chat, tokens: defs.length ? Math.max(0, this.sequenceOf(this.chat.render(probe, chat)).tokens - this.sequenceOf(this.chat.render(probe)).tokens) : 0 };
      this.tools.set(defs, t);
    }
    return t;
  }

  /** A prompt's tokens as the template renders it with the tools offered; `fallback` counts it when no adaptation renders. */
  count(messages: readonly Message[], tools: readonly ToolDef[] | undefined, fallback: () => number): TemplateCount {
    // Policies that send the same messages (the same objects: prompts do not change once made) send the same prompt: rendered once.
    const key = `${tools ? this.idOf(tools) : '-'}:${messages.map((m) => this.idOf(m)).join(',')}`;
    let c = this.counted.get(key);
    if (!c) this.counted.set(key, (c = this.render(messages, tools, fallback)));
    return c;
  }

  /** Forgets the prompts counted (at the end of a scenario; their messages are not sent again). */
  forgetScenario(): void {
    this.counted = new Map();
    this.pieceIds = new Map();
  }

  private idOf(o: object): number {
    let id = this.ids.get(o);
    if (id === undefined) this.ids.set(o, (id = this.nextId++));
    return id;
  }

  private render(messages: readonly Message[], tools: readonly ToolDef[] | undefined, fallback: () => number): TemplateCount {
    const defs = tools?.length ? this.toolsOf(tools).defs : undefined;
    const split = this.chat.source.callsWithoutText === true && messages.some((m) => m.content && m.toolCalls?.length);
    const plain = messages.flatMap((m) => this.templateMessages(m));
    // Each shape only when the one before it was refused (most prompts render as they are).
    const shapes: [() => readonly TemplateMessage[], boolean][] = [
      [() => plain, split],
      [() => alternating(plain), split],
      [() => alternating(messages.map(asText)), true],
    ];
    for (const [shape, estimated] of shapes) {
      const rendered = tryRender(this.chat, shape(), defs);
      if (rendered !== undefined) return { ...this.sequenceOf(rendered), estimated };
    }
    return { tokens: fallback(), estimated: true };
  }

  /** A message as the template reads it (two, text then calls, where the template drops calls beside text); made once per message. */
  private templateMessages(m: Message): readonly TemplateMessage[] {
    let t = this.shaped.get(m);
    if (!t) {
      const source = this.chat.source;
      t = source.callsWithoutText && m.content && m.toolCalls?.length ? [chatMessage({ role: m.role, content: m.content }, source), chatMessage({ ...m, content: '' }, source)] : [chatMessage(m, source)];
      this.shaped.set(m, t);
    }
    return t;
  }
}

function tryRender(chat: ChatTokenizer, messages: readonly TemplateMessage[], tools: ReturnType<typeof chatTools> | undefined): string | undefined {
  try {
    return chat.render(messages, tools);
  } catch {
    return undefined;
  }
}

/** A message with its tool calls or result as plain text: calls `name(arguments)` after the content, results as the user's. */
function asText(m: Message): TemplateMessage {
  if (m.role === 'tool') return { role: 'user', content: m.content };
  if (!m.toolCalls?.length) return { role: m.role, content: m.content };
  const calls = m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join('\n');
  return { role: m.role, content: m.content ? `${m.content}\n${calls}` : calls };
}

/** Every system message joined into one first, then each run of messages of one role (without tool calls) joined, by blank lines. */
function alternating(messages: readonly TemplateMessage[]): TemplateMessage[] {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content ?? '');
  const out: TemplateMessage[] = system.length ? [{ role: 'system', content: system.join('\n\n') }] : [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const last = out[out.length - 1];
    if (last && last.role === m.role && last.role !== 'tool' && !last.tool_calls && !m.tool_calls) out[out.length - 1] = { ...last, content: `${last.content ?? ''}\n\n${m.content ?? ''}` };
    else out.push(m);
  }
  return out;
}
