import type { ToolDef } from '../types.js';
import type { TokenCounter } from './counter.js';

/**
 * The constants of OpenAI's published rule for counting function definitions
 * (the cookbook's `num_tokens_for_tools`): tokens added per function, for its
 * properties, per property, for an enum, per enum value, and once at the end.
 * gpt-3.5-turbo and gpt-4 (cl100k_base) start a function with 10, the gpt-4o
 * family (o200k_base) with 7; other encodings, stand-ins for other
 * providers' tokenizers, take the o200k_base constants (an estimate).
 */
const RULES = {
  cl100k_base: { funcInit: 10, propInit: 3, propKey: 3, enumInit: -3, enumItem: 3, funcEnd: 12 },
  default: { funcInit: 7, propInit: 3, propKey: 3, enumInit: -3, enumItem: 3, funcEnd: 12 },
} as const;

/** A property of a definition's parameters, as the rule reads it. */
interface Property {
  type?: unknown;
  description?: unknown;
  enum?: unknown;
}

const dropPeriod = (s: string) => (s.endsWith('.') ? s.slice(0, -1) : s);

/**
 * Prompt tokens of the tool definitions offered with a call, by OpenAI's
 * published rule: per function `name:description` (a final period dropped)
 * and, for each top-level parameter property, `name:type:description` and
 * each enum value; the rule's constants around them. Nested schemas are not
 * counted (the rule reads the top level only). No definitions: 0. Under
 * an open-weight tokenizer, what the definitions add to a prompt its chat
 * template renders.
 */
export function toolDefTokens(defs: readonly ToolDef[], tokens: TokenCounter): number {
  if (!defs.length) return 0;
  // A chat template lays the definitions out itself: what they add to a prompt.
  if (tokens.template) return tokens.template.toolTokens(defs);
  const r = tokens.encoding === 'cl100k_base' ? RULES.cl100k_base : RULES.default;
  let n = 0;
  for (const d of defs) {
    n += r.funcInit + tokens.text(`${d.name}:${dropPeriod(d.description ?? '')}`);
    const properties = Object.entries((d.parameters?.properties ?? {}) as Record<string, Property>);
    if (!properties.length) continue;
    n += r.propInit;
    for (const [key, p] of properties) {
      n += r.propKey;
      if (Array.isArray(p.enum)) {
        n += r.enumInit;
        for (const item of p.enum) n += r.enumItem + tokens.text(String(item));
      }
      n += tokens.text(`${key}:${typeof p.type === 'string' ? p.type : ''}:${dropPeriod(typeof p.description === 'string' ? p.description : '')}`);
    }
  }
  return n + r.funcEnd;
}
