import fc from 'fast-check';
import { parseScenario } from '../src/scenario/load.js';
import type { PolicyVariant } from '../src/policies/spec.js';
import { policyFromString } from '../src/scenario/study.js';
import type { Conversation } from '../src/types.js';

/** Builds a conversation through the real loader from a scenario document. */
export function conversation(doc: Record<string, unknown>): Conversation {
  return parseScenario('test.json', JSON.stringify(doc));
}

/** One policy variant from a spec string; throws on a bad spec. */
export function variant(spec: string): PolicyVariant {
  const r = policyFromString(spec);
  if (typeof r === 'string') throw new Error(r);
  return r[0]!;
}

const words = ['order', 'delivery', 'refund', 'size', 'socks', 'cart', 'email', 'hello', 'thanks', 'please', 'when', 'late', 'the', 'a'];
const text = (max: number) => fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: max }).map((w) => w.join(' '));

/** Random scenario documents: system prompt or not, 1–25 turns, tools, missing replies. */
export const scenarioDoc = fc.record({
  system: fc.option(text(40), { nil: undefined }),
  turns: fc.array(
    fc.record({
      user: text(60),
      assistant: fc.option(text(120), { nil: undefined }),
      tools: fc.option(fc.array(fc.record({ call: fc.constantFrom('create_task', 'lookup'), args: fc.record({ q: text(5) }), result: text(30) }), { minLength: 1, maxLength: 2 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 25 },
  ),
}).map((d) => {
  const doc: Record<string, unknown> = { id: 'random', turns: d.turns.map((t) => Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined))) };
  if (d.system !== undefined) doc.system = d.system;
  return doc;
});
