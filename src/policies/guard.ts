import { CtxsimError } from '../errors.js';
import type { UpkeepCall } from '../types.js';
import { planProblems, upkeepShape, type PlanCall } from './contract.js';
import type { Policy, PolicySession } from './types.js';

/**
 * A policy whose sessions keep the per-call rules of the policy contract
 * (`planProblems`: system prompt pinned, a user message first, the current
 * turn last and whole, tool pairs intact, the budget kept, the plan well
 * formed) on every call of a run, for any policy, built in or a user's
 * module. The first broken rule, or anything the policy throws, ends the run
 * with a `CtxsimError` (code `policy`, exit 2) of one line naming the
 * policy, the turn and the scenario:
 *
 *     keep-edges: turn 5 of noah-amnesia: current-turn-last: the current turn is not sent last, in full
 *     keep-edges: turn 5 of noah-amnesia: threw: <its message>
 *
 * What the policy threw is the error's `cause` (its stack for `CTXSIM_DEBUG=1`).
 * `label` names the policy: the variant's canonical name. The checks cost
 * O(messages of the plan) per call; the budget is counted with the session's
 * own counter, whose counts are memoized.
 */
export function guardPolicy(policy: Policy, label: string): Policy {
  return {
    ...policy,
    start(conversation, params, deps) {
      const scenario = conversation.id;
      const session = attempt(() => policy.start(conversation, params, deps), `${label}: ${scenario}: start threw`);
      const missing = sessionProblem(session);
      if (missing) throw new CtxsimError(`${label}: ${scenario}: start returned ${missing}`, 'policy');
      const budget = typeof params.budget === 'number' ? params.budget : undefined;
      const rules: Omit<PlanCall, 'pending' | 'afterTools'> = { system: conversation.system, budget, tokens: deps.tokens };
      /** Where the session is, for messages: the last turn it was told of. */
      let turn = 0;
      const at = (t: number) => (t ? `turn ${t} of ${scenario}` : `before the first turn of ${scenario}`);
      const upkeep = (list: UpkeepCall[], where: string, method: string) => {
        const bad = upkeepShape(list);
        if (bad) throw new CtxsimError(`${label}: ${where}: ${method}: ${bad}`, 'policy');
        return list;
      };
      return {
        prompt(pending, info) {
          turn = info.turn.index;
          const afterTools = pending.length > 1;
          const where = `${at(turn)}${afterTools ? ', call 2' : ''}`;
          const plan = attempt(() => session.prompt(pending, info), `${label}: ${where}: threw`);
          const [problem] = planProblems(plan, { ...rules, pending, afterTools });
          if (problem) throw new CtxsimError(`${label}: ${where}: ${problem.rule}: ${problem.detail}`, 'policy');
          return plan;
        },
        commit(exchange, info) {
          turn = info.turn.index;
          return upkeep(
            attempt(() => session.commit(exchange, info), `${label}: ${at(turn)}: commit threw`),
            at(turn),
            'commit',
          );
        },
        forget(facts, info) {
          const where = info.afterTurn ? `after turn ${info.afterTurn} of ${scenario}` : at(0);
          return upkeep(
            attempt(() => session.forget(facts, info), `${label}: ${where}: forget threw`),
            where,
            'forget',
          );
        },
        artifacts() {
          return attempt(() => session.artifacts(), `${label}: ${turn ? `after turn ${turn} of ${scenario}` : at(0)}: artifacts threw`);
        },
      };
    },
  };
}

/** Runs `f`; what it throws becomes a `CtxsimError` `${prefix}: <its message>`, the thrown value its cause. */
function attempt<T>(f: () => T, prefix: string): T {
  try {
    return f();
  } catch (e) {
    const message = (e instanceof Error ? e.message || e.name : String(e)).split('\n')[0];
    const error = new CtxsimError(`${prefix}: ${message}`, 'policy');
    error.cause = e;
    throw error;
  }
}

const METHODS = ['prompt', 'commit', 'forget', 'artifacts'] as const;

/** What is wrong with what `start` returned (not an object, or methods missing), or undefined. */
function sessionProblem(s: PolicySession): string | undefined {
  if (typeof s !== 'object' || s === null) return `${s === null ? 'null' : typeof s}, not a session {${METHODS.join(', ')}}`;
  const missing = METHODS.filter((k) => typeof s[k] !== 'function');
  return missing.length ? `a session without ${missing.join(', ')} (each a function)` : undefined;
}
