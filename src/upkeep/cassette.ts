import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../errors.js';
import { formatPath, show } from '../text/document.js';

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

/** Tokens an endpoint billed for a request, from its response's `usage`. */
export interface BilledUsage {
  input: number;
  output: number;
}

/** A recorded response: the request's key, what it was, and the text or vector it answered with. */
export interface CassetteEntry {
  key: string;
  kind: UpkeepRequest['kind'];
  model: string;
  /** A chat completion's text (with an answer's tool calls, one `name(arguments)` a line after it). */
  text?: string;
  /** An embedding: float32 values, little-endian, base64. */
  vector?: string;
  usage: BilledUsage;
}

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

const usage = z.strictObject({ input: z.number().int().min(0), output: z.number().int().min(0) });
const key = z.string().regex(/^[0-9a-f]{32}$/, 'expected 32 hex digits');
const entrySchema = z.discriminatedUnion('kind', [
  z.strictObject({ key, kind: z.enum(['summary', 'extract', 'answer', 'judge']), model: z.string().min(1), text: z.string(), usage }),
  z.strictObject({ key, kind: z.literal('embed'), model: z.string().min(1), vector: z.string().refine(isFloat32Base64, 'expected base64 of float32 values'), usage }),
]);

/**
 * A cassette: recorded upkeep responses by request key. On disk it is JSON
 * Lines, one response per line, sorted by key, so a recording that adds
 * responses adds lines and a review diff shows only those.
 */
export class Cassette {
  private readonly byKey = new Map<string, CassetteEntry>();

  constructor(entries: Iterable<CassetteEntry> = []) {
    for (const e of entries) this.byKey.set(e.key, e);
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): CassetteEntry | undefined {
    return this.byKey.get(key);
  }

  add(entry: CassetteEntry): void {
    this.byKey.set(entry.key, entry);
  }

  /** The entries in key order (plain data: what crosses to worker threads). */
  entries(): CassetteEntry[] {
    return [...this.byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The file's text: one entry per line, in key order, fields in a fixed order. */
  text(): string {
    return this.entries()
      .map((e) => `${JSON.stringify({ key: e.key, kind: e.kind, model: e.model, ...(e.text !== undefined ? { text: e.text } : { vector: e.vector }), usage: { input: e.usage.input, output: e.usage.output } })}\n`)
      .join('');
  }

  /** Reads a cassette file's text; every bad line is a problem at its line, naming the field and value. */
  static parse(file: string, text: string): Cassette {
    const problems: Problem[] = [];
    const entries: CassetteEntry[] = [];
    const seen = new Map<string, number>();
    /** Per embedding model, the dimensions of its first vector and that line: a model gives all its vectors one length. */
    const dimensions = new Map<string, { n: number; line: number }>();
    text.split('\n').forEach((raw, i) => {
      const line = i + 1;
      if (!raw.trim()) return;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (e) {
        problems.push({ file, line, path: '', message: `not a JSON object (${(e as Error).message})` });
        return;
      }
      const r = entrySchema.safeParse(value);
      if (!r.success) {
        const issue = r.error.issues[0]!;
        const at = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
        const got = at.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string | number, unknown>)[k] : undefined), value);
        problems.push({ file, line, path: formatPath(at), message: `${issue.message}${got === undefined ? '' : ` (got ${show(got)})`}` });
        return;
      }
      const entry = r.data as CassetteEntry;
      const first = seen.get(entry.key);
      if (first !== undefined) problems.push({ file, line, path: 'key', message: `${entry.key} is recorded twice (also on line ${first})` });
      seen.set(entry.key, line);
      if (entry.vector !== undefined) {
        const n = Buffer.byteLength(entry.vector, 'base64') / 4;
        const model = dimensions.get(entry.model);
        if (!model) dimensions.set(entry.model, { n, line });
        else if (model.n !== n) problems.push({ file, line, path: 'vector', message: `${n} dimensions, but ${entry.model}'s vector on line ${model.line} has ${model.n} (a model's vectors are compared with each other)` });
      }
      entries.push(entry);
    });
    if (problems.length) throw new ScenarioError(problems);
    return new Cassette(entries);
  }
}

/** Whether a text is the base64 of a whole number of float32 values (at least one). */
function isFloat32Base64(text: string): boolean {
  const bytes = Buffer.from(text, 'base64');
  return bytes.length > 0 && bytes.length % 4 === 0 && bytes.toString('base64') === text;
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
