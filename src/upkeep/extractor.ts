import type { TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { KIND_TIER, salientIn } from './mentions.js';
import type { SpanKind } from './salience.js';
import { DEFAULT_PROMPTS, instruction } from './prompts.js';
import { injectionQuote } from './quote.js';
import type { Fact } from './types.js';

/** One extraction: the finished exchange of a turn. */
export interface ExtractRequest {
  tokens: TokenCounter;
  /** The session's seeded stream: one draw per span read, in order. */
  random: () => number;
  model: string;
  /** Chance that each salient span of the messages is found. */
  recall: number;
  /** The messages the extractor reads, all it knows: the turn's user message, tool calls and results, reply. */
  exchange: readonly Message[];
  /** The moderation classifier flagged the turn's user message as an injection: its instruction is stored too. */
  injection?: boolean;
  /** The extractor's instruction (default: `DEFAULT_PROMPTS.extract`). */
  prompt?: string;
  /** Most tokens the answer may have, for a real extractor (default 500). */
  maxTokens?: number;
}

/** The sheet entry an injected instruction is stored under. */
export const INSTRUCTION_FACT = 'instruction';

/** The extractor's default instruction: one object, counted once per run. */
export const EXTRACT_TEMPLATE: Message = instruction(DEFAULT_PROMPTS.extract);

/**
 * The name the simulated extractor gives a span: its kind, then (after a
 * NUL, which the sheet does not write) its normalized text, so every value
 * is an entry of its own (`name: Kavya`, `id: SE-10423`).
 */
function spanFactName(kind: string, key: string): string {
  return `${kind}\0${key}`;
}

/**
 * The simulated fact extractor (a priced auxiliary call, made after the turn,
 * so the user does not wait for it). Input: the template and the turn's
 * messages; output: the facts found as "kind: value; …" or "none". It reads
 * the text alone, as a real extractor does, and knows nothing of what a
 * scenario annotates: what it finds are the salient spans of the messages
 * (`salientIn`: names, codes and IDs, e-mails, phone numbers, dates, times,
 * amounts, URLs, numbers), each with probability `recall` (one draw each, in
 * order), named by kind. It never decides that a new value replaces an old
 * one: both stay on the sheet until its size drops one. An injection turn's
 * instruction is stored as a standing `instruction` (its quote, no draw):
 * the way injected text persists in long-term memory.
 */
export function extract(req: ExtractRequest): { found: Fact[]; call: UpkeepCall } {
  const found: Fact[] = [];
  for (const s of salientIn(req.exchange)) if (req.random() < req.recall) found.push([spanFactName(s.kind, s.key), s.text]);
  const user = req.exchange.find((m) => m.role === 'user');
  if (req.injection && user) found.push([INSTRUCTION_FACT, injectionQuote(user.content)]);
  const output = found.length ? found.map(([k, v]) => `${factLabel(k)}: ${v}`).join('; ') : 'none';
  return {
    found,
    call: {
      kind: 'extract',
      model: req.model,
      inputTokens: req.tokens.prompt([instruction(req.prompt ?? DEFAULT_PROMPTS.extract), ...req.exchange]),
      outputTokens: req.tokens.text(output),
      sync: false,
    },
  };
}

/** How a fact's name is written: a span's kind without its key (see `spanFactName`), any other name as it is. */
export function factLabel(name: string): string {
  const nul = name.indexOf('\0');
  return nul < 0 ? name : name.slice(0, nul);
}

/** The tier of a fact's kind when the simulated extractor named it (see `KIND_TIER`); undefined for any other name. */
export function factTier(name: string): number | undefined {
  const nul = name.indexOf('\0');
  return nul < 0 ? undefined : KIND_TIER[name.slice(0, nul) as SpanKind];
}
