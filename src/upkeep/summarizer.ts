import { messageText, type TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { contentWords, normalize, words } from '../text/normalize.js';
import { injectionQuote } from './quote.js';
import { holds, redactText } from './redact.js';
import { dropOrder, readable } from './mentions.js';
import { forgetInstruction, summaryInstruction } from './prompts.js';
import type { Injected, Mentions, StatedFact } from './types.js';

/** A running summary: the message a policy sends, and what it knows. */
export interface Summary {
  /** The `system` message with origin `summary`. */
  message: Message;
  /** The facts its text states, name → latest value. */
  facts: ReadonlyMap<string, string>;
  /** For each fact of `facts`: how many folded turns stated it and the last of them (what decides which facts a full summary drops first). */
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
  /** The session's seeded stream: one draw per fact, in order. */
  random: () => number;
  model: string;
  /** About how many tokens the summary text should have. */
  summaryTokens: number;
  /** Chance that each fact survives this summarization. */
  keep: number;
  previous?: Summary;
  /** The messages folded in, whole exchanges, oldest first. */
  folded: readonly Message[];
  /** Facts the folded messages state, in order (a later value replaces an earlier one), each with the turn that stated it when known; one whose value is in none of `folded` is not read. */
  stated: readonly StatedFact[];
  /** Every fact value of the conversation: never written outside the summary's "Known:" list, so a lost fact stays lost. */
  hidden: readonly string[];
  /** Folded user messages flagged `injection: true`: the summary quotes them. */
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
 * template, the old summary and the folded messages; its output is a summary
 * of at most `summaryTokens` tokens that states, in a "Known:" list, each fact
 * that survived: every fact of the old summary, and every stated fact whose
 * value occurs in the folded messages (it reads the text it is given),
 * survives with probability `keep`, so a fact lost once is gone for good and
 * repeated summarization compounds the loss. The facts that survive must also
 * fit: when the list is too long, facts are dropped in `dropOrder` — the one
 * stated in the fewest turns first, then the one last stated longest ago,
 * then the one listed first. A folded injection turn is quoted (its first
 * words), and the quote stays in every later summary while it fits. The rest
 * of the text is one sentence per exchange (the newest kept when too long),
 * then neutral padding.
 */
export function summarize(req: SummarizeRequest): { summary: Summary; call: UpkeepCall } {
  const { tokens, previous } = req;
  const { candidates, counts, firstTurn, lastTurn } = foldedFacts(req);
  const facts = new Map<string, string>();
  for (const [name, value] of candidates) if (req.random() < req.keep) facts.set(name, value);

  const values = prepared(req.hidden);
  const quotes = [...(previous?.quotes ?? []), ...(req.injected ?? []).map(quoteSentence)];
  const allTopics = [...(previous?.topics ?? []), ...topicSentences(req.folded, values)];
  const r = render(tokens, req.summaryTokens, { firstTurn, lastTurn, facts, mentions: counts, quotes, allTopics, hidden: values });

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
 * What a fold can know: the facts of the old summary and those the folded
 * messages state (their value in the text), each with how many turns stated
 * it and the last of them, and the turns the new summary covers.
 */
export function foldedFacts(req: Pick<SummarizeRequest, 'previous' | 'folded' | 'stated'>): {
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
  for (const [name, value, turn] of readable(req.folded, req.stated)) {
    candidates.set(name, value);
    counts.set(name, { count: (counts.get(name)?.count ?? 0) + 1, lastTurn: turn ?? lastTurn });
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
  /** As in SummarizeRequest. */
  hidden: readonly string[];
  /** The instruction, `{facts}` in it standing for the names (default: `DEFAULT_PROMPTS.forget`). */
  prompt?: string;
}

/**
 * Re-summarizes without the erased facts (a priced auxiliary call made in the
 * background: input = template + old summary, output = the new summary). The
 * rewrite drops those facts from the "Known:" list and the values from the
 * quotes and keeps everything else: no fact is drawn for loss here.
 */
export function forgetInSummary(req: ForgetSummaryRequest): { summary: Summary; call: UpkeepCall } {
  const { tokens, previous } = req;
  const erased = new Set(req.values);
  const facts = new Map([...previous.facts].filter(([, v]) => !erased.has(normalize(v))));
  const quotes = previous.quotes.map((q) => redactText(q, req.values));
  const allTopics = previous.topics.map((t) => redactText(t, req.values));
  const hidden = prepared(req.hidden);
  const mentions = mentionsOf(previous);
  const r = render(tokens, req.summaryTokens, { firstTurn: previous.firstTurn, lastTurn: previous.lastTurn, facts, mentions, quotes, allTopics, hidden });
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
  /** The fact values that must not appear outside "Known:". */
  hidden: Hidden;
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
  const { allTopics, hidden } = p;
  const span = p.firstTurn === p.lastTurn ? `turn ${p.lastTurn}` : `turns ${p.firstTurn}-${p.lastTurn}`;
  const headers = Number.isFinite(p.firstTurn) ? [`Summary of the conversation so far (${span}).`, ...HEADERS] : HEADERS;
  let header = shortestHeader(tokens, target, headers);
  const cost = (sentence: string) => tokens.afterSpace(sentence);
  let used = tokens.text(header);

  let q = p.quotes.length;
  while (q > 0 && used + cost(p.quotes[q - 1]!) <= target) used += cost(p.quotes[--q]!);
  let quotes = p.quotes.slice(q);

  const entry = (name: string) => `${name}: ${p.facts.get(name)!}`;
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
  // A fact value in the free text would be a fact the summary did not keep: drop that text.
  const leaks = () => {
    const free = freeText(hidden, [header, ...topics, ...padding]);
    return hidden.hidden.some((v) => free.includes(v));
  };
  if (leaks()) {
    topics = [];
    padding.length = 0;
    if (leaks()) header = PLAIN_HEADER;
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
    else if (header !== headers[headers.length - 1]) header = headers[headers.indexOf(header) + 1] ?? headers[headers.length - 1]!;
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

/** A conversation's fact values as the summarizer checks text against them. */
interface Hidden {
  /** The values, normalized (empty ones left out). */
  hidden: string[];
  /** Their distinct words, joined: which hidden words a memoized topic sentence was written for. */
  key: string;
  /** Whether a word contains one of those words (a topic word that would give a fact away). */
  reveals: (word: string) => boolean;
  /** Sentences of free text as `freeText` reads them, by sentence (null: not tidy): a topic is checked at every fold it stays in. */
  read: Map<string, string | null>;
}

/**
 * The free text of a summary (header, topics, padding) as the leak check
 * reads it: `normalize` of the sentences joined by spaces. Each sentence is
 * lower-cased once and remembered; when every one is tidy (not empty, no
 * whitespace but single inner spaces), the lower-cased sentences joined by
 * spaces are that normalized whole, so the whole is not lower-cased and
 * scanned again.
 */
function freeText(h: Hidden, sentences: readonly string[]): string {
  const lowered: string[] = [];
  for (const s of sentences) {
    let l = h.read.get(s);
    if (l === undefined) {
      const lower = s.toLowerCase();
      h.read.set(s, (l = lower && normalize(s) === lower ? lower : null));
    }
    if (l === null) return normalize(sentences.join(' '));
    lowered.push(l);
  }
  return lowered.join(' ');
}

/**
 * `Hidden` of a list of fact values, made once per list: a summary policy
 * passes the same list (its conversation's values) to every fold.
 */
function prepared(values: readonly string[]): Hidden {
  let h = preparedLists.get(values);
  if (!h) {
    const hidden = values.map(normalize).filter(Boolean);
    const hiddenWords = [...new Set(hidden.flatMap(words))];
    // One alternation of the literal words: `some(h => word.includes(h))` in a single pass.
    const any = new RegExp(hiddenWords.map((w) => w.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('|'));
    h = { hidden, key: hiddenWords.join('\n'), reveals: hiddenWords.length ? (word) => any.test(word) : () => false, read: new Map() };
    preparedLists.set(values, h);
  }
  return h;
}

const preparedLists = new WeakMap<readonly string[], Hidden>();

/** One sentence per exchange: the topic words of the user message, the tools called, the topic words of the reply. */
function topicSentences(folded: readonly Message[], hidden: Hidden): string[] {
  const hiddenKey = hidden.key;
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
    if (known && known.hidden === hiddenKey && sameMessages(known.messages, messages)) sentences.push(known.sentence);
    else {
      const sentence = topicSentence(turn, messages, hidden.reveals);
      written.set(messages[0]!, { messages, hidden: hiddenKey, sentence });
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
 * (with the exchange's messages and the hidden words they were written for):
 * both summary policies fold the same exchanges of a conversation.
 */
const written = new WeakMap<Message, { messages: readonly Message[]; hidden: string; sentence: string }>();

function topicSentence(turn: number, messages: readonly Message[], reveals: (word: string) => boolean): string {
  const clean = (text: string) => contentWords(text, TOPIC_WORDS, (w) => !reveals(w)).join(' ');
  const user = clean(messages.filter((m) => m.role === 'user').map(messageText).join(' '));
  const tools = [...new Set(messages.flatMap((m) => m.toolCalls?.map((c) => c.name) ?? []))];
  const reply = clean(messages.filter((m) => m.role === 'assistant' && !m.toolCalls?.length).map(messageText).join(' '));
  let s = `In turn ${turn} the user ${user ? `asked about ${user}` : 'wrote briefly'}`;
  if (tools.length) s += `, ${tools.join(', ')} ${tools.length > 1 ? 'were' : 'was'} called`;
  if (reply) s += `, and the assistant answered about ${reply}`;
  return `${s}.`;
}
