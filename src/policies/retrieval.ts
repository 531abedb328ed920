import { z } from 'zod';
import { parseDuration } from '../text/duration.js';
import { messageText } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { cosine, type Vector } from '../upkeep/embedder.js';
import { holds } from '../upkeep/redact.js';
import { VectorStore, type Stored } from '../upkeep/store.js';
import { cascades, moderated, transcriptArtifact, valuesOf, vectorsArtifact } from './_forget.js';
import { TurnGate, upkeepOf } from './_memory.js';
import { pinned, Transcript } from './_transcript.js';
import { definePolicy } from './define.js';
import { duration, int, model, number } from './params.js';

type Item = Stored<Message>;

/** What one turn sends besides the pinned prompt and the current turn. */
interface Selection {
  retrieved: Message[];
  verbatim: Message[];
}

/** Starts a window at `from`, widened back to the user message that opened its exchange, so it never starts with a reply or a tool message. */
function windowFrom(messages: readonly Message[], from: number): Message[] {
  let i = Math.max(0, from);
  while (i > 0 && i < messages.length && messages[i]!.role !== 'user') i--;
  return messages.slice(i);
}

/** A retrieved message as a policy-made `system` message that says where it came from. */
function asMemory(item: Item, score: number): Message {
  const m = item.value;
  const what = m.role === 'tool' ? 'tool result' : m.toolCalls?.length ? 'tool call' : m.role;
  return {
    role: 'system',
    content: `Earlier (turn ${m.turn ?? '?'}, ${what}): ${messageText(m)}`,
    origin: 'retrieved',
    score: Math.round(score * 1e4) / 1e4,
    ...(m.turn !== undefined && { turn: m.turn }),
  };
}

/**
 * `asMemory`, remembered per stored item: an item retrieved again with the
 * same (rounded) score is the same message object, and with another score a
 * copy that keeps its text (the same string), so the text is not built,
 * hashed and looked up again every turn.
 */
function memories(): (item: Item, score: number) => Message {
  const made = new WeakMap<Item, Message>();
  return (item, score) => {
    const rounded = Math.round(score * 1e4) / 1e4;
    const last = made.get(item);
    if (last?.score === rounded) return last;
    const m = last ? { ...last, score: rounded } : asMemory(item, score);
    made.set(item, m);
    return m;
  };
}

/**
 * Recent messages verbatim plus the `topK` stored messages most similar to
 * the new user message (lexical embedding, cosine), sent as `retrieved`
 * system messages in the conversation's order; a retrieved tool result
 * brings its call and a call its results. When the best score is below
 * `minScore`, the last `fallbackRecent` messages are sent instead. The store
 * keeps at most `maxItems` messages (oldest evicted), none older than
 * `maxAge`, and survives a session restart.
 */
export const retrieval = definePolicy({
  id: 'retrieval',
  describe: 'recent messages + the most similar past messages (lexical embedding), with a recent-window fallback',
  params: z.object({
    topK: int({ default: 5, min: 0, describe: 'most similar stored messages sent, as retrieved memories' }),
    recent: int({ default: 3, min: 0, describe: 'newest messages sent verbatim (widened back to their user message)' }),
    minScore: number({ default: 0.2, min: 0, describe: 'best similarity below which the recent-window fallback is sent instead' }),
    fallbackRecent: int({ default: 10, min: 0, describe: 'newest messages sent when nothing scores `minScore`' }),
    maxItems: int({ default: 10000, min: 1, describe: 'messages the store keeps; the oldest are evicted' }),
    maxAge: duration({ describe: 'simulated time after which a stored message is dropped (default: never)' }),
    embedModel: model({ default: 'text-embedding-3-small', describe: 'embedding model each embedding is priced on' }),
  }),
  start(conversation, params, deps) {
    const upkeep = upkeepOf(deps);
    const history = new Transcript(params.sessionCap);
    const head = pinned(conversation);
    const topK = params.topK;
    const maxAge = params.maxAge === undefined ? undefined : parseDuration(params.maxAge)!;
    const embedModel = params.embedModel;
    const gate = new TurnGate();
    const store = new VectorStore<Message>();
    let query: { message: Message; vector: Vector } | undefined;
    let selection: Selection = { retrieved: [], verbatim: [] };
    const memory = memories();

    const embedCall = (inputTokens: number, sync: boolean): UpkeepCall => ({ kind: 'embed', model: embedModel, inputTokens, outputTokens: 0, sync });

    function select(vector: Vector): Selection {
      const messages = history.flat;
      const recent = windowFrom(messages, messages.length - params.recent);
      // At least one hit even for topK 0: the best one decides the fallback. The recent window is
      // a few messages, and only a candidate for the top is looked up in it: a scan, not a set.
      const hits = store.best(vector, Math.max(topK, 1), (item) => recent.includes(item.value));
      if (!hits.length || hits[0]!.score < params.minScore) {
        return { retrieved: [], verbatim: windowFrom(messages, messages.length - params.fallbackRecent) };
      }
      hits.length = Math.min(hits.length, topK);
      const chosen = new Map<Item, number>();
      for (const h of hits) chosen.set(h.entry, h.score);
      // Tool pairs travel together; a pair whose other half left the store is not sent.
      for (const { entry: item } of hits) {
        const pair = toolGroup(item);
        if (!pair) chosen.delete(item);
        else for (const p of pair) if (!chosen.has(p)) chosen.set(p, cosine(vector, p.vector));
      }
      const retrieved = [...chosen].sort((a, b) => a[0].seq - b[0].seq).map(([item, score]) => memory(item, score));
      return { retrieved, verbatim: recent };
    }

    // Stored tool calls and results by call id, in the order they were stored (an id may recur).
    const callsById = new Map<string, Item[]>();
    const resultsById = new Map<string, Item[]>();
    const remember = (byId: Map<string, Item[]>, id: string, item: Item) => {
      const list = byId.get(id);
      if (list) list.push(item);
      else byId.set(id, [item]);
    };
    /** The oldest of the items stored under an id that is still in the store. */
    const firstStored = (byId: Map<string, Item[]>, id: string | undefined) => (id === undefined ? undefined : byId.get(id)?.find((item) => store.has(item)));

    /** The tool call and all its results that an item belongs to ([item] when it is neither); undefined when a part is no longer stored. */
    function toolGroup(item: Item): Item[] | undefined {
      const m = item.value;
      if (m.role === 'tool') {
        const call = firstStored(callsById, m.toolCallId);
        return call && toolGroup(call);
      }
      if (!m.toolCalls?.length) return [item];
      const results = m.toolCalls.map((c) => firstStored(resultsById, c.id));
      return results.every((r) => r !== undefined) ? [item, ...(results as Item[])] : undefined;
    }

    return {
      prompt(pending, info) {
        const calls: UpkeepCall[] = [];
        if (gate.first(info)) {
          if (maxAge !== undefined) store.dropBefore(info.time - maxAge);
          const user = pending[0]!;
          const e = upkeep.embed(messageText(user), embedModel);
          query = { message: user, vector: e.vector };
          calls.push(embedCall(e.inputTokens, true));
          selection = select(query.vector);
        }
        return {
          messages: [...head, ...selection.retrieved, ...selection.verbatim, ...pending],
          overBudget: false,
          upkeep: calls,
          stablePrefix: head.length,
        };
      },
      commit(exchange, info) {
        if (moderated(params, info)) return [];
        let embedded = 0;
        for (const message of exchange) {
          const text = messageText(message);
          if (!text.trim()) continue;
          // The user message was embedded as the query: stored, not embedded twice.
          let vector = query?.message === message ? query.vector : undefined;
          if (!vector) {
            const e = upkeep.embed(text, embedModel);
            embedded += e.inputTokens;
            vector = e.vector;
          }
          const item = store.add(message, vector, info.time);
          for (const c of message.toolCalls ?? []) remember(callsById, c.id, item);
          if (message.role === 'tool' && message.toolCallId !== undefined) remember(resultsById, message.toolCallId, item);
        }
        store.keepNewest(params.maxItems);
        history.add(exchange);
        return embedded ? [embedCall(embedded, false)] : [];
      },
      // Cascade: every entry whose source text holds a value goes, with its embedding (a delete, not a model call).
      forget(facts) {
        const values = valuesOf(facts);
        history.redact(values);
        if (cascades(params)) store.remove((m) => holds(messageText(m), values));
        return [];
      },
      artifacts() {
        const messages = history.flat;
        const verbatim = windowFrom(messages, messages.length - Math.max(params.recent, params.fallbackRecent));
        const entries = store.all;
        return [transcriptArtifact(verbatim), vectorsArtifact(entries.map((e) => messageText(e.value)))];
      },
    };
  },
});
