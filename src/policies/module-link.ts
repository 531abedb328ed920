import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { CtxsimError } from '../errors.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { Overhead } from '../tokens/encoding.js';
import type { Message, ToolDef } from '../types.js';
import type { UpkeepPrompts } from '../upkeep/prompts.js';
import type { ExtractRequest } from '../upkeep/extractor.js';
import type { ForgetSummaryRequest, SummarizeRequest } from '../upkeep/summarizer.js';
import { upkeepOrigin } from '../upkeep/origin.js';
import type { Upkeep } from '../upkeep/upkeep.js';
import type { ModuleMethod } from './module-calls.js';
import { placed } from './session.js';
import { streamKey } from './stream.js';
import type { ForgetFact, ForgetInfo, ParamTable, Params, Policy, PolicyDeps, PolicySession, PromptPlan, SessionStart, TurnInfo } from './types.js';

/**
 * A policy module runs on a thread of its own, its host (module-host.ts),
 * which runs no built-in policy and is given nothing but what a policy is
 * given (src/policies/driver.ts): a session's start, each turn's messages as
 * they happen, the forget events. The thread that replays reaches it through
 * a link, one `MessagePort` and a few shared integers: each call is a
 * request answered by one reply, which the caller waits for (`Atomics.wait`),
 * so a session's calls stay synchronous where the replay makes them.
 *
 * What crosses back is a structured clone the host makes while the call is
 * timed: a getter, a proxy or a spinning `message` getter of what a module
 * returns or throws runs there, inside the time the run's watchdog allows
 * the call. A message crosses once each way: both sides number it, and a
 * message sent again is sent by number, so the replay gets back the very
 * objects it gave (a prompt's messages keep the identity its counters and
 * checks rely on). While a call runs the host may ask the caller for a
 * text's token count or a recorded upkeep response (callbacks); the caller
 * answers while it waits.
 */

/** Parameters as given (`[['keep', '1']]`; a list value makes a sweep). */
export type Given = readonly (readonly [string, unknown])[];

/**
 * The most messages a module's plan may hold. A plan with more is refused on
 * the module's thread, within the call's time: no model takes a prompt that
 * long (a message costs a few tokens of overhead at least), and the checks of
 * a prompt are not made for millions of messages.
 */
export const MAX_PLAN_MESSAGES = 100_000;

/**
 * The shared integers of a link: how many messages the host has posted
 * (replies and callbacks), how many the caller has (requests and answers),
 * each side waiting on the other's; and whether the host has loaded its own
 * code and serves (1), so that a module's time limits start there, not
 * while the thread starts.
 */
export const HOST_POSTED = 0;
export const CALLER_POSTED = 1;
export const HOST_READY = 2;

/** A link's shared integers. */
export function linkSignal(): SharedArrayBuffer {
  return new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
}

/** What a host thread starts with (its `workerData`): the modules it runs, by index, and its memory limit. */
export interface HostSetup {
  /** Each module's absolute path, the sha256 of its bytes (checked again before it is imported), and how messages name it. */
  modules: { file: string; hash: string; shown: string }[];
  memoryMb: number;
  /** What the thread is for: to describe a module (import it, read its policy and parameters), or to run its sessions in a run's replay. It loads only what that needs. */
  task: 'describe' | 'replay';
}

/** @internal The one message a host is sent on its `parentPort` (closed once it is read): its end of the link, and the port it tells the run's thread of a module's fault on. */
export interface HostConnect {
  port: MessagePort;
  signal: SharedArrayBuffer;
  faults: MessagePort;
  /** Where what the thread writes to its stdout and stderr goes, as it is written (module.ts `openModuleHost`). */
  output: MessagePort;
}

/**
 * A module's fault outside its calls: it threw (from a timer, or a promise
 * it let fail), or holds more than its limit outside its heap; `where` names
 * the last call its thread answered (`moduleCallPlace`).
 */
export interface ModuleFault {
  fault: 'threw' | 'memory';
  message: string;
  where?: string;
}

/** A fault as the run's error says it, at `where` (the fault's own place, if it has one). */
export function faultMessage(f: ModuleFault, where: string): string {
  const what = f.fault === 'threw' ? `threw outside its calls (from a timer or a promise it started): ${f.message}` : f.message;
  return `${f.where ?? where}: after it, ${what}`;
}

/** A message as it crosses: the number of one that crossed before, one crossing now with its number, or (in a plan) what is not an object. */
export type WireMessage = number | { id: number; message: unknown } | { raw: unknown };

/**
 * Messages that crossed a link, by number, on one side. The caller numbers
 * from 1 up, the host from −1 down; a number is never used again, and both
 * sides forget every message at the same point of the link's stream (a
 * scenario's end), each when it reads or sends `next-scenario`.
 */
export class MessageTable {
  private ids = new WeakMap<object, number>();
  private byId = new Map<number, unknown>();
  private next: number;

  constructor(private readonly step: 1 | -1) {
    this.next = step;
  }

  /** `x` as it crosses. */
  out(x: unknown): WireMessage {
    if (typeof x !== 'object' || x === null) return { raw: x };
    const known = this.ids.get(x);
    if (known !== undefined) return known;
    const id = this.next;
    this.next += this.step;
    this.ids.set(x, id);
    this.byId.set(id, x);
    return { id, message: x };
  }

  /** What crossed as `w`; a new one is kept by its number (frozen, deeply, with `freeze`). */
  in(w: WireMessage, freeze = false): unknown {
    if (typeof w === 'number') {
      if (!this.byId.has(w)) throw new Error(`a message numbered ${w}, which never crossed`);
      return this.byId.get(w);
    }
    if ('raw' in w) return w.raw;
    const m = w.message;
    if (typeof m === 'object' && m !== null) {
      if (freeze) deepFreeze(m);
      this.ids.set(m, w.id);
    }
    this.byId.set(w.id, m);
    return m;
  }

  /** Forgets every message (a scenario is over). */
  clear(): void {
    this.ids = new WeakMap();
    this.byId = new Map();
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

/** A session's start as it crosses. */
export interface WireStart {
  id: string;
  userId: string;
  system: WireMessage[];
  toolDefs?: readonly ToolDef[];
}

/** What a session's `deps` are made of on the host: its stream's key, the model, its token counter (counts asked of the caller), its upkeep (simulated there alike, or recorded: asked of the caller). */
export interface WireDeps {
  stream: string;
  model: string;
  contextWindow?: number;
  /** The caller's counter: its id, tokenizer and overhead, and what every call of the conversation carries besides its messages (`carried`). */
  tokens: { id: string; encoding: TokenCounter['encoding']; overhead: Overhead; carried: number };
  upkeep?: { prompts: UpkeepPrompts; recorded: boolean };
}

/** What the caller asks of a host; every request but `next-scenario` is answered by one reply. */
export type LinkRequest =
  | { kind: 'describe'; given: Given[]; contract: boolean }
  | { kind: 'load'; module: number }
  | { kind: 'start'; module: number; start: WireStart; params: Params; deps: WireDeps }
  | { kind: 'prompt'; session: number; pending: WireMessage[]; info: TurnInfo }
  | { kind: 'commit'; session: number; exchange: WireMessage[]; info: TurnInfo }
  | { kind: 'forget'; session: number; facts: readonly ForgetFact[]; info: ForgetInfo }
  | { kind: 'artifacts'; session: number }
  | { kind: 'next-scenario' };

/** What a thrown value becomes as it crosses: its first line, its stack, and whether it is what the caller's upkeep threw, let through. */
export interface WireThrown {
  message: string;
  stack?: string;
  fromCaller?: true;
}

/**
 * A host's reply: what the call returned (cloned; a promise, only that it was one), what it threw, what it
 * returned that cannot be read (a getter or proxy that throws, a value that
 * cannot be cloned), a limit it went past, or a module that cannot be
 * loaded (the whole message).
 */
export type LinkReply =
  | { kind: 'value'; value: unknown }
  | { kind: 'promise' }
  | ({ kind: 'thrown' } & WireThrown)
  | { kind: 'unreadable'; message: string }
  | { kind: 'limit'; message: string }
  | { kind: 'failed'; message: string }
  | ({ kind: 'fault' } & ModuleFault);

/** The upkeep methods a session on the host asks the caller to carry out, when upkeep is recorded. */
export type UpkeepMethod = 'summarize' | 'forgetInSummary' | 'extract' | 'embed';

/** What a host asks the caller while a call runs. */
export type Callback = { kind: 'count'; text: string } | { kind: 'upkeep'; method: UpkeepMethod; args: unknown[] };

/** The caller's answer to a callback: its value, or that the caller's upkeep threw (what it threw stays with the caller). */
export type Answer = { kind: 'answer'; value: unknown } | { kind: 'refused'; message: string };

/** A request's folded or read messages, as they cross. */
export type WireUpkeepRequest = Record<string, unknown> & { messages: WireMessage[] };

/** The variants of one set of parameters, as names and values, or what is wrong with it. */
export type ResolvedVariants = { name: string; params: Params }[] | string;

/** What `describe` tells of a module: its policy's id and line, its parameters as a table, the variants of each set of parameters asked (in that order), and with `contract`, the sets the contract check runs (`contractVariants`) with theirs. */
export interface ModuleDescription {
  id: string;
  describe: string;
  params: ParamTable;
  resolved: ResolvedVariants[];
  /** The files other than the module's own that its import resolved (what it imports as it loads), sorted. */
  files: string[];
  contract?: { given: Record<string, unknown>; variants: ResolvedVariants }[];
}

/** A set of parameters as a key. */
export function givenKey(given: Given): string {
  return JSON.stringify(given);
}

/** A module as messages name it. */
export interface LinkedModule {
  id: string;
  file: string;
}

/** Told of each call into a module: which module (by index), what, at which turn (0: before the first) of which scenario; and when it returns. */
export interface LinkHooks {
  enter(module: number, method: ModuleMethod, turn: number, scenario: string): void;
  leave(): void;
}

/** Where a module's call is, as a limit's message names it: `policy module FILE (id): turn T of S: METHOD`, or the module and its import. */
export function moduleCallPlace(m: LinkedModule, method: ModuleMethod, turn: number, scenario: string): string {
  if (method === 'import') return `policy module ${m.file}: its import`;
  const at = method === 'forget' ? `after turn ${turn}` : method === 'start' || turn === 0 ? 'before the first turn' : `turn ${turn}`;
  return `policy module ${m.file} (${m.id}): ${at} of ${scenario}: ${method}`;
}

/** How long the caller waits between two looks at the process's memory while a call runs. */
const WAIT_SLICE_MS = 50;

/** The longest a caller waits for a host to serve before its first call is timed anyway. */
const HOST_START_MS = 60_000;

const MB = 1024 * 1024;

/** A call as the link names it. */
interface Place {
  module: number;
  label: string;
  method: ModuleMethod;
  turn: number;
  scenario: string;
}

/** What the caller answers a session's callbacks with: its token counter, and the run's recorded upkeep. */
interface CallContext {
  tokens?: TokenCounter;
  upkeep?: Upkeep;
}

/** What `start` replies: the session's number, what `start` returned (its type, or `null`), and the type of each method. */
export interface StartValue {
  session: number;
  shape: string;
  methods: Record<(typeof SESSION_METHODS)[number], string>;
}

export const SESSION_METHODS = ['prompt', 'commit', 'forget', 'artifacts'] as const;

/** A value of the type named, for the session check to name (`start returned null, not a session`). */
const SAMPLES: Record<string, unknown> = { null: null, undefined, number: 0, string: '', boolean: false, bigint: 0n, symbol: Symbol('a value'), function: () => undefined, object: {}, promise: Promise.resolve() };

/** A recorded upkeep's draws: none (its stand-ins keep every fact). */
const NO_DRAW = () => 0;

/**
 * The caller's side of a link: imports the modules on the host, starts
 * sessions there, and makes each call, waiting for its reply. A call's
 * start and end are told to `hooks` (the run's watchdog reads them and
 * ends a call that runs past `--policy-timeout`). While a call runs, the
 * process's resident memory is looked at every 50 ms: grown by more than
 * twice the module's memory limit, the call is stopped.
 */
/** @internal */
export class ModuleLink {
  private readonly signal: Int32Array;
  private readonly table = new MessageTable(1);
  /** What the run's upkeep threw at the host's last request (a cassette's miss), thrown again when the module lets it through. */
  private caught: unknown;
  private rss = { bytes: 0, at: -Infinity };

  constructor(
    private readonly port: MessagePort,
    signal: SharedArrayBuffer,
    private readonly modules: readonly LinkedModule[],
    private readonly memoryMb: number,
    private readonly hooks?: LinkHooks,
  ) {
    this.signal = new Int32Array(signal);
  }

  /**
   * Imports module `i` on the host (its hash checked); one that cannot be
   * loaded is a one-line `policy-module` error. The import's time starts
   * once the host serves (`HOST_READY`): starting its thread, slow on a busy
   * machine, is not the module's.
   */
  load(i: number): void {
    // Bounded: a host that never serves has ended, and the run is told so by its thread's exit.
    for (let waited = 0; Atomics.load(this.signal, HOST_READY) === 0 && waited < HOST_START_MS; waited += WAIT_SLICE_MS) Atomics.wait(this.signal, HOST_READY, 0, WAIT_SLICE_MS);
    const place = { module: i, label: this.modules[i]!.id, method: 'import' as const, turn: 0, scenario: '' };
    const reply = this.exchange(place, { kind: 'load', module: i }, {});
    if (reply.kind === 'failed') throw new CtxsimError(reply.message, 'policy-module');
    this.value(place, reply);
  }

  /** Module `i`'s policy, its variant named `label`: each session runs on the host. */
  policy(i: number, label: string): Policy {
    const { id } = this.modules[i]!;
    return { id, describe: `policy module ${this.modules[i]!.file}`, params: {}, start: (conversation, params, deps) => this.start(i, label, conversation, params, deps) };
  }

  /** The scenario is over: its sessions and messages are forgotten on both sides. */
  nextScenario(): void {
    this.send({ kind: 'next-scenario' });
    this.table.clear();
  }

  /** Posts a request or an answer, and wakes the host, which waits for it. */
  private send(m: LinkRequest | Answer): void {
    this.port.postMessage(m);
    Atomics.add(this.signal, CALLER_POSTED, 1);
    Atomics.notify(this.signal, CALLER_POSTED);
  }

  private start(module: number, label: string, conversation: SessionStart, params: Params, deps: PolicyDeps): PolicySession {
    const scenario = conversation.id;
    const stream = streamKey(deps.random);
    const origin = deps.upkeep && upkeepOrigin(deps.upkeep);
    if (stream === undefined || (deps.upkeep && !origin)) {
      throw new CtxsimError(`policy module ${this.modules[module]!.file}: a session of a policy module is started by ctxsim (its seeded stream and upkeep made by ctxsim)`, 'internal');
    }
    const ctx: CallContext = { tokens: deps.tokens, ...(origin?.recorded && { upkeep: deps.upkeep }) };
    const start: WireStart = { id: conversation.id, userId: conversation.userId, system: conversation.system.map((m) => this.table.out(m)), ...(conversation.toolDefs && { toolDefs: conversation.toolDefs }) };
    const wireDeps: WireDeps = {
      stream,
      model: deps.model,
      ...(deps.contextWindow !== undefined && { contextWindow: deps.contextWindow }),
      tokens: { id: deps.tokens.id, encoding: deps.tokens.encoding, overhead: deps.tokens.overhead, carried: deps.tokens.carried },
      ...(origin && { upkeep: { prompts: origin.prompts, recorded: origin.recorded } }),
    };
    const at = (method: ModuleMethod, turn: number): Place => ({ module, label, method, turn, scenario });
    const started = this.value(at('start', 0), this.exchange(at('start', 0), { kind: 'start', module, start, params, deps: wireDeps }, ctx)) as StartValue;
    if (started.shape !== 'object') return SAMPLES[started.shape] as PolicySession;
    const { session, methods } = started;
    /** The last turn the session was told of (what `artifacts` is marked with). */
    let turn = 0;
    const call = (place: Place, request: LinkRequest) => this.value(place, this.exchange(place, request, ctx));
    const remote: PolicySession = {
      prompt: (pending, info) => {
        turn = info.turn.index;
        const place = at('prompt', turn);
        return this.plan(place, call(place, { kind: 'prompt', session, pending: pending.map((m) => this.table.out(m)), info }));
      },
      commit: (exchange, info) => {
        turn = info.turn.index;
        return call(at('commit', turn), { kind: 'commit', session, exchange: exchange.map((m) => this.table.out(m)), info }) as ReturnType<PolicySession['commit']>;
      },
      forget: (facts, info) => {
        turn = info.afterTurn;
        return call(at('forget', turn), { kind: 'forget', session, facts, info }) as ReturnType<PolicySession['forget']>;
      },
      artifacts: () => call(at('artifacts', turn), { kind: 'artifacts', session }) as ReturnType<PolicySession['artifacts']>,
    };
    // A method the module's session lacks stays missing (or of its own type), for the session check to name.
    for (const name of SESSION_METHODS) if (methods[name] !== 'function') (remote as unknown as Record<string, unknown>)[name] = SAMPLES[methods[name]];
    return remote;
  }

  /** A plan as it crossed: its messages, numbered, back to objects (the replay's own, for those it sent). */
  private plan(place: Place, value: unknown): PromptPlan {
    if (value === SAMPLES.promise) return value as PromptPlan;
    const v = value as { plan: unknown; messages?: WireMessage[] };
    if (!v.messages) return v.plan as PromptPlan;
    try {
      (v.plan as { messages: unknown[] }).messages = v.messages.map((w) => this.table.in(w));
    } catch (e) {
      throw this.unreadable(place, e instanceof Error ? e.message : String(e));
    }
    return v.plan as PromptPlan;
  }

  /** What a reply means: its value, or the error it is. */
  private value(place: Place, reply: LinkReply): unknown {
    switch (reply.kind) {
      case 'value':
        return reply.value;
      case 'promise':
        return SAMPLES.promise;
      case 'thrown': {
        if (reply.fromCaller && this.caught !== undefined) throw this.caught;
        const e = new Error(reply.message);
        e.stack = reply.stack ?? `Error: ${reply.message}`;
        throw e;
      }
      case 'unreadable':
        throw this.unreadable(place, reply.message);
      case 'limit':
        throw this.limit(place, reply.message);
      case 'failed':
        throw new CtxsimError(reply.message, 'policy-module');
      case 'fault':
        throw placed(new CtxsimError(faultMessage(reply, moduleCallPlace(this.modules[place.module]!, place.method, place.turn, place.scenario)), 'policy-limit'));
    }
  }

  /**
   * What a session returned that cannot be read, as a run names it:
   * `label: turn T of S: what it returned cannot be read: …` (a forget
   * event is the turn's it follows, the first turn's for one before it).
   */
  private unreadable(place: Place, message: string): CtxsimError {
    return placed(new CtxsimError(`${place.label}: turn ${Math.max(1, place.turn)} of ${place.scenario}: what it returned cannot be read: ${message}`, 'policy'));
  }

  private limit(place: Place, message: string): CtxsimError {
    const where = moduleCallPlace(this.modules[place.module]!, place.method, place.turn, place.scenario);
    return placed(new CtxsimError(`${where}: ${message}`, 'policy-limit'));
  }

  /** Sends a request and waits for its reply, answering the host's callbacks meanwhile. */
  private exchange(place: Place, request: LinkRequest, ctx: CallContext): LinkReply {
    this.hooks?.enter(place.module, place.method, place.turn, place.scenario);
    try {
      const base = this.residentBytes();
      this.send(request);
      for (;;) {
        const seen = Atomics.load(this.signal, HOST_POSTED);
        const got = receiveMessageOnPort(this.port);
        if (got) {
          const m = got.message as LinkReply | Callback;
          if (m.kind === 'count' || m.kind === 'upkeep') this.answer(place, m, ctx);
          else return m;
        } else if (Atomics.wait(this.signal, HOST_POSTED, seen, WAIT_SLICE_MS) === 'timed-out') this.checkGrowth(place, base);
      }
    } finally {
      this.hooks?.leave();
    }
  }

  /** The process's resident bytes, read at most every 100 ms (a read costs a system call). */
  private residentBytes(): number {
    const now = performance.now();
    if (now - this.rss.at > 100) this.rss = { bytes: process.memoryUsage.rss(), at: now };
    return this.rss.bytes;
  }

  /** A call under which the process grew by more than twice the module's memory limit (its heap and as much again outside it) is stopped. */
  private checkGrowth(place: Place, base: number): void {
    const grown = process.memoryUsage.rss() - base;
    if (grown > 2 * this.memoryMb * MB) {
      throw this.limit(place, `the process grew by ${Math.round(grown / MB)} MB while it ran (a module may use ${this.memoryMb} MB of heap and as much outside it; raise it with --policy-memory)`);
    }
  }

  /** Answers a callback of the host. */
  private answer(place: Place, c: Callback, ctx: CallContext): void {
    let answer: Answer;
    if (c.kind === 'count') {
      if (typeof c.text !== 'string' || !ctx.tokens) throw this.unreadable(place, 'its thread asked for the tokens of what is not a text');
      answer = { kind: 'answer', value: ctx.tokens.text(c.text) };
    } else {
      try {
        answer = { kind: 'answer', value: this.upkeep(c, ctx) };
      } catch (e) {
        this.caught = e;
        answer = { kind: 'refused', message: e instanceof Error ? e.message : String(e) };
      }
    }
    this.send(answer);
  }

  /** A recorded upkeep call a session on the host asked for, carried out by the run's upkeep (its cassette, its misses). */
  private upkeep(c: Extract<Callback, { kind: 'upkeep' }>, ctx: CallContext): unknown {
    const { upkeep, tokens } = ctx;
    if (!upkeep || !tokens) throw new Error('no recorded upkeep');
    const [req, model] = c.args as [WireUpkeepRequest | string, string];
    if (c.method === 'embed') return upkeep.embed(String(req), String(model));
    const { messages, ...rest } = req as WireUpkeepRequest;
    const read = messages.map((w) => this.table.in(w)) as Message[];
    if (c.method === 'summarize') return upkeep.summarize({ ...(rest as unknown as SummarizeRequest), folded: read, tokens, random: NO_DRAW });
    if (c.method === 'extract') return upkeep.extract({ ...(rest as unknown as ExtractRequest), exchange: read, tokens, random: NO_DRAW });
    return upkeep.forgetInSummary({ ...(rest as unknown as ForgetSummaryRequest), tokens });
  }
}
