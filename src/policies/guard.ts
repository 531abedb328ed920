import { CtxsimError } from '../errors.js';
import { PromptTokens } from '../tokens/counter.js';
import type { Message } from '../types.js';
import { PlanChecks, type PlanCall } from './contract/plan-checks.js';
import { callPlace, startSession } from './session.js';
import type { Policy } from './types.js';

/**
 * A policy whose sessions keep the per-call rules of the policy contract
 * (`planProblems`: system prompt pinned, a user message first, the current
 * turn last and whole, no message of it or a later turn before it, tool
 * pairs intact, the budget kept, the plan well formed) on every call of a
 * run, for any policy, built in or a user's module; its session is
 * `startSession`'s, which names what the policy throws and checks what
 * `commit`, `forget` and `artifacts` return. The first broken rule, or
 * anything the policy throws, ends the run
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
      const session = startSession(policy, conversation, params, deps, label);
      const budget = typeof params.budget === 'number' ? params.budget : undefined;
      // `naive: true` (window-turns' slice with no repair) breaks tool pairs on purpose, to measure what that costs: those
      // prompts are counted as provider rule violations (violations.csv), not stopped.
      const measured: ReadonlySet<string> = params.naive === true ? NAIVE_RULES : NO_RULES;
      // Successive prompts share their first messages: their running sums are reused (see PromptTokens).
      const counted = prompts ?? new PromptTokens(deps.tokens);
      const { system } = conversation;
      // A prompt is counted whole, as the session's budget counts it: what every call carries besides its messages too.
      const tokens: PlanCall['tokens'] = { prompt: (m) => counted.count(m), carried: deps.tokens.carried };
      const checks = new PlanChecks({ system, budget, tokens });
      /** The messages of the previous call, with their length and last message as returned. */
      let previous: readonly Message[] | undefined;
      let previousLength = 0;
      let previousLast: Message | undefined;
      return {
        prompt(pending, info) {
          const plan = session.prompt(pending, info);
          // Messages are made only on failure (placed by `callPlace`): the checks run on every call.
          // The run keeps the previous prompt to compare the next one with: one array reused or changed in place would spoil
          // that. Its length and last message tell most changes (a push, a pop, a cut) at no cost.
          const again = plan?.messages === previous;
          if (previous && (again || previous.length !== previousLength || previous[previousLength - 1] !== previousLast)) {
            const what = again ? "the messages are the previous call's array again" : "the previous call's prompt was changed after it was returned";
            throw new CtxsimError(`${callPlace(label, scenario, info.turn.index, pending)}: plan: ${what} (each prompt is an array of its own, not changed after it is returned)`, 'policy');
          }
          const problem = checks.check(plan, pending).find((p) => !measured.has(p.rule));
          if (problem) throw new CtxsimError(`${callPlace(label, scenario, info.turn.index, pending)}: ${problem.rule}: ${problem.detail}`, 'policy');
          previous = plan.messages;
          previousLength = previous.length;
          previousLast = previous[previousLength - 1];
          return plan;
        },
        commit: session.commit,
        forget: session.forget,
        artifacts: session.artifacts,
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
