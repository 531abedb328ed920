import { CtxsimError } from '../errors.js';
import { describeThrown, MODULE_METHODS, type ModuleCallHooks } from '../policies/module-calls.js';

/**
 * Policy modules run under limits: a run that has any replays on worker
 * threads (one at least), each worker marks the start and end of every call
 * into a module in a few integers it shares with the run's thread (no
 * message per call), and a watchdog on the run's thread ends a worker whose
 * call has not returned in time. A worker's heap is limited too
 * (`resourceLimits`); running out of it ends the worker. Either ends the run
 * with one line naming the module, the scenario, the turn and the limit.
 */

/** The time a module's call may take, and the heap of a worker thread that runs modules. */
export interface ModuleLimits {
  /** Seconds one call into a module (its import, `start`, a session method) may take. */
  timeoutSeconds: number;
  /** MB of old generation a worker thread may use. */
  memoryMb: number;
}

/** A module of the run, as the marks name it (by index) and the errors show it. */
export interface WatchedModule {
  id: string;
  file: string;
}

/** The integers of one worker's marks: a counter (odd while a call runs), the module, the scenario (index in the study), the turn, the method. */
const SEQ = 0;
const MODULE = 1;
const SCENARIO = 2;
const TURN = 3;
const METHOD = 4;
const SLOTS = 5;

/** A worker's marks, shared with the run's thread. */
export function marksBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT);
}

/**
 * The hooks a worker sets (`setModuleCallHooks`) to mark each call into a
 * module in `buffer`; a module is named by its id or file (the import's),
 * found in `modules`. `scenario` sets the scenario being replayed.
 */
export function markingHooks(buffer: SharedArrayBuffer, modules: readonly WatchedModule[]): ModuleCallHooks & { scenario(index: number): void } {
  const marks = new Int32Array(buffer);
  const index = new Map<string, number>();
  modules.forEach((m, i) => index.set(m.id, i).set(m.file, i));
  return {
    enter(id, method, turn) {
      marks[MODULE] = index.get(id) ?? -1;
      marks[TURN] = turn;
      marks[METHOD] = MODULE_METHODS.indexOf(method);
      Atomics.add(marks, SEQ, 1);
    },
    leave() {
      Atomics.add(marks, SEQ, 1);
    },
    scenario(i) {
      marks[SCENARIO] = i;
      marks[MODULE] = -1;
    },
  };
}

/**
 * The run thread's side: reads each worker's marks every tick, and calls
 * `onTimeout` with the worker whose call has run past the limit (counted
 * from the tick that first saw it) and the message that says so. Scenarios
 * are named by the ids `name` was told.
 */
export class ModuleWatchdog {
  private readonly marks: Int32Array[] = [];
  private readonly seen: { seq: number; since: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Every scenario's id by index (a module's late failure names the scenario of its last call). */
  private readonly names: string[] = [];

  constructor(
    private readonly modules: readonly WatchedModule[],
    private readonly limits: ModuleLimits,
  ) {}

  /** Scenario `index` is `id`. */
  name(index: number, id: string): void {
    this.names[index] = id;
  }

  /** Watches one more worker's marks; returns its number. */
  add(buffer: SharedArrayBuffer): number {
    this.marks.push(new Int32Array(buffer));
    this.seen.push({ seq: 0, since: 0 });
    return this.marks.length - 1;
  }

  /** Starts the ticks; `onTimeout(worker, message)` at most once. */
  start(onTimeout: (worker: number, message: string) => void): void {
    const limit = this.limits.timeoutSeconds * 1000;
    const tick = Math.min(500, Math.max(20, limit / 10));
    this.timer = setInterval(() => {
      const now = performance.now();
      for (const [w, marks] of this.marks.entries()) {
        const seq = Atomics.load(marks, SEQ);
        const seen = this.seen[w]!;
        if (seq % 2 === 0) continue;
        if (seq !== seen.seq) Object.assign(seen, { seq, since: now });
        else if (now - seen.since > limit) {
          this.stop();
          onTimeout(w, this.timeout(w));
          return;
        }
      }
    }, tick);
    // The workers keep the run alive; the watchdog alone does not.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Whether worker `w` is inside a call into a module. */
  inCall(w: number): boolean {
    return Atomics.load(this.marks[w]!, SEQ) % 2 === 1;
  }

  /** Where worker `w`'s current (or last) call is: `policy module FILE (id): turn T of S: METHOD`, or the module and its import. */
  where(w: number): string | undefined {
    const marks = this.marks[w]!;
    const m = this.modules[marks[MODULE]!];
    if (!m) return undefined;
    const method = MODULE_METHODS[marks[METHOD]!] ?? 'a call';
    if (method === 'import') return `policy module ${m.file}: its import`;
    const scenario = this.names[marks[SCENARIO]!] ?? `scenario ${marks[SCENARIO]! + 1}`;
    const turn = marks[TURN]!;
    const at = method === 'forget' ? `after turn ${turn}` : method === 'start' || turn === 0 ? 'before the first turn' : `turn ${turn}`;
    return `policy module ${m.file} (${m.id}): ${at} of ${scenario}: ${method}`;
  }

  private timeout(w: number): string {
    const seconds = this.limits.timeoutSeconds;
    const where = this.where(w) ?? 'a policy module';
    return where.endsWith(': its import')
      ? `${where.slice(0, -': its import'.length)}: its import did not finish within ${seconds} s (a top-level await that never settles, or a loop; raise the limit with --policy-timeout)`
      : `${where} did not return within ${seconds} s (raise the limit with --policy-timeout)`;
  }

  /**
   * What a worker's end means when modules run in it: out of memory, an
   * exit, or an error thrown outside any call (a timer or promise a module
   * started), named at the module's current or last call; undefined when
   * no module has been called.
   */
  failure(w: number, e: { code?: string; message?: string } | undefined, exitCode?: number): CtxsimError | undefined {
    const where = this.where(w);
    if (!where) return undefined;
    const inCall = this.inCall(w);
    let what: string;
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') what = `${inCall ? '' : 'after it, '}the worker thread ran out of memory (its heap is limited to ${this.limits.memoryMb} MB; raise it with --policy-memory)`;
    else if (e) what = `${inCall ? '' : 'after it, '}threw outside its calls (from a timer or a promise it started): ${describeThrown(e)}`;
    else what = `${inCall ? '' : 'after it, '}the worker thread ended (exit code ${exitCode})`;
    return new CtxsimError(`${where}: ${what}`, 'policy-limit');
  }
}
