import { createHash } from 'node:crypto';

// Apart from cassette.ts: what makes requests and their keys (the simulated and recorded upkeep, a policy module's thread) loads neither the cassette's checks nor YAML.

/** A message of a recorded chat request (the summarizer's or the extractor's). */
export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** A message of a probe turn's prompt as the chat model is sent it: OpenAI's chat message fields. */
export interface PromptMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  name?: string;
  tool_calls?: readonly { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A tool offered with a probe turn's prompt, as OpenAI's `tools` entry. */
export interface PromptTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/**
 * One upkeep request as it goes to an OpenAI-compatible endpoint: a chat
 * completion (a summary, a re-summarization that forgets, an extraction),
 * the embedding of one text, or a probe turn's prompt sent to the chat
 * model to see whether its answer holds the probed facts (`answer`), or
 * such an answer sent to a judge model to grade it (`judge`).
 */
export type UpkeepRequest =
  | { kind: 'summary' | 'extract'; model: string; messages: readonly ChatMessage[]; maxTokens: number }
  | { kind: 'judge'; model: string; messages: readonly ChatMessage[]; maxTokens: number }
  | { kind: 'embed'; model: string; input: string }
  | { kind: 'answer'; model: string; messages: readonly PromptMessage[]; tools?: readonly PromptTool[]; maxTokens: number };

/**
 * The key of a request: a hash of everything the endpoint is sent (model,
 * messages or input, parameters), so the same request finds its recording
 * in any run, whichever policy or scenario makes it.
 */
export function requestKey(r: UpkeepRequest): string {
  const payload =
    r.kind === 'embed'
      ? ['embeddings', r.model, r.input]
      : r.kind === 'answer'
        ? ['answer', r.model, r.messages, r.tools ?? null, r.maxTokens]
        : ['chat', r.model, r.messages.map((m) => [m.role, m.content]), r.maxTokens];
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex').slice(0, 32);
}

/** An embedding as a cassette stores it: float32 values, little-endian, base64. */
export function encodeVector(values: readonly number[]): string {
  const f = Float32Array.from(values);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength).toString('base64');
}

/** The values of a stored embedding. */
export function decodeVector(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  const out = new Float32Array(bytes.byteLength >> 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}
