import { CtxsimError } from '../errors.js';
import { PromptTokens } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { artifactsShape, PlanChecks, thrown, upkeepShape, type PlanCall } from './contract.js';
import type { Artifact, Policy, PolicySession, PromptPlan } from './types.js';

/**
 * A policy whose sessions keep the per-call rules of the policy contract
 * (`planProblems`: system prompt pinned, a user message first, the current
 * turn last and whole, tool pairs intact, the budget kept, the plan well
 * formed) on every call of a run, for any policy, built in or a user's
 * module. The first broken rule, or anything the policy throws, ends the run
 * with a `CtxsimError` (code `policy`, exit 2) of one line naming the
 * policy, the turn and the scenario:
 *
 *     keep-edges: turn 5 of noah-amnesia: current-turn-last: the current turn is not sent last, its newest round in full: 4 message(s) after it
 *     keep-edges: turn 5 of noah-amnesia: threw: <its message>
 *
 * What the policy threw is the error's `cause` (its stack for `CTXSIM_DEBUG=1`).
 * A variant with `naive: true` (a parameter of window-turns, and of any
 * policy that declares one) may break `tool-pairs` and `first-user`: it does
 * so on purpose, and the run counts those prompts as provider rule
 * violations instead. `label` names the policy: the variant's canonical name.
 * The checks read only what a prompt adds when it starts with the previous
 * one (see PlanChecks); the budget is counted with the session's own
 * counter (memoized per message), through running sums of the messages a
 * prompt shares with the previous one (see PromptTokens).
 * `prompts`, for one session, is the caller's counter of its prompts (a run
 * prices each prompt it is given): shared, a prompt is counted once.
 */
export function guardPolicy(policy: Policy, label: string, prompts?: PromptTokens): Policy {
  // A policy already guarded (a run guards every policy it replays) is not checked twice.
  if (GUARDED.has(policy)) return policy;
  const { id, describe, params: declared } = policy;
  const guarded: Policy = {
    id,
    describe,
    params: declared,
    start(conversation, params, deps) {
      const scenario = conversation.id;
      let session: PolicySession;
      try {
        session = policy.start(conversation, params, deps);
      } catch (e) {
        throw thrown(e, `${label}: ${scenario}: start threw`);
      }
      const missing = sessionProblem(session);
      if (missing) throw new CtxsimError(`${label}: ${scenario}: start returned ${missing}`, 'policy');
      const budget = typeof params.budget === 'number' ? params.budget : undefined;
      // `naive: true` (window-turns' slice with no repair) breaks tool pairs on purpose, to measure what that costs: those
      // prompts are counted as provider rule violations (violations.csv), not stopped.
      const measured: ReadonlySet<string> = params.naive === true ? NAIVE_RULES : NO_RULES;
      // Successive prompts share their first messages: their running sums are reused (see PromptTokens).
      const counted = prompts ?? new PromptTokens(deps.tokens);
      const { system } = conversation;
      const tokens: PlanCall['tokens'] = { prompt: (m) => counted.count(m) };
      const checks = new PlanChecks({ system, budget, tokens });
      /** The last turn the session was told of. */
      let turn = 0;
      /** The messages of the previous call, with their length and last message as returned. */
      let previous: { messages: readonly Message[]; length: number; last: Message | undefined } | undefined;
      // Messages are made only on failure: the checks run on every call.
      const during = (t: number, call: number) => `${label}: turn ${t} of ${scenario}${call > 1 ? `, call ${call}` : ''}`;
      const after = (t: number) => `${label}: ${t ? `after turn ${t}` : 'before the first turn'} of ${scenario}`;
      return {
        prompt(pending, info) {
          const t = (turn = info.turn.index);
          let plan: PromptPlan;
          try {
            plan = session.prompt(pending, info);
          } catch (e) {
            throw thrown(e, `${during(t, callOf(pending))}: threw`);
          }
          // The run keeps the previous prompt to compare the next one with: one array reused or changed in place would spoil
          // that. Its length and last message tell most changes (a push, a pop, a cut) at no cost.
          const again = plan?.messages === previous?.messages;
          if (previous && (again || previous.messages.length !== previous.length || previous.messages[previous.length - 1] !== previous.last)) {
            const what = again ? "the messages are the previous call's array again" : "the previous call's prompt was changed after it was returned";
            throw new CtxsimError(`${during(t, callOf(pending))}: plan: ${what} (each prompt is an array of its own, not changed after it is returned)`, 'policy');
          }
          const problem = checks.check(plan, pending).find((p) => !measured.has(p.rule));
          if (problem) throw new CtxsimError(`${during(t, callOf(pending))}: ${problem.rule}: ${problem.detail}`, 'policy');
          previous = { messages: plan.messages, length: plan.messages.length, last: plan.messages[plan.messages.length - 1] };
          return plan;
        },
        commit(exchange, info) {
          const t = (turn = info.turn.index);
          return checkedUpkeep(() => session.commit(exchange, info), () => `${during(t, 1)}: commit`);
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
    },
  };
  GUARDED.add(guarded);
  return guarded;
}

/** The rules a `naive: true` variant may break: a slice with no repair orphans tool messages and may start on one. */
const NAIVE_RULES: ReadonlySet<string> = new Set(['tool-pairs', 'first-user']);
const NO_RULES: ReadonlySet<string> = new Set();

/** The policies `guardPolicy` made. */
const GUARDED = new WeakSet<Policy>();

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

/** Which call of its turn a prompt is: call k comes after k − 1 rounds of tool calls, each opened by an assistant message in `pending`. */
function callOf(pending: readonly Message[]): number {
  return 1 + pending.filter((x) => x.role === 'assistant').length;
}

const METHODS = ['prompt', 'commit', 'forget', 'artifacts'] as const;

/** What is wrong with what `start` returned (not an object, or methods missing), or undefined. */
function sessionProblem(s: PolicySession): string | undefined {
  if (typeof s !== 'object' || s === null) return `${s === null ? 'null' : typeof s}, not a session {${METHODS.join(', ')}}`;
  const missing = METHODS.filter((k) => typeof s[k] !== 'function');
  return missing.length ? `a session without ${missing.join(', ')} (each a function)` : undefined;
}
