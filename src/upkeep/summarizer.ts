import type { TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { injectionQuote } from './quote.js';
import { holds, redactText } from './redact.js';
import { dropOrder } from './mentions.js';
import type { ReadingStore } from './readings.js';
import { Restatements, statementsIn } from './statements.js';
import type { Day } from './times.js';
import { forgetInstruction, summaryInstruction } from './prompts.js';
import type { Injected, Mentions } from './types.js';

/** A running summary: the message a policy sends, and what it knows. */
export interface Summary {
  /** The `system` message with origin `summary`. */
  message: Message;
  /** The statements its text holds, oldest first, by key (a statement's normalized text) → the statement as written. */
  facts: ReadonlyMap<string, string>;
  /** For each entry of `facts`: how many folded turns stated it, the last of them, its salience (what decides which entries a full summary drops first). */
  mentions: ReadonlyMap<string, Mentions>;
  /** Sentences quoting folded injection turns, oldest first: carried through every later summarization while they fit. */
  quotes: readonly string[];
  firstTurn: number;
  lastTurn: number;
  /** The day the conversation last stated in what was folded (a session's header), if any: the next fold resolves relative times against it. */
  today?: Day | undefined;
}

/** One summarization: the old summary plus the messages folded into it. */
export interface SummarizeRequest {
  tokens: TokenCounter;
  /** The session's seeded stream: one draw per entry it could write, in order. */
  random: () => number;
  model: string;
  /** About how many tokens the summary text should have. */
  summaryTokens: number;
  /** Chance that each entry it could write survives this summarization. */
  keep: number;
  previous?: Summary;
  /** The messages folded in, whole exchanges, oldest first: all the summarizer reads, with the old summary. */
  folded: readonly Message[];
  /** Folded user messages the moderation classifier flagged as injections: the summary quotes them. */
  injected?: readonly Injected[];
  /** The summarizer's instruction, `{summaryTokens}` in it standing for the size (default: `DEFAULT_PROMPTS.summary`). */
  prompt?: string;
  /** Where what the summarizer read of a text in an earlier run is kept (the cache folder's readings): not read again. */
  readings?: ReadingStore | undefined;
}

/**
 * Neutral sentences that bring a short summary up to its length, in this
 * order, each at most once: a summary of very little is shorter than asked.
 */
const PADDING = [
  'The conversation stayed polite throughout.',
  'Nothing else needed a follow-up.',
  'The user gave no further details.',
  'No other requests were left open.',
  'The assistant answered each question in turn.',
  'The rest was small talk.',
  'The tone was friendly on both sides.',
  'Replies were short and to the point.',
  'The user wrote in short messages.',
  'Each answer addressed the latest question.',
  'The exchange moved quickly from topic to topic.',
  'This summary covers the earlier part of the conversation.',
];

const PLAIN_HEADER = 'Summary of the conversation so far.';

/**
 * The simulated summarizer (a priced auxiliary call). Its input is the
 * template, the old summary and the folded messages, and it decides from
 * their text alone, as a real summarizer does: it knows nothing of what a
 * scenario annotates as facts or will ask about. Its output is a summary of
 * at most `summaryTokens` tokens made of statements (`statementsIn`: each
 * sentence of the folded messages that says something of a speaker, the one
 * spoken to or the task, in the third person, its relative times resolved
 * against the day the conversation stated last; each tool call and notable
 * tool result; a sentence naming the day of each dated session), written in
 * the order they were made. Every statement of the old summary and of the
 * folded messages survives with probability `keep` (one draw each, in
 * order), so one lost once is gone for good and repeated summarization
 * compounds the loss. What survives must also fit: when the summary is too
 * long, statements are dropped in `dropOrder` — the least salient first
 * (`salienceOf`: informative words, names, identifiers, numbers, dates),
 * then the one stated in the fewest turns, then the one stated longest ago.
 * A folded injection turn is quoted (its first words), and the quote stays
 * in every later summary while it fits. A summary of little is padded with
 * neutral sentences up to its length, as a real summarizer writes about the
 * length it is asked for.
 */
export function summarize(req: SummarizeRequest): { summary: Summary; call: UpkeepCall } {
  const { tokens, previous } = req;
  const { candidates, counts, firstTurn, lastTurn, today } = foldedFacts(req);
  const facts = new Map<string, string>();
  for (const [key, text] of candidates) if (req.random() < req.keep) facts.set(key, text);

  const quotes = [...(previous?.quotes ?? []), ...(req.injected ?? []).map(quoteSentence)];
  const r = render(tokens, req.summaryTokens, { firstTurn, lastTurn, facts, mentions: counts, quotes });

  const message: Message = { role: 'system', content: r.content, origin: 'summary' };
  const call: UpkeepCall = {
    kind: 'summary',
    model: req.model,
    inputTokens: tokens.prompt([summaryInstruction(req.summaryTokens, req.prompt), ...(previous ? [previous.message] : []), ...req.folded]),
    outputTokens: tokens.output(message),
    sync: true,
  };
  return { summary: { message, facts: r.facts, mentions: r.mentions, quotes: r.quotes, firstTurn, lastTurn, today }, call };
}

/**
 * What a fold can know: the statements of the old summary and of the folded
 * messages, each with how many turns stated it, the last of them and its
 * salience, the turns the new summary covers, and the day the conversation
 * stated last.
 */
export function foldedFacts(req: Pick<SummarizeRequest, 'previous' | 'folded' | 'readings'>): {
  candidates: Map<string, string>;
  counts: Map<string, Mentions>;
  firstTurn: number;
  lastTurn: number;
  today: Day | undefined;
} {
  const { previous } = req;
  let first = Infinity;
  let lastTurn = previous?.lastTurn ?? 0;
  for (const { turn } of req.folded) {
    if (turn === undefined) continue;
    first = Math.min(first, turn);
    lastTurn = Math.max(lastTurn, turn);
  }
  const firstTurn = previous?.firstTurn ?? first;
  const candidates = new Map<string, string>();
  const counts = new Map<string, Mentions>();
  const filed = new Restatements();
  if (previous) {
    const had = mentionsOf(previous);
    for (const [name, value] of previous.facts) {
      candidates.set(name, value);
      filed.set(name, value);
      counts.set(name, had.get(name) ?? { count: 1, lastTurn: previous.lastTurn ?? 0 });
    }
  }
  const { statements, today } = statementsIn(req.folded, previous?.today, { dates: true, store: req.readings });
  for (const { key, text, salience, turn } of statements) {
    // A statement that restates an earlier one's fact replaces it (its mentions carried on).
    for (const other of filed.restatedBy(text)) {
      if (other === key) continue;
      candidates.delete(other);
      filed.delete(other);
      counts.set(key, { count: counts.get(other)?.count ?? 0, lastTurn });
      counts.delete(other);
    }
    candidates.set(key, text);
    filed.set(key, text);
    counts.set(key, { count: (counts.get(key)?.count ?? 0) + 1, lastTurn: turn ?? lastTurn, tier: salience });
  }
  return { candidates, counts, firstTurn, lastTurn, today };
}

/**
 * A summary's mentions; an empty map for a summary made without them (by a
 * policy module written before summaries had them): each of its facts then
 * counts as stated once, in the summary's last turn.
 */
function mentionsOf(summary: Summary): ReadonlyMap<string, Mentions> {
  return (summary as Partial<Summary>).mentions ?? new Map();
}

/** A forget request for a running summary: the facts to erase, by name and (normalized) values. */
export interface ForgetSummaryRequest {
  tokens: TokenCounter;
  model: string;
  summaryTokens: number;
  previous: Summary;
  names: readonly string[];
  values: readonly string[];
  /** The instruction, `{facts}` in it standing for the names (default: `DEFAULT_PROMPTS.forget`). */
  prompt?: string;
}

/**
 * Re-summarizes without the erased facts (a priced auxiliary call made in the
 * background: input = template + old summary, output = the new summary). The
 * rewrite drops the entries that hold those values from the "Known:" list and the values from the
 * quotes and keeps everything else: no fact is drawn for loss here.
 */
export function forgetInSummary(req: ForgetSummaryRequest): { summary: Summary; call: UpkeepCall } {
  const { tokens, previous } = req;
  const facts = new Map([...previous.facts].filter(([, v]) => !holds(v, req.values)));
  const quotes = previous.quotes.map((q) => redactText(q, req.values));
  const mentions = mentionsOf(previous);
  const r = render(tokens, req.summaryTokens, { firstTurn: previous.firstTurn, lastTurn: previous.lastTurn, facts, mentions, quotes });
  // The parts are clean; the whole is checked too, since an erased value must not survive (nor the size be passed).
  let content = r.content;
  if (holds(content, req.values)) {
    content = redactText(content, req.values);
    if (tokens.text(content) > req.summaryTokens) content = shortestHeader(tokens, req.summaryTokens, HEADERS);
  }
  const message: Message = { role: 'system', content, origin: 'summary' };
  const call: UpkeepCall = {
    kind: 'summary',
    model: req.model,
    inputTokens: tokens.prompt([forgetInstruction(req.names, req.prompt), previous.message]),
    outputTokens: tokens.output(message),
    sync: false,
  };
  return { summary: { ...previous, message, facts: r.facts, mentions: r.mentions, quotes: r.quotes }, call };
}

interface Parts {
  firstTurn: number;
  lastTurn: number;
  facts: ReadonlyMap<string, string>;
  mentions: ReadonlyMap<string, Mentions>;
  quotes: readonly string[];
}

/** What a summary's text holds once laid out within its size. */
interface Rendered {
  content: string;
  facts: Map<string, string>;
  mentions: Map<string, Mentions>;
  quotes: string[];
}

/** Shorter headers for very small summaries, the last one token in every encoding. */
const HEADERS = [PLAIN_HEADER, 'Summary.', 'Summary'];

/** The first header that fits `target` tokens (the last one if none does). */
function shortestHeader(tokens: TokenCounter, target: number, headers: readonly string[]): string {
  return headers.find((h) => tokens.text(h) <= target) ?? headers[headers.length - 1]!;
}

/**
 * Lays out a summary within `target` tokens: header, quotes (the newest that
 * fit), the statements (dropped in `dropOrder` until they fit, written in
 * the order they were made), then as much padding as fits. Sentence counts
 * are summed to fit (each counted once and memoized, so no text is
 * re-tokenized while fitting); the exact count of the whole text is then
 * checked, and padding, statements, quotes and header give way in that
 * order until it is within the target.
 */
function render(tokens: TokenCounter, target: number, p: Parts): Rendered {
  const span = p.firstTurn === p.lastTurn ? `turn ${p.lastTurn}` : `turns ${p.firstTurn}-${p.lastTurn}`;
  const headers = Number.isFinite(p.firstTurn) ? [`Summary of the conversation so far (${span}).`, ...HEADERS] : HEADERS;
  let header = shortestHeader(tokens, target, headers);
  const cost = (sentence: string) => tokens.afterSpace(sentence);
  let used = tokens.text(header);

  let q = p.quotes.length;
  while (q > 0 && used + cost(p.quotes[q - 1]!) <= target) used += cost(p.quotes[--q]!);
  let quotes = p.quotes.slice(q);

  const entry = (key: string) => p.facts.get(key)!;
  const order = dropOrder(p.facts, p.mentions);
  // The longest tail of the drop order that fits, summed from the end: a statement dropped as soon as it came is never weighed.
  let dropped = order.length;
  for (; dropped > 0; dropped--) {
    const c = cost(entry(order[dropped - 1]!));
    if (used + c > target) break;
    used += c;
  }
  const gone = new Set(order.slice(0, dropped));
  const facts = new Map<string, string>();
  for (const [name, value] of p.facts) if (!gone.has(name)) facts.set(name, value);

  const padding: string[] = [];
  for (const pad of PADDING) {
    if (used + cost(pad) > target) break;
    padding.push(pad);
    used += cost(pad);
  }
  const parts = () => [...quotes, ...facts.values(), ...padding];
  // Sentence sums are exact only where the tokenizer cuts at spaces (`joined`): trim until the whole's count is within the target.
  let written = tokens.joined(header, parts());
  while (written.tokens > target) {
    if (padding.length) padding.pop();
    else if (facts.size) facts.delete(order[dropped++]!);
    else if (quotes.length) quotes = quotes.slice(1);
    else if (header !== headers[headers.length - 1]) header = headers[headers.indexOf(header) + 1]!;
    else break;
    written = tokens.joined(header, parts());
  }
  const content = written.text;
  const mentions = new Map<string, Mentions>();
  for (const name of facts.keys()) mentions.set(name, p.mentions.get(name) ?? { count: 1, lastTurn: p.lastTurn });
  return { content, facts, mentions, quotes };
}

/** The sentence that quotes an injection turn: its first words, with an ellipsis when there were more. */
function quoteSentence(i: Injected): string {
  const q = injectionQuote(i.text);
  const more = q.length < i.text.trim().replace(/\s+/g, ' ').length;
  return `In turn ${i.turn} the user wrote: "${q}${more ? '…' : ''}".`;
}
