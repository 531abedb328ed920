import type { Message, ToolDef } from '../types.js';
import { chatMessage, chatTools, type TemplateMessage, type ChatTokenizer } from './chat-template.js';
import type { Overhead } from './encoding.js';
import { sharedPrefix, truncate } from './resume.js';
import { Skeletons, partsText, textOf, type Part } from './spliced.js';

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
 * each is tokenized once however many prompts repeat it. A prompt is laid
 * out on the skeleton of its shape, rendered once (see spliced.ts), rather
 * than rendered whole on every call, and counted from pieces looked up by
 * message.
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
  /** Whether a message's text may be laid into a skeleton (see spliced.ts), by message. */
  private readonly plain = new WeakMap<TemplateMessage, boolean>();
  private readonly plainText = (m: TemplateMessage): boolean => {
    let yes = this.plain.get(m);
    if (yes === undefined) this.plain.set(m, (yes = this.chat.plainText(m.content ?? '')));
    return yes;
  };
  /** The skeletons prompts are laid out on, by the tools offered with them (NO_TOOLS: none); per scenario, as a shape that keeps a message whole holds its text. */
  private skeletons = new WeakMap<object, Skeletons>();
  /** The piece a message's text makes with the framing text around it, by message and framing: its id and tokens. */
  private laidPieces = new WeakMap<TemplateMessage, { before: string; after: string; trimmed: boolean; piece: Piece | undefined }>();
  /** The last prompt laid out (see `sequenceOfParts`). */
  private laid = new LaidOut();
  /** Literal parts of laid-out prompts, cut at the special tokens. */
  private literals = new Map<string, Literal>();
  /** Message objects numbered (the shapes of skeletons name the messages they keep by number). */
  private readonly ids = new WeakMap<object, number>();
  private nextId = 0;
  /** The prompts of the scenario counted so far, in a tree by their tools (NO_TOOLS: none) and messages; the path of the last one. */
  private counted = new Map<object, Counted>();
  private walk: { tools: readonly ToolDef[] | undefined | null; messages: readonly Message[]; path: Counted[] } = { tools: null, messages: [], path: [] };
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
      const p = this.piece(pieces[i]!);
      ids[i] = p.id;
      sums[i + 1] = sums[i]! + p.tokens;
    }
    return { tokens: sums[pieces.length]!, sequence: { ids, sums } };
  }

  /** A piece's id in the scenario and its tokens (of the text it is counted as: see `ChatTokenizer.pieceText`). */
  private piece(text: string): Piece {
    let id = this.pieceIds.get(text);
    if (id === undefined) this.pieceIds.set(text, (id = this.pieceIds.size));
    return { id, tokens: this.text(this.chat.pieceText(text)) };
  }

  /**
   * The same for a prompt laid out on a skeleton, without making its text:
   * each literal part is cut at the template's special tokens once per
   * scenario, and a message's text makes one piece with the framing text
   * around it, looked up by message (so a long prompt costs a lookup per
   * message, not a pass over its text). Undefined when a piece would not be
   * what cutting the whole text makes (a special token across a text's edge,
   * or two texts in one piece): the prompt is then cut as text.
   */
  private sequenceOfParts(parts: readonly Part[]): { tokens: number; sequence: PromptSequence } | undefined {
    const laid = this.laid;
    // Resumed after the last part both this prompt and the last one laid out begin with that ends in a special token: the pieces
    // up to there are the same (a prompt that extends the last one costs its new parts).
    const limit = Math.min(parts.length, laid.parts.length);
    let same = 0;
    while (same < limit && samePart(parts[same]!, laid.parts[same]!)) same++;
    let k = laid.marks.length - 1;
    while (k >= 0 && laid.marks[k]! > same) k--;
    truncate(laid.marks, k + 1);
    truncate(laid.counts, k + 1);
    truncate(laid.carried, k + 1);
    laid.parts = parts;
    let n = k >= 0 ? laid.counts[k]! : 0;
    if (n < laid.handed) laid.move(n, n + ROOM);
    const push = (p: Piece) => {
      if (laid.base + n >= laid.ids.length) laid.move(n, 2 * n + ROOM);
      const at = laid.base + n;
      laid.ids[at] = p.id;
      laid.sums[at + 1] = laid.sums[at]! + p.tokens;
      n++;
    };
    /** The piece being made: framing text before its message's text, the message, framing text after. */
    let before = k >= 0 ? laid.carried[k]! : '';
    let message: Exclude<Part, string> | undefined;
    let after = '';
    for (let i = k >= 0 ? laid.marks[k]! : 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (typeof part !== 'string') {
        if (message) return undefined;
        message = part;
        continue;
      }
      const literal = this.literal(part);
      if (message) after += literal.lead;
      else before += literal.lead;
      if (!literal.inner.length) continue;
      if (message) {
        const p = this.laidPiece(message, before, after);
        if (!p) return undefined;
        push(p);
      } else if (before) push(this.piece(before));
      for (const p of literal.inner) push(p);
      before = literal.trail;
      after = '';
      message = undefined;
      laid.marks.push(i + 1);
      laid.counts.push(n);
      laid.carried.push(before);
    }
    if (message) {
      const p = this.laidPiece(message, before, after);
      if (!p) return undefined;
      push(p);
    } else if (before) push(this.piece(before));
    // The pieces handed out are not written again: a later prompt that changes them is written to new arrays.
    laid.handed = Math.max(laid.handed, n);
    const { base } = laid;
    return { tokens: laid.sums[base + n]!, sequence: { ids: laid.ids.subarray(base, base + n), sums: laid.sums.subarray(base, base + n + 1) } };
  }

  /** A literal part cut at the special tokens, once per scenario (the same few literals make every prompt of a shape). */
  private literal(text: string): Literal {
    let l = this.literals.get(text);
    if (!l) {
      const pieces = this.chat.pieces(text);
      const first = pieces.findIndex((p) => this.chat.framing.has(p));
      if (first < 0) l = { lead: text, inner: [], trail: '' };
      else {
        let last = pieces.length - 1;
        while (!this.chat.framing.has(pieces[last]!)) last--;
        l = { lead: pieces.slice(0, first).join(''), inner: pieces.slice(first, last + 1).map((p) => this.piece(p)), trail: pieces.slice(last + 1).join('') };
      }
      if (this.literals.size >= 4096) this.literals.clear();
      this.literals.set(text, l);
    }
    return l;
  }

  /** The piece of a message's text with the framing text around it, made and checked once per message and framing; undefined when cutting it would cut it again. */
  private laidPiece(part: Exclude<Part, string>, before: string, after: string): Piece | undefined {
    let laid = this.laidPieces.get(part.message);
    if (laid?.before !== before || laid.after !== after || laid.trimmed !== part.trimmed) {
      const text = `${before}${textOf(part)}${after}`;
      const piece = this.chat.pieces(text).length === 1 && !this.chat.framing.has(text) ? this.piece(text) : undefined;
      this.laidPieces.set(part.message, (laid = { before, after, trimmed: part.trimmed, piece }));
    }
    return laid.piece;
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

  /**
   * Tokens a model writes for a message where the format says how its output
   * is billed (DeepSeek-V3.2: its text and calls as laid out, cut at the
   * special tokens); undefined for the others.
   */
  outputTokens(m: Message): number | undefined {
    const render = this.chat.renderOutput;
    if (!render) return undefined;
    return this.chat.pieces(render(chatMessage(m, this.chat.source))).reduce((n, p) => n + this.text(this.chat.pieceText(p)), 0);
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
    // Prompts are found in a tree by their tools and messages, walked from where the last prompt's path and this one part
    // (a prompt that extends the last one looks up its new messages only).
    const walk = this.walk;
    let same = 0;
    if (walk.tools === tools) same = sharedPrefix(messages, walk.messages);
    else {
      const key = tools ?? NO_TOOLS;
      let root = this.counted.get(key);
      if (!root) this.counted.set(key, (root = { next: undefined, count: undefined }));
      walk.tools = tools;
      walk.path[0] = root;
    }
    const path = walk.path;
    truncate(path, same + 1);
    let node = path[same]!;
    for (let i = same; i < messages.length; i++) {
      const m = messages[i]!;
      let next = node.next?.get(m);
      if (!next) (node.next ??= new Map()).set(m, (next = { next: undefined, count: undefined }));
      path.push((node = next));
    }
    walk.messages = messages;
    return (node.count ??= this.render(messages, tools, fallback));
  }

  /** Forgets the prompts counted (at the end of a scenario; their messages are not sent again). */
  forgetScenario(): void {
    this.skeletons = new WeakMap();
    this.counted = new Map();
    this.walk = { tools: null, messages: [], path: [] };
    this.pieceIds = new Map();
    this.laidPieces = new WeakMap();
    this.literals = new Map();
    this.laid = new LaidOut();
    this.listed = { messages: [], plain: [], ends: [0], split: Infinity };
  }

  private idOf(o: object): number {
    let id = this.ids.get(o);
    if (id === undefined) this.ids.set(o, (id = this.nextId++));
    return id;
  }

  private render(messages: readonly Message[], tools: readonly ToolDef[] | undefined, fallback: () => number): TemplateCount {
    const offered = tools?.length ? this.toolsOf(tools) : undefined;
    const defs = offered?.defs;
    // A template that renders no tools (DeepSeek V3's) counts a prompt without them, though the provider sends them: an estimate.
    const unrendered = offered?.tokens === 0;
    const { plain, split } = this.templateList(messages);
    // Each shape only when the one before it was refused (most prompts render as they are).
    const shapes: [() => readonly TemplateMessage[], boolean][] = [
      [() => plain, split],
      [() => alternating(plain), split],
      [() => alternating(messages.map(asText)), true],
    ];
    const skeletons = this.skeletonsFor(defs);
    for (const [shape, estimated] of shapes) {
      const shaped = shape();
      // Laid out on the skeleton of its shape when it has one (the same text as rendering it: see spliced.ts), else rendered.
      const parts = skeletons.layout(shaped);
      if (parts === 'refused') continue;
      const laid = parts && this.sequenceOfParts(parts);
      if (laid) return { ...laid, estimated: estimated || unrendered };
      const rendered = parts ? partsText(parts) : tryRender(this.chat, shaped, defs);
      if (rendered !== undefined) return { ...this.sequenceOf(rendered), estimated: estimated || unrendered };
    }
    return { tokens: fallback(), estimated: true };
  }

  private skeletonsFor(defs: ReturnType<typeof chatTools> | undefined): Skeletons {
    const key = defs ?? NO_TOOLS;
    let s = this.skeletons.get(key);
    if (!s) this.skeletons.set(key, (s = new Skeletons((m) => tryRender(this.chat, m, defs), this.plainText, (m) => this.idOf(m))));
    return s;
  }

  /** The last prompt's messages, the messages the template reads for them (`ends[i]`: for its first i), and the first split in two. */
  private listed: { messages: Message[]; plain: TemplateMessage[]; ends: number[]; split: number } = { messages: [], plain: [], ends: [0], split: Infinity };

  /**
   * The messages the template reads for a prompt, and whether one was split
   * in two (its calls apart from its text); made anew only past the messages
   * the prompt shares with the last one. The list is the last one changed:
   * it is read before the next prompt is counted, never kept.
   */
  private templateList(messages: readonly Message[]): { plain: readonly TemplateMessage[]; split: boolean } {
    const l = this.listed;
    let i = sharedPrefix(messages, l.messages);
    truncate(l.messages, i);
    truncate(l.ends, i + 1);
    truncate(l.plain, l.ends[i]!);
    if (l.split >= i) l.split = Infinity;
    for (; i < messages.length; i++) {
      const m = messages[i]!;
      const t = this.templateMessages(m);
      if (t.length > 1 && l.split === Infinity) l.split = i;
      for (const x of t) l.plain.push(x);
      l.messages.push(m);
      l.ends.push(l.plain.length);
    }
    return { plain: l.plain, split: l.split !== Infinity };
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

/**
 * The last prompt laid out, to resume the next one from: its parts; after
 * each literal part that ends in a special token (where a piece starts
 * afresh), the index of the next part, the pieces so far and the text carried
 * into the next piece; and its pieces, from `base` on in arrays the prompts'
 * sequences are views of (shared, so that a prompt that extends the last one
 * copies nothing). The first `handed` pieces from `base` are never written
 * again: a prompt that changes one is moved past them.
 */
class LaidOut {
  parts: readonly Part[] = [];
  readonly marks: number[] = [];
  readonly counts: number[] = [];
  readonly carried: string[] = [];
  ids = new Int32Array(0);
  sums = new Float64Array(1);
  base = 0;
  handed = 0;

  /** Moves the first n pieces past those handed out, with room for `room` in all; to new arrays when these are full. */
  move(n: number, room: number): void {
    let to = this.base + this.handed + 1;
    if (to + room > this.ids.length) {
      const size = Math.max(SLAB, 2 * room);
      const ids = new Int32Array(size);
      const sums = new Float64Array(size + 1);
      ids.set(this.ids.subarray(this.base, this.base + n));
      sums.set(this.sums.subarray(this.base, this.base + n + 1));
      this.ids = ids;
      this.sums = sums;
      to = 0;
    } else {
      this.ids.copyWithin(to, this.base, this.base + n);
      this.sums.copyWithin(to, this.base, this.base + n + 1);
    }
    this.base = to;
    this.handed = 0;
  }
}

/** Pieces the arrays of laid-out prompts hold (a few prompts of a long chat). */
const SLAB = 1 << 16;

/** Room for the pieces a prompt adds to the last one (most add a message or two), made when its pieces are moved. */
const ROOM = 64;

/** Whether two parts are the same: the same literal text, or the same message written the same way. */
function samePart(a: Part, b: Part): boolean {
  if (a === b) return true;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a.message === b.message && a.trimmed === b.trimmed;
}

/** A prompt counted, at the end of its path of messages, and the prompts that extend it, by their next message. */
interface Counted {
  next: Map<Message, Counted> | undefined;
  count: TemplateCount | undefined;
}

/** A piece of a rendered prompt: its id in the scenario, its tokens. */
interface Piece {
  id: number;
  tokens: number;
}

/**
 * A literal part of a laid-out prompt, cut at the special tokens: the text
 * before the first (the end of the piece before it), the pieces from the
 * first to the last, the text after the last (the start of the next piece);
 * without a special token, all of it is `lead` (and `inner` is empty).
 */
interface Literal {
  lead: string;
  inner: Piece[];
  trail: string;
}

/** The key of the skeletons of prompts offered no tools. */
const NO_TOOLS = {};

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
