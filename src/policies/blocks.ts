import { parseDuration } from '../text/duration.js';
import { normalize } from '../text/normalize.js';
import { messageText } from '../tokens/counter.js';
import { cosine, embed } from '../upkeep/embedder.js';
import { holds, redactText } from '../upkeep/redact.js';
import { VectorStore } from '../upkeep/store.js';
import { forgetInSummary, summarize } from '../upkeep/summarizer.js';
import { artifact, cascades, moderated, redactMessage, transcriptArtifact, valuesOf, vectorsArtifact } from './_forget.js';
import { FactSheet, newestExchangesThatFit, systemMessageTokens, TurnGate } from './_memory.js';
import { RunningSummary } from './_summary.js';
import { fixedTokens, fromFirstUser, newestThatFit, pinned, promptTokens, sum, Transcript, transcriptMemory } from './_transcript.js';
import type { Blocks, SessionParams, TranscriptBlock } from './types.js';

/**
 * The pieces the built-in policies are made of, for a policy of one's own to
 * compose rather than copy: the same functions and classes the built-ins
 * run, so a custom policy that stores the same memory is stored, erased and
 * scored as they are. One frozen object, shared by every session: each
 * policy gets it as `deps.blocks`, and the package exports it as `blocks`.
 * What each block does, and which built-in uses it, is in
 * docs/custom-policies.md (Building blocks).
 */
export const blocks: Blocks = Object.freeze({
  pinned,
  messageText,
  sumTokens: sum,
  promptTokens,
  fixedTokens,
  systemMessageTokens,
  newestThatFit,
  newestExchangesThatFit,
  fromFirstUser,
  turnGate: () => new TurnGate(),
  parseDuration,

  transcript,
  runningSummary: (_conversation, params, deps) => new RunningSummary(params, deps),
  summarize,
  forgetInSummary,
  factSheet: (params, deps) => new FactSheet(params, deps),
  embed,
  cosine,
  vectorStore: <T>() => new VectorStore<T>(),

  normalize,
  holds,
  redactText,
  redactMessage,
  valuesOf,
  cascades,
  moderated,
  artifact,
  transcriptArtifact,
  vectorsArtifact,
} satisfies Blocks);

/** The raw history as a block: the built-ins' transcript with its `commit` and `forget` (those of a policy that stores only raw messages). */
function transcript(params: Pick<SessionParams, 'sessionCap' | 'moderation'>): TranscriptBlock {
  const history = new Transcript(params.sessionCap);
  const { commit, forget } = transcriptMemory(history, params);
  return {
    get exchanges() {
      return history.exchanges;
    },
    get flat() {
      return history.flat;
    },
    messages: (from) => history.messages(from),
    add: (exchange) => history.add(exchange),
    redact: (values) => history.redact(values),
    commit,
    forget,
    artifact: (from) => transcriptArtifact(history.messages(from)),
  };
}
