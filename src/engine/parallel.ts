import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type MessagePort } from 'node:worker_threads';
import { CtxsimError } from '../errors.js';
import type { ContractOptions } from '../policies/contract/checker.js';
import type { ContractViolation } from '../policies/contract/rules.js';
import { REGISTRY } from '../policies/index.js';
import { describeThrown } from '../policies/module-calls.js';
import { faultMessage, type ModuleFault } from '../policies/module-link.js';
import { closeModuleHost, DEFAULT_POLICY_MEMORY, DEFAULT_POLICY_TIMEOUT, openModuleHost } from '../policies/module.js';
import type { PolicyVariant } from '../policies/spec.js';
import type { Params } from '../policies/types.js';
import { compiledFile } from '../process.js';
import { messageText } from '../tokens/counter.js';
import type { Conversation } from '../types.js';
import type { CassetteEntry } from '../upkeep/cassette.js';
import type { Miss } from '../upkeep/upkeep.js';
import { marksBuffer, ModuleWatchdog, type ModuleLimits, type WatchedModule } from './module-watch.js';
import type { ExplainedReplay } from './replay.js';
import { collectRecords, finishContexts, keepWithinBound, replayContexts, streamStudyYielding, type RecordSink, type RunInfo, type RunResults, type ScenarioRecords } from './run.js';
import { checkExecution, runSpecOf, type CheckedSpec, type Conversations, type Execution, type RunOptions, type ScenarioEncoder } from './spec.js';

/**
 * Runs a study over worker threads. Work goes out by scenario (every policy
 * of a scenario in one worker, so a message is tokenized once per worker,
 * not once per policy); each worker keeps one token counter for all its
 * scenarios and opens the same cache folder (token-count saves merge under
 * the entry's lock). Records come back per scenario, possibly out of order; a
 * scenario that arrives early waits until every earlier one has gone to the
 * sink, so the sink sees the sequence of a one-thread run.
 */

/**
 * Below this many characters of message text a study runs on one thread:
 * starting a worker and loading its encoding (about 0.7 s) would cost more
 * than sharing the replay saves. Measured with all nine policies: a replay
 * takes about 0.4 s per MB of text on one thread here, so two idle cores
 * would break even near 4 MB (0.7 s against half of 1.6 s); on this busy
 * two-core machine they broke even between 10 and 25 MB.
 */
export const PARALLEL_MIN_CHARS = 4_000_000;

/**
 * A worker's young generation, in MB (twice V8's default): a replay makes
 * many objects that live for one turn or one scenario, and a larger nursery
 * lets more of them die young instead of being copied and promoted.
 */
export const WORKER_YOUNG_MB = 96;

/**
 * A worker's old generation, in MB. Left alone, V8 lets a worker's heap grow
 * toward gigabytes before it collects; with a limit it sizes its steps to it
 * and collects sooner (measured: 200 conversations on two workers peaked at
 * 1.06 GB without a limit, 0.70 GB with this one, no slower). A worker holds
 * its tokenizer, its token counts by key and two scenarios: a scenario would
 * need hundreds of MB of text to reach it.
 */
export const WORKER_OLD_MB = 1024;

/** What a worker starts with. Policies go by id, or by module path and hash (policy objects hold functions), with their resolved parameters. */
export interface WorkerSetup {
  /** The run's spec, checked (`runSpecOf`: the worker does not check it again), plain data, its price table loaded (structured-cloned to the worker). */
  spec: CheckedSpec;
  /** The cache folder (absolute), or none: token counts, and replayed units unless `cacheReplays` is false. */
  cacheFolder?: string;
  cacheReplays?: Execution['cacheReplays'];
  cassette?: Execution['cassette'];
  policies: { id: string; name: string; params: Params; module?: { file: string; hash: string } }[];
  shard?: RunOptions['shard'];
  /** The module that encodes each scenario before it is sent, and its options. */
  encoder?: ScenarioEncoder;
  /**
   * @internal With policy modules: the modules, their limits, the worker's marks of
   * its calls into them (module-watch.ts), and its end of the link to the
   * thread the modules run on (policies/module-link.ts).
   */
  watch?: { modules: WatchedModule[]; limits: ModuleLimits; marks?: SharedArrayBuffer; link?: { port: MessagePort; signal: SharedArrayBuffer } };
}

/** @internal The run's policy modules, each once, and their limits (defaults `DEFAULT_POLICY_TIMEOUT` s and `DEFAULT_POLICY_MEMORY` MB); undefined when every policy is built in. */
export function moduleWatch(opts: Pick<RunOptions, 'policies' | 'policyTimeout' | 'policyMemory'>): WorkerSetup['watch'] {
  const modules = new Map<string, WatchedModule>();
  for (const v of opts.policies) if (v.module) modules.set(v.module.file, { id: v.policy.id, file: v.module.file, hash: v.module.hash });
  if (!modules.size) return undefined;
  return { modules: [...modules.values()], limits: { timeoutSeconds: opts.policyTimeout ?? DEFAULT_POLICY_TIMEOUT, memoryMb: opts.policyMemory ?? DEFAULT_POLICY_MEMORY } };
}

/**
 * Messages to a worker: a scenario (with its index in the study), or finish
 * (save the token cache and report); and the requests of a `ReplayThread`:
 * a turn to explain, the contract check, a recording's replay of one unit.
 */
export type ToWorker =
  | { kind: 'scenario'; index: number; conversation: Conversation }
  | { kind: 'finish' }
  | { kind: 'explain'; index: number; conversation: Conversation; turn: number }
  | { kind: 'contract'; conversations: Conversation[]; options: Pick<ContractOptions, 'seed' | 'model' | 'limit'> }
  | { kind: 'misses'; index: number; conversation: Conversation; model: number; policy: number; entries: CassetteEntry[] };

/** Messages from a worker (`E`: what the run's encoder makes of a scenario). */
export type FromWorker<E = unknown> =
  | { kind: 'scenario'; index: number; records: ScenarioRecords<E> }
  | { kind: 'finished'; tokenizerCalls: number; warnings: string[]; replayedUnits: number; cachedUnits: number }
  | ({ kind: 'explained' } & ExplainedReplay)
  | { kind: 'contract'; violations: ContractViolation[] }
  | { kind: 'misses'; misses: Miss[] }
  | { kind: 'error'; message: string; code?: string; exitCode?: number; stack?: string; causeStack?: string };

/** A worker's crash as the run reports it: running out of its heap says what to do about it. */
export function workerError(e: Error & { code?: string }): Error {
  if (e.code !== 'ERR_WORKER_OUT_OF_MEMORY') return e;
  return new CtxsimError(`a worker thread ran out of memory (its heap is limited to ${WORKER_OLD_MB} MB): a scenario is too large to replay beside others; run with --jobs 1`, 'worker-memory');
}

/** The compiled worker entry beside this file; absent when running from TypeScript sources (then runs stay on one thread). */
export function workerFile(): string | undefined {
  const self = fileURLToPath(import.meta.url);
  if (!self.endsWith('.js')) return undefined;
  const file = resolve(self, '..', 'worker.js');
  return existsSync(file) ? file : undefined;
}

/** The compiled worker entry for a run with policy modules, which never runs on this thread: from the sources, the compiled package's. */
function moduleWorkerFile(): string {
  const file = compiledFile('engine/worker.js');
  if (!file) throw new CtxsimError('policy modules run on worker threads, from the compiled package: build it first (npm run build)', 'internal');
  return file;
}

/**
 * The default `--jobs`: every core, but one thread when the study has fewer
 * than PARALLEL_MIN_CHARS characters of message text or a single scenario,
 * and never more threads than scenarios.
 */
export function autoJobs(conversations: Conversations, cores = availableParallelism()): number {
  if (conversations.length < 2) return 1;
  let chars = 0;
  for (let i = 0; i < conversations.length; i++) {
    const c = conversations.at(i)!;
    for (const m of c.system) chars += m.content.length;
    for (const t of c.turns) {
      chars += messageText(t.user).length;
      for (const m of t.tools) chars += messageText(m).length;
      if (t.assistant) chars += messageText(t.assistant).length;
    }
    if (chars >= PARALLEL_MIN_CHARS) break;
  }
  return chars < PARALLEL_MIN_CHARS ? 1 : Math.max(1, Math.min(cores, conversations.length));
}

/**
 * Runs a study on `jobs` threads (default: `autoJobs`), handing each
 * scenario's records to `sink` in scenario order, as `streamStudy` does; only
 * `tokenizerCalls` differs (a text seen by two workers is counted by both).
 * Falls back to one thread for one job, for policy objects neither in the
 * registry nor loaded from a module, or when the compiled worker is missing
 * (`streamStudyYielding`: signals are heard between units there too). A sink that throws stops the run.
 * With an encoder (`Execution.encoder`, ctxsim's own sinks' only), each
 * worker sends a scenario as the encoder made it (`EncodedScenario<E>`);
 * without one, and on one thread, the sink gets lists.
 * A run with a policy module replays on worker threads even for one job,
 * each with a thread of its own for the modules, under their limits
 * (`policyTimeout`, `policyMemory`: module-watch.ts); this thread runs no
 * module code, so it hears a signal at once.
 */
export async function streamStudyParallel<E = unknown>(opts: RunOptions & { jobs?: number }, sink: RecordSink<E>): Promise<RunInfo> {
  checkExecution(opts);
  const watch = moduleWatch(opts);
  const jobs = Math.min(opts.jobs ?? autoJobs(opts.conversations), opts.conversations.length);
  // A worker rebuilds each policy from the registry or by its module: a policy object made otherwise stays on this thread.
  const registered = opts.policies.every((v) => v.module || REGISTRY.get(v.policy.id) === v.policy);
  const file = watch && registered ? moduleWorkerFile() : workerFile();
  // One job runs on this thread, unless it has policy modules: those run on a watched worker.
  const oneThread = jobs < 1 || (jobs === 1 && !watch);
  if (oneThread || !file || !registered) return streamStudyYielding(opts, sink);

  // Check the spec and resolve encodings and prices here: a bad setting, model, price table or tokenizer package fails before any worker starts (no tokenizer is loaded here: only a worker that counts loads its own).
  const spec = runSpecOf(opts);
  const ctxs = replayContexts(spec, { cacheFolder: false });
  // Run from the sources (the tests), a module's run has the compiled package's workers, which cannot import the sources' encoder: they send lists.
  const { encoder, ...rest } = opts;
  const setup = workerSetup(workerFile() || !encoder ? opts : rest, { ...spec, prices: ctxs[0]!.prices }, watch);
  const told = await spread(file, setup, opts, jobs, inOrder(sink));
  keepWithinBound(opts);
  return { ...finishContexts(ctxs), ...told };
}

/** What the workers of a run start with: its spec checked, its price table loaded. */
function workerSetup(opts: RunOptions, spec: CheckedSpec, watch: WorkerSetup['watch']): WorkerSetup {
  return {
    spec,
    ...(opts.cacheFolder && { cacheFolder: resolve(opts.cacheFolder) }),
    ...(opts.cacheReplays !== undefined && { cacheReplays: opts.cacheReplays }),
    ...(opts.cassette && { cassette: opts.cassette }),
    policies: opts.policies.map((v) => ({ id: v.policy.id, name: v.name, params: v.params, ...(v.module && { module: v.module }) })),
    ...(opts.shard && { shard: opts.shard }),
    ...(opts.encoder && { encoder: opts.encoder }),
    ...(watch && { watch }),
  };
}

/** Runs a study on worker threads and keeps every record: the results of `runStudy`, record for record. */
export async function runStudyParallel(opts: Omit<RunOptions, 'encoder'> & { jobs?: number }): Promise<RunResults> {
  const collected = collectRecords();
  return collected.results(await streamStudyParallel(opts, collected.sink));
}

/**
 * A sink taking scenarios in any order that passes them on to `sink` in
 * index order (from 0): one that arrives early is held until every earlier
 * one has been passed on, and no longer.
 */
export function inOrder<E>(sink: RecordSink<E>): RecordSink<E> {
  const early = new Map<number, ScenarioRecords<E>>();
  let next = 0;
  return (records, index) => {
    early.set(index, records);
    for (let r = early.get(next); r; r = early.get(next)) {
      early.delete(next);
      sink(r, next++);
    }
  };
}

/** A worker of a run: the thread that replays, and with policy modules, the thread they run on and the port it tells of their faults on. */
interface RunThread {
  w: Worker;
  host?: Worker;
  faults?: MessagePort;
  /** What ended the module host, named at its module's current or last call (undefined when no module has been called). */
  moduleFailure(e?: Error & { code?: string }, code?: number): Error | undefined;
  /** A module's fault outside its calls, named at the call it came after. */
  fault(f: ModuleFault): Error;
  /** Ends both threads (and every thread a module started). */
  close(): Promise<void>;
}

/**
 * Starts a worker of the run; with modules, a host thread for them too
 * (policies/module-host.ts), linked to the worker, and the worker's marks
 * watched by `watchdog`. Neither thread is told of the other's end: the
 * caller listens to both.
 */
function startThread(file: string, setup: WorkerSetup, watchdog: ModuleWatchdog | undefined): RunThread {
  const watch = setup.watch;
  if (!watch || !watchdog) {
    const w = new Worker(file, { workerData: setup, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB, maxOldGenerationSizeMb: WORKER_OLD_MB } });
    return { w, moduleFailure: () => undefined, fault: (f) => new CtxsimError(faultMessage(f, 'a policy module'), 'policy-limit'), close: () => w.terminate().then(() => undefined) };
  }
  const marks = marksBuffer();
  const watched = watchdog.add(marks);
  const host = openModuleHost(
    watch.modules.map((m) => ({ file: m.file, hash: m.hash, shown: m.file })),
    watch.limits.memoryMb,
    'replay',
  );
  const workerData: WorkerSetup = { ...setup, watch: { ...watch, marks, link: { port: host.port, signal: host.signal } } };
  let w: Worker;
  try {
    w = new Worker(file, { workerData, transferList: [host.port], resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB, maxOldGenerationSizeMb: WORKER_OLD_MB } });
  } catch (e) {
    void closeModuleHost(host);
    throw e;
  }
  return {
    w,
    host: host.worker,
    faults: host.faults,
    moduleFailure: (e, code) => watchdog.failure(watched, e, code),
    fault: (f) => new CtxsimError(faultMessage(f, watchdog.where(watched) ?? 'a policy module'), 'policy-limit'),
    close: () => Promise.all([w.terminate(), closeModuleHost(host)]).then(() => undefined),
  };
}

/** What ended a module's thread, when no module had been called yet (or the watchdog cannot place it). */
function hostEnded(e: (Error & { code?: string }) | undefined, code?: number): Error {
  return new CtxsimError(e ? `a policy module's thread failed: ${describeThrown(e)}` : `a policy module's thread ended (exit code ${code})`, 'policy-limit');
}

/** Tells `fail` when a module's thread ends before the run is over (`over()`): out of memory, a throw outside its calls, an exit. */
function watchHost(t: RunThread, fail: (e: Error) => void, over: () => boolean): void {
  t.faults?.on('message', (f: ModuleFault) => fail(t.fault(f)));
  t.host?.on('error', (e: Error & { code?: string }) => fail(t.moduleFailure(e) ?? hostEnded(e)));
  t.host?.on('exit', (code) => {
    if (!over()) fail(t.moduleFailure(undefined, code) ?? hostEnded(undefined, code));
  });
}

/** What the workers of a run tell when they finish, added up. */
type Told = Pick<RunInfo, 'tokenizerCalls' | 'warnings' | 'replayedUnits' | 'cachedUnits'>;

/** Adds what a worker told when it finished to `told`. */
function addFinished(told: Told, m: Extract<FromWorker, { kind: 'finished' }>): void {
  told.tokenizerCalls += m.tokenizerCalls;
  told.replayedUnits += m.replayedUnits;
  told.cachedUnits += m.cachedUnits;
  for (const x of m.warnings) if (!told.warnings.includes(x)) told.warnings.push(x);
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** Hands scenarios to the workers as they free up (two in flight each), passes each one's records to `sink` as it comes. */
function spread<E>(file: string, setup: WorkerSetup, opts: RunOptions, jobs: number, sink: RecordSink<E>): Promise<Told> {
  const { conversations } = opts;
  /** Ids of the scenarios in flight, for progress (the conversations themselves are not kept). */
  const ids = new Map<number, string>();
  const told: Told = { tokenizerCalls: 0, warnings: [], replayedUnits: 0, cachedUnits: 0 };
  let [next, done, finished] = [0, 0, 0];
  const threads: RunThread[] = [];
  const watchdog = setup.watch && new ModuleWatchdog(setup.watch.modules, setup.watch.limits);
  /** The run is over (done or failed): its threads are being ended (a module's timers and the workers it started with them). */
  let closing = false;
  const closeAll = () => {
    closing = true;
    watchdog?.stop();
    return Promise.all(threads.map((t) => t.close()));
  };

  return new Promise((resolveAll, reject) => {
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      void closeAll();
      reject(e);
    };
    watchdog?.start((_, message) => fail(new CtxsimError(message, 'policy-limit')));
    const feed = (w: Worker) => {
      const index = next++;
      const conversation = conversations.at(index)!;
      ids.set(index, conversation.id);
      watchdog?.name(index, conversation.id);
      w.postMessage({ kind: 'scenario', index, conversation } satisfies ToWorker);
    };
    for (let k = 0; k < jobs && !failed; k++) {
      let t: RunThread;
      try {
        t = startThread(file, setup, watchdog);
      } catch (e) {
        return fail(asError(e));
      }
      threads.push(t);
      const { w } = t;
      let inFlight = 0;
      let over = false;
      const send = () => {
        for (; inFlight < 2 && next < conversations.length; inFlight++) feed(w);
        if (inFlight === 0) w.postMessage({ kind: 'finish' } satisfies ToWorker);
      };
      w.on('message', (m: FromWorker<E>) => {
        if (failed) return;
        if (m.kind === 'error') fail(fromWorkerError(m));
        else if (m.kind === 'scenario') {
          try {
            sink(m.records, m.index);
          } catch (e) {
            return fail(asError(e));
          }
          inFlight--;
          opts.onProgress?.(++done, conversations.length, ids.get(m.index)!);
          ids.delete(m.index);
          send();
        } else if (m.kind === 'finished') {
          addFinished(told, m);
          over = true;
          if (++finished === jobs) void closeAll().then(() => resolveAll(told), reject);
        }
      });
      w.on('error', (e) => fail(workerError(e)));
      // A worker that ends before it has finished fails the run, whatever its code.
      w.on('exit', (code) => {
        if (!over && !closing) fail(new Error(`worker thread exited with code ${code}`));
      });
      watchHost(t, fail, () => closing);
      send();
    }
  });
}

/** A worker's error message as the error it was. */
function fromWorkerError(m: Extract<FromWorker, { kind: 'error' }>): Error {
  const e = m.code !== undefined ? new CtxsimError(m.message, m.code, m.exitCode) : new Error(m.message);
  if (m.code === undefined && m.stack) e.stack = m.stack;
  if (m.causeStack !== undefined) e.cause = Object.assign(new Error(m.causeStack.split('\n')[0]), { stack: m.causeStack });
  return e;
}

/**
 * A worker of a run kept for requests, one at a time, with its policy
 * modules' thread, watched as a run's are: what `explain` replays, the
 * contract check of `check-policy`, a recording's replays of each unit. A
 * call over its time, or a module thread's end, fails the request under way
 * and every later one. `close()` ends both threads.
 */
export class ReplayThread {
  private readonly watchdog: ModuleWatchdog | undefined;
  private readonly thread: RunThread;
  private pending: { resolve(m: FromWorker): void; reject(e: Error): void } | undefined;
  /** The requests so far, answered or not: the next waits for them. */
  private queue: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private closing = false;

  /** A thread for requests about `opts` (its policies, its spec — a recording's holds the upkeep it records, without responses; its conversations are sent with each request). */
  constructor(opts: Omit<RunOptions, 'conversations'>) {
    const watch = moduleWatch(opts);
    const spec = runSpecOf(opts);
    const ctxs = replayContexts(spec, { cacheFolder: false });
    const setup = workerSetup({ ...opts, conversations: [] }, { ...spec, prices: ctxs[0]!.prices }, watch);
    this.watchdog = watch && new ModuleWatchdog(watch.modules, watch.limits);
    this.thread = startThread(watch ? moduleWorkerFile() : (workerFile() ?? moduleWorkerFile()), setup, this.watchdog);
    const fail = (e: Error) => {
      this.failure ??= e;
      this.watchdog?.stop();
      void this.thread.close();
      this.pending?.reject(this.failure);
      this.pending = undefined;
    };
    this.watchdog?.start((_, message) => fail(new CtxsimError(message, 'policy-limit')));
    const { w } = this.thread;
    w.on('message', (m: FromWorker) => {
      if (m.kind === 'error') return fail(fromWorkerError(m));
      const p = this.pending;
      this.pending = undefined;
      p?.resolve(m);
    });
    w.on('error', (e) => fail(workerError(e)));
    w.on('exit', (code) => {
      if (!this.closing) fail(new Error(`worker thread exited with code ${code}`));
    });
    watchHost(this.thread, fail, () => this.closing);
  }

  /**
   * Sends a request once those before it are answered (`message` may be
   * made then: a recording tells the responses recorded meanwhile); its
   * answer. Scenarios are named `index` by `names`, for the limits' messages.
   */
  request(message: ToWorker | (() => ToWorker), names: readonly (readonly [number, string])[] = []): Promise<FromWorker> {
    const turn = this.queue.then(
      () =>
        new Promise<FromWorker>((resolve, reject) => {
          if (this.failure) return reject(this.failure);
          for (const [i, id] of names) this.watchdog?.name(i, id);
          this.pending = { resolve, reject };
          this.thread.w.postMessage(typeof message === 'function' ? message() : message);
        }),
    );
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** Ends the threads (and what a module started). */
  async close(): Promise<void> {
    this.closing = true;
    this.watchdog?.stop();
    await this.thread.close();
  }
}

/**
 * The contract check (`checkPolicyContract`) of resolved variants, policy
 * modules among them, made as a run replays them: on a worker thread, each
 * module's sessions on the module's own thread, under the run's limits (a
 * call over `policyTimeout`, a module over `policyMemory`, is a
 * `policy-limit` error).
 */
export async function checkContractOnThread(
  variants: readonly PolicyVariant[],
  conversations: Conversation[],
  options: Pick<ContractOptions, 'seed' | 'limit' | 'model'> & Pick<Execution, 'policyTimeout' | 'policyMemory'>,
): Promise<ContractViolation[]> {
  const { policyTimeout, policyMemory, ...contract } = options;
  const model = contract.model ?? 'gpt-4o-mini';
  const thread = new ReplayThread({
    seed: contract.seed ?? 42,
    models: [model],
    tokenizer: 'chars4',
    cacheFolder: false,
    policies: [...variants],
    ...(policyTimeout !== undefined && { policyTimeout }),
    ...(policyMemory !== undefined && { policyMemory }),
  });
  try {
    const r = await thread.request({ kind: 'contract', conversations, options: contract }, conversations.map((c, i) => [i, c.id] as const));
    if (r.kind !== 'contract') throw new CtxsimError(`contract check: the worker answered ${r.kind}`, 'internal');
    return r.violations;
  } finally {
    await thread.close();
  }
}

/**
 * Turn `n` of a conversation replayed through the one policy of `opts`, a
 * policy module's, on its first model, as `explain` shows it: as a run
 * replays it, on a worker thread, the module's sessions on its own thread,
 * under the run's limits.
 */
export async function explainReplay(opts: Omit<RunOptions, 'conversations'>, conversation: Conversation, n: number): Promise<ExplainedReplay> {
  const thread = new ReplayThread(opts);
  try {
    const r = await thread.request({ kind: 'explain', index: 0, conversation, turn: n }, [[0, conversation.id]]);
    if (r.kind !== 'explained') throw new CtxsimError(`explain: the worker answered ${r.kind}`, 'internal');
    const { kind: _kind, ...explained } = r;
    return explained;
  } finally {
    await thread.close();
  }
}
