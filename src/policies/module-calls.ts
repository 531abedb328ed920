import { types } from 'node:util';
import { CtxsimError } from '../errors.js';

/**
 * A policy module is foreign code: it runs on a thread of its own
 * (module-host.ts), reached through a link (module-link.ts). What is said of
 * its calls, and of what they throw, is here.
 */

/** What a module's call is: the import, `start`, or a session method. */
export const MODULE_METHODS = ['import', 'start', 'prompt', 'commit', 'forget', 'artifacts'] as const;
export type ModuleMethod = (typeof MODULE_METHODS)[number];

/**
 * Whether a policy's method returned a promise (an `async` method, or one
 * that awaits): a run calls each one and reads what it returns at once, so a
 * promise is named as such, not read as a plan or a session it is not.
 * Asked of the value's internals, so no getter or proxy trap of it runs.
 */
export function isPromise(v: unknown): v is Promise<unknown> {
  return types.isPromise(v);
}

/** `process.exit` on a module's thread: a policy must not end the run. */
export function refuseExit(code?: unknown): never {
  throw new Error(`called process.exit(${code === undefined ? '' : describeThrown(code)}): a policy must not end the process`);
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
