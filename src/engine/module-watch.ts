import { CtxsimError } from '../errors.js';
import { describeThrown, MODULE_METHODS } from '../policies/module-calls.js';
import { moduleCallPlace, type LinkedModule, type LinkHooks } from '../policies/module-link.js';

/**
 * Policy modules run under limits: each runs on a thread of its own (its
 * host, policies/module-host.ts), one per worker thread of the run, which
 * reaches it through a link; the worker marks the start and end of every
 * call into a module in a few integers it shares with the run's thread (no
 * message per call), and a watchdog on the run's thread, which never runs
 * module code and so is never held up by it, ends the run when a call has
 * not returned in time. A host's heap is limited too (`resourceLimits`),
 * and what it holds outside its heap is checked after every call and every
 * 100 ms; running out of either ends the host. Each ends the run with one
 * line naming the module, the scenario, the turn and the limit.
 */

/** The time a module's call may take, and the memory of the thread that runs modules. */
export interface ModuleLimits {
  /** Seconds one call into a module (its import, `start`, a session method) may take. */
  timeoutSeconds: number;
  /** MB of old generation a module's thread may use, and MB it may hold outside its heap. */
  memoryMb: number;
}

/** A module of the run, as the marks name it (by index) and the errors show it, with the sha256 of its bytes. */
export interface WatchedModule extends LinkedModule {
  hash: string;
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
 * The hooks a worker gives its link (`ModuleLink`) to mark each call into a
 * module in `buffer`; `scenario(index, id)` tells the scenario being
 * replayed (and names it, for a call of a session that started in another).
 */
export function markingHooks(buffer: SharedArrayBuffer): LinkHooks & { scenario(index: number, id: string): void } {
  const marks = new Int32Array(buffer);
  const scenarios = new Map<string, number>();
  return {
    enter(module, method, turn, scenario) {
      marks[MODULE] = module;
      marks[TURN] = turn;
      marks[METHOD] = MODULE_METHODS.indexOf(method);
      const i = scenarios.get(scenario);
      if (i !== undefined) marks[SCENARIO] = i;
      Atomics.add(marks, SEQ, 1);
    },
    leave() {
      Atomics.add(marks, SEQ, 1);
    },
    scenario(i, id) {
      scenarios.set(id, i);
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
    const scenario = this.names[marks[SCENARIO]!] ?? `scenario ${marks[SCENARIO]! + 1}`;
    return moduleCallPlace(m, MODULE_METHODS[marks[METHOD]!] ?? 'start', marks[TURN]!, scenario);
  }

  private timeout(w: number): string {
    const seconds = this.limits.timeoutSeconds;
    const where = this.where(w) ?? 'a policy module';
    return where.endsWith(': its import')
      ? `${where.slice(0, -': its import'.length)}: its import did not finish within ${seconds} s (a top-level await that never settles, or a loop; raise the limit with --policy-timeout)`
      : `${where} did not return within ${seconds} s (raise the limit with --policy-timeout)`;
  }

  /**
   * What the end of worker `w`'s module host means: out of memory, an exit,
   * or an error thrown outside any call (what a module throws from a timer
   * or a promise comes as a `ModuleFault` instead, unless it took the
   * thread's own handlers away), named at the module's current or last
   * call; undefined when no module has been called.
   */
  failure(w: number, e: { code?: string; message?: string } | undefined, exitCode?: number): CtxsimError | undefined {
    const where = this.where(w);
    if (!where) return undefined;
    const after = this.inCall(w) ? '' : 'after it, ';
    let what: string;
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') what = `${after}the worker thread ran out of memory (its heap is limited to ${this.limits.memoryMb} MB; raise it with --policy-memory)`;
    else if (e) what = `${after}threw outside its calls (from a timer or a promise it started): ${describeThrown(e)}`;
    else what = `${after}the worker thread ended (exit code ${exitCode})`;
    return new CtxsimError(`${where}: ${what}`, 'policy-limit');
  }
}
