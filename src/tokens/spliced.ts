import type { TemplateMessage } from './chat-template.js';
import { sharedPrefix, truncate } from './resume.js';

/**
 * Prompts laid out by a chat template without running it over every message.
 *
 * A chat template spends 20–60 µs per message it renders, and a prompt that
 * resends the conversation (`full`, a summary's open exchanges, a window)
 * would be rendered again, whole, on every call. But the templates of the
 * registry write a message with text only (no tool calls, no name) as its
 * text, or its text trimmed, inside framing that does not depend on the text,
 * and in the middle of a chat — after the two messages that open it, before
 * its last user message — each such message with the same framing wherever it
 * stands. So a prompt is rendered once per *shape*, as a skeleton:
 *
 * 1. each text-only message is given a placeholder for its text, and the
 *    longest run of them alternating user and assistant in the middle is cut
 *    to four (its length left out of the shape);
 * 2. the template renders that skeleton once (it is remembered by its shape:
 *    the roles, the other messages and the tools); the placeholders show, in
 *    the template's own output, where each text goes, whether it is written
 *    as it is or trimmed, and the framing between two middle messages of each
 *    order;
 * 3. each prompt of that shape is the skeleton with its texts laid in, the
 *    middle repeated to its length.
 *
 * Anything else a template does to a placeholder (escaping it, changing its
 * case, writing it twice, splitting it, a framing that differs between the
 * two user–assistant gaps, refusing the skeleton) and the prompt is rendered
 * in full. Texts that hold one of the tokenizer's added tokens (`<think>`,
 * `<tool_response>`, … which some templates test for) and blank texts are
 * never given a placeholder. That this lays out the same text as rendering
 * every message is checked for every family by rendering random chats both
 * ways (test/tokens-spliced.test.ts).
 */
export class Skeletons {
  /** Skeletons by shape: null when the template's output cannot be read, `refused` when the template refused it. */
  private readonly made = new Map<string, Skeleton | 'refused' | null>();

  constructor(
    /** Renders a prompt with the template (and the tools offered); undefined when the template refuses it. */
    private readonly render: (messages: readonly TemplateMessage[]) => string | undefined,
    /** Whether a message's text may be given a placeholder (it holds none of the tokenizer's added tokens). */
    private readonly plainText: (m: TemplateMessage) => boolean,
    /** A number for each message object, for the shape of a skeleton that holds it as it is. */
    private readonly idOf: (m: TemplateMessage) => number,
  ) {}

  /** The messages of the last prompt laid out, and whether a placeholder may stand for each. */
  private readonly last: TemplateMessage[] = [];
  private readonly lastPlain: boolean[] = [];

  /** Whether a placeholder may stand for each message: looked up only for those after the messages it shares with the last prompt. */
  private plainOf(messages: readonly TemplateMessage[]): readonly boolean[] {
    const { last, lastPlain } = this;
    let i = sharedPrefix(messages, last);
    truncate(last, i);
    truncate(lastPlain, i);
    for (; i < messages.length; i++) {
      last.push(messages[i]!);
      lastPlain.push(isPlain(messages[i]!, this.plainText));
    }
    return lastPlain;
  }

  /**
   * The prompt as the template lays it out: literal text and the messages
   * whose text goes between; `refused` when the template refuses its shape
   * (it would refuse the prompt: templates refuse by roles and tool calls,
   * never by a text); undefined when it must be rendered in full.
   */
  layout(messages: readonly TemplateMessage[]): Part[] | 'refused' | undefined {
    const plain = this.plainOf(messages);
    const middle = middleOf(messages, plain);
    // The shape: each message's role when a placeholder stands for its text, else the message itself; the middle by its first role.
    const slots: TemplateMessage[] = [];
    let shape = '';
    let kept = false;
    for (let i = 0; i < messages.length; i++) {
      if (middle && i === middle.from) {
        shape += `~${messages[i]!.role}`;
        i = middle.to - 1;
      } else if (plain[i]) {
        slots.push(messages[i]!);
        shape += `,${messages[i]!.role}`;
      } else {
        kept = true;
        shape += `,#${this.idOf(messages[i]!)}`;
      }
    }
    // Without a middle, a skeleton that keeps messages as they are (tool rounds) serves only this prompt, and one of no message
    // has nothing to lay in: rendered in full.
    if (!middle && (kept || !slots.length)) return undefined;
    let skeleton = this.made.get(shape);
    if (skeleton === undefined) {
      // Prompts of a run come in few shapes; a bound keeps a run of many shapes from holding them all.
      if (this.made.size >= MAX_SKELETONS) this.made.clear();
      const out = this.render(probeOf(messages, plain, middle));
      this.made.set(shape, (skeleton = out === undefined ? 'refused' : skeletonOf(out, slots.length, middle !== undefined)));
    }
    if (typeof skeleton === 'string' || skeleton === null) return skeleton ?? undefined;
    return this.lay(skeleton, slots, messages, middle ?? { from: 0, to: 0 });
  }

  /** The last prompt laid out on a skeleton: the skeleton, its slots' messages, its middle's, and its parts. */
  private laid: { skeleton: Skeleton | undefined; slots: readonly TemplateMessage[]; middle: TemplateMessage[]; parts: Part[] } = { skeleton: undefined, slots: [], middle: [], parts: [] };

  /**
   * A prompt laid out on its skeleton: its texts in the slots, the middle's
   * messages with the middle's framing between them. On the skeleton of the
   * last prompt, with the same slots and a middle that starts with the last
   * one's, its parts up to the first middle message it does not share are the
   * last prompt's (a growing chat lays out its new messages only).
   */
  private lay(skeleton: Skeleton, slots: readonly TemplateMessage[], messages: readonly TemplateMessage[], middle: { from: number; to: number }): Part[] {
    const last = this.laid;
    let parts: Part[] = [];
    let item = 0;
    let j = 0;
    const at = skeleton.items.indexOf(null);
    if (last.skeleton === skeleton && at >= 0 && sameSlots(skeleton, at, slots, last.slots)) {
      const limit = Math.min(middle.to - middle.from, last.middle.length);
      while (j < limit && messages[middle.from + j] === last.middle[j]) j++;
      if (j > 0) {
        // The parts before the middle, one per item, then two per middle message (its gap, but the first's, and its text).
        parts = last.parts.slice(0, at + 2 * j - 1);
        item = at;
      }
    }
    for (; item < skeleton.items.length; item++) {
      const it = skeleton.items[item];
      if (typeof it === 'string') parts.push(it);
      else if (it) parts.push({ message: slots[it.slot]!, trimmed: it.trimmed });
      else {
        for (; j < middle.to - middle.from; j++) {
          if (j) parts.push(skeleton.gaps[(j - 1) % 2]!);
          parts.push({ message: messages[middle.from + j]!, trimmed: skeleton.trimmed[j % 2]! });
        }
      }
    }
    this.laid = { skeleton, slots, middle: messages.slice(middle.from, middle.to), parts };
    return parts;
  }
}

/** Whether two prompts on a skeleton have the same messages in the slots before its middle (at `at`: the slots after it are laid anew). */
function sameSlots(skeleton: Skeleton, at: number, a: readonly TemplateMessage[], b: readonly TemplateMessage[]): boolean {
  for (let i = 0; i < at; i++) {
    const item = skeleton.items[i];
    if (typeof item === 'object' && item && a[item.slot] !== b[item.slot]) return false;
  }
  return true;
}

/** The skeleton of a prompt: its texts as placeholders, numbered in order, and its middle cut to four. */
function probeOf(messages: readonly TemplateMessage[], plain: readonly boolean[], middle: { from: number; to: number } | undefined): TemplateMessage[] {
  const probe: TemplateMessage[] = [];
  let slot = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (middle && i === middle.from) {
      for (let k = 0; k < 4; k++) probe.push({ role: messages[i + (k % 2)]!.role, content: placeholder(`m${k}`) });
      i = middle.to - 1;
    } else probe.push(plain[i] ? { role: m.role, content: placeholder(String(slot++)) } : m);
  }
  return probe;
}

/** A literal stretch of a laid-out prompt, or a message whose text goes there (trimmed, or as it is). */
export type Part = string | { message: TemplateMessage; trimmed: boolean };

/** The text of a laid-out prompt. */
export function partsText(parts: readonly Part[]): string {
  return parts.map(textOf).join('');
}


/** A part's text. */
export function textOf(p: Part): string {
  return typeof p === 'string' ? p : p.trimmed ? p.message.content!.trim() : p.message.content!;
}

/** Skeletons kept at most per renderer. */
const MAX_SKELETONS = 4096;

/** Fewest middle messages cut to four: a shorter run is given placeholders one by one. */
const MIN_MIDDLE = 6;

/**
 * A placeholder no template writes of its own, which escaping (a quote, a
 * backslash), splitting lines or a change of case would alter, between pads
 * that `trim` removes whole and any other stripping only in part.
 */
const placeholder = (name: string): string => `${PAD_BEFORE}${MARK}${name}${MARK_END}${PAD_AFTER}`;
const MARK = '\u27e6Ctx"\\\n';
const MARK_END = '\u27e7';
const PAD_BEFORE = '\n\u3000';
const PAD_AFTER = '\u3000\n';

/** A text-only message, its text plain and not blank: one a placeholder may stand for. */
function isPlain(m: TemplateMessage, plainText: (m: TemplateMessage) => boolean): boolean {
  return (
    (m.role === 'user' || m.role === 'assistant' || m.role === 'system') &&
    typeof m.content === 'string' &&
    m.content.trim() !== '' &&
    m.name === undefined &&
    m.tool_calls === undefined &&
    m.tool_call_id === undefined &&
    plainText(m)
  );
}

/**
 * The middle of a prompt: the longest run of plain messages alternating user
 * and assistant after its leading system messages and the two messages that
 * open the chat, and before its last user message; an even number of them,
 * at least MIN_MIDDLE.
 */
function middleOf(messages: readonly TemplateMessage[], plain: readonly boolean[]): { from: number; to: number } | undefined {
  let end = messages.length - 1;
  while (end >= 0 && messages[end]!.role !== 'user') end--;
  let start = 0;
  while (start < messages.length && messages[start]!.role === 'system') start++;
  start += 2;
  const chat = (i: number) => plain[i] && messages[i]!.role !== 'system';
  let best = { from: 0, to: 0 };
  for (let i = start; i < end; ) {
    if (!chat(i)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < end && chat(j) && messages[j]!.role !== messages[j - 1]!.role) j++;
    const to = j - ((j - i) % 2);
    if (to - i > best.to - best.from) best = { from: i, to };
    i = j;
  }
  return best.to - best.from >= MIN_MIDDLE ? best : undefined;
}

/** A rendered skeleton: literal text, the slots texts go in (by number, trimmed or not), and where the middle goes. */
interface Skeleton {
  /** Literal text, a slot, or (null) the middle. */
  items: (string | { slot: number; trimmed: boolean } | null)[];
  /** The middle's framing after a message of its first role, and after one of its second; whether each role's text is trimmed. */
  gaps: [string, string];
  trimmed: [boolean, boolean];
}

/** Reads a rendered skeleton: every placeholder once, its pads kept or gone both; the middle's four in a row, its gaps consistent. */
function skeletonOf(out: string, slots: number, middle: boolean): Skeleton | null {
  const expected = new Set([...Array.from({ length: slots }, (_, k) => String(k)), ...(middle ? ['m0', 'm1', 'm2', 'm3'] : [])]);
  // One pass over the output: each placeholder, in the order the template wrote them.
  const found: { name: string; start: number; end: number; trimmed: boolean }[] = [];
  for (let at = out.indexOf(MARK); at >= 0; at = out.indexOf(MARK, at + 1)) {
    const close = out.indexOf(MARK_END, at + MARK.length);
    const name = close < 0 ? '' : out.slice(at + MARK.length, close);
    // Unknown (changed) or written twice.
    if (!expected.delete(name)) return null;
    const end = close + MARK_END.length;
    const padded = out.startsWith(PAD_BEFORE, at - PAD_BEFORE.length) && out.startsWith(PAD_AFTER, end);
    const bare = out[at - 1] !== PAD_BEFORE[1] && out[end] !== PAD_AFTER[0];
    if (padded === bare) return null;
    found.push(padded ? { name, start: at - PAD_BEFORE.length, end: end + PAD_AFTER.length, trimmed: false } : { name, start: at, end, trimmed: true });
  }
  // One not written, or written changed.
  if (expected.size) return null;
  const items: Skeleton['items'] = [];
  const skeleton: Skeleton = { items, gaps: ['', ''], trimmed: [false, false] };
  let at = 0;
  for (let i = 0; i < found.length; i++) {
    const f = found[i]!;
    if (f.start < at) return null;
    if (f.start > at) items.push(out.slice(at, f.start));
    if (f.name !== 'm0') {
      items.push({ slot: Number(f.name), trimmed: f.trimmed });
      at = f.end;
      continue;
    }
    const quad = found.slice(i, i + 4);
    if (quad.map((q) => q.name).join() !== 'm0,m1,m2,m3') return null;
    const [a, b, c, d] = quad as [(typeof found)[0], (typeof found)[0], (typeof found)[0], (typeof found)[0]];
    skeleton.gaps = [out.slice(a.end, b.start), out.slice(b.end, c.start)];
    skeleton.trimmed = [a.trimmed, b.trimmed];
    if (out.slice(c.end, d.start) !== skeleton.gaps[0] || a.trimmed !== c.trimmed || b.trimmed !== d.trimmed) return null;
    items.push(null);
    at = d.end;
    i += 3;
  }
  if (at < out.length) items.push(out.slice(at));
  return skeleton;
}
