import { maxHeaderSize } from 'node:http';
import { CtxsimError } from '../errors.js';
import { formatPath, show } from '../text/document.js';
import { checkEntry, type EndpointAnswer, type EntryIssue } from './cassette.js';
import { encodeVector, requestKey, type UpkeepRequest } from './request.js';

/** How to reach an OpenAI-compatible endpoint. */
export interface EndpointSettings {
  /** The API's base URL, e.g. `http://localhost:11434/v1` for Ollama. */
  baseURL: string;
  /** The key (read from the environment by the caller); none for a local server. */
  apiKey: string | undefined;
  /** The environment variable the key comes from, to name in an error (never the key itself). */
  apiKeyEnv: string;
  /** Seconds a request may take, its answer's body read whole included, before it is given up (and retried); also the longest wait before a retry. */
  timeoutSeconds: number;
  /** Retries of a request on a timeout, a failed connection, a 408/409/429 or a 5xx, waiting as `Retry-After` says (at most `timeoutSeconds`), else backing off. */
  maxRetries: number;
  /** The most bytes an answer's body may have: a longer one is refused as it streams in, never held whole. */
  maxResponseBytes: number;
}

/** A response body's default limit: far above any upkeep answer (a summary, a fact sheet, an embedding of a few thousand values). */
export const DEFAULT_MAX_RESPONSE_BYTES = 4_000_000;
/** The highest limit a study may set: a longer text could not be stored as a cassette line. */
export const MAX_RESPONSE_BYTES = 50_000_000;

/** Statuses worth another try: a request timeout, a conflict, a rate limit, a server error. */
const RETRIED = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * Opens an endpoint through the official `openai` client (imported only
 * here, when a run records, so other runs never load it): each request is a
 * chat completion (temperature 0, `max_tokens` the request's) or an
 * embedding of one text. The answer is checked by the rules of a cassette
 * line (`checkEntry`) before it is returned. Every failure is a one-line
 * error naming the endpoint, the request and what to do; the key never
 * appears in one.
 *
 * Retries are ctxsim's, not the client's (whose `Retry-After` has no upper
 * bound): at most `maxRetries`, each after the wait `Retry-After` asks for
 * but at most `timeoutSeconds`, so one request waits at most
 * `timeoutSeconds × maxRetries` in all between its tries.
 */
export async function openEndpoint(s: EndpointSettings): Promise<(request: UpkeepRequest) => Promise<EndpointAnswer>> {
  const { default: OpenAI, APIError, APIConnectionError, APIConnectionTimeoutError } = await import('openai');
  // A local server needs no key, but the client wants one: a placeholder the server ignores.
  const client = new OpenAI({ baseURL: s.baseURL, apiKey: s.apiKey ?? 'none', timeout: s.timeoutSeconds * 1000, maxRetries: 0, fetch: boundedFetch(s.maxResponseBytes) });
  const fail = (request: UpkeepRequest, message: string) => endpointError(s, request, message);

  /** What went wrong with a try, and whether another may go better. */
  const classify = (e: unknown): Failure => {
    if (e instanceof APIConnectionError && e.cause instanceof ResponseTooLarge) return { kind: 'too-large' };
    // Headers over Node's limit, or an answer that is not HTTP: the server's fault, which another try would meet again.
    const code = causeCode(e);
    if (e instanceof APIConnectionError && code === 'UND_ERR_HEADERS_OVERFLOW') return { kind: 'headers-too-large' };
    if (e instanceof APIConnectionError && code?.startsWith('HPE_')) return { kind: 'not-http' };
    if (e instanceof APIConnectionTimeoutError) return { kind: 'timeout', retry: true };
    if (e instanceof APIConnectionError) return { kind: 'connection', retry: true };
    if (e instanceof APIError && typeof e.status === 'number') return { kind: 'status', status: e.status, retry: RETRIED(e.status), ...(e.headers && { headers: e.headers }) };
    return { kind: e instanceof SyntaxError ? 'malformed' : 'other' };
  };

  const call = (request: UpkeepRequest): Promise<unknown> =>
    request.kind === 'embed'
      ? client.embeddings.create({ model: request.model, input: request.input, encoding_format: 'float' })
      : client.chat.completions.create({
          model: request.model,
          // A probe turn's prompt is sent as the policy made it (roles, tool calls and results, names); the client's types are its own.
          messages: [...request.messages] as Parameters<typeof client.chat.completions.create>[0]['messages'],
          ...(request.kind === 'answer' && request.tools?.length && { tools: [...request.tools] as Parameters<typeof client.chat.completions.create>[0]['tools'] }),
          max_tokens: request.maxTokens,
          temperature: 0,
        });

  return async (request) => {
    let answer: unknown;
    for (let tries = 1; ; tries++) {
      try {
        answer = await call(request);
        break;
      } catch (e) {
        const f = classify(e);
        if (!f.retry || tries > s.maxRetries) throw fail(request, failure(e, f, s, tries));
        await sleep(retryWait(f.headers, tries, s.timeoutSeconds * 1000));
      }
    }
    const parsed = request.kind === 'embed' ? embedding(answer) : completion(answer);
    if (typeof parsed === 'string') throw fail(request, parsed);
    const checked = checkEntry({ key: requestKey(request), kind: request.kind, model: request.model, ...parsed }, false);
    if (checked.issue) throw responseError(s, request, checked.issue);
    return checked.entry;
  };
}

/** A try that failed: what kind of failure, whether to try again, and the status and headers of an answer that said so. */
interface Failure {
  kind: 'too-large' | 'headers-too-large' | 'not-http' | 'timeout' | 'connection' | 'status' | 'malformed' | 'other';
  retry?: boolean;
  status?: number;
  headers?: Headers;
}

/** A body longer than the limit, refused while it streams in. */
class ResponseTooLarge extends Error {}

/** Statuses whose response has no body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for the client that reads the whole body, at most `maxBytes` of
 * it, before it answers: the client's timeout then covers the body too (a
 * server that sends its headers and stalls is cut), and a body over the
 * limit is refused as it streams in.
 */
function boundedFetch(maxBytes: number): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const res = await fetch(input, init);
    const tooLarge = (): never => {
      void res.body?.cancel().catch(() => {});
      throw new ResponseTooLarge(`larger than ${maxBytes} bytes`);
    };
    if (Number(res.headers.get('content-length')) > maxBytes) tooLarge();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) tooLarge();
      chunks.push(chunk);
    }
    return new Response(NULL_BODY.has(res.status) ? null : Buffer.concat(chunks), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/**
 * Milliseconds to wait before try `tries + 1`: what the answer asked
 * (`retry-after-ms`, or `Retry-After` in seconds or as an HTTP date), else
 * 0.5 s doubling with each try up to 8 s; never more than `timeoutMs`.
 */
export function retryWait(headers: Headers | undefined, tries: number, timeoutMs: number, now = Date.now()): number {
  return Math.min(retryAfter(headers, now) ?? Math.min(500 * 2 ** (tries - 1), 8000), timeoutMs);
}

/** The wait an answer asks for, in milliseconds (a date past is no wait), or undefined when it asks none it can be read as. */
function retryAfter(headers: Headers | undefined, now: number): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (ms >= 0) return ms;
  const raw = headers?.get('retry-after')?.trim();
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (!Number.isNaN(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** What a request is, in words: `summary by llama3.2`, `embedding by nomic-embed-text`. */
function requestName(request: UpkeepRequest): string {
  return `${request.kind === 'embed' ? 'embedding' : request.kind} by ${request.model}`;
}

/** The one-line error of a request to the endpoint: names the endpoint and the request; the key, and any piece of it, is masked wherever it appears. */
function endpointError(s: Pick<EndpointSettings, 'baseURL' | 'apiKey'>, request: UpkeepRequest, message: string): CtxsimError {
  return new CtxsimError(maskKey(`upkeep endpoint ${s.baseURL}: ${requestName(request)}: ${message}`, s.apiKey), 'upkeep-endpoint');
}

/**
 * The shortest piece of the key masked wherever it appears: a server may
 * quote a key's first characters, or all but a few, in its error (OpenAI's
 * 401 says `sk-proj-abcd****wxyz`); a shorter piece could occur by chance.
 */
export const KEY_PIECE = 8;

/**
 * `text` with every run of characters that is a piece of `key` at least
 * `KEY_PIECE` long (the whole key, when shorter, but at least 4) written
 * `***`: every run made of the key's `KEY_PIECE`-character windows.
 */
export function maskKey(text: string, key: string | undefined): string {
  if (!key || key.length < 4) return text;
  const piece = Math.min(KEY_PIECE, key.length);
  const hidden = new Uint8Array(text.length);
  for (let i = 0; i + piece <= key.length; i++) {
    const window = key.slice(i, i + piece);
    for (let at = text.indexOf(window); at >= 0; at = text.indexOf(window, at + 1)) hidden.fill(1, at, at + piece);
  }
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (!hidden[i]) out += text[i++];
    else {
      out += '***';
      while (hidden[i]) i++;
    }
  }
  return out;
}

/** The fields of the endpoint's answer that a recorded response's fields come from. */
const ANSWER_FIELDS: Record<string, string> = {
  usage: 'usage',
  'usage.input': 'usage.prompt_tokens',
  'usage.output': 'usage.completion_tokens',
  'usage.cached': 'usage.prompt_tokens_details.cached_tokens',
  'usage.written': 'usage.cache_creation_input_tokens',
  text: 'choices[0].message.content',
  vector: 'data[0].embedding',
};

/**
 * The error for an answer that breaks a rule of the cassette (`checkEntry`,
 * or a vector whose length is not its model's): names the field of the
 * answer as the endpoint sent it, and the value.
 */
export function responseError(s: Pick<EndpointSettings, 'baseURL' | 'apiKey'>, request: UpkeepRequest, issue: EntryIssue): CtxsimError {
  const [head, ...rest] = issue.path;
  const field = `${ANSWER_FIELDS[formatPath(head === 'vector' ? [head] : issue.path)] ?? formatPath(issue.path)}${head === 'vector' ? formatPath(rest) : ''}`;
  return endpointError(s, request, `${field}: ${issue.message}${issue.got === undefined ? '' : ` (got ${show(issue.got)})`}`);
}

/** What went wrong with a request, in words, after `tries` tries. */
function failure(e: unknown, f: Failure, s: EndpointSettings, tries: number): string {
  const err = e as { message?: string };
  const told = `${tries} ${tries === 1 ? 'try' : 'tries'}`;
  const said = firstLine(err.message).replace(/^\d{3}\s+/, '');
  if (f.kind === 'too-large') return `the answer is larger than maxResponseBytes (${s.maxResponseBytes} bytes)`;
  if (f.kind === 'headers-too-large') return `the answer's headers are larger than ${maxHeaderSize} bytes, Node's limit (NODE_OPTIONS=--max-http-header-size=BYTES raises it)`;
  if (f.kind === 'not-http') return `the answer is not valid HTTP (${firstLine(causeMessage(e))})`;
  if (f.status === 401 || f.status === 403) return `${f.status} (${said}): check the key in ${s.apiKeyEnv}`;
  if (f.kind === 'timeout') return `no answer within ${s.timeoutSeconds} s (${told})`;
  if (f.kind === 'connection') return `cannot connect (${told}): is the server running at this address?`;
  if (f.kind === 'malformed') return `the answer is not valid JSON (${firstLine(err.message)})`;
  if (f.status !== undefined) return `${f.status} (${said})${f.retry ? ` after ${told}` : ''}`;
  return firstLine(err.message ?? String(e));
}

/** The errors an error was caused by, itself first (a few deep: the client's error, fetch's, the parser's). */
function causes(e: unknown): { code?: unknown; message?: unknown }[] {
  const chain: { code?: unknown; message?: unknown }[] = [];
  for (let c = e; c && typeof c === 'object' && chain.length < 5; c = (c as { cause?: unknown }).cause) chain.push(c as { code?: unknown; message?: unknown });
  return chain;
}

/** The code of the first error in the chain that has one (`UND_ERR_HEADERS_OVERFLOW`, `HPE_INVALID_CONSTANT`…). */
function causeCode(e: unknown): string | undefined {
  const code = causes(e).find((c) => typeof c.code === 'string')?.code;
  return code as string | undefined;
}

/** The message of the deepest error in the chain: what the HTTP parser said. */
function causeMessage(e: unknown): string {
  const message = causes(e).reverse().find((c) => typeof c.message === 'string')?.message;
  return (message as string | undefined) ?? String(e);
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300);
}

/** The fields of an OpenAI-compatible `usage` that ctxsim reads. */
interface UsageFields {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown; cache_creation_tokens?: unknown } | null;
  /** DeepSeek's name for the cached tokens. */
  prompt_cache_hit_tokens?: unknown;
  /** Anthropic's tokens written to its cache, as LiteLLM passes them on (part of `prompt_tokens`). */
  cache_creation_input_tokens?: unknown;
}

/**
 * A response's `usage` as the endpoint reported it (checked with the rest),
 * or undefined when it reports none: no input count, or (for a chat
 * completion) no output count. The tokens read from the provider's cache
 * (`prompt_tokens_details.cached_tokens`, DeepSeek's
 * `prompt_cache_hit_tokens`) and written to it (`cache_creation_input_tokens`,
 * else `prompt_tokens_details.cache_creation_tokens`) are kept when there
 * are some: the provider bills them at other prices.
 */
function usageOf(u: unknown, output: boolean): { input: unknown; cached?: unknown; written?: unknown; output: unknown } | undefined {
  const f = (u ?? {}) as UsageFields;
  const { prompt_tokens: input, completion_tokens: out } = f;
  if (input == null || (output && out == null)) return undefined;
  const cached = f.prompt_tokens_details?.cached_tokens ?? f.prompt_cache_hit_tokens;
  const written = f.cache_creation_input_tokens ?? f.prompt_tokens_details?.cache_creation_tokens;
  return { input, ...(cached != null && cached !== 0 && { cached }), ...(written != null && written !== 0 && { written }), output: output ? out : 0 };
}

/**
 * A chat completion's text (a refusal the model gave instead, as OpenAI
 * returns one in `refusal`; a tool call the model made instead or besides,
 * one `name(arguments)` a line after it) and usage, or what is wrong with it.
 */
function completion(answer: unknown): { text: string; usage?: unknown } | string {
  const a = answer as { choices?: { message?: { content?: unknown; refusal?: unknown; tool_calls?: unknown } }[]; usage?: unknown } | null;
  const message = a?.choices?.[0]?.message;
  const content = message?.content;
  // A refused summary or extraction is what the model said: a memory of its words, not an empty one.
  const refusal = typeof message?.refusal === 'string' && message.refusal ? [message.refusal] : [];
  const calls = Array.isArray(message?.tool_calls) ? (message.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[]) : [];
  if (content !== null && typeof content !== 'string' && !(content === undefined && (calls.length || refusal.length))) return 'the answer has no choices[0].message.content';
  const called = calls.map((c) => `${String(c.function?.name ?? '')}(${String(c.function?.arguments ?? '')})`);
  const usage = usageOf(a?.usage, true);
  return { text: [...(content ? [content] : []), ...refusal, ...called].join('\n'), ...(usage && { usage }) };
}

/** An embedding (stored as base64 float32: a value too large for float32 becomes Infinity, which the check refuses) and usage, or what is wrong with it. */
function embedding(answer: unknown): { vector: string; usage?: unknown } | string {
  const a = answer as { data?: { embedding?: unknown }[]; usage?: unknown } | null;
  const values = a?.data?.[0]?.embedding;
  if (!Array.isArray(values) || !values.length || !values.every((v) => typeof v === 'number')) return 'the answer has no data[0].embedding of numbers';
  const usage = usageOf(a?.usage, false);
  return { vector: encodeVector(values as number[]), ...(usage && { usage }) };
}
