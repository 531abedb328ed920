import { messageText } from '../tokens/counter.js';
import type { ArtifactKind, Message } from '../types.js';
import { STORED_DIMENSIONS } from '../upkeep/embedder.js';
import { holds, redactText } from '../upkeep/redact.js';
import type { CommonParams } from './params.js';
import type { Artifact, ForgetFact, TurnInfo } from './types.js';

/** Every value of the facts to forget, once each. */
export function valuesOf(facts: readonly ForgetFact[]): string[] {
  return [...new Set(facts.flatMap((f) => f.values))].filter(Boolean);
}

/** True when the policy erases every artifact (`forget: cascade`, the default), false for `naive`. */
export function cascades(params: Pick<CommonParams, 'forget'>): boolean {
  return params.forget !== 'naive';
}

/** True when this turn is kept out of memory: flagged `injection: true` under `moderation: drop`. */
export function moderated(params: Pick<CommonParams, 'moderation'>, info: TurnInfo): boolean {
  return params.moderation === 'drop' && info.turn.injection;
}

/**
 * A redacted copy of a message (content and tool-call arguments), or the
 * message itself when it holds none of the values. The copy is a new object,
 * so its tokens are counted once, like any new text.
 */
export function redactMessage(m: Message, values: readonly string[]): Message {
  if (!holds(messageText(m), values)) return m;
  const copy: Message = { ...m, content: holds(m.content, values) ? redactText(m.content, values) : m.content };
  if (m.toolCalls) copy.toolCalls = m.toolCalls.map((c) => (holds(c.arguments, values) ? { ...c, arguments: redactText(c.arguments, values) } : c));
  return copy;
}

/** UTF-8 bytes of a text (measured, not encoded). */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** An artifact of texts; `extraBytes` adds what is stored besides the texts (embeddings). */
export function artifact(kind: ArtifactKind, texts: string[], extraBytes = 0): Artifact {
  let bytes = extraBytes;
  for (const t of texts) bytes += utf8Bytes(t);
  return { kind, texts, bytes };
}

/** The raw messages a policy stores, as a `transcript` artifact. */
export function transcriptArtifact(messages: readonly Message[]): Artifact {
  return artifact('transcript', messages.map(messageText));
}

/** Stored texts as a `vectors` artifact: their bytes plus an embedding each, sized as a backend stores it (STORED_DIMENSIONS × 4 bytes). */
export function vectorsArtifact(texts: string[]): Artifact {
  return artifact('vectors', texts, texts.length * STORED_DIMENSIONS * 4);
}
