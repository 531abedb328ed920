import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { MessageChannel, parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { z } from 'zod';
import { valueOf } from '../text/zod.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { Overhead } from '../tokens/encoding.js';
import type { Vector } from '../upkeep/embedder.js';
import type { ExtractRequest } from '../upkeep/extractor.js';
import type { ForgetSummaryRequest, SummarizeRequest } from '../upkeep/summarizer.js';
import type { Upkeep } from '../upkeep/upkeep.js';
import { describeThrown, isPromise, refuseExit } from './module-calls.js';
import {
  CALLER_POSTED,
  HOST_READY,
  HOST_POSTED,
  MAX_PLAN_MESSAGES,
  MessageTable,
  moduleCallPlace,
  SESSION_METHODS,
  type Answer,
  type Callback,
  type Given,
  type HostConnect,
  type HostSetup,
  type LinkReply,
  type LinkRequest,
  type ModuleDescription,
  type ModuleFault,
  type ResolvedVariants,
  type StartValue,
  type WireDeps,
  type WireMessage,
} from './module-link.js';
import { COMMON_PARAMS, defaultOf, paramMeta, paramsFromTable, policyParams } from './params.js';
import { resolvePolicy } from './spec.js';
import type { ParamSpec, ParamTable, Policy, PolicyDeps, SessionStart } from './types.js';

/**
 * The thread a policy module runs on (see module-link.ts): its import, its
 * policy's parameters, `start` and every session call, and what they
 * return or throw, read and cloned here while the call is timed. No
 * built-in policy runs here, and nothing reaches this thread but what a
 * policy is given: the module may change this thread's globals, listen on
 * its `parentPort` or start timers and workers, and none of it reaches the
 * replay; the run ends this thread, and all it started, when it is over.
 * What it writes to its stdout and stderr goes to the run's stderr.
 */

const setup = workerData as HostSetup;
const MB = 1024 * 1024;

// A policy must not end the run: here `process.exit` throws, in a call or in a timer a module started.
process.exit = refuseExit;

parentPort!.once('message', ({ port, signal, faults, output }: HostConnect) => {
  // The link's port came this way, and nothing else will: a module listening on parentPort hears nothing, and what it posts goes nowhere.
  parentPort!.close();
  writeTo(output);
  // What sessions need is loaded before the thread serves: a module's limits do not count it.
  const serve = () => new Host(port, signal, faults).serve();
  if (setup.task === 'replay') void loadSessionParts().then(serve);
  else serve();
});

/** What a session's deps are made of, loaded by a thread that replays (a thread that describes a module needs none of it). */
interface SessionParts {
  LinkedTokens: ReturnType<typeof linkedTokens>;
  simulatedUpkeep: typeof import('../upkeep/upkeep.js').simulatedUpkeep;
  blocks: typeof import('./blocks.js').blocks;
  seededStream: typeof import('./stream.js').seededStream;
}

let parts: SessionParts | undefined;

async function loadSessionParts(): Promise<void> {
  const [counter, upkeep, b, stream] = await Promise.all([import('../tokens/counter.js'), import('../upkeep/upkeep.js'), import('./blocks.js'), import('./stream.js')]);
  parts = { LinkedTokens: linkedTokens(counter.TokenCounter), simulatedUpkeep: upkeep.simulatedUpkeep, blocks: b.blocks, seededStream: stream.seededStream };
}

/**
 * What this thread writes to its stdout and stderr (a module's console)
 * goes to `output` as it is written. A worker thread's own stdout sends a
 * chunk only once the caller has taken the one before, and the run ends
 * this thread when it is over: what it wrote last would be lost. A message
 * posted is the caller's at once, and read even after this thread ends.
 */
function writeTo(output: MessagePort): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((e?: Error | null) => void), done?: (e?: Error | null) => void) => {
      output.postMessage(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : Buffer.from(chunk));
      const callback = typeof encoding === 'function' ? encoding : done;
      if (callback) process.nextTick(callback);
      return true;
    }) as typeof stream.write;
  }
}

/** What the caller's upkeep threw at a request of this thread (a cassette's miss): thrown into the module, and told back as the caller's own. */
class CallerError extends Error {}

/** A module's call went past a limit checked here (the size of a plan). */
class LimitError extends Error {}

/** A session on this thread: what `start` returned, and its methods as they were when it returned. */
interface HostSession {
  value: object;
  methods: Partial<Record<(typeof SESSION_METHODS)[number], (...args: unknown[]) => unknown>>;
  /** Its module (by index) and scenario, and the last turn it was told of: where its calls are. */
  module: number;
  scenario: string;
  turn: number;
}

/** The longest this thread waits for a call without giving its event loop a turn, in ms. */
const TURN_MS = 20;

/** The fields of a plan, in order (a plan crosses as these alone). */
const PLAN_KEYS = ['messages', 'overBudget', 'upkeep', 'stablePrefix'] as const;

class Host {
  private readonly signal: Int32Array;
  private readonly table = new MessageTable(-1);
  private readonly policies = new Map<number, Policy>();
  private sessions = new Map<number, HostSession>();
  private nextSession = 1;
  /** One counter per counter of the caller's (by its id): each text counted once per scenario, asked of the caller. */
  private readonly counters = new Map<string, InstanceType<SessionParts['LinkedTokens']>>();
  /** The simulated embeddings of a scenario's texts, shared by its sessions. */
  private embeddings = new Map<string, Vector>();
  /** A request is being answered: only then may this thread ask the caller (who waits for it). */
  private busy = false;
  /** Where the last call answered was, as a limit's message names it (module-link.ts `moduleCallPlace`). */
  private last: string | undefined;

  /** A fault of the module's was told: nothing more is answered. */
  private faulted = false;

  constructor(
    private readonly port: MessagePort,
    signal: SharedArrayBuffer,
    private readonly faults: MessagePort,
  ) {
    this.signal = new Int32Array(signal);
  }

  serve(): void {
    // The host's own code is loaded: a module's limits start from here (module-link.ts `HOST_READY`).
    Atomics.store(this.signal, HOST_READY, 1);
    Atomics.notify(this.signal, HOST_READY);
    // What a module throws outside its calls (from a timer, a promise it let fail) ends the run, named at the call it came after.
    process.on('uncaughtException', (e) => this.fault('threw', describeThrown(e)));
    process.on('unhandledRejection', (e) => this.fault('threw', describeThrown(e)));
    // Between calls too, what a module holds outside its heap is watched (a timer may allocate it).
    // The watch also keeps this thread alive until the run ends it, whatever the thread that calls does meanwhile.
    setInterval(() => {
      const over = offHeap();
      if (over) this.fault('memory', over);
    }, 100);
    this.listen();
  }

  /**
   * Waits for the next request on the link's shared integers (a quicker
   * wake than the event loop's) and answers it, then gives the event loop a
   * turn: what a call left behind (a promise it let fail, a timer due, the
   * watch above) is seen before the next call. While none comes, the event
   * loop gets a turn every `TURN_MS`. A request answered later (an import)
   * is waited for.
   */
  private listen(): void {
    const next = () => setImmediate(() => this.listen());
    const until = performance.now() + TURN_MS;
    for (;;) {
      const seen = Atomics.load(this.signal, CALLER_POSTED);
      const got = receiveMessageOnPort(this.port);
      if (got) {
        const pending = this.handle(got.message as LinkRequest);
        if (pending) void pending.then(next);
        else next();
        return;
      }
      const left = until - performance.now();
      if (left <= 0) break;
      Atomics.wait(this.signal, CALLER_POSTED, seen, left);
    }
    next();
  }

  /**
   * A module's fault outside its calls: told to the run's thread, which ends
   * the run, and as the reply to the call the caller waits for (or its next);
   * this thread answers nothing more.
   */
  private fault(what: ModuleFault['fault'], message: string): void {
    if (this.faulted) return;
    this.faulted = true;
    const fault: ModuleFault = { fault: what, message, ...(this.last !== undefined && { where: this.last }) };
    this.faults.postMessage(fault);
    this.post({ kind: 'fault', ...fault });
  }

  /** Answers a request: at once, or (an import) with the promise of its reply. */
  private handle(r: LinkRequest): Promise<void> | undefined {
    if (this.faulted) return undefined;
    if (r.kind === 'next-scenario') {
      this.nextScenario();
      return undefined;
    }
    this.busy = true;
    let reply: LinkReply | Promise<LinkReply>;
    try {
      reply = this.reply(r);
    } catch (e) {
      // What a call threw: reading it may run the module's getters, here, within the call's time.
      reply = thrownReply(e);
    }
    if (!(reply instanceof Promise)) return this.answered(reply);
    return reply.then(
      (x) => this.answered(x),
      (e: unknown) => this.answered(thrownReply(e)),
    );
  }

  /** Posts a call's reply, or the limit it went past. */
  private answered(reply: LinkReply): undefined {
    this.busy = false;
    const over = offHeap();
    if (over && reply.kind !== 'failed') reply = { kind: 'limit', message: over };
    // A limit ends the run: the watch between calls has nothing more to tell.
    if (reply.kind === 'limit') this.faulted = true;
    this.post(reply);
    return undefined;
  }

  /** Posts a reply (cloned now, within the call's time); one that cannot be cloned (a proxy, a function) is what the module returned that cannot be read. */
  private post(reply: LinkReply): void {
    try {
      this.port.postMessage(reply);
    } catch (e) {
      this.port.postMessage({ kind: 'unreadable', message: describeThrown(e) } satisfies LinkReply);
    }
    Atomics.add(this.signal, HOST_POSTED, 1);
    Atomics.notify(this.signal, HOST_POSTED);
  }

  private reply(r: Exclude<LinkRequest, { kind: 'next-scenario' }>): LinkReply | Promise<LinkReply> {
    switch (r.kind) {
      case 'describe':
        return this.describe(r.given, r.contract);
      case 'load':
        return importPolicy(r.module).then((loaded): LinkReply => {
          if (typeof loaded === 'string') return { kind: 'failed', message: loaded };
          this.policies.set(r.module, loaded);
          return { kind: 'value', value: true };
        });
      case 'start':
        return { kind: 'value', value: this.start(r) };
      case 'prompt': {
        const plan = this.call(r.session, 'prompt', [r.pending.map((w) => this.table.in(w, true)), frozen(r.info)], r.info.turn.index);
        if (isPromise(plan)) return promised(plan);
        try {
          return { kind: 'value', value: this.planOut(plan) };
        } catch (e) {
          return e instanceof LimitError ? { kind: 'limit', message: e.message } : { kind: 'unreadable', message: describeThrown(e) };
        }
      }
      case 'commit':
        return valueReply(this.call(r.session, 'commit', [r.exchange.map((w) => this.table.in(w, true)), frozen(r.info)], r.info.turn.index));
      case 'forget':
        return valueReply(this.call(r.session, 'forget', [r.facts, frozen(r.info)], r.info.afterTurn));
      case 'artifacts':
        return valueReply(this.call(r.session, 'artifacts', []));
    }
  }

  /** Imports the module and tells what the main thread needs of its policy: id, line, parameters, and the variants of each set of parameters asked. */
  private async describe(given: readonly Given[], contract: boolean): Promise<LinkReply> {
    // The contract check's variants, loaded before the time limit starts.
    const checker = contract ? await import('./contract/checker.js') : undefined;
    const imported = importedFiles();
    // The describing thread times the import from here.
    this.port.postMessage({ kind: 'ready' });
    const policy = await importPolicy(0);
    if (typeof policy === 'string') return { kind: 'failed', message: policy };
    const files = imported();
    this.port.postMessage({ kind: 'imported' });
    const shown = setup.modules[0]!.shown;
    let description: ModuleDescription;
    try {
      const resolve = (g: Given): ResolvedVariants => {
        const r = resolvePolicy(policy, g);
        return typeof r === 'string' ? r : r.map((v) => ({ name: v.name, params: v.params }));
      };
      const sets = checker ? checker.contractVariants(policy).map((v) => ({ given: v, variants: resolve(Object.entries(v)) })) : undefined;
      description = { id: policy.id, describe: policy.describe, params: paramTable(policy), resolved: given.map(resolve), files, ...(sets && { contract: sets }) };
    } catch (e) {
      return { kind: 'failed', message: `policy module ${shown}: its parameters cannot be read: ${describeThrown(e)}` };
    }
    return { kind: 'value', value: description };
  }

  private start(r: Extract<LinkRequest, { kind: 'start' }>): StartValue {
    const policy = this.policies.get(r.module);
    if (!policy) throw new Error(`module ${r.module} is not loaded`);
    this.last = moduleCallPlace({ file: setup.modules[r.module]!.shown, id: policy.id }, 'start', 0, r.start.id);
    const { system, ...rest } = r.start;
    const start = { ...rest, system: Object.freeze(system.map((w) => this.table.in(w, true))) } as SessionStart;
    if (start.toolDefs) deepFreeze(start.toolDefs);
    const s: unknown = policy.start(Object.freeze(start), r.params, this.deps(r.deps));
    const methods = {} as StartValue['methods'];
    if (isPromise(s)) {
      promised(s);
      return { session: 0, shape: 'promise', methods };
    }
    if (typeof s !== 'object' || s === null) return { session: 0, shape: s === null ? 'null' : typeof s, methods };
    // A session is read once, inside `start`'s call: a method a getter hides throws there.
    const session: HostSession = { value: s, methods: {}, module: r.module, scenario: r.start.id, turn: 0 };
    for (const name of SESSION_METHODS) {
      const f = (s as Record<string, unknown>)[name];
      methods[name] = f === null ? 'null' : typeof f;
      if (typeof f === 'function') session.methods[name] = f as (...args: unknown[]) => unknown;
    }
    const id = this.nextSession++;
    this.sessions.set(id, session);
    return { session: id, shape: 'object', methods };
  }

  /** A session method's call, told of turn `turn` (artifacts: the last it was told of). */
  private call(session: number, name: (typeof SESSION_METHODS)[number], args: unknown[], turn?: number): unknown {
    const s = this.sessions.get(session);
    const f = s?.methods[name];
    if (!s || !f) throw new Error(`no session ${session} with ${name}`);
    if (turn !== undefined) s.turn = turn;
    this.last = moduleCallPlace({ file: setup.modules[s.module]!.shown, id: this.policies.get(s.module)!.id }, name, s.turn, s.scenario);
    return f.apply(s.value, args);
  }

  /** A plan as it crosses: its fields alone, its messages numbered; one of more messages than a prompt may hold is refused. */
  private planOut(plan: unknown): { plan: unknown; messages?: WireMessage[] } {
    if (typeof plan !== 'object' || plan === null) return { plan };
    const out: Record<string, unknown> = {};
    for (const k of PLAN_KEYS) {
      const v = (plan as Record<string, unknown>)[k];
      if (v !== undefined || k in plan) out[k] = v;
    }
    const list = out.messages;
    if (!Array.isArray(list)) return { plan: out };
    if (list.length > MAX_PLAN_MESSAGES) throw new LimitError(`its plan holds ${list.length} messages, more than a prompt may hold (${MAX_PLAN_MESSAGES})`);
    // Put back by the caller, in its place.
    out.messages = null;
    return { plan: out, messages: Array.from(list as unknown[], (m) => this.table.out(m)) };
  }

  /** A session's deps, made here: its own seeded stream, counts asked of the caller, upkeep simulated here alike or recorded (asked of the caller). */
  private deps(w: WireDeps): PolicyDeps {
    if (!parts) throw new Error('this thread describes a module: it runs no session');
    const { LinkedTokens, simulatedUpkeep, blocks, seededStream } = parts;
    let tokens = this.counters.get(w.tokens.id);
    if (!tokens) this.counters.set(w.tokens.id, (tokens = new LinkedTokens(w.tokens.encoding, w.tokens.overhead, (text) => this.ask({ kind: 'count', text }) as number)));
    const upkeep = w.upkeep && (w.upkeep.recorded ? this.recordedUpkeep() : simulatedUpkeep(tokens, w.upkeep.prompts, this.embeddings));
    return { tokens: tokens.carrying(w.tokens.carried), random: seededStream(w.stream), model: w.model, blocks, ...(upkeep && { upkeep }), ...(w.contextWindow !== undefined && { contextWindow: w.contextWindow }) };
  }

  /** Recorded upkeep: each call carried out by the run's upkeep (its cassette, its misses), on the caller's thread. */
  private recordedUpkeep(): Upkeep {
    const request = (req: object, messages: readonly unknown[]) => {
      const { tokens: _tokens, random: _random, folded: _folded, exchange: _exchange, ...rest } = req as Record<string, unknown>;
      return { ...rest, messages: messages.map((m) => this.table.out(m)) };
    };
    return {
      summarize: (req: SummarizeRequest) => this.ask({ kind: 'upkeep', method: 'summarize', args: [request(req, req.folded)] }) as ReturnType<Upkeep['summarize']>,
      forgetInSummary: (req: ForgetSummaryRequest) => this.ask({ kind: 'upkeep', method: 'forgetInSummary', args: [request(req, [])] }) as ReturnType<Upkeep['forgetInSummary']>,
      extract: (req: ExtractRequest) => this.ask({ kind: 'upkeep', method: 'extract', args: [request(req, req.exchange)] }) as ReturnType<Upkeep['extract']>,
      embed: (text: string, model: string) => this.ask({ kind: 'upkeep', method: 'embed', args: [text, model] }) as ReturnType<Upkeep['embed']>,
    };
  }

  /** Asks the caller, who waits for this call's reply, and waits for its answer. */
  private ask(c: Callback): unknown {
    if (!this.busy) throw new Error('deps.tokens and deps.upkeep answer only while ctxsim calls the policy');
    this.port.postMessage(c);
    Atomics.add(this.signal, HOST_POSTED, 1);
    Atomics.notify(this.signal, HOST_POSTED);
    for (;;) {
      const seen = Atomics.load(this.signal, CALLER_POSTED);
      const got = receiveMessageOnPort(this.port);
      if (got) {
        const a = got.message as Answer;
        if (a.kind === 'refused') throw new CallerError(a.message);
        return a.value;
      }
      Atomics.wait(this.signal, CALLER_POSTED, seen);
    }
  }

  /** The scenario is over: its sessions, messages, counts and embeddings go. */
  private nextScenario(): void {
    this.sessions = new Map();
    this.table.clear();
    this.embeddings = new Map();
    for (const c of this.counters.values()) c.forgetScenario();
  }
}

/** The class of a token counter whose texts are counted by the caller's counter (once each per scenario): the counts the replay makes. Made once `TokenCounter` is loaded. */
function linkedTokens(Base: typeof TokenCounter) {
  return class LinkedTokens extends Base {
    private counts = new Map<string, number>();

    constructor(
      encoding: TokenCounter['encoding'],
      overhead: Overhead,
      private readonly ask: (text: string) => number,
    ) {
      super(encoding, overhead, () => 0);
    }

    override text(text: string): number {
      let n = this.counts.get(text);
      if (n === undefined) this.counts.set(text, (n = this.ask(text)));
      return n;
    }

    override forgetScenario(): void {
      super.forgetScenario();
      this.counts = new Map();
    }
  };
}

/** What a call returned, as it crosses: cloned, or (a promise, which cannot be) said to be a promise. */
function valueReply(value: unknown): LinkReply {
  return isPromise(value) ? promised(value) : { kind: 'value', value };
}

/** A promise a call returned, as it crosses: that it is one (the caller names it); what it rejects with later is its own, not a fault of the thread. */
function promised(value: Promise<unknown>): LinkReply {
  value.catch(() => undefined);
  return { kind: 'promise' };
}

/** What a call threw, as it crosses. */
function thrownReply(e: unknown): LinkReply {
  if (e instanceof CallerError) return { kind: 'thrown', message: e.message, fromCaller: true };
  const message = describeThrown(e);
  let stack: string | undefined;
  try {
    if (e instanceof Error && typeof e.stack === 'string') stack = e.stack;
  } catch {
    // A stack that cannot be read is left out.
  }
  return { kind: 'thrown', message, ...(stack !== undefined && { stack }) };
}

/** What this thread holds outside its heap (array buffers, and the like), when it is more than the module's memory limit: the limit's message. */
function offHeap(): string | undefined {
  const bytes = getHeapStatistics().external_memory;
  if (bytes <= setup.memoryMb * MB) return undefined;
  return `its thread holds ${Math.round(bytes / MB)} MB outside its heap (array buffers and the like; limited to ${setup.memoryMb} MB; raise it with --policy-memory)`;
}

/** `value`, frozen deeply (as the replay freezes what it gives a session). */
function frozen<T>(value: T): T {
  deepFreeze(value);
  return value;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

/**
 * Imports module `i` (its bytes must still have the hash the run was given)
 * and checks its default export: its policy, or what is wrong, as the
 * one-line message `policy module <shown>: <what>`.
 */
async function importPolicy(i: number): Promise<Policy | string> {
  const { file, hash, shown } = setup.modules[i]!;
  const fail = (what: string) => `policy module ${shown}: ${what}`;
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return fail(code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? describeThrown(e)})`);
  }
  if (createHash('sha256').update(bytes).digest('hex') !== hash) return fail('changed while the run was starting; run again');
  const url = `${pathToFileURL(file).href}?sha256=${hash}`;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(url)) as Record<string, unknown>;
  } catch (e) {
    return fail(loadFailure(e, url, file));
  }
  try {
    const policy: unknown = loaded.default;
    if (policy === undefined) return fail('no default export (expected `export default { id, describe, params, start }`)');
    const wrong = policyProblem(policy);
    return wrong ? fail(wrong) : (policy as Policy);
  } catch (e) {
    // A getter or a proxy that throws when its policy is read.
    return fail(`its default export cannot be read: ${describeThrown(e)}`);
  }
}

/**
 * Starts listening to what the module's import resolves (`_module-hooks.ts`,
 * registered on this thread alone); the function returned tells the files
 * it resolved so far, other than the module itself, sorted: what the module
 * imports as it loads, which the replay cache keys its units on too.
 */
function importedFiles(): () => string[] {
  const { port1, port2 } = new MessageChannel();
  register(new URL('./_module-hooks.js', import.meta.url), { data: { port: port2 }, transferList: [port2] });
  const file = setup.modules[0]!.file;
  // As the loader resolves it too: through the links on its way (a temp folder may be one).
  const own = [fileURLToPath(pathToFileURL(file)), realPathOf(file)];
  return () => {
    const files = new Set<string>();
    for (let m; (m = receiveMessageOnPort(port1)); ) {
      const url = new URL(m.message as string);
      if (url.protocol === 'file:') files.add(fileURLToPath(url));
    }
    port1.close();
    for (const f of own) files.delete(f);
    return [...files].sort();
  };
}

/** The real path of `file`, or `file` when it cannot be found. */
function realPathOf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** A policy's own parameters as a table: what the main thread is told of them (their values are read here). */
function paramTable(policy: Policy): ParamTable {
  const table: Record<string, ParamSpec> = {};
  for (const [name, schema] of Object.entries(policyParams(policy).shape)) {
    const meta = paramMeta(schema as z.ZodType);
    table[name] = { kind: meta.kind, default: defaultOf(schema as z.ZodType), ...(meta.min !== undefined && { min: meta.min }), ...(meta.choices && { oneOf: [...meta.choices] }) };
  }
  return table;
}

/**
 * What went wrong importing the module: a syntax error (Node gives no line
 * for one found while parsing an ES module: its stack names a line of the
 * module, or `node --check` finds it), or what the module threw while
 * loading, with the line of the module it came from.
 */
function loadFailure(e: unknown, url: string, file: string): string {
  const message = describeThrown(e);
  let stack = '';
  try {
    stack = e instanceof Error ? String(e.stack ?? '') : '';
  } catch {
    // A stack that cannot be read names no line.
  }
  const at = stack.indexOf(`${url}:`);
  const line = at < 0 ? undefined : /^\d+/.exec(stack.slice(at + url.length + 1))?.[0];
  const where = line ? ` (line ${line})` : '';
  let syntax = false;
  try {
    syntax = e instanceof SyntaxError;
  } catch {
    // A proxy's prototype trap that throws: not a syntax error.
  }
  if (syntax && at < 0) {
    const checked = syntaxLine(file);
    return `syntax error${checked ? ` (line ${checked})` : ''}: ${message}`;
  }
  return `threw while loading${where}: ${message}`;
}

/**
 * The line of the module's syntax error, as `node --check` reports it (it
 * parses the file, running none of it), or undefined: the error is in a
 * file the module imports, or the check says nothing.
 */
function syntaxLine(file: string): string | undefined {
  const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 });
  const first = (r.stderr ?? '').split('\n', 1)[0]!;
  return first.startsWith(`${file}:`) ? /^\d+$/.exec(first.slice(file.length + 1))?.[0] : undefined;
}

const ID = /^[a-z0-9][a-z0-9-]*$/;

/** The kinds a parameter table may declare. */
const KINDS = ['int', 'number', 'string', 'boolean', 'duration', 'probability'] as const satisfies readonly ParamSpec['kind'][];

/** A parameter table entry of the documented shape (`{ default, kind, min?, oneOf? }`). */
const PARAM_SPEC = z.strictObject(
  {
    default: z.union([z.number(), z.string(), z.boolean()], { error: 'a number, a string or true/false' }).optional(),
    kind: z.enum(KINDS, { error: `one of ${KINDS.join(', ')}` }),
    min: z.number({ error: 'a number' }).optional(),
    oneOf: z.array(z.string({ error: 'a list of strings' }), { error: 'a list of strings' }).min(1, { error: 'a list of strings' }).optional(),
  },
  { error: 'an object { default, kind, min?, oneOf? }' },
);

/** What is wrong with a default export that should be a policy, or undefined. */
function policyProblem(p: unknown): string | undefined {
  if (typeof p !== 'object' || p === null) return `the default export is ${p === null ? 'null' : `a ${typeof p}`}, not a policy { id, describe, params, start }`;
  const o = p as Record<string, unknown>;
  if (typeof o.id !== 'string' || !ID.test(o.id)) {
    return `id must be a string of lower-case letters, digits and dashes, starting with a letter or digit (such as "keep-edges"), got ${shown(o.id)}`;
  }
  if (typeof o.describe !== 'string') return `describe must be a string (one line for --help), got ${shown(o.describe)}`;
  if (typeof o.start !== 'function') return `start must be a function (conversation, params, deps) => session, got ${shown(o.start)}`;
  return paramsProblem(o.params);
}

/** What is wrong with a policy's `params`: a zod object (of any copy of zod 4), or a table of the documented shape. */
function paramsProblem(params: unknown): string | undefined {
  const expected = 'params must be a zod object or a parameter table { name: { default, kind, min?, oneOf? } }';
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return `${expected}, got ${shown(params)}`;
  // The same test as policyParams: zod 4 keeps its internals in `_zod`; zod 3 in `_def`.
  if ('_zod' in params) return 'shape' in params ? namesProblem(Object.keys(params.shape as object)) : `${expected}, got a zod schema that is not an object`;
  if ('_def' in params) return 'params is a zod 3 schema: ctxsim reads zod 4 (import { z } from "zod" with zod 4 installed)';
  const names = namesProblem(Object.keys(params));
  if (names) return names;
  for (const [name, spec] of Object.entries(params)) {
    const r = PARAM_SPEC.safeParse(spec);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const field = issue.path.length ? `.${issue.path.join('.')}` : '';
      const what = issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')} (expected default, kind, min, oneOf)` : `expected ${issue.message}`;
      return `params.${name}${field}: ${what}`;
    }
    const problem = entryProblem(name, r.data);
    if (problem) return problem;
  }
  return undefined;
}

/** A parameter's name: written in the policy's name (`id:name=value,…`) and as a key of study files, it holds none of their separators. */
const PARAM_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** What is wrong with a policy's parameter names: one that is not a name, or one that is a common parameter's. */
function namesProblem(names: readonly string[]): string | undefined {
  const bad = names.find((name) => !PARAM_NAME.test(name));
  if (bad !== undefined) return `params: a parameter's name is a letter, then letters, digits or _ (such as keepRecent), got ${JSON.stringify(bad)}`;
  return commonProblem(names);
}

/** A parameter named as a common one: every policy takes those already, and a declaration of its own would be passed over, its default never given. */
function commonProblem(names: readonly string[]): string | undefined {
  const clash = names.find((name) => Object.hasOwn(COMMON_PARAMS.shape, name));
  if (clash === undefined) return undefined;
  return `params.${clash}: every policy takes ${clash} already, as a common parameter (${Object.keys(COMMON_PARAMS.shape).join(', ')}); give the policy's own parameter another name`;
}

/** What is wrong with one parameter of a table beyond its shape: a default its kind rejects. */
function entryProblem(name: string, spec: z.output<typeof PARAM_SPEC>): string | undefined {
  if (spec.default === undefined) return undefined;
  const schema = paramsFromTable({ [name]: { ...spec, default: spec.default } }).shape[name]!;
  const r = valueOf(schema).safeParse(spec.default);
  return r.success ? undefined : `params.${name}.default: expected ${r.error.issues[0]?.message ?? 'a valid value'}, got ${JSON.stringify(spec.default)}`;
}

/** A value as a message shows it. */
function shown(v: unknown): string {
  if (v === undefined || v === null) return String(v);
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : 'an object';
  return JSON.stringify(v);
}
