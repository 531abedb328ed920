import { createHash } from 'node:crypto';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { CtxsimError } from '../errors.js';
import { compiledFile, InputFileError, readInputFile } from '../process.js';
import { describeThrown } from './module-calls.js';
import { CALLER_POSTED, givenKey, linkSignal, type Given, type HostConnect, type HostSetup, type LinkReply, type LinkRequest, type ModuleDescription, type ModuleFault, type ResolvedVariants } from './module-link.js';
import type { Policy, PolicyVariant } from './types.js';

/**
 * A policy loaded from a JavaScript module the user named by path. Its code
 * never runs on this thread: it is imported, its default export read and its
 * parameters resolved on a thread of its own (module-host.ts), which tells
 * this one what it needs (id, line, parameters, variants); a run, `explain`
 * and `check-policy` start the module again on a host of their own.
 */
export interface PolicyModule {
  /**
   * The module's policy as this thread knows it: its `id`, `describe` and
   * parameters (as a table), and the variants of every set of parameters
   * asked when it was loaded (`ModuleLoadOptions.given`, and none: the defaults).
   * Its `start` throws: a session of it runs only on its module's thread.
   */
  policy: Policy;
  /** The module's path as it was given (a relative one is read from the working directory). */
  file: string;
  /** sha256 (hex) of the file's bytes: what a run's fingerprint records. */
  hash: string;
  /** sha256 (hex) of the bytes of every file its import resolved besides its own (`importsHash`); absent when it imports none: the replay cache keys its units on it too. */
  imports?: string;
  /** With `ModuleLoadOptions.contract`: the sets of parameters the contract check runs (`contractVariants`), each among the policy's variants. */
  contract?: Record<string, unknown>[];
}

/** How a module is loaded. */
export interface ModuleLoadOptions {
  /** The time its import may take, and then the reading of its policy, in seconds (default `DEFAULT_POLICY_TIMEOUT`). */
  timeoutSeconds?: number;
  /** The heap its thread may use, and as much outside it, in MB (default `DEFAULT_POLICY_MEMORY`). */
  memoryMb?: number;
  /** The sets of parameters to resolve (each as given: `[['keep', '1']]`, a list value a sweep): `policy.variants` knows these alone. */
  given?: readonly Given[];
  /** Tell the sets of parameters the contract check runs (`PolicyModule.contract`). */
  contract?: boolean;
}

/**
 * Whether a policy spec's name is a path to a module rather than an id:
 * it starts with `./`, `../` or `/`, or ends in `.js`, `.mjs` or `.cjs`
 * (a `.cjs` module's `module.exports` is its default export).
 */
export function isPolicyPath(name: string): boolean {
  return POLICY_PATH.test(name);
}

/** What `isPolicyPath` accepts, as a pattern (the study schema uses it too). */
export const POLICY_PATH = /^(?:\.{0,2}\/[^:]*|[^:]*\.[cm]?js)$/;

/** The time a policy module's call (and its import) may take, in seconds, unless `--policy-timeout` says otherwise. */
export const DEFAULT_POLICY_TIMEOUT = 10;

/** The heap a policy module's thread may use, and as much outside it, in MB, unless `--policy-memory` says otherwise. */
export const DEFAULT_POLICY_MEMORY = 1024;

/**
 * Loads a policy module: its default export must be a policy (`id`,
 * `describe`, `params` as a zod object or a parameter table, `start`), as
 * `definePolicy` makes or as written by hand. `file` is absolute; `shown`
 * names it in messages. Every failure is a `CtxsimError` (code
 * `policy-module`) of one line: `policy module <shown>: <what is wrong>`.
 * The file is read and hashed here; it is imported on a thread of its own,
 * with its hash in the URL (a file changed since is imported again), which
 * must finish within `timeoutSeconds` (a top-level await that never
 * settles, or a loop, is stopped), and whose heap is bounded by
 * `memoryMb`. There its default export is checked and the parameter sets
 * `given` resolved; then the thread is ended.
 */
export async function loadPolicyModule(file: string, shown: string, options: ModuleLoadOptions = {}): Promise<PolicyModule> {
  const fail = (what: string, cause?: unknown) => {
    const error = new CtxsimError(`policy module ${shown}: ${what}`, 'policy-module');
    if (cause !== undefined) error.cause = cause;
    return error;
  };
  let bytes: Buffer;
  try {
    // A regular file, as every input: a FIFO or a device is refused before it is read.
    bytes = readInputFile(file);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw fail(e instanceof InputFileError ? e.reason : err.code === 'ENOENT' ? 'no such file' : `cannot read it (${err.code ?? err.message})`, e);
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  const asked = new Map<string, Given>([[givenKey([]), []]]);
  for (const g of options.given ?? []) asked.set(givenKey(g), g);
  const sets = [...asked.values()];
  const d = await describeOnHost({ file, hash, shown }, sets, options);
  const policy = described(d, shown);
  const variants = new Map<string, PolicyVariant[] | string>();
  const add = (g: Given, r: ResolvedVariants) => variants.set(givenKey(g), typeof r === 'string' ? r : r.map((v) => ({ ...v, policy })));
  sets.forEach((g, i) => add(g, d.resolved[i]!));
  for (const c of d.contract ?? []) add(Object.entries(c.given), c.variants);
  policy.variants = (given) => variants.get(givenKey(given)) ?? `policy module ${shown}: its parameters ${givenKey(given)} were not resolved when it was loaded (name them in loadPolicyModule's given)`;
  const imports = importsHash(d.files);
  return { policy, file, hash, ...(imports && { imports }), ...(d.contract && { contract: d.contract.map((c) => c.given) }) };
}

/**
 * One sha256 (hex) of the contents of `files` (what a module imports, as
 * its thread resolved them; their paths left out, so a moved checkout keys
 * the same), or undefined when there are none. A file that cannot be read
 * any more counts as its reason, so the key still changes.
 */
function importsHash(files: readonly string[]): string | undefined {
  if (!files.length) return undefined;
  const hashes = files.map((f) => {
    try {
      return createHash('sha256').update(readInputFile(f)).digest('hex');
    } catch (e) {
      return `unreadable: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    }
  });
  return createHash('sha256').update(hashes.sort().join('\n')).digest('hex');
}

/** The policy this thread knows of a module: what its thread told. */
function described(d: ModuleDescription, shown: string): Policy {
  return {
    id: d.id,
    describe: d.describe,
    params: d.params,
    start() {
      throw new CtxsimError(`policy module ${shown}: its sessions run on a thread of its own, in a run (streamStudyParallel), explain or check-policy`, 'policy-module');
    },
  };
}

/** What a module whose import took too long is told. */
export function importTimeout(seconds: number): string {
  return `its import did not finish within ${seconds} s (a top-level await that never settles, or a loop; raise the limit with --policy-timeout)`;
}

/** @internal
 * Starts a thread for policy modules (module-host.ts), for `task` (to
 * describe a module, or to run sessions), its heap limited to
 * `memoryMb`, its stdout and stderr piped to this process's stderr (what a
 * module writes never reaches stdout, which may carry a run's output), and
 * hands it its end of a link: returns the thread, this end's port and the
 * link's shared integers. Once transferred to the thread that replays, the
 * port is that thread's.
 */
export function openModuleHost(modules: HostSetup['modules'], memoryMb: number, task: HostSetup['task']): ModuleHost {
  const file = compiledFile('policies/module-host.js');
  if (!file) throw new CtxsimError('policy modules run on threads of their own, from the compiled package: build it first (npm run build)', 'internal');
  const worker = new Worker(file, { workerData: { modules, memoryMb, task } satisfies HostSetup, resourceLimits: { maxOldGenerationSizeMb: memoryMb }, stdout: true, stderr: true });
  for (const out of [worker.stdout, worker.stderr]) out.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const link = new MessageChannel();
  const faults = new MessageChannel();
  const output = new MessageChannel();
  const signal = linkSignal();
  worker.postMessage({ port: link.port2, signal, faults: faults.port2, output: output.port2 } satisfies HostConnect, [link.port2, faults.port2, output.port2]);
  // Told of a fault, and given what the thread writes, while it runs; neither keeps this process alive.
  faults.port1.unref();
  output.port1.on('message', (chunk: Uint8Array) => process.stderr.write(chunk));
  output.port1.unref();
  return { worker, port: link.port1, signal, faults: faults.port1, output: output.port1 };
}

/** @internal Ends a module's thread, then writes to stderr what it wrote that this thread has not read yet. */
export async function closeModuleHost(host: ModuleHost): Promise<void> {
  host.faults.close();
  await host.worker.terminate();
  for (let m = receiveMessageOnPort(host.output); m; m = receiveMessageOnPort(host.output)) process.stderr.write(m.message as Uint8Array);
  host.output.close();
}

/** @internal A thread for policy modules: the thread, this end of its link (its port and shared integers), the port it tells of a module's fault on (`ModuleFault`), and the one what it writes comes by. */
export interface ModuleHost {
  worker: Worker;
  port: MessagePort;
  signal: SharedArrayBuffer;
  faults: MessagePort;
  output: MessagePort;
}

/**
 * Describes a module on a thread of its own: imports it, checks its default
 * export, resolves the sets of parameters (and, asked, the contract
 * check's). The import must finish within the time limit, and so must
 * what follows it (the module's parameter checks run there too); then the
 * thread is ended.
 */
async function describeOnHost(module: HostSetup['modules'][number], given: Given[], options: ModuleLoadOptions): Promise<ModuleDescription> {
  const seconds = options.timeoutSeconds ?? DEFAULT_POLICY_TIMEOUT;
  const memoryMb = options.memoryMb ?? DEFAULT_POLICY_MEMORY;
  const fail = (what: string) => new CtxsimError(`policy module ${module.shown}: ${what}`, 'policy-module');
  const host = openModuleHost([module], memoryMb, 'describe');
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<ModuleDescription>((resolve, reject) => {
      const within = (what: string) => {
        clearTimeout(timer);
        timer = setTimeout(() => reject(fail(what)), seconds * 1000);
      };
      const faulted = (f: ModuleFault) => reject(fail(f.fault === 'threw' ? `threw while loading, from a timer or a promise it started: ${f.message}` : f.message));
      host.port.on('message', (m: LinkReply | { kind: 'ready' } | { kind: 'imported' }) => {
        // The time limit is the import's: it starts once the thread has loaded its own code (slow on a busy machine) and imports the module.
        if (m.kind === 'ready') within(importTimeout(seconds));
        else if (m.kind === 'imported') within(`its policy and parameters could not be read within ${seconds} s (a loop in a getter or a parameter's check; raise the limit with --policy-timeout)`);
        else if (m.kind === 'value') resolve(m.value as ModuleDescription);
        else if (m.kind === 'failed') reject(new CtxsimError(m.message, 'policy-module'));
        else if (m.kind === 'limit') reject(fail(m.message));
        else if (m.kind === 'fault') faulted(m);
        else reject(fail(`its policy cannot be read: ${m.kind === 'promise' ? 'a promise' : m.message}`));
      });
      host.worker.on('error', (e: Error & { code?: string }) => {
        if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') reject(fail(`its thread ran out of memory while it was loaded (its heap is limited to ${memoryMb} MB; raise it with --policy-memory)`));
        else reject(fail(`threw while loading, from a timer or a promise it started: ${describeThrown(e)}`));
      });
      host.worker.on('exit', (code) => reject(fail(`its thread ended while it was loaded (exit code ${code})`)));
      host.faults.on('message', faulted);
      host.port.postMessage({ kind: 'describe', given, contract: options.contract === true } satisfies LinkRequest);
      const signal = new Int32Array(host.signal);
      Atomics.add(signal, CALLER_POSTED, 1);
      Atomics.notify(signal, CALLER_POSTED);
    });
  } finally {
    clearTimeout(timer);
    host.port.close();
    await closeModuleHost(host);
  }
}
