import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CtxsimError } from '../errors.js';
import { REGISTRY } from '../policies/index.js';
import { DEFAULT_POLICY_TIMEOUT } from '../policies/module.js';
import type { Params } from '../policies/types.js';
import { messageText } from '../tokens/counter.js';
import type { Conversation } from '../types.js';
import { marksBuffer, ModuleWatchdog, type ModuleLimits, type WatchedModule } from './module-watch.js';
import { collectRecords, finishContexts, keepWithinBound, replayContexts, streamStudyYielding, type RecordSink, type RunInfo, type RunResults, type ScenarioRecords } from './run.js';
import { runSpecOf, type Conversations, type Execution, type RunOptions, type RunSpec } from './spec.js';

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
  /** The run's spec, plain data, its price table loaded (structured-cloned to the worker). */
  spec: RunSpec;
  /** The cache folder (absolute), or none: token counts, and replayed units unless `cacheReplays` is false. */
  cacheFolder?: string;
  cacheReplays?: Execution['cacheReplays'];
  cassette?: Execution['cassette'];
  policies: { id: string; name: string; params: Params; module?: { file: string; hash: string } }[];
  shard?: RunOptions['shard'];
  /** The module that encodes each scenario before it is sent, and its options. */
  encoder?: Execution['encoder'];
  /** With policy modules: the modules, their limits, and the worker's marks of its calls into them (module-watch.ts). */
  watch?: { modules: WatchedModule[]; limits: ModuleLimits; marks?: SharedArrayBuffer };
}

/** The run's policy modules, each once, and their limits (defaults `DEFAULT_POLICY_TIMEOUT` s and `WORKER_OLD_MB` MB); undefined when every policy is built in. */
export function moduleWatch(opts: Pick<RunOptions, 'policies' | 'policyTimeout' | 'policyMemory'>): WorkerSetup['watch'] {
  const modules = new Map<string, WatchedModule>();
  for (const v of opts.policies) if (v.module) modules.set(v.module.file, { id: v.policy.id, file: v.module.file });
  if (!modules.size) return undefined;
  return { modules: [...modules.values()], limits: { timeoutSeconds: opts.policyTimeout ?? DEFAULT_POLICY_TIMEOUT, memoryMb: opts.policyMemory ?? WORKER_OLD_MB } };
}

/** Messages to a worker: a scenario (with its index in the study), or finish (save the token cache and report). */
export type ToWorker = { kind: 'scenario'; index: number; conversation: Conversation } | { kind: 'finish' };

/** Messages from a worker (`E`: what the run's encoder makes of a scenario). */
export type FromWorker<E = unknown> =
  | { kind: 'scenario'; index: number; records: ScenarioRecords<E> }
  | { kind: 'finished'; tokenizerCalls: number; warnings: string[]; replayedUnits: number; cachedUnits: number }
  | { kind: 'error'; message: string; code?: string; exitCode?: number; stack?: string };

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
 * With an encoder (`Execution.encoder`), each worker sends a scenario as the
 * encoder made it (`EncodedScenario<E>`); on one thread the sink gets lists.
 * A run with a policy module replays on worker threads even for one job,
 * under the modules' limits (`policyTimeout`, `policyMemory`: module-watch.ts).
 */
export async function streamStudyParallel<E = unknown>(opts: RunOptions & { jobs?: number }, sink: RecordSink<E>): Promise<RunInfo> {
  const watch = moduleWatch(opts);
  const jobs = Math.min(opts.jobs ?? autoJobs(opts.conversations), opts.conversations.length);
  const file = workerFile();
  // A worker rebuilds each policy from the registry or by importing its module: a policy object made otherwise stays on this thread.
  const registered = opts.policies.every((v) => v.module || REGISTRY.get(v.policy.id) === v.policy);
  // One job runs on this thread, unless it has policy modules: those run on a watched worker.
  const oneThread = jobs < 1 || (jobs === 1 && !watch);
  if (oneThread || !file || !registered) return streamStudyYielding(opts, sink);

  // Resolve encodings and prices here: a bad model, price table or tokenizer package fails before any worker starts (no tokenizer is loaded here: only a worker that counts loads its own).
  const ctxs = replayContexts({ ...opts, cacheFolder: false });
  const { prices } = ctxs[0]!;
  const setup: WorkerSetup = {
    spec: { ...runSpecOf(opts), prices },
    ...(opts.cacheFolder && { cacheFolder: resolve(opts.cacheFolder) }),
    ...(opts.cacheReplays !== undefined && { cacheReplays: opts.cacheReplays }),
    ...(opts.cassette && { cassette: opts.cassette }),
    policies: opts.policies.map((v) => ({ id: v.policy.id, name: v.name, params: v.params, ...(v.module && { module: v.module }) })),
    ...(opts.shard && { shard: opts.shard }),
    ...(opts.encoder && { encoder: opts.encoder }),
    ...(watch && { watch }),
  };
  const told = await spread(file, setup, opts, jobs, inOrder(sink));
  keepWithinBound(opts);
  return { ...finishContexts(ctxs), ...told };
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

/**
 * Starts a worker of the run; with modules, its marks are watched, and
 * `moduleFailure` names what ended it at its module's call (undefined when
 * no module has been called).
 */
function startWorker(file: string, setup: WorkerSetup, watchdog: ModuleWatchdog | undefined) {
  const marks = watchdog && marksBuffer();
  const watched = marks && watchdog.add(marks);
  const workerData: WorkerSetup = marks ? { ...setup, watch: { ...setup.watch!, marks } } : setup;
  const maxOldGenerationSizeMb = setup.watch?.limits.memoryMb ?? WORKER_OLD_MB;
  const w = new Worker(file, { workerData, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB, maxOldGenerationSizeMb } });
  const moduleFailure = (e?: Error & { code?: string }, code?: number) => (watched === undefined ? undefined : watchdog!.failure(watched, e, code));
  return { w, moduleFailure };
}

/** Hands scenarios to the workers as they free up (two in flight each), passes each one's records to `sink` as it comes. */
function spread<E>(file: string, setup: WorkerSetup, opts: RunOptions, jobs: number, sink: RecordSink<E>): Promise<Pick<RunInfo, 'tokenizerCalls' | 'warnings' | 'replayedUnits' | 'cachedUnits'>> {
  const { conversations } = opts;
  /** Ids of the scenarios in flight, for progress (the conversations themselves are not kept). */
  const ids = new Map<number, string>();
  const warnings = new Set<string>();
  let [tokenizerCalls, replayedUnits, cachedUnits] = [0, 0, 0];
  let [next, done, finished] = [0, 0, 0];
  const workers: Worker[] = [];
  const watchdog = setup.watch && new ModuleWatchdog(setup.watch.modules, setup.watch.limits);

  return new Promise((resolveAll, reject) => {
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      watchdog?.stop();
      for (const w of workers) void w.terminate();
      reject(e);
    };
    watchdog?.start((_, message) => fail(new CtxsimError(message, 'policy-limit')));
    const feed = (w: Worker) => {
      if (next < conversations.length) {
        const index = next++;
        const conversation = conversations.at(index)!;
        ids.set(index, conversation.id);
        watchdog?.name(index, conversation.id);
        w.postMessage({ kind: 'scenario', index, conversation } satisfies ToWorker);
      }
    };
    for (let k = 0; k < jobs; k++) {
      const { w, moduleFailure } = startWorker(file, setup, watchdog);
      workers.push(w);
      let inFlight = 0;
      let over = false;
      const send = () => {
        while (inFlight < 2 && next < conversations.length) {
          feed(w);
          inFlight++;
        }
        if (inFlight === 0) w.postMessage({ kind: 'finish' } satisfies ToWorker);
      };
      w.on('message', (m: FromWorker<E>) => {
        if (failed) return;
        if (m.kind === 'error') {
          const e = m.code !== undefined ? new CtxsimError(m.message, m.code, m.exitCode) : new Error(m.message);
          if (m.code === undefined && m.stack) e.stack = m.stack;
          fail(e);
        } else if (m.kind === 'scenario') {
          try {
            sink(m.records, m.index);
          } catch (e) {
            fail(e instanceof Error ? e : new Error(String(e)));
            return;
          }
          inFlight--;
          done++;
          opts.onProgress?.(done, conversations.length, ids.get(m.index)!);
          ids.delete(m.index);
          send();
        } else {
          tokenizerCalls += m.tokenizerCalls;
          replayedUnits += m.replayedUnits;
          cachedUnits += m.cachedUnits;
          for (const x of m.warnings) warnings.add(x);
          over = true;
          if (++finished < jobs) return;
          watchdog?.stop();
          resolveAll({ tokenizerCalls, warnings: [...warnings], replayedUnits, cachedUnits });
        }
      });
      w.on('error', (e) => fail(moduleFailure(e) ?? workerError(e)));
      // A worker that ends before it has finished (a module's process.exit in a timer) fails the run, whatever its code.
      w.on('exit', (code) => {
        if (!over) fail(moduleFailure(undefined, code) ?? new Error(`worker thread exited with code ${code}`));
      });
      send();
    }
  });
}
