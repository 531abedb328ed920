import { CtxsimError } from '../errors.js';
import { encodeVector, requestKey, type CassetteEntry, type UpkeepRequest, type BilledUsage } from './cassette.js';

/** How to reach an OpenAI-compatible endpoint. */
export interface EndpointSettings {
  /** The API's base URL, e.g. `http://localhost:11434/v1` for Ollama. */
  baseURL: string;
  /** The key (read from the environment by the caller); none for a local server. */
  apiKey: string | undefined;
  /** The environment variable the key comes from, to name in an error (never the key itself). */
  apiKeyEnv: string;
  /** Seconds a request may take before it is given up (and retried). */
  timeoutSeconds: number;
  /** Retries of a request on a timeout, a 408/409/429 or a 5xx, waiting as `Retry-After` says (else backing off). */
  maxRetries: number;
}

/** A response as the endpoint gave it; `usage` absent when the endpoint reports none. */
export type EndpointAnswer = Omit<CassetteEntry, 'usage'> & { usage?: BilledUsage };

/**
 * Opens an endpoint through the official `openai` client (imported only
 * here, when a run records, so other runs never load it): each request is a
 * chat completion (temperature 0, `max_tokens` the request's) or an
 * embedding of one text. Every failure is a one-line error naming the
 * endpoint and what to do; the key never appears in one.
 */
export async function openEndpoint(s: EndpointSettings): Promise<(request: UpkeepRequest) => Promise<EndpointAnswer>> {
  const { default: OpenAI, APIConnectionError, APIConnectionTimeoutError } = await import('openai');
  // A local server needs no key, but the client wants one: a placeholder the server ignores.
  const client = new OpenAI({ baseURL: s.baseURL, apiKey: s.apiKey ?? 'none', timeout: s.timeoutSeconds * 1000, maxRetries: s.maxRetries });
  const hide = (text: string) => (s.apiKey && s.apiKey.length >= 4 ? text.split(s.apiKey).join('***') : text);
  const fail = (what: string, message: string) => new CtxsimError(hide(`upkeep endpoint ${s.baseURL}: ${what}: ${message}`), 'upkeep-endpoint');

  return async (request) => {
    const what = `${request.kind === 'embed' ? 'embedding' : request.kind} by ${request.model}`;
    let answer: unknown;
    try {
      answer =
        request.kind === 'embed'
          ? await client.embeddings.create({ model: request.model, input: request.input, encoding_format: 'float' })
          : await client.chat.completions.create({
              model: request.model,
              // A probe turn's prompt is sent as the policy made it (roles, tool calls and results, names); the client's types are its own.
              messages: [...request.messages] as Parameters<typeof client.chat.completions.create>[0]['messages'],
              ...(request.kind === 'answer' && request.tools?.length && { tools: [...request.tools] as Parameters<typeof client.chat.completions.create>[0]['tools'] }),
              max_tokens: request.maxTokens,
              temperature: 0,
            });
    } catch (e) {
      const kind = e instanceof APIConnectionTimeoutError ? 'timeout' : e instanceof APIConnectionError ? 'connection' : undefined;
      throw fail(what, failure(e, kind, s));
    }
    const parsed = request.kind === 'embed' ? embedding(answer) : completion(answer);
    if (typeof parsed === 'string') throw fail(what, parsed);
    return { key: requestKey(request), kind: request.kind, model: request.model, ...parsed };
  };
}

/** What went wrong with a request, in words (the client has already retried what can be retried). */
function failure(e: unknown, kind: 'timeout' | 'connection' | undefined, s: EndpointSettings): string {
  const err = e as { status?: number; message?: string };
  const tries = `${s.maxRetries + 1} ${s.maxRetries ? 'tries' : 'try'}`;
  const said = firstLine(err.message).replace(/^\d{3}\s+/, '');
  if (err.status === 401 || err.status === 403) return `${err.status} (${said}): check the key in ${s.apiKeyEnv}`;
  if (kind === 'timeout') return `no answer within ${s.timeoutSeconds} s (${tries})`;
  if (kind === 'connection') return `cannot connect (${tries}): is the server running at this address?`;
  if (e instanceof SyntaxError) return `the answer is not valid JSON (${firstLine(err.message)})`;
  if (typeof err.status === 'number') return `${err.status} (${said})${err.status === 429 || err.status >= 500 ? ` after ${tries}` : ''}`;
  return firstLine(err.message ?? String(e));
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300);
}

/** Token counts of a response's `usage`, when it has them. */
function usageOf(u: unknown, output: boolean): BilledUsage | undefined {
  const { prompt_tokens: input, completion_tokens: out } = (u ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (!Number.isInteger(input)) return undefined;
  if (output && !Number.isInteger(out)) return undefined;
  return { input: input as number, output: output ? (out as number) : 0 };
}

/** A chat completion's text (a tool call the model made instead or besides, one `name(arguments)` a line after it) and usage, or what is wrong with it. */
function completion(answer: unknown): Pick<EndpointAnswer, 'text' | 'usage'> | string {
  const a = answer as { choices?: { message?: { content?: unknown; tool_calls?: unknown } }[]; usage?: unknown } | null;
  const message = a?.choices?.[0]?.message;
  const content = message?.content;
  const calls = Array.isArray(message?.tool_calls) ? (message.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[]) : [];
  if (content !== null && typeof content !== 'string' && !(content === undefined && calls.length)) return 'the answer has no choices[0].message.content';
  const called = calls.map((c) => `${String(c.function?.name ?? '')}(${String(c.function?.arguments ?? '')})`);
  const usage = usageOf(a?.usage, true);
  return { text: [...(content ? [content] : []), ...called].join('\n'), ...(usage && { usage }) };
}

/** An embedding (stored as base64 float32) and usage, or what is wrong with it. */
function embedding(answer: unknown): Pick<EndpointAnswer, 'vector' | 'usage'> | string {
  const a = answer as { data?: { embedding?: unknown }[]; usage?: unknown } | null;
  const values = a?.data?.[0]?.embedding;
  if (!Array.isArray(values) || !values.length || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) return 'the answer has no data[0].embedding of numbers';
  const usage = usageOf(a?.usage, false);
  return { vector: encodeVector(values as number[]), ...(usage && { usage }) };
}
