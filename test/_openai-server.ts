import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * A scripted answer instead of the model's: a status with headers and a
 * body, a JSON that does not parse, a stall before the headers, headers and
 * the start of a body that never ends (`stallBody`), or a chat completion of
 * `hugeBytes` bytes streamed in chunks (with `content-length` when
 * `declared`, else chunked), the model's answer with a header of
 * `headerBytes` bytes, bytes written to the socket as they are (`raw`:
 * not HTTP, or a header no server would send) and the socket closed;
 * `{ none: true }` answers as the model does (so a fault can wait for a
 * later request).
 */
export type Fault =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { malformed: true }
  | { stallMs: number }
  | { stallBody: true }
  | { hugeBytes: number; declared?: boolean }
  | { headerBytes: number }
  | { raw: string }
  | { none: true };

/** One request the server took. */
export interface Seen {
  path: string;
  authorization: string | undefined;
  body: { model?: string; messages?: SeenMessage[]; input?: string; max_tokens?: number; tools?: unknown[] };
}

/** A chat message as sent: an upkeep request's, or a probe turn's prompt (with tool calls, tool results). */
export interface SeenMessage {
  role: string;
  content: string | null;
  tool_calls?: { function: { name: string; arguments: string } }[];
}

/**
 * How the chat model answers a probe turn's prompt: `parrot` with the
 * prompt's own text (every message's content and tool calls, joined);
 * `forgetful` with its last user message only; `reversed` with the
 * parrot's text, each line's words in reverse order (a value of several
 * words is there in other words, not as written).
 */
export type AnswerStyle = 'parrot' | 'forgetful' | 'reversed';

/** A judge's grading of a reply: the probe turn's question, the expected value, the reply. */
export type JudgeVerdict = (question: string, value: string, reply: string) => string;

/** The default judge: `Yes.` when every word of the value (letters and digits) is a word of the reply, in any order and case; else `No, it does not.` */
export const wordsJudge: JudgeVerdict = (_question, value, reply) => {
  const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const said = new Set(wordsOf(reply));
  return wordsOf(value).every((w) => said.has(w)) ? 'Yes.' : 'No, it does not.';
};

/**
 * A small OpenAI-compatible server for tests: `/v1/chat/completions` and
 * `/v1/embeddings`, with answers that follow from the request alone (so a
 * recording is reproducible) and `max_tokens` and `usage` counted in words
 * (or as `count` says):
 *
 *  - a summary request (its instruction says "summary") is answered with the
 *    request's lines that hold a digit or an `@`, within `max_tokens`;
 *  - an extraction request with `name: value` for each "my NAME is VALUE" of
 *    its user lines, or `none`;
 *  - an embedding with 8 dimensions counting the words of the input by their
 *    first letter;
 *  - a judge's request (one user message in the words of ctxsim's default
 *    judge prompt) as `judge` says;
 *  - any other chat request (a probe turn's prompt, sent to measure answers)
 *    as `answerStyle` says.
 *
 * `faults` are used up one per request, before any answer.
 */
export class FakeOpenAI {
  /** The API's address, once started (a new one at each start). */
  url = '';
  readonly seen: Seen[] = [];
  readonly faults: Fault[] = [];
  /** Multiplies every `usage` count (a dearer model than the words suggest). */
  usageFactor = 1;
  /** Whether answers report `usage` (some servers report none: the recording then counts the tokens itself). */
  reportsUsage = true;
  /** How the server counts a text's tokens, for `max_tokens` and `usage`: in words, unless a test gives the run's tokenizer. */
  count: (text: string) => number = (text) => words(text).length;
  /** How a probe turn's prompt is answered. */
  answerStyle: AnswerStyle = 'parrot';
  /** How a judge's request (ctxsim's default judge prompt) is answered. */
  judge: JudgeVerdict = wordsJudge;
  /** Connections accepted since the server was made (a run that must not open the network leaves it as it was). */
  connections = 0;
  /** Changes an answer before it is sent (bad usage, vectors of other lengths…); `n` counts the answers sent so far, this one included. */
  tamper: ((answer: Answer, n: number) => Answer) | undefined;
  /** Answers sent (faults included). */
  answered = 0;
  private holding: { left: number; arrived: () => void } | undefined;
  private server: Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();

  /** Starts listening on a free port of 127.0.0.1; returns the base URL (…/v1). */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((ok) => this.server!.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this.url;
  }

  /**
   * Answers `n` more requests, then holds every later one unanswered (until
   * the server stops): the promise resolves when the first held request
   * arrives, so a test acts at a known point of a recording without sleeping.
   */
  holdAfter(n: number): Promise<void> {
    return new Promise((arrived) => {
      this.holding = { left: n, arrived };
    });
  }

  /** Answers every request again (held ones stay unanswered). */
  release(): void {
    this.holding = undefined;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
    this.server = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw || '{}') as Seen['body'];
    this.seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
    if (this.holding && this.holding.left-- <= 0) return this.holding.arrived();
    this.answered++;
    const shifted = this.faults.shift();
    // A padded header goes with the model's own answer.
    if (shifted && 'headerBytes' in shifted) res.setHeader('x-padding', 'a'.repeat(shifted.headerBytes));
    const fault = shifted && ('none' in shifted || 'headerBytes' in shifted) ? undefined : shifted;
    if (fault && 'stallMs' in fault) {
      await new Promise((ok) => setTimeout(ok, fault.stallMs));
      if (res.destroyed) return;
    } else if (fault && 'stallBody' in fault) {
      res.writeHead(200, { 'content-type': 'application/json' }).write('{"choices": [');
      return;
    } else if (fault && 'hugeBytes' in fault) {
      return streamHuge(res, fault.hugeBytes, fault.declared === true);
    } else if (fault && 'raw' in fault) {
      res.socket?.end(fault.raw);
      return;
    } else if (fault && 'malformed' in fault) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices": [');
      return;
    } else if (fault) {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers }).end(JSON.stringify(fault.body ?? { error: { message: `status ${fault.status}`, type: 'test' } }));
      return;
    }
    const json = (value: Answer): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.tamper ? this.tamper(value, this.answered) : value));
    if (req.url === '/v1/embeddings') {
      const input = String(body.input ?? '');
      const n = this.count(input) * this.usageFactor;
      return json({ object: 'list', model: body.model, data: [{ object: 'embedding', index: 0, embedding: embedding(input) }], ...(this.reportsUsage && { usage: { prompt_tokens: n, total_tokens: n } }) });
    }
    if (req.url === '/v1/chat/completions') {
      const messages = body.messages ?? [];
      const graded = judged(messages);
      const text = graded ? this.judge(...graded) : isUpkeep(messages) ? answer(messages, body.max_tokens ?? 100, this.count) : reply(messages, this.answerStyle);
      const input = messages.reduce((n, m) => n + this.count(m.content ?? ''), 0) * this.usageFactor;
      const output = this.count(text) * this.usageFactor;
      return json({
        id: `chatcmpl-${this.seen.length}`,
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        ...(this.reportsUsage && { usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } }),
      });
    }
    res.writeHead(404).end();
  }
}

/** An answer's JSON body: a chat completion or an embedding list. */
export type Answer = Record<string, unknown>;

/** A chat completion whose content is `bytes` bytes of "x", written a megabyte at a time as the client reads (it may hang up first). */
async function streamHuge(res: ServerResponse, bytes: number, declared: boolean): Promise<void> {
  const head = '{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"';
  const tail = '"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}';
  const content = Math.max(0, bytes - head.length - tail.length);
  res.writeHead(200, { 'content-type': 'application/json', ...(declared && { 'content-length': String(head.length + content + tail.length) }) });
  res.write(head);
  const chunk = 'x'.repeat(1 << 20);
  for (let left = content; left > 0 && !res.destroyed; left -= chunk.length) {
    if (!res.write(left >= chunk.length ? chunk : chunk.slice(0, left))) await new Promise((ok) => (res.once('drain', ok), res.once('close', ok)));
  }
  if (!res.destroyed) res.end(tail);
}

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** An upkeep request: an instruction (a summarizer's or an extractor's, or one starting as ctxsim's upkeep requests do), then one user message. */
function isUpkeep(messages: readonly SeenMessage[]): boolean {
  if (messages.length !== 2 || messages[0]!.role !== 'system' || messages[1]!.role !== 'user') return false;
  return /^(Summary so far|New messages|Summary|Messages):/.test(messages[1]!.content ?? '') || /summar|extract/i.test(messages[0]!.content ?? '');
}

/** A message's own text: its content and tool calls. */
const textOf = (m: SeenMessage) => [m.content ?? '', ...(m.tool_calls ?? []).map((c) => `${c.function.name}(${c.function.arguments})`)].filter(Boolean).join('\n');

/** A judge's request in the words of ctxsim's default judge prompt: its question, value and reply. */
function judged(messages: readonly SeenMessage[]): [question: string, value: string, reply: string] | undefined {
  if (messages.length !== 1 || messages[0]!.role !== 'user') return undefined;
  const m = /^A user asked an assistant the question below\. Does the assistant's answer give this value: ([\s\S]*?)\? It may be worded[\s\S]*?\n\nQuestion: ([\s\S]*?)\n\nAnswer: ([\s\S]*)$/.exec(messages[0]!.content ?? '');
  return m ? [m[2]!, m[1]!, m[3]!] : undefined;
}

function reply(messages: readonly SeenMessage[], style: AnswerStyle): string {
  if (style === 'parrot') return messages.map(textOf).join('\n');
  if (style === 'reversed') return messages.map(textOf).join('\n').split('\n').map((l) => words(l).reverse().join(' ')).join('\n');
  return messages.filter((m) => m.role === 'user').pop()?.content ?? '';
}

function answer(messages: readonly SeenMessage[], maxTokens: number, count: (text: string) => number): string {
  const instruction = messages[0]?.content ?? '';
  const body = messages.slice(1).map((m) => m.content).join('\n');
  if (/extract/i.test(instruction)) {
    const found = [...body.matchAll(/\bmy ([a-z ]+?) is ([^\s,.;!?]+(?:@[^\s,;!?]+)?)/gi)].map((m) => `${m[1]!.trim().replace(/\s+/g, '_')}: ${m[2]}`);
    return found.length ? found.join('; ') : 'none';
  }
  const lines = body.split('\n').filter((l) => /\d|@/.test(l) && !/^(Summary so far|New messages|Summary):?$/.test(l));
  return within(words(lines.join(' ')), maxTokens, count) || 'Nothing to note.';
}

/** The longest run of the first words that counts at most `maxTokens`, joined. */
function within(ws: readonly string[], maxTokens: number, count: (text: string) => number): string {
  let [lo, hi] = [0, Math.min(ws.length, maxTokens)];
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(ws.slice(0, mid).join(' ')) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return ws.slice(0, lo).join(' ');
}

function embedding(text: string): number[] {
  const v = Array.from({ length: 8 }, () => 0);
  for (const w of words(text.toLowerCase())) v[w.charCodeAt(0) % 8]! += 1;
  if (!v.some((x) => x > 0)) v[0] = 1;
  return v;
}

/** The server of a test file: started before its tests, stopped after them; `url()` is its address once started. */
export function serverForFile(): { server: FakeOpenAI; url: () => string } {
  const server = new FakeOpenAI();
  beforeAll(() => server.start());
  afterAll(() => server.stop());
  return { server, url: () => server.url };
}
