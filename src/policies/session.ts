import { CtxsimError } from '../errors.js';
import type { ArtifactKind, Message, UpkeepCall } from '../types.js';
import { CassetteMissError } from '../upkeep/origin.js';
import { describeThrown, isPromise } from './module-calls.js';
import type { Artifact, Params, Policy, PolicyDeps, PolicySession, SessionStart } from './types.js';

/**
 * A session of `policy` for `conversation`, as a run and the contract check
 * use it: what its methods throw, and what `commit`, `forget` and
 * `artifacts` return of the wrong shape, end the replay with a one-line
 * `CtxsimError` (code `policy`, exit 2) naming the policy (`label`, the
 * variant's canonical name), the turn and the scenario:
 *
 *     keep-edges: turn 5 of noah-amnesia: threw: <its message>
 *     keep-edges: after turn 4 of noah-amnesia: artifacts: artifact of kind "memo" (expected transcript, summary, vectors, facts)
 *
 * What the policy threw is the error's `cause`. A plan is the caller's to
 * check: `prompt` only names what it throws (`callPlace` names the call).
 */
export function startSession(policy: Policy, conversation: SessionStart, params: Params, deps: PolicyDeps, label: string): PolicySession {
  const scenario = conversation.id;
  let session: PolicySession;
  try {
    session = policy.start(conversation, params, deps);
  } catch (e) {
    throw thrown(e, `${label}: ${scenario}: start threw`);
  }
  const missing = sessionProblem(session);
  if (missing) throw new CtxsimError(`${label}: ${scenario}: start returned ${missing}`, 'policy');
  /** The last turn the session was told of. */
  let turn = 0;
  const after = (t: number) => `${label}: ${t ? `after turn ${t}` : 'before the first turn'} of ${scenario}`;
  return {
    prompt(pending, info) {
      turn = info.turn.index;
      try {
        return session.prompt(pending, info);
      } catch (e) {
        throw thrown(e, `${callPlace(label, scenario, turn, pending)}: threw`);
      }
    },
    commit(exchange, info) {
      turn = info.turn.index;
      return checkedUpkeep(() => session.commit(exchange, info), () => `${callPlace(label, scenario, turn, [])}: commit`);
    },
    forget(facts, info) {
      return checkedUpkeep(() => session.forget(facts, info), () => `${after(info.afterTurn)}: forget`);
    },
    artifacts() {
      let list: Artifact[];
      try {
        list = session.artifacts();
      } catch (e) {
        throw thrown(e, `${after(turn)}: artifacts threw`);
      }
      const bad = artifactsShape(list);
      if (bad) throw new CtxsimError(`${after(turn)}: artifacts: ${bad}`, 'policy');
      return list;
    },
  };
}

/** Where a call is, as errors name it: `label: turn T of scenario`, with `, call K` past a turn's first call (call K comes after K − 1 rounds of tool calls, each opened by an assistant message in `pending`). */
export function callPlace(label: string, scenario: string, turn: number, pending: readonly Message[]): string {
  const call = 1 + pending.filter((x) => x.role === 'assistant').length;
  return `${label}: turn ${turn} of ${scenario}${call > 1 ? `, call ${call}` : ''}`;
}

/**
 * What is wrong with a list of upkeep calls (a plan's, or what `commit` or
 * `forget` returned), or undefined: an array of calls whose token counts
 * are whole numbers, not negative, and whose `sync` is true or false.
 */
export function upkeepShape(upkeep: readonly UpkeepCall[]): string | undefined {
  if (!Array.isArray(upkeep)) return `upkeep is ${kindOf(upkeep)}, not an array`;
  for (const u of upkeep) {
    if (typeof u !== 'object' || u === null) return `upkeep holds ${kindOf(u)}, not a call {kind, model, inputTokens, outputTokens, sync}`;
    if (!UPKEEP_KINDS.includes(u.kind)) return `upkeep of kind ${kindOf(u.kind)} (expected ${UPKEEP_KINDS.join(', ')})`;
    if (typeof u.model !== 'string' || !u.model) return `upkeep ${u.kind} with model ${kindOf(u.model)} (expected a model's name)`;
    if (![u.inputTokens, u.outputTokens].every((n) => Number.isInteger(n) && n >= 0)) return `upkeep ${u.kind} with ${kindOf(u.inputTokens)} in, ${kindOf(u.outputTokens)} out (expected whole numbers of tokens ≥ 0)`;
    // Read as a condition, any other value would do ("false" is truthy): the user would wait for it.
    if (typeof u.sync !== 'boolean') return `upkeep ${u.kind} with sync ${kindOf(u.sync)} (expected true or false)`;
  }
  return undefined;
}

const UPKEEP_KINDS: readonly unknown[] = ['summary', 'extract', 'embed'] satisfies UpkeepCall['kind'][];
const ARTIFACT_KINDS: readonly unknown[] = ['transcript', 'summary', 'vectors', 'facts'] satisfies ArtifactKind[];

/** What is wrong with what `artifacts()` returned, or undefined: a list of {kind, texts, bytes}, one per kind. */
export function artifactsShape(artifacts: readonly Artifact[]): string | undefined {
  if (!Array.isArray(artifacts)) return `artifacts is ${kindOf(artifacts)}, not an array`;
  const seen = new Set<unknown>();
  for (const a of artifacts) {
    if (typeof a !== 'object' || a === null) return `artifacts holds ${kindOf(a)}, not an artifact {kind, texts, bytes}`;
    if (!ARTIFACT_KINDS.includes(a.kind)) return `artifact of kind ${kindOf(a.kind)} (expected ${ARTIFACT_KINDS.join(', ')})`;
    if (seen.has(a.kind)) return `two artifacts of kind ${a.kind} (one per kind)`;
    seen.add(a.kind);
    if (!Array.isArray(a.texts) || !a.texts.every((t: unknown) => typeof t === 'string')) return `artifact ${a.kind} with texts ${kindOf(a.texts)} (expected a list of strings)`;
    if (!Number.isInteger(a.bytes) || a.bytes < 0) return `artifact ${a.kind} with bytes ${kindOf(a.bytes)} (expected a whole number ≥ 0)`;
  }
  return undefined;
}

/** What a policy threw, as the run throws it: a `CtxsimError` `${prefix}: <its first line>`, the thrown value its cause (a cassette's miss, and an error that names its call already, as they are). */
export function thrown(e: unknown, prefix: string): unknown {
  if (isMiss(e) || (typeof e === 'object' && e !== null && PLACED.has(e))) return e;
  const error = new CtxsimError(`${prefix}: ${describeThrown(e)}`, 'policy');
  error.cause = e;
  return error;
}

/** Errors that name their call already: what a policy module's link found wrong with a call (a limit, a reply it cannot read). */
const PLACED = new WeakSet<object>();

/** `e`, which names its call already: a session passes it on as it is. */
export function placed<E extends Error>(e: E): E {
  PLACED.add(e);
  return e;
}

/** Whether `e` is a cassette's miss (asked safely: a proxy's prototype trap may throw). */
function isMiss(e: unknown): boolean {
  try {
    return e instanceof CassetteMissError;
  } catch {
    return false;
  }
}

/** A value as an error names it: `undefined`, `null`, `an array`, or its type and JSON. */
export function kindOf(v: unknown): string {
  if (v === undefined || v === null) return String(v);
  if (Array.isArray(v)) return 'an array';
  if (isPromise(v)) return `a promise (a policy's methods are synchronous: not async)`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'function') return 'a function';
  return JSON.stringify(v) ?? String(v);
}

/** The upkeep a session method returns; what it throws, or upkeep of the wrong shape, ends the run as `${where()} threw: …` or `${where()}: …`. */
function checkedUpkeep(f: () => UpkeepCall[], where: () => string): UpkeepCall[] {
  let list: UpkeepCall[];
  try {
    list = f();
  } catch (e) {
    throw thrown(e, `${where()} threw`);
  }
  const bad = upkeepShape(list);
  if (bad) throw new CtxsimError(`${where()}: ${bad}`, 'policy');
  return list;
}

const METHODS = ['prompt', 'commit', 'forget', 'artifacts'] as const;

/** What is wrong with what `start` returned (not an object, or methods missing), or undefined. */
function sessionProblem(s: PolicySession): string | undefined {
  if (typeof s !== 'object' || s === null || isPromise(s)) return `${s === null ? 'null' : isPromise(s) ? kindOf(s) : typeof s}, not a session {${METHODS.join(', ')}}`;
  const missing = METHODS.filter((k) => typeof s[k] !== 'function');
  return missing.length ? `a session without ${missing.join(', ')} (each a function)` : undefined;
}
