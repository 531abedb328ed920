import { messageText, type TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { contentWords, normalize, words } from '../text/normalize.js';
import { injectionQuote } from './quote.js';
import { holds, redactText } from './redact.js';
import type { Fact, Injected } from './types.js';

/** A running summary: the message a policy sends, and what it knows. */
export interface Summary {
  /** The `system` message with origin `summary`. */
  message: Message;
  /** The facts its text states, name → latest value. */
  facts: ReadonlyMap<string, string>;
  /** One sentence per summarized exchange still in the text, oldest first. */
  topics: readonly string[];
  /** Sentences quoting folded injection turns, oldest first: carried through every later summarization. */
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
  /** Facts the folded messages state, in order (a later value replaces an earlier one). */
  stated: readonly Fact[];
  /** Every fact value of the conversation: never written outside the summary's "Known:" list, so a lost fact stays lost. */
  hidden: readonly string[];
  /** Folded user messages flagged `injection: true`: the summary quotes them. */
  injected?: readonly Injected[];
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
const templates = new Map<number, Message>();

/** The summarizer's instruction, one message object per length so it is counted once. */
export function summaryTemplate(summaryTokens: number): Message {
  let m = templates.get(summaryTokens);
  if (!m) {
    m = {
      role: 'system',
      content:
        `Update the running summary of this conversation with the new messages below, in about ${summaryTokens} tokens. ` +
        'Keep every name, number, identifier and preference the user stated, with its latest value.',
    };
    templates.set(summaryTokens, m);
  }
  return m;
}

/**
 * The simulated summarizer (a priced auxiliary call). Its input is the
 * template, the old summary and the folded messages; its output is a summary
 * of up to about `summaryTokens` tokens that states, in a "Known:" list, each fact
 * that survived: every fact of the old summary and of the folded messages
 * survives with probability `keep`, so a fact lost once is gone for good and
 * repeated summarization compounds the loss. A folded injection turn is
 * quoted (its first words), and the quote stays in every later summary. The
 * rest of the text is one sentence per exchange (the newest kept when too
 * long), then neutral padding.
 */
export function summarize(req: SummarizeRequest): { summary: Summary; call: UpkeepCall } {
  const { tokens, previous } = req;
  const candidates = new Map(previous?.facts);
  for (const [name, value] of req.stated) candidates.set(name, value);
  const facts = new Map<string, string>();
  for (const [name, value] of candidates) if (req.random() < req.keep) facts.set(name, value);

  const turns = req.folded.map((m) => m.turn).filter((t): t is number => t !== undefined);
  const firstTurn = previous?.firstTurn ?? Math.min(...turns, Infinity);
  const lastTurn = Math.max(previous?.lastTurn ?? 0, ...turns);
  const values = prepared(req.hidden);
  const quotes = [...(previous?.quotes ?? []), ...(req.injected ?? []).map(quoteSentence)];
  const allTopics = [...(previous?.topics ?? []), ...topicSentences(req.folded, values)];
  const { content, topics } = render(tokens, req.summaryTokens, { firstTurn, lastTurn, facts, quotes, allTopics, hidden: values.hidden });

  const message: Message = { role: 'system', content, origin: 'summary' };
  const call: UpkeepCall = {
    kind: 'summary',
    model: req.model,
    inputTokens: tokens.prompt([summaryTemplate(req.summaryTokens), ...(previous ? [previous.message] : []), ...req.folded]),
    outputTokens: tokens.output(message),
    sync: true,
  };
  return { summary: { message, facts, topics, quotes, firstTurn, lastTurn }, call };
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
}

const forgetTemplates = new Map<string, Message>();

/** The instruction of a re-summarization that erases facts (it names them, never their values). */
export function forgetTemplate(names: readonly string[]): Message {
  const key = names.join(', ');
  let m = forgetTemplates.get(key);
  if (!m) {
    m = { role: 'system', content: `Rewrite the summary below without these facts, which the user asked to erase: ${key}. Keep everything else as it is.` };
    forgetTemplates.set(key, m);
  }
  return m;
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
  const { hidden } = prepared(req.hidden);
  const r = render(tokens, req.summaryTokens, { firstTurn: previous.firstTurn, lastTurn: previous.lastTurn, facts, quotes, allTopics, hidden });
  // The parts are clean; the whole is checked too, since an erased value must not survive.
  const content = holds(r.content, req.values) ? redactText(r.content, req.values) : r.content;
  const topics = r.topics;
  const message: Message = { role: 'system', content, origin: 'summary' };
  const call: UpkeepCall = {
    kind: 'summary',
    model: req.model,
    inputTokens: tokens.prompt([forgetTemplate(req.names), previous.message]),
    outputTokens: tokens.output(message),
    sync: false,
  };
  return { summary: { ...previous, message, facts, topics, quotes }, call };
}

interface Parts {
  firstTurn: number;
  lastTurn: number;
  facts: ReadonlyMap<string, string>;
  quotes: readonly string[];
  allTopics: readonly string[];
  /** Normalized fact values that must not appear outside "Known:". */
  hidden: readonly string[];
}

/** Lays out a summary: header, "Known:" list, quotes, then as many topic sentences (newest first) and padding as fit the target. */
function render(tokens: TokenCounter, target: number, p: Parts): { content: string; topics: string[] } {
  const { facts, quotes, allTopics, hidden } = p;
  const span = p.firstTurn === p.lastTurn ? `turn ${p.lastTurn}` : `turns ${p.firstTurn}-${p.lastTurn}`;
  let header = Number.isFinite(p.firstTurn) ? `Summary of the conversation so far (${span}).` : PLAIN_HEADER;
  const known = facts.size ? `Known: ${[...facts].map(([k, v]) => `${k}: ${v}`).join('; ')}.` : 'Known: nothing specific yet.';

  // Fill up to the target by sentence counts (each sentence, with the space before it, is counted
  // once and memoized, so no text is re-tokenized while fitting), newest topics first.
  const cost = (sentence: string) => tokens.afterSpace(sentence);
  let used = tokens.text(header) + cost(known);
  for (const q of quotes) used += cost(q);
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
    const free = normalize([header, ...topics, ...padding].join(' '));
    return hidden.some((v) => free.includes(v));
  };
  if (leaks()) {
    topics = [];
    padding.length = 0;
    if (leaks()) header = PLAIN_HEADER;
  }
  const compose = () => [header, known, ...quotes, ...topics, ...padding].join(' ');
  let content = compose();
  // Sentence sums are estimates: trim until the exact count is within the target.
  while (tokens.text(content) > target && (padding.length || topics.length)) {
    if (padding.length) padding.pop();
    else topics = topics.slice(1);
    content = compose();
  }
  return { content, topics };
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
    h = { hidden, key: hiddenWords.join('\n'), reveals: hiddenWords.length ? (word) => any.test(word) : () => false };
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
  return [...byTurn].map(([turn, messages]) => {
    const known = written.get(messages[0]!);
    if (known && known.hidden === hiddenKey && known.messages.length === messages.length && known.messages.every((m, i) => m === messages[i])) {
      return known.sentence;
    }
    const sentence = topicSentence(turn, messages, hidden.reveals);
    written.set(messages[0]!, { messages, hidden: hiddenKey, sentence });
    return sentence;
  });
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
