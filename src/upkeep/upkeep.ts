import { CtxsimError } from '../errors.js';
import { normalize, occursIn } from '../text/normalize.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import type { Cassette, CassetteEntry } from './cassette.js';
import { decodeVector, requestKey, type UpkeepRequest } from './request.js';
import { denseVector, embed, EMBED_BUCKETS, type Vector } from './embedder.js';
import { extract, type ExtractRequest } from './extractor.js';
import type { ReadingStore } from './readings.js';
import type { Day } from './times.js';
import { padTo } from './pad.js';
import { DEFAULT_PROMPTS, extractRequest, forgetRequest, parseFacts, summaryRequest, type UpkeepPrompts } from './prompts.js';
import { foldedFacts, forgetInSummary, summarize, type ForgetSummaryRequest, type SummarizeRequest, type Summary } from './summarizer.js';
import type { Fact } from './types.js';
import { madeOf } from './origin.js';

/**
 * Where a replay's upkeep comes from: the simulated summarizer, extractor
 * and lexical embedding, or the responses of a real model recorded in a
 * cassette. Policies call it as they would call the simulated functions
 * (`deps.upkeep`); the engine makes one per conversation and policy.
 */
export interface Upkeep {
  /** One summarization: the old summary plus the folded messages. */
  summarize(req: SummarizeRequest): { summary: Summary; call: UpkeepCall };
  /** A re-summarization that erases facts the user asked to forget. */
  forgetInSummary(req: ForgetSummaryRequest): { summary: Summary; call: UpkeepCall };
  /** One extraction from a finished turn. */
  extract(req: ExtractRequest): { found: Fact[]; call: UpkeepCall; today?: Day | undefined };
  /** The embedding of a text on `model`, with the tokens it is billed. */
  embed(text: string, model: string): { vector: Vector; inputTokens: number };
}

/**
 * Simulated upkeep (the default): the simulated functions, with the study's
 * prompts. With `embeddings`, a text's embedding is made once and kept there
 * (the embedding depends on the text alone); with `readings`, what the
 * extractor and summarizer read of a text in an earlier run is taken from
 * there (the cache folder's, `Readings`) and what they read now is added.
 */
export function simulatedUpkeep(tokens: TokenCounter, prompts: UpkeepPrompts = DEFAULT_PROMPTS, embeddings?: Map<string, Vector>, readings?: ReadingStore): Upkeep {
  const vectorOf = embeddings
    ? (text: string) => {
        let v = embeddings.get(text);
        if (!v) embeddings.set(text, (v = embed(text)));
        return v;
      }
    : embed;
  return madeOf({
    summarize: (req) => summarize({ prompt: prompts.summary, readings, ...req }),
    forgetInSummary: (req) => forgetInSummary({ prompt: prompts.forget, ...req }),
    extract: (req) => extract({ prompt: prompts.extract, readings, ...req }),
    embed: (text) => ({ vector: vectorOf(text), inputTokens: tokens.text(text) }),
  }, { prompts, recorded: false });
}

/** A request the cassette has no response for, with where the replay was. */
export interface Miss {
  request: UpkeepRequest;
  key: string;
  /** The request holds a stand-in made for an earlier miss: it would change once that one is recorded. */
  dependent: boolean;
  /** The request's input tokens, when the replay counted them (an answer's: the probe turn's prompt, tool definitions included). */
  inputTokens?: number;
  scenario: string;
  policy: string;
  turn: number;
}

/**
 * What a recorded replay does when the cassette has no response: throw (a
 * replay must find every one), or note the miss and go on with a simulated
 * stand-in (while recording, to learn which requests to send).
 */
export type MissHandler = (miss: Miss) => void;

/** What a recorded upkeep needs of its replay. */
export interface RecordedOptions {
  tokens: TokenCounter;
  cassette: Cassette;
  prompts: UpkeepPrompts;
  onMiss: MissHandler;
  /** Where the replay is: its scenario, policy and turn (0 before the first). */
  where: () => { scenario: string; policy: string; turn: number };
}

/** A constant stream: stand-ins keep every fact, and draw nothing from the policy's stream. */
const KEEP_ALL = () => 0;

/** An extractor's answer is at most this many tokens unless the request says. */
const EXTRACT_MAX_TOKENS = 500;

/** Recorded upkeep, and the chat model's recorded answers to probe turns, from the same cassette. */
export interface RecordedUpkeep extends Upkeep {
  /**
   * The chat model's recorded reply to a probe turn's prompt (`inputTokens`:
   * the prompt's, as the replay counted it), or undefined after the miss
   * handler was told.
   */
  reply(request: Extract<UpkeepRequest, { kind: 'answer' }>, inputTokens: number): string | undefined;
  /**
   * A stand-in for the reply to a probe turn's prompt the cassette lacks, as
   * long as the reply may be (`max_tokens`) and distinct per prompt: a
   * judge's request that holds it depends on that miss (so a recording sends
   * it only once the reply is recorded, and a dry run counts it at its most).
   */
  replyStandIn(request: Extract<UpkeepRequest, { kind: 'answer' }>): string;
  /** The judge model's recorded verdict on a reply, or undefined after the miss handler was told. */
  judge(request: Extract<UpkeepRequest, { kind: 'judge' }>): string | undefined;
}

/**
 * Upkeep from a cassette of a real model's responses. A summary is the
 * model's text; the facts it holds are those whose value occurs in that text
 * (as probes are scored), so `keep` does not apply. An extraction's facts are
 * the `name: value` pairs of the model's answer (`recall` does not apply). An
 * embedding is the model's vector. Tokens are the response's `usage`.
 */
export function recordedUpkeep(o: RecordedOptions): RecordedUpkeep {
  const simulated = simulatedUpkeep(o.tokens, o.prompts);
  /** Texts of the stand-ins given for misses: a request that holds one depends on that miss. */
  const standIns = new Set<string>();
  const vectors = new Map<CassetteEntry, Vector>();

  /** The recorded response to a request, or undefined after the miss handler was told (it throws unless recording). */
  function answer(request: UpkeepRequest, inputTokens?: number): CassetteEntry | undefined {
    const key = requestKey(request);
    const found = o.cassette.get(key);
    if (found) return found;
    const texts = request.kind === 'embed' ? [request.input] : request.messages.map((m) => m.content);
    const dependent = standIns.size > 0 && texts.some((t) => [...standIns].some((s) => t.includes(s)));
    o.onMiss({ request, key, dependent, ...(inputTokens !== undefined && { inputTokens }), ...o.where() });
    return undefined;
  }

  const call = (kind: UpkeepCall['kind'], model: string, e: CassetteEntry, sync: boolean): UpkeepCall => ({ kind, model, inputTokens: e.usage.input, outputTokens: e.usage.output, sync });
  /**
   * A simulated summary standing in for a missing one, made as long as the
   * recorded one may be (its request's `max_tokens`): the requests that will
   * hold the recorded summary, and the room a policy leaves beside it, are
   * then counted at their most.
   */
  const standIn = <R extends { summary: Summary }>(r: R, maxTokens: number): R => {
    const content = padTo(o.tokens, r.summary.message.content, maxTokens);
    standIns.add(content);
    return { ...r, summary: { ...r.summary, message: { ...r.summary.message, content } } };
  };

  return madeOf<RecordedUpkeep>({
    summarize(req) {
      const e = answer(summaryRequest(req.model, req.summaryTokens, req.previous?.message.content, req.folded, o.prompts.summary));
      if (!e) return standIn(simulated.summarize({ ...req, random: KEEP_ALL, keep: 1 }), req.summaryTokens);
      const { candidates, counts, firstTurn, lastTurn, today } = foldedFacts(req);
      const message: Message = { role: 'system', content: textOf(e), origin: 'summary' };
      const facts = statedIn(message.content, candidates);
      const mentions = new Map([...facts.keys()].map((name) => [name, counts.get(name)!]));
      return { summary: { message, facts, mentions, quotes: [], firstTurn, lastTurn, today }, call: call('summary', req.model, e, true) };
    },
    forgetInSummary(req) {
      const { previous } = req;
      const e = answer(forgetRequest(req.model, req.summaryTokens, previous.message.content, req.names, o.prompts.forget));
      if (!e) return standIn(simulated.forgetInSummary(req), req.summaryTokens);
      const message: Message = { role: 'system', content: textOf(e), origin: 'summary' };
      const facts = statedIn(message.content, previous.facts);
      const mentions = new Map([...facts.keys()].flatMap((name) => (previous.mentions.has(name) ? [[name, previous.mentions.get(name)!] as const] : [])));
      return { summary: { ...previous, message, facts, mentions, quotes: [] }, call: call('summary', req.model, e, false) };
    },
    extract(req) {
      const e = answer(extractRequest(req.model, req.exchange, req.maxTokens ?? EXTRACT_MAX_TOKENS, o.prompts.extract));
      if (!e) return simulated.extract({ ...req, random: KEEP_ALL, recall: 1 });
      return { found: parseFacts(textOf(e)), call: call('extract', req.model, e, false) };
    },
    embed(text, model) {
      // An endpoint refuses empty input; a text without words matches nothing anyway.
      if (!text.trim()) return { vector: { buckets: [], weights: [] }, inputTokens: 0 };
      const e = answer({ kind: 'embed', model, input: text });
      if (!e) return simulated.embed(text, model);
      let v = vectors.get(e);
      if (!v) {
        const values = decodeVector(e.vector ?? '');
        if (values.length > EMBED_BUCKETS) throw new CtxsimError(`embedding of ${model} has ${values.length} dimensions; at most ${EMBED_BUCKETS} are supported`, 'upkeep');
        vectors.set(e, (v = denseVector(values)));
      }
      return { vector: v, inputTokens: e.usage.input };
    },
    reply(request, inputTokens) {
      const e = answer(request, inputTokens);
      return e && (e.text ?? '');
    },
    replyStandIn(request) {
      const content = padTo(o.tokens, requestKey(request), request.maxTokens);
      standIns.add(content);
      return content;
    },
    judge(request) {
      const e = answer(request);
      return e && (e.text ?? '');
    },
  }, { prompts: o.prompts, recorded: true });
}

/** A chat response's text, trimmed. */
function textOf(e: CassetteEntry): string {
  return (e.text ?? '').trim();
}

/** The facts whose value occurs in the text, compared as probes are scored. */
function statedIn(text: string, facts: ReadonlyMap<string, string>): Map<string, string> {
  const t = normalize(text);
  return new Map([...facts].filter(([, value]) => occursIn(t, normalize(value))));
}
