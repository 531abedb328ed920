import type { TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import type { ReadingStore } from './readings.js';
import { salienceOf, statementsIn } from './statements.js';
import type { Day } from './times.js';
import { DEFAULT_PROMPTS, instruction } from './prompts.js';
import { injectionQuote } from './quote.js';
import type { Fact } from './types.js';

/** One extraction: the finished exchange of a turn. */
export interface ExtractRequest {
  tokens: TokenCounter;
  /** The session's seeded stream: one draw per statement read, in order. */
  random: () => number;
  model: string;
  /** Chance that each statement of the messages is found. */
  recall: number;
  /** The messages the extractor reads, all it knows: the turn's user message, tool calls and results, reply. */
  exchange: readonly Message[];
  /** The day the conversation last stated (a session's header), when it has: relative times are resolved against it. */
  today?: Day | undefined;
  /** The moderation classifier flagged the turn's user message as an injection: its instruction is stored too. */
  injection?: boolean;
  /** The extractor's instruction (default: `DEFAULT_PROMPTS.extract`). */
  prompt?: string;
  /** Most tokens the answer may have, for a real extractor (default 500). */
  maxTokens?: number;
  /** Where what the extractor read of a text in an earlier run is kept (the cache folder's readings): not read again. */
  readings?: ReadingStore | undefined;
}

/** The sheet entry an injected instruction is stored under. */
export const INSTRUCTION_FACT = 'instruction';

/** The extractor's default instruction: one object, counted once per run. */
export const EXTRACT_TEMPLATE: Message = instruction(DEFAULT_PROMPTS.extract);

/**
 * The simulated fact extractor (a priced auxiliary call, made after the turn,
 * so the user does not wait for it). Input: the template and the turn's
 * messages; output: the facts found, on one line as its instruction asks
 * (each statement its sentence, each named fact `name: value.`), or
 * "none". It reads the text alone, as a real extractor does, and knows
 * nothing of what a scenario annotates: what it finds are the statements of the messages
 * (`statementsIn`: each sentence that says something of the speaker, the one
 * spoken to or the task, in the third person with its relative times
 * resolved; each tool call and each notable line of a tool's result), each
 * with probability `recall` (one draw each, in order). An entry it writes
 * has no name (see `statementFactName`): two statements are two entries.
 * The sheet (`FactSheet.read`) replaces an entry with a later statement of
 * the same fact (`sameFact`: "the user's e-mail is …" again with another
 * address); other statements stay side by side until its size drops one.
 * An injection turn's instruction is stored as a
 * standing `instruction` (its quote, no draw): the way injected text
 * persists in long-term memory. Returns the day the conversation stated
 * last too, for the next extraction.
 */
export function extract(req: ExtractRequest): { found: Fact[]; call: UpkeepCall; today: Day | undefined } {
  const { statements, today } = statementsIn(req.exchange, req.today, { store: req.readings });
  const found: Fact[] = [];
  for (const s of statements) if (req.random() < req.recall) found.push([statementFactName(s.key), s.text]);
  const user = req.exchange.find((m) => m.role === 'user');
  if (req.injection && user) found.push([INSTRUCTION_FACT, injectionQuote(user.content)]);
  // One line, as the instruction asks: its tokens are its entries' (`joinedTokens`), which the sheet weighs too.
  const entries = found.map(([k, v]) => factEntry(k, v));
  const outputTokens = entries.length ? req.tokens.joinedTokens(entries[0]!, entries.slice(1)) : req.tokens.text('none');
  return {
    found,
    today,
    call: {
      kind: 'extract',
      model: req.model,
      inputTokens: req.tokens.prompt([instruction(req.prompt ?? DEFAULT_PROMPTS.extract), ...req.exchange]),
      outputTokens,
      sync: false,
    },
  };
}

/**
 * The name the simulated extractor gives a statement: a NUL, then its
 * normalized text. A sheet writes such an entry as the sentence alone
 * (`factEntry`), and each statement is an entry of its own.
 */
function statementFactName(key: string): string {
  let name = names.get(key);
  if (name === undefined) {
    if (names.size >= NAMES) names.clear();
    names.set(key, (name = `\0${key}`));
  }
  return name;
}

/** The names given so far, by key: a statement found in many turns has one name, which a sheet looks up without reading it again. Cleared when this many. */
const names = new Map<string, string>();
const NAMES = 20_000;

/** Whether a sheet entry's name is a statement's (`statementFactName`), not a named fact's. */
export function isStatement(name: string): boolean {
  return name.startsWith('\0');
}

/** How a sheet writes an entry: a statement as its sentence, a named fact (a real extractor's, an instruction) as `name: value.` */
export function factEntry(name: string, value: string): string {
  if (isStatement(name)) return value;
  return `${name}: ${value}${/[.!?…]$/.test(value) ? '' : '.'}`;
}

/** How much a sheet values an entry: a statement its salience (`salienceOf`); undefined for a named fact (kept before any statement). */
export function factSalience(name: string, value: string): number | undefined {
  return isStatement(name) ? salienceOf(value) : undefined;
}
