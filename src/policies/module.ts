import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { isMainThread, Worker } from 'node:worker_threads';
import { z } from 'zod';
import { CtxsimError } from '../errors.js';
import { InputFileError, readInputFile } from '../process.js';
import { describeThrown, importCall, moduleCalls } from './module-calls.js';
import { paramsFromTable } from './params.js';
import { valueOf } from '../text/zod.js';
import type { ParamSpec, Policy } from './types.js';

/** A policy loaded from a JavaScript module the user named by path. */
export interface PolicyModule {
  /** The module's policy, each call into it made as module code (`moduleCalls`). */
  policy: Policy;
  /** The module's path as it was given (a relative one is read from the working directory). */
  file: string;
  /** sha256 (hex) of the file's bytes: what a run's fingerprint records. */
  hash: string;
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

/** The kinds a parameter table may declare. */
const KINDS = ['int', 'number', 'string', 'boolean', 'duration', 'probability'] as const satisfies readonly ParamSpec['kind'][];

/** A parameter table entry of the documented shape (`{ default, kind, min?, oneOf? }`). */
const PARAM_SPEC = z.strictObject({
  default: z.union([z.number(), z.string(), z.boolean()], { error: 'a number, a string or true/false' }).optional(),
  kind: z.enum(KINDS, { error: `one of ${KINDS.join(', ')}` }),
  min: z.number({ error: 'a number' }).optional(),
  oneOf: z.array(z.string(), { error: 'a list of strings' }).min(1, { error: 'a list of strings' }).optional(),
}, { error: 'an object { default, kind, min?, oneOf? }' });

const ID = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Imports a policy module: its default export must be a policy (`id`,
 * `describe`, `params` as a zod object or a parameter table, `start`), as
 * `definePolicy` makes or as written by hand. `file` is absolute; `shown`
 * names it in messages. Every failure is a `CtxsimError` (code
 * `policy-module`) of one line: `policy module <shown>: <what is wrong>`.
 * The module is imported with its hash in the URL, so a file changed since
 * an earlier load in this process is loaded again, and matches `hash`.
 * `importModule` imports a URL: Node's `import()` unless a test passes its
 * own (a test runner's module loader replaces `import()` in the code it runs).
 * The import runs as module code (its console on stderr, see
 * module-calls.ts) and must finish within `timeoutSeconds` (a top-level
 * await that never settles fails; a top-level loop on this thread cannot be
 * stopped — a run's worker threads are watched for it).
 */
export async function loadPolicyModule(
  file: string,
  shown: string,
  importModule: (url: string) => Promise<unknown> = (url) => import(url),
  timeoutSeconds = DEFAULT_POLICY_TIMEOUT,
): Promise<PolicyModule> {
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
  const url = `${pathToFileURL(file).href}?sha256=${hash}`;
  // On the main thread a top-level loop could not be stopped: the import is tried first on a thread of its own.
  if (isMainThread) await probeImport(url, timeoutSeconds, () => fail(importTimeout(timeoutSeconds)));
  let loaded: Record<string, unknown>;
  try {
    loaded = (await importCall(shown, () => withTimeout(importModule(url), timeoutSeconds, () => fail(importTimeout(timeoutSeconds))))) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof CtxsimError && e.code === 'policy-module') throw e;
    throw fail(loadFailure(e, url), e);
  }
  try {
    const policy: unknown = loaded.default;
    if (policy === undefined) throw fail('no default export (expected `export default { id, describe, params, start }`)');
    const wrong = policyProblem(policy);
    if (wrong) throw fail(wrong);
    return { policy: moduleCalls(policy as Policy), file, hash };
  } catch (e) {
    if (e instanceof CtxsimError) throw e;
    // A getter or a proxy that throws when its policy is read.
    throw fail(`its default export cannot be read: ${describeThrown(e)}`, e);
  }
}

/** The time a policy module's call (and its import) may take, in seconds, unless `--policy-timeout` says otherwise. */
export const DEFAULT_POLICY_TIMEOUT = 10;

/** What a module whose import took too long is told. */
export function importTimeout(seconds: number): string {
  return `its import did not finish within ${seconds} s (a top-level await that never settles, or a loop; raise the limit with --policy-timeout)`;
}

/**
 * Imports `url` on a worker thread of its own (silent: its output is
 * dropped), which is ended if the import has not finished within
 * `seconds`: then `timedOut()` is thrown. Whether the import failed is left
 * for the real import to tell.
 */
async function probeImport(url: string, seconds: number, timedOut: () => Error): Promise<void> {
  const worker = new Worker(PROBE, { eval: true, workerData: url, stdout: true, stderr: true });
  const finished = new Promise<void>((done) => {
    worker.once('message', () => done());
    worker.once('error', () => done());
    worker.once('exit', () => done());
  });
  // The time limit is the import's: it starts once the thread runs (starting one takes a while on a busy machine).
  const online = new Promise<void>((started) => worker.once('online', () => started()));
  try {
    await Promise.race([online, finished]);
    await withTimeout(finished, seconds, timedOut);
  } finally {
    await worker.terminate();
  }
}

/** The probe's code: import, then say so (a module's process.exit only ends this thread). */
const PROBE = `const { parentPort, workerData } = require('node:worker_threads');
import(workerData).then(() => parentPort.postMessage('done'), () => parentPort.postMessage('done'));`;

/** `p`, or the error `timedOut` makes once `seconds` have passed first. */
function withTimeout<T>(p: Promise<T>, seconds: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), seconds * 1000);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * What went wrong importing the module: a syntax error (Node gives no line
 * for one found while parsing an ES module; when its stack names a line of
 * the module, it is given), or what the module threw while loading, with the
 * line of the module it came from.
 */
function loadFailure(e: unknown, url: string): string {
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
  if (e instanceof SyntaxError && at < 0) return `syntax error: ${message}`;
  return `threw while loading${where}: ${message}`;
}

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
  if ('_zod' in params) return 'shape' in params ? undefined : `${expected}, got a zod schema that is not an object`;
  if ('_def' in params) return 'params is a zod 3 schema: ctxsim reads zod 4 (import { z } from "zod" with zod 4 installed)';
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
