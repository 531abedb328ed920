import { Console } from 'node:console';
import { CtxsimError } from '../errors.js';
import type { Policy, PolicySession } from './types.js';

/**
 * A policy module is foreign code: every call into it goes through the
 * wrapper here, on the thread that runs it. During a call its console (and
 * `process.stdout.write`) writes to stderr — stdout may carry a run's CSV,
 * JSON or markdown — and `process.exit` throws instead of ending the
 * process. A worker thread of a run also marks each call's start and end
 * (`setModuleCallHooks`), which its run's watchdog reads to stop a call that
 * never returns (engine/module-watch.ts).
 */

/** What a module's call is: the import, `start`, or a session method. */
export const MODULE_METHODS = ['import', 'start', 'prompt', 'commit', 'forget', 'artifacts'] as const;
export type ModuleMethod = (typeof MODULE_METHODS)[number];

/** Told of each call into a module: which (by policy id), what, and at which turn (0: before the first). */
export interface ModuleCallHooks {
  enter(id: string, method: ModuleMethod, turn: number): void;
  leave(): void;
}

let hooks: ModuleCallHooks | undefined;

/** Sets what is told of every call into a module on this thread (a run's worker marks them for its watchdog). */
export function setModuleCallHooks(h: ModuleCallHooks | undefined): void {
  hooks = h;
}

/** A console whose every method writes to stderr. */
let stderrConsole: Console | undefined;

/** `process.exit` while a module runs: a policy must not end the run. */
function refuseExit(code?: unknown): never {
  throw new Error(`called process.exit(${code === undefined ? '' : describeThrown(code)}): a policy must not end the process`);
}

/** Writes to stdout sent to stderr. */
const toStderr = ((chunk: unknown, ...rest: unknown[]) => (process.stderr.write as (...a: unknown[]) => boolean)(chunk, ...rest)) as typeof process.stdout.write;

/**
 * Runs `f` as module code: its console and stdout go to stderr, and
 * `process.exit` throws; what was there is put back afterwards (also when
 * `f` throws, or its promise settles).
 */
export function asModuleCode<T>(f: () => T): T {
  const saved = { console: globalThis.console, exit: process.exit, write: process.stdout.write };
  stderrConsole ??= new Console({ stdout: process.stderr, stderr: process.stderr });
  globalThis.console = stderrConsole;
  process.exit = refuseExit;
  process.stdout.write = toStderr;
  const restore = () => {
    globalThis.console = saved.console;
    process.exit = saved.exit;
    process.stdout.write = saved.write;
  };
  let result: T;
  try {
    result = f();
  } catch (e) {
    restore();
    throw e;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}

/** One call into a module: told to the hooks, run as module code. */
function call<T>(id: string, method: ModuleMethod, turn: number, f: () => T): T {
  hooks?.enter(id, method, turn);
  try {
    return asModuleCode(f);
  } finally {
    hooks?.leave();
  }
}

/** The module's import, as one call (for the hooks) of module code. */
export function importCall<T>(id: string, f: () => Promise<T>): Promise<T> {
  hooks?.enter(id, 'import', 0);
  return asModuleCode(f).finally(() => hooks?.leave());
}

/**
 * A module's policy whose `start` and session methods run as module calls
 * (see above). A session is read once, inside `start`'s call: a method a
 * getter hides throws there; one missing stays missing, for `startSession`
 * to name.
 */
export function moduleCalls(policy: Policy): Policy {
  const { id } = policy;
  const start: Policy['start'] = (conversation, params, deps) =>
    call(id, 'start', 0, () => {
      const s = policy.start(conversation, params, deps);
      if (typeof s !== 'object' || s === null) return s;
      let turn = 0;
      const method = <K extends keyof PolicySession>(name: K, at: (args: Parameters<PolicySession[K]>) => number) => {
        const f = s[name] as unknown;
        if (typeof f !== 'function') return f as PolicySession[K];
        return ((...args: Parameters<PolicySession[K]>) => {
          turn = at(args);
          return call(id, name, turn, () => (f as (...a: unknown[]) => unknown).apply(s, args));
        }) as PolicySession[K];
      };
      return {
        prompt: method('prompt', ([, info]) => info.turn.index),
        commit: method('commit', ([, info]) => info.turn.index),
        forget: method('forget', ([, info]) => info.afterTurn),
        artifacts: method('artifacts', () => turn),
      };
    });
  return { id, describe: policy.describe, params: policy.params, start };
}

/**
 * What a module threw or gave, as one line: an error's message (or name),
 * else the value as text; never throws itself (a getter that throws, an
 * object with no way to become a string).
 */
export function describeThrown(e: unknown): string {
  try {
    const text = e instanceof Error ? e.message || e.name : typeof e === 'symbol' ? e.toString() : String(e);
    return String(text).split('\n')[0]!;
  } catch {
    try {
      return `a value that cannot be shown (${Object.prototype.toString.call(e)})`;
    } catch {
      return 'a value that cannot be shown';
    }
  }
}

/** A failure of module code outside any check: `${where}: ${what}: <what was thrown>` (code `policy`, exit 2), the thrown value its cause. */
export function moduleFault(where: string, what: string, e: unknown): CtxsimError {
  const error = new CtxsimError(`${where}: ${what}: ${describeThrown(e)}`, 'policy');
  error.cause = e;
  return error;
}
