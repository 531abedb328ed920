import type { TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { readable } from './mentions.js';
import { DEFAULT_PROMPTS, instruction } from './prompts.js';
import { injectionQuote } from './quote.js';
import type { Fact } from './types.js';

/** One extraction: the finished exchange of a turn and the facts it states. */
export interface ExtractRequest {
  tokens: TokenCounter;
  /** The session's seeded stream: one draw per stated fact, in order. */
  random: () => number;
  model: string;
  /** Chance that each stated fact whose value the messages hold is found. */
  recall: number;
  /** The messages the extractor reads: the turn's user message, tool calls and results, reply. */
  exchange: readonly Message[];
  /** Facts the turn states, in order; only those whose value occurs in `exchange` can be found. */
  stated: readonly Fact[];
  /** The turn is flagged `injection: true`: its instruction is stored too. */
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
 * The simulated fact extractor (a priced auxiliary call, made after the turn,
 * so the user does not wait for it). Input: the template and the turn's
 * messages; output: the facts found as "name: value; …" or "none". It reads
 * the text it is given: a stated fact can be found only when its value
 * occurs in one of the messages (compared as probes are scored: lower case,
 * whitespace collapsed), and each such fact is found with probability
 * `recall` (one draw each, in order). An injection turn's instruction is
 * stored as a standing `instruction` (its quote, no draw): the way injected
 * text persists in long-term memory.
 */
export function extract(req: ExtractRequest): { found: Fact[]; call: UpkeepCall } {
  const found = readable(req.exchange, req.stated).filter(() => req.random() < req.recall);
  const user = req.exchange.find((m) => m.role === 'user');
  if (req.injection && user) found.push([INSTRUCTION_FACT, injectionQuote(user.content)]);
  const output = found.length ? found.map(([k, v]) => `${k}: ${v}`).join('; ') : 'none';
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
