/**
 * The upkeep endpoint client (src/upkeep/endpoint.ts) against a real local
 * HTTP server (FakeOpenAI): what a chat completion and an embedding send and
 * answer, retries (Retry-After, 5xx, maxRetries; a wait at most the
 * timeout), the timeout over a body that stalls, the limit on a body's size,
 * the cassette's rules applied to what comes in (usage, vectors), and the
 * one-line errors for every failure, which name the endpoint and never the
 * key.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { CtxsimError } from '../src/errors.js';
import { decodeVector, encodeVector, requestKey, type UpkeepRequest } from '../src/upkeep/request.js';
import { openEndpoint, retryWait, type EndpointSettings } from '../src/upkeep/endpoint.js';
import { DEFAULT_PROMPTS, summaryInstruction, summaryRequest } from '../src/upkeep/prompts.js';
import { answerRequest } from '../src/upkeep/answer.js';
import { FakeOpenAI, serverForFile } from './_openai-server.js';

const KEY = 'sk-test-SECRET-4242';
const { server, url } = serverForFile();
beforeEach(() => {
  server.seen.length = 0;
  server.faults.length = 0;
});

const open = (o: Partial<EndpointSettings> = {}) => openEndpoint({ baseURL: url(), apiKey: KEY, apiKeyEnv: 'TEST_KEY', timeoutSeconds: 5, maxRetries: 0, maxResponseBytes: 100_000, ...o });

const chat = summaryRequest(
  'gpt-4o-mini',
  40,
  undefined,
  [
    { role: 'user', content: 'My order is SE-10423, email kavya@example.com' },
    { role: 'assistant', content: 'Thanks, looking.' },
  ],
  DEFAULT_PROMPTS.summary,
);
const embed: UpkeepRequest = { kind: 'embed', model: 'text-embedding-3-small', input: 'alpha beta apple cherry' };
/** A small chat request (model "m") for the failure tests. */
const small: UpkeepRequest = { kind: 'summary', model: 'm', messages: [{ role: 'system', content: 'summary' }, { role: 'user', content: 'order 1' }], maxTokens: 5 };

/** The error `p` rejects with (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<CtxsimError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(CtxsimError);
  return e as CtxsimError;
}

describe('upkeep endpoint: answers', () => {
  it('a chat request answers with its key, kind, model, the server text and usage; sends max_tokens, temperature 0, the messages and the key', async () => {
    const ask = await open();
    const answer = await ask(chat);
    // The fake answers a summary with the request's lines holding a digit or "@"; usage counts words.
    const text = 'user: My order is SE-10423, email kavya@example.com';
    const system = summaryInstruction(40).content;
    expect(system.split(/\s+/).length).toBe(30);
    expect(answer).toEqual({ key: requestKey(chat), kind: 'summary', model: 'gpt-4o-mini', text, usage: { input: 30 + 12, output: 7 } });
    expect(Object.keys(answer)).toEqual(['key', 'kind', 'model', 'text', 'usage']);

    expect(server.seen).toHaveLength(1);
    const seen = server.seen[0]!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: `New messages:\nuser: My order is SE-10423, email kavya@example.com\nassistant: Thanks, looking.` },
      ],
      max_tokens: 40,
      temperature: 0,
    });
  });

  it("maps usage prompt_tokens → input and completion_tokens → output, whatever the server's text", async () => {
    server.faults.push({ status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'Kavya, SE-10423.' } }], usage: { prompt_tokens: 17, completion_tokens: 3, total_tokens: 20 } } });
    const answer = await (await open())(small);
    expect(answer).toEqual({ key: requestKey(small), kind: 'summary', model: 'm', text: 'Kavya, SE-10423.', usage: { input: 17, output: 3 } });
  });

  it('an embedding answers with the base64 float32 vector of the server numbers, usage output 0; sends encoding_format float', async () => {
    const answer = await (await open())(embed);
    // words by first letter % 8: a(97) → 1 twice, b(98) → 2, c(99) → 3
    const values = [0, 2, 1, 1, 0, 0, 0, 0];
    expect(answer).toEqual({ key: requestKey(embed), kind: 'embed', model: 'text-embedding-3-small', vector: encodeVector(values), usage: { input: 4, output: 0 } });
    expect(Array.from(decodeVector(answer.vector!))).toEqual(values);
    expect(server.seen).toHaveLength(1);
    expect(server.seen[0]!.path).toBe('/v1/embeddings');
    expect(server.seen[0]!.body).toEqual({ model: 'text-embedding-3-small', input: 'alpha beta apple cherry', encoding_format: 'float' });
  });

  it('a response without usage answers without usage (the recorder fills it in)', async () => {
    server.faults.push(
      { status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'Short.' } }] } },
      // output tokens missing on a chat completion: no usage either
      { status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'Short.' } }], usage: { prompt_tokens: 9 } } },
      { status: 200, body: { data: [{ index: 0, embedding: [0.5, -1] }] } },
    );
    const ask = await open();
    const a = await ask(small);
    expect(Object.keys(a)).toEqual(['key', 'kind', 'model', 'text']);
    expect(a.text).toBe('Short.');
    expect(Object.keys(await ask(small))).toEqual(['key', 'kind', 'model', 'text']);
    const e = await ask(embed);
    expect(Object.keys(e)).toEqual(['key', 'kind', 'model', 'vector']);
    expect(Array.from(decodeVector(e.vector!))).toEqual([0.5, -1]);
  });

  it('an embedding usage with prompt_tokens only is input tokens, output 0', async () => {
    server.faults.push({ status: 200, body: { data: [{ index: 0, embedding: [1] }], usage: { prompt_tokens: 6 } } });
    expect((await (await open())(embed)).usage).toEqual({ input: 6, output: 0 });
  });

  it('a null content is the empty text', async () => {
    server.faults.push({ status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: null } }], usage: { prompt_tokens: 2, completion_tokens: 0 } } });
    expect(await (await open())(small)).toEqual({ key: requestKey(small), kind: 'summary', model: 'm', text: '', usage: { input: 2, output: 0 } });
  });

  it('a refusal is the text: a refused summary is what the model said, not an empty memory', async () => {
    server.faults.push(
      { status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: "I can't summarize that." } }], usage: { prompt_tokens: 9, completion_tokens: 5 } } },
      { status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', refusal: 'No.' } }], usage: { prompt_tokens: 9, completion_tokens: 1 } } },
    );
    const ask = await open();
    expect((await ask(small)).text).toBe("I can't summarize that.");
    expect((await ask(small)).text).toBe('No.');
  });

  it('reads the tokens the provider billed from its cache: read (OpenAI, DeepSeek) and written (Anthropic through LiteLLM), part of the input', async () => {
    const answer = (usage: Record<string, unknown>) => ({ status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'S.' } }], usage: { prompt_tokens: 1500, completion_tokens: 3, ...usage } } });
    server.faults.push(
      answer({ prompt_tokens_details: { cached_tokens: 1280, audio_tokens: 0 } }),
      answer({ prompt_cache_hit_tokens: 1024, prompt_cache_miss_tokens: 476 }),
      answer({ prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 1200 }, cache_creation_input_tokens: 1200, cache_read_input_tokens: 0 }),
      answer({ prompt_tokens_details: { cached_tokens: 0 }, cache_creation_input_tokens: null }),
    );
    const ask = await open();
    const usages = [];
    for (let i = 0; i < 4; i++) usages.push((await ask(small)).usage);
    expect(usages).toEqual([
      { input: 1500, cached: 1280, output: 3 },
      { input: 1500, cached: 1024, output: 3 },
      { input: 1500, written: 1200, output: 3 },
      { input: 1500, output: 3 },
    ]);
  });

  it('cached tokens must be whole counts within the input: the error names the field of the answer', async () => {
    server.faults.push({ status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'S.' } }], usage: { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 11 } } } });
    const e = await rejection((await open())(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: usage.prompt_tokens_details.cached_tokens: cached and written tokens are part of the input tokens: together at most input, got 11`);
  });

  it('a probe turn’s prompt is sent as the policy made it, tools included; a tool call in the reply is its text', async () => {
    const request = answerRequest(
      'gpt-4o-mini',
      [
        { role: 'system', content: 'You help with orders.' },
        { role: 'user', content: 'Where is SE-10423?', name: 'kavya' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"id":"SE-10423"}' }] },
        { role: 'tool', content: '{"status":"late"}', toolCallId: 'c1' },
        { role: 'system', content: 'Summary: the user is Kavya.', origin: 'summary', turn: 2 },
      ],
      [{ name: 'lookup', description: 'find an order', parameters: { type: 'object', properties: { id: { type: 'string' } } } }],
    );
    server.faults.push({ status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'lookup', arguments: '{"id":"SE-10423"}' } }] } }], usage: { prompt_tokens: 40, completion_tokens: 9 } } });
    const answer = await (await open())(request);
    expect(answer).toEqual({ key: requestKey(request), kind: 'answer', model: 'gpt-4o-mini', text: 'lookup({"id":"SE-10423"})', usage: { input: 40, output: 9 } });
    const body = server.seen[0]!.body as Record<string, unknown>;
    expect(body.messages).toEqual([
      { role: 'system', content: 'You help with orders.' },
      { role: 'user', content: 'Where is SE-10423?', name: 'kavya' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"id":"SE-10423"}' } }] },
      { role: 'tool', content: '{"status":"late"}', tool_call_id: 'c1' },
      { role: 'system', content: 'Summary: the user is Kavya.' },
    ]);
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'lookup', description: 'find an order', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }]);
    expect([body.max_tokens, body.temperature]).toEqual([500, 0]);
    // The key is a hash of what is sent: the tools are part of it.
    expect(requestKey({ ...request, tools: [] })).not.toBe(requestKey(request));
  });

  it('without a key the client sends the placeholder "none"', async () => {
    await (await open({ apiKey: undefined }))(small);
    expect(server.seen[0]!.authorization).toBe('Bearer none');
  });
});

describe('upkeep endpoint: retries', () => {
  it('429 with Retry-After: 1 waits a second (not the ~0.5 s default backoff), then answers', async () => {
    server.faults.push({ status: 429, headers: { 'Retry-After': '1' } });
    const ask = await open({ maxRetries: 2 });
    const start = Date.now();
    const answer = await ask(small);
    const elapsed = Date.now() - start;
    expect(answer.text).toBe('order 1');
    expect(server.seen).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(900);
  });

  it('500 twice then success with maxRetries 2 answers after 3 requests', async () => {
    const fast = { 'retry-after-ms': '10' }; // keeps the test fast; the retry count is what is tested
    server.faults.push({ status: 500, headers: fast }, { status: 500, headers: fast });
    const answer = await (await open({ maxRetries: 2 }))(small);
    expect(answer.text).toBe('order 1');
    expect(server.seen).toHaveLength(3);
  });

  it('500 twice with maxRetries 1 fails after 2 tries', async () => {
    const fast = { 'retry-after-ms': '10' };
    server.faults.push({ status: 500, headers: fast }, { status: 500, headers: fast });
    const e = await rejection((await open({ maxRetries: 1 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: 500 (status 500) after 2 tries`);
    expect(server.seen).toHaveLength(2);
  });

  it('503 with maxRetries 0 fails at once, naming the base URL and the status', async () => {
    server.faults.push({ status: 503 });
    const e = await rejection((await open({ maxRetries: 0 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: 503 (status 503) after 1 try`);
    expect(e.code).toBe('upkeep-endpoint');
    expect(e.exitCode).toBe(2);
    expect(server.seen).toHaveLength(1);
  });

  it('400 is not retried and does not say "after"', async () => {
    server.faults.push({ status: 400, body: { error: { message: 'bad max_tokens\nsecond line', type: 'invalid_request_error' } } });
    const e = await rejection((await open({ maxRetries: 2 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: 400 (bad max_tokens)`);
    expect(server.seen).toHaveLength(1);
  });
});

describe('upkeep endpoint: failures', () => {
  it('401 names the status and the key variable, never the key even when the server echoes it; not retried', async () => {
    server.faults.push({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}. Check ${KEY}`, type: 'invalid_request_error' } } });
    const e = await rejection((await open({ maxRetries: 2 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: 401 (Incorrect API key provided: ***. Check ***): check the key in TEST_KEY`);
    expect(e.message).not.toContain(KEY);
    expect(e.exitCode).toBe(2);
    expect(server.seen).toHaveLength(1);
  });

  it('401 with a piece of the key quoted (its first 8 characters, all but its last 3, a piece of its middle): every piece of 8 characters or more is masked, shorter ones are not', async () => {
    const key = 'sk-proj-Zq81mXbT0dVa77LpQeRc';
    const quoted = `Incorrect API key provided: ${key.slice(0, 8)}****${key.slice(-4)}; also ${key.slice(0, -3)}; the middle ${key.slice(9, 19)}; a short ${key.slice(9, 16)}`;
    server.faults.push({ status: 401, body: { error: { message: quoted, type: 'invalid_request_error' } } });
    const e = await rejection((await open({ apiKey: key }))(small));
    // "sk-proj-" (8) then the server's own "****"; "QeRc" (4) and "q81mXbT" (7) are too short to mask.
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: 401 (Incorrect API key provided: *******QeRc; also ***; the middle ***; a short q81mXbT): check the key in TEST_KEY`);
  });

  it('a piece of the key in the body of another error, and the key in the base URL, are masked too', async () => {
    const key = 'sk-live-0123456789abcdef';
    server.faults.push({ status: 400, body: { error: { message: `model m is not available to key ending 456789abcdef` } } });
    const e = await rejection((await open({ apiKey: key, baseURL: `${url()}?k=${key}` }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}?k=***: summary by m: 400 (model m is not available to key ending ***)`);
  });

  it('403 is told like 401', async () => {
    server.faults.push({ status: 403, body: { error: { message: 'no access' } } });
    const e = await rejection((await open())(embed));
    expect(e.message).toBe(`upkeep endpoint ${url()}: embedding by text-embedding-3-small: 403 (no access): check the key in TEST_KEY`);
  });

  it('a stall longer than the timeout (0.3 s, maxRetries 0) says no answer within 0.3 s, given up near the timeout', async () => {
    // A stall far longer than the timeout: given up well before it ends, however busy the machine.
    server.faults.push({ stallMs: 6000 });
    const ask = await open({ timeoutSeconds: 0.3, maxRetries: 0 });
    const start = Date.now();
    const e = await rejection(ask(small));
    const elapsed = Date.now() - start;
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: no answer within 0.3 s (1 try)`);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(5000);
    expect(server.seen).toHaveLength(1);
  });

  it('a body that is not JSON says so', async () => {
    server.faults.push({ malformed: true });
    const e = await rejection((await open())(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: the answer is not valid JSON (Unexpected end of JSON input)`);
    expect(e.code).toBe('upkeep-endpoint');
  });

  it('an answer without content or embedding says what is missing', async () => {
    server.faults.push({ status: 200, body: { choices: [] } }, { status: 200, body: { data: [{ embedding: [] }] } });
    const ask = await open();
    expect((await rejection(ask(small))).message).toBe(`upkeep endpoint ${url()}: summary by m: the answer has no choices[0].message.content`);
    expect((await rejection(ask(embed))).message).toBe(`upkeep endpoint ${url()}: embedding by text-embedding-3-small: the answer has no data[0].embedding of numbers`);
  });

  it('connection refused (a stopped server, maxRetries 0) says cannot connect', async () => {
    const gone = new FakeOpenAI();
    const at = await gone.start();
    await gone.stop();
    const e = await rejection((await open({ baseURL: at, maxRetries: 0 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${at}: summary by m: cannot connect (1 try): is the server running at this address?`);
    expect(e.code).toBe('upkeep-endpoint');
  });
});

describe('upkeep endpoint: headers', () => {
  it('a header larger than Node\'s limit (16 KiB) says so, not "cannot connect"; not retried (the server would send it again)', async () => {
    server.faults.push({ headerBytes: 100_000 });
    const e = await rejection((await open({ maxRetries: 2 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: the answer's headers are larger than 16384 bytes, Node's limit (NODE_OPTIONS=--max-http-header-size=BYTES raises it)`);
    expect(server.seen).toHaveLength(1);
    // A header just under the limit is read.
    expect((await (await open())(small)).kind).toBe('summary');
    server.faults.push({ headerBytes: 15_000 });
    expect((await (await open())(small)).kind).toBe('summary');
  });

  it('an answer that is not HTTP (a bad status line, a bad Content-Length) says what the parser found; not retried', async () => {
    server.faults.push({ raw: 'HTTX/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}' });
    const e = await rejection((await open({ maxRetries: 2 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: the answer is not valid HTTP (Response does not match the HTTP/1.1 protocol (Expected HTTP/))`);
    server.faults.push({ raw: 'HTTP/1.1 200 OK\r\ncontent-length: 2x\r\n\r\n{}' });
    const cl = await rejection((await open({ maxRetries: 2 }))(small));
    expect(cl.message).toBe(`upkeep endpoint ${url()}: summary by m: the answer is not valid HTTP (Response does not match the HTTP/1.1 protocol (Invalid character in Content-Length))`);
    expect(server.seen).toHaveLength(2);
  });
});

describe('upkeep endpoint: waits are bounded', () => {
  it('a wait is what Retry-After asks (seconds, an HTTP date, retry-after-ms), at most the timeout; else 0.5 s doubling up to 8 s', () => {
    const h = (headers: Record<string, string>) => new Headers(headers);
    const now = Date.parse('2025-03-12T09:00:00Z');
    expect(retryWait(h({ 'retry-after': '2' }), 1, 60_000, now)).toBe(2000);
    expect(retryWait(h({ 'retry-after': '100000' }), 1, 60_000, now)).toBe(60_000);
    expect(retryWait(h({ 'retry-after': 'Wed, 12 Mar 2025 09:00:10 GMT' }), 1, 60_000, now)).toBe(10_000);
    expect(retryWait(h({ 'retry-after': 'Thu, 13 Mar 2025 09:00:00 GMT' }), 1, 2000, now)).toBe(2000);
    expect(retryWait(h({ 'retry-after': 'Tue, 11 Mar 2025 09:00:00 GMT' }), 1, 2000, now)).toBe(0);
    expect(retryWait(h({ 'retry-after-ms': '250', 'retry-after': '9' }), 1, 60_000, now)).toBe(250);
    expect(retryWait(h({ 'retry-after-ms': '100000000' }), 1, 3000, now)).toBe(3000);
    // Unreadable or negative: the backoff.
    expect([1, 2, 3, 4, 5, 6].map((t) => retryWait(h({ 'retry-after': 'soon' }), t, 60_000, now))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(retryWait(h({ 'retry-after': '-5' }), 2, 60_000, now)).toBe(1000);
    expect(retryWait(undefined, 3, 1500, now)).toBe(1500);
  });

  it('Retry-After of 100000 s, a day ahead or 1e8 ms waits the timeout (1 s) each time: 4 tries end within seconds, not days', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toUTCString();
    server.faults.push({ status: 429, headers: { 'Retry-After': '100000' } }, { status: 503, headers: { 'Retry-After': tomorrow } }, { status: 429, headers: { 'retry-after-ms': '100000000' } });
    const start = Date.now();
    const answer = await (await open({ timeoutSeconds: 1, maxRetries: 3 }))(small);
    const elapsed = Date.now() - start;
    expect(answer.text).toBe('order 1');
    expect(server.seen).toHaveLength(4);
    // Three waits of the timeout (not none, not the asked ones): at most timeout × retries in all, with room for a busy machine.
    expect(elapsed).toBeGreaterThanOrEqual(2500);
    expect(elapsed).toBeLessThan(60_000);
  });

  it('the last try is not waited for: 429 with a long Retry-After and no retries left fails at once', async () => {
    server.faults.push({ status: 429, headers: { 'Retry-After': '100000' } }, { status: 429, headers: { 'Retry-After': '100000' } });
    const start = Date.now();
    const e = await rejection((await open({ timeoutSeconds: 1, maxRetries: 1 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: 429 (status 429) after 2 tries`);
    expect(Date.now() - start).toBeLessThan(60_000);
  });

  it('a server that sends its headers and never finishes the body is cut by the timeout, each try', async () => {
    server.faults.push({ stallBody: true }, { stallBody: true });
    const start = Date.now();
    const e = await rejection((await open({ timeoutSeconds: 0.5, maxRetries: 1 }))(small));
    expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: no answer within 0.5 s (2 tries)`);
    expect(server.seen).toHaveLength(2);
    expect(Date.now() - start).toBeLessThan(60_000);
  });
});

describe('upkeep endpoint: what comes in', () => {
  it('a body over maxResponseBytes is refused as it streams in (chunked or declared), not retried, never exit 70', async () => {
    for (const declared of [false, true]) {
      server.seen.length = 0;
      server.faults.push({ hugeBytes: 100_000_000, declared });
      const start = Date.now();
      const e = await rejection((await open({ maxRetries: 2, maxResponseBytes: 100_000 }))(small));
      expect(e.message).toBe(`upkeep endpoint ${url()}: summary by m: the answer is larger than maxResponseBytes (100000 bytes)`);
      expect(e.exitCode).toBe(2);
      expect(server.seen).toHaveLength(1);
      expect(Date.now() - start).toBeLessThan(60_000);
    }
    // Within the limit, the same kind of answer is taken.
    server.faults.push({ hugeBytes: 90_000 });
    expect((await (await open({ maxResponseBytes: 100_000 }))(small)).text).toMatch(/^x{80000,}$/);
  });

  it('usage must be whole token counts from 0 to 1e9: the error names the endpoint, the request, the field and the value', async () => {
    const reply = (usage: Record<string, unknown>) => ({ status: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }], usage } });
    server.faults.push(
      reply({ prompt_tokens: 1e308, completion_tokens: 1 }),
      reply({ prompt_tokens: -3, completion_tokens: 1 }),
      reply({ prompt_tokens: 3, completion_tokens: 2.5 }),
      reply({ prompt_tokens: '12', completion_tokens: 1 }),
      reply({ prompt_tokens: 1_000_000_001, completion_tokens: 0 }),
      { status: 200, body: { data: [{ embedding: [1, 2] }], usage: { prompt_tokens: 1e308 } } },
    );
    const ask = await open();
    const at = `upkeep endpoint ${url()}: summary by m:`;
    expect((await rejection(ask(small))).message).toBe(`${at} usage.prompt_tokens: expected a number ≤ 1000000000, got 1e+308`);
    expect((await rejection(ask(small))).message).toBe(`${at} usage.prompt_tokens: expected a number ≥ 0, got -3`);
    expect((await rejection(ask(small))).message).toBe(`${at} usage.completion_tokens: expected a whole number, got number 2.5`);
    expect((await rejection(ask(small))).message).toBe(`${at} usage.prompt_tokens: expected number, got string "12"`);
    expect((await rejection(ask(small))).message).toBe(`${at} usage.prompt_tokens: expected a number ≤ 1000000000, got 1000000001`);
    const e = await rejection(ask(embed));
    expect(e.message).toBe(`upkeep endpoint ${url()}: embedding by text-embedding-3-small: usage.prompt_tokens: expected a number ≤ 1000000000, got 1e+308`);
    expect(e.exitCode).toBe(2);
  });

  it('an embedding value beyond float32 (stored as Infinity) is refused at its index', async () => {
    server.faults.push({ status: 200, body: { data: [{ embedding: [0.5, 1e39, 2] }] } }, { status: 200, body: { data: [{ embedding: [-1e39] }] } });
    const ask = await open();
    expect((await rejection(ask(embed))).message).toBe(`upkeep endpoint ${url()}: embedding by text-embedding-3-small: data[0].embedding[1]: Infinity as float32: every value must be a finite number`);
    expect((await rejection(ask(embed))).message).toBe(`upkeep endpoint ${url()}: embedding by text-embedding-3-small: data[0].embedding[0]: -Infinity as float32: every value must be a finite number`);
  });
});
