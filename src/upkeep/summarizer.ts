import { messageText, type TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { contentWords, words } from '../text/normalize.js';
import { injectionQuote } from './quote.js';
import { holds, redactText } from './redact.js';
import { dropOrder, KIND_TIER, salientIn } from './mentions.js';
import { forgetInstruction, summaryInstruction } from './prompts.js';
import type { Injected, Mentions } from './types.js';

/** A running summary: the message a policy sends, and what it knows. */
export interface Summary {
  /** The `system` message with origin `summary`. */
  message: Message;
  /** What its "Known:" list states, by key (a span's normalized text) → the span as written. */
  facts: ReadonlyMap<string, string>;
  /** For each entry of `facts`: how many folded turns mentioned it, the last of them, its kind's tier (what decides which entries a full summary drops first). */
  mentions: ReadonlyMap<string, Mentions>;
  /** One sentence per summarized exchange still in the text, oldest first. */
  topics: readonly string[];
  /** Sentences quoting folded injection turns, oldest first: carried through every later summarization while they fit. */
  quotes: readonly string[];
  firstTurn: number;
  lastTurn: number;
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

const TOPIC_WORDS = 10;
const PLAIN_HEADER = 'Summary of the conversation so far.';

/**
 * The simulated summarizer (a priced auxiliary call). Its input is the
 * template, the old summary and the folded messages, and it decides from
 * their text alone, as a real summarizer does: it knows nothing of what a
 * scenario annotates as facts or will ask about. Its output is a summary of
 * at most `summaryTokens` tokens that lists, in a "Known:" list, the salient
 * spans it carries (`salientIn`: names, codes and IDs, e-mails, phone
 * numbers, dates, times, amounts, URLs, numbers, a user's details about
 * themselves): every entry of the old
 * summary and every span of the folded messages survives with probability
 * `keep` (one draw each, in order), so an entry lost once is gone for good
 * and repeated summarization compounds the loss. What survives must also
 * fit: when the list is too long, entries are dropped in `dropOrder` — the
 * lowest kind first (bare numbers, then dates, times, amounts, URLs and a
 * user's details, then names and identifiers: `KIND_TIER`), then the one
 * mentioned in the fewest turns, then
 * the one mentioned longest ago. A fact the user gave thus competes with
 * everything else salient in the conversation. A folded injection turn is
 * quoted (its first words), and the quote stays in every later summary
 * while it fits. The rest of the text is one sentence per exchange naming
 * its topic in plain words (never the words of its spans: those are the
 * list's), the newest kept when too long, then neutral padding.
 */
export function summarize(req: SummarizeRequest): { summary: Summary; call: UpkeepCall } {
  const { tokens, previous } = req;
  const { candidates, counts, firstTurn, lastTurn } = foldedFacts(req);
  const facts = new Map<string, string>();
  for (const [key, text] of candidates) if (req.random() < req.keep) facts.set(key, text);

  const quotes = [...(previous?.quotes ?? []), ...(req.injected ?? []).map(quoteSentence)];
  const allTopics = [...(previous?.topics ?? []), ...topicSentences(req.folded)];
  const r = render(tokens, req.summaryTokens, { firstTurn, lastTurn, facts, mentions: counts, quotes, allTopics });

  const message: Message = { role: 'system', content: r.content, origin: 'summary' };
  const call: UpkeepCall = {
    kind: 'summary',
    model: req.model,
    inputTokens: tokens.prompt([summaryInstruction(req.summaryTokens, req.prompt), ...(previous ? [previous.message] : []), ...req.folded]),
    outputTokens: tokens.output(message),
    sync: true,
  };
  return { summary: { message, facts: r.facts, mentions: r.mentions, topics: r.topics, quotes: r.quotes, firstTurn, lastTurn }, call };
}

/**
 * What a fold can know: the entries of the old summary and the salient spans
 * of the folded messages, each with how many turns mentioned it, the last of
 * them and its kind's tier, and the turns the new summary covers.
 */
export function foldedFacts(req: Pick<SummarizeRequest, 'previous' | 'folded'>): {
  candidates: Map<string, string>;
  counts: Map<string, Mentions>;
  firstTurn: number;
  lastTurn: number;
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
  if (previous) {
    const had = mentionsOf(previous);
    for (const [name, value] of previous.facts) {
      candidates.set(name, value);
      counts.set(name, had.get(name) ?? { count: 1, lastTurn: previous.lastTurn ?? 0 });
    }
  }
  for (const { key, text, kind, turn } of salientIn(req.folded)) {
    candidates.set(key, text);
    counts.set(key, { count: (counts.get(key)?.count ?? 0) + 1, lastTurn: turn ?? lastTurn, tier: KIND_TIER[kind] });
  }
  return { candidates, counts, firstTurn, lastTurn };
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
  const allTopics = previous.topics.map((t) => redactText(t, req.values));
  const mentions = mentionsOf(previous);
  const r = render(tokens, req.summaryTokens, { firstTurn: previous.firstTurn, lastTurn: previous.lastTurn, facts, mentions, quotes, allTopics });
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
  return { summary: { ...previous, message, facts: r.facts, mentions: r.mentions, topics: r.topics, quotes: r.quotes }, call };
}

interface Parts {
  firstTurn: number;
  lastTurn: number;
  facts: ReadonlyMap<string, string>;
  mentions: ReadonlyMap<string, Mentions>;
  quotes: readonly string[];
  allTopics: readonly string[];
}

/** What a summary's text holds once laid out within its size. */
interface Rendered {
  content: string;
  facts: Map<string, string>;
  mentions: Map<string, Mentions>;
  quotes: string[];
  topics: string[];
}

const NOTHING_KNOWN = 'Known: nothing specific yet.';
/** Shorter headers for very small summaries, the last one token in every encoding. */
const HEADERS = [PLAIN_HEADER, 'Summary.', 'Summary'];

/** The first header that fits `target` tokens (the last one if none does). */
function shortestHeader(tokens: TokenCounter, target: number, headers: readonly string[]): string {
  return headers.find((h) => tokens.text(h) <= target) ?? headers[headers.length - 1]!;
}

/**
 * Lays out a summary within `target` tokens: header, quotes (the newest that
 * fit), the "Known:" list (facts dropped in `dropOrder` until it fits), then
 * as many topic sentences (newest first) and padding as fit. Sentence counts
 * are summed to fit (each counted once and memoized, so no text is
 * re-tokenized while fitting); the exact count of the whole text is then
 * checked, and padding, topics, facts, quotes and header give way in that
 * order until it is within the target.
 */
function render(tokens: TokenCounter, target: number, p: Parts): Rendered {
  const { allTopics } = p;
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
  let dropped = 0;
  let listCost = cost('Known:');
  for (const name of order) listCost += cost(`${entry(name)};`);
  while (dropped < order.length && used + listCost > target) listCost -= cost(`${entry(order[dropped++]!)};`);
  const gone = new Set(order.slice(0, dropped));
  const facts = new Map<string, string>();
  for (const [name, value] of p.facts) if (!gone.has(name)) facts.set(name, value);
  const knownText = () => (facts.size ? `Known: ${[...facts.keys()].map(entry).join('; ')}.` : used + cost(NOTHING_KNOWN) <= target ? NOTHING_KNOWN : '');
  let known = knownText();
  if (known) used += cost(known);

  let first = allTopics.length;
  while (first > 0 && used + cost(allTopics[first - 1]!) <= target) used += cost(allTopics[--first]!);
  let topics = allTopics.slice(first);
  const padding: string[] = [];
  for (const pad of PADDING) {
    if (used + cost(pad) > target) break;
    padding.push(pad);
    used += cost(pad);
  }
  const compose = () => [header, known, ...quotes, ...topics, ...padding].filter(Boolean).join(' ');
  let content = compose();
  // Sentence sums are estimates: trim until the exact count is within the target.
  while (tokens.text(content) > target) {
    if (padding.length) padding.pop();
    else if (topics.length) topics = topics.slice(1);
    else if (facts.size) {
      facts.delete(order[dropped++]!);
      known = knownText();
    } else if (known) known = '';
    else if (quotes.length) quotes = quotes.slice(1);
    else if (header !== headers[headers.length - 1]) header = headers[headers.indexOf(header) + 1]!;
    else break;
    content = compose();
  }
  const mentions = new Map<string, Mentions>();
  for (const name of facts.keys()) mentions.set(name, p.mentions.get(name) ?? { count: 1, lastTurn: p.lastTurn });
  return { content, facts, mentions, quotes, topics };
}

/** The sentence that quotes an injection turn: its first words, with an ellipsis when there were more. */
function quoteSentence(i: Injected): string {
  const q = injectionQuote(i.text);
  const more = q.length < i.text.trim().replace(/\s+/g, ' ').length;
  return `In turn ${i.turn} the user wrote: "${q}${more ? '…' : ''}".`;
}

/** One sentence per exchange: the topic words of the user message, the tools called, the topic words of the reply. */
function topicSentences(folded: readonly Message[]): string[] {
  const byTurn = new Map<number, Message[]>();
  for (const m of folded) {
    const t = m.turn ?? 0;
    const list = byTurn.get(t);
    if (list) list.push(m);
    else byTurn.set(t, [m]);
  }
  const sentences: string[] = [];
  for (const [turn, messages] of byTurn) {
    const known = written.get(messages[0]!);
    if (known && sameMessages(known.messages, messages)) sentences.push(known.sentence);
    else {
      const sentence = topicSentence(turn, messages);
      written.set(messages[0]!, { messages, sentence });
      sentences.push(sentence);
    }
  }
  return sentences;
}

/** Whether two lists hold the same message objects in the same order. */
function sameMessages(a: readonly Message[], b: readonly Message[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Topic sentences already written, by the first message of their exchange
 * (with the exchange's messages): both summary policies fold the same
 * exchanges of a conversation.
 */
const written = new WeakMap<Message, { messages: readonly Message[]; sentence: string }>();

/** The exchange's topic in plain words: no word of one of its salient spans, which only the "Known:" list may state. */
function topicSentence(turn: number, messages: readonly Message[]): string {
  const spanWords = new Set(salientIn(messages).flatMap((s) => words(s.key)));
  const clean = (text: string) => contentWords(text, TOPIC_WORDS, (w) => !spanWords.has(w)).join(' ');
  const user = clean(messages.filter((m) => m.role === 'user').map(messageText).join(' '));
  // A tool whose name holds a word of a span (`track_SE-10423`) is not named: the span is the list's.
  const tools = [...new Set(messages.flatMap((m) => m.toolCalls?.map((c) => c.name) ?? []))].filter((name) => !words(name).some((w) => spanWords.has(w)));
  const reply = clean(messages.filter((m) => m.role === 'assistant' && !m.toolCalls?.length).map(messageText).join(' '));
  let s = `In turn ${turn} the user ${user ? `asked about ${user}` : 'wrote briefly'}`;
  if (tools.length) s += `, ${tools.join(', ')} ${tools.length > 1 ? 'were' : 'was'} called`;
  if (reply) s += `, and the assistant answered about ${reply}`;
  return `${s}.`;
}
