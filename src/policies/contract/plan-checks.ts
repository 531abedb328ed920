import { roundsOf } from '../../scenario/rounds.js';
import { messageText, type TokenCounter } from '../../tokens/counter.js';
import { extendsList } from '../../tokens/resume.js';
import type { Message } from '../../types.js';
import { promptTokens } from '../_transcript.js';
import { isPromise } from '../module-calls.js';
import { kindOf, upkeepShape } from '../session.js';
import type { PromptPlan } from '../types.js';
import type { ContractRule } from './rules.js';

/**
 * The per-call checks of the contract (rules.ts): what one plan must keep,
 * whatever came before it. O(messages of the plan) for one plan
 * (`planProblems`), O(new messages + current turn) per call over a
 * session's calls (`PlanChecks`, which the guard of every call of a run
 * uses).
 */

/** One model call, as the per-call rules see it. */
export interface PlanCall {
  /** The scenario's pinned system messages, in order (empty: none). */
  system: readonly Message[];
  /** The current turn so far, as given to `prompt`. */
  pending: readonly Message[];
  /** The policy's `budget` parameter, if it has one. */
  budget: number | undefined;
  /** Counts a prompt: the session's counter (its counts memoized per message), or a `PromptTokens` over it with the session's `carried` (absent: 0); a prompt is counted whole (`promptTokens`). */
  tokens: Pick<TokenCounter, 'prompt'> & { readonly carried?: number };
}

/** A rule one plan breaks, and what was seen. */
export interface PlanProblem {
  rule: ContractRule;
  detail: string;
}

/**
 * The rules one plan must keep, whatever came before: `system-pinned`,
 * `first-user`, `current-turn-last`, `tool-pairs`, `budget`, `plan`, and
 * of `whole-turns` that no message of the current turn or a later one comes
 * before the current turn (a plan of the wrong shape is that one problem,
 * the others unchecked).
 * O(messages of the plan); checked by `checkPolicyContract`, and on every
 * call of a run through `PlanChecks` (see guard.ts).
 */
export function planProblems(plan: PromptPlan, call: PlanCall): PlanProblem[] {
  return new PlanChecks(call).check(plan, call.pending);
}

/**
 * `planProblems` over the successive calls of one session. The shape of the
 * messages and the tool pairs are read left to right, so a prompt that
 * starts with the whole previous prompt (the same message objects, as a
 * growing transcript sends them) is read from where the previous one ended
 * (a tool call there whose results the previous prompt cut short is read
 * again), and the messages before the current turn from where the previous
 * prompt's check of their turns stopped; the other rules read the system
 * prompt and the current turn only. It finds what `planProblems` finds, in O(new messages + current turn) per
 * call. Prompts must not change after they are returned (PromptPlan says so).
 */
export class PlanChecks {
  /** The last plan's messages, when it was well formed. */
  private last: readonly Message[] = [];
  /** Where the pass over `last` (tool pairs, late system messages) may go on for a longer prompt: tool calls before it read only messages of `last`. */
  private pass: Pass = { at: 0, late: false, problems: [] };
  /** How many leading messages of `last` were found to be of turns before `checkedTurn`, its current one (whole-turns). */
  private checkedUpTo = 0;
  private checkedTurn: number | undefined;

  constructor(private readonly call: Omit<PlanCall, 'pending'>) {}

  check(plan: PromptPlan, pending: readonly Message[]): PlanProblem[] {
    const known = this.knownPrefix(plan);
    const shape = planShape(plan, known);
    this.last = [];
    if (shape) return [{ rule: 'plan', detail: shape }];
    const out: PlanProblem[] = [];
    const fail = (rule: ContractRule, detail: string) => out.push({ rule, detail });
    const { system, budget, tokens } = this.call;
    const m = plan.messages;
    const head = system.length;

    // system-pinned (the scenario's system messages first, in order), first-user
    const moved = system.findIndex((s, i) => m[i]?.role !== 'system' || m[i]!.content !== s.content || m[i]!.name !== s.name || m[i]!.origin);
    if (moved >= 0) fail('system-pinned', head === 1 ? 'message 0 is not the system prompt' : `message ${moved} is not the scenario's system message ${moved + 1} of ${head}`);
    let start = 0;
    while (start < m.length && m[start]!.role === 'system') start++;
    if (start < m.length && m[start]!.role !== 'user') fail('first-user', `the first message after the system messages is ${describe(m[start]!)}`);

    // current-turn-last
    const at = currentTurnAt(m, pending);
    const problem = at < 0 ? 'its user message is not sent' : currentTurnProblem(m.slice(at + 1), pending);
    if (problem) fail('current-turn-last', `the current turn is not sent last, its newest round in full: ${problem}`);

    // whole-turns, as far as one call tells: no message of the current turn or a later one before the current turn. The
    // messages the last prompt had checked were of turns before its current one; before this one too, unless it is earlier.
    const current = pending[0]?.turn;
    const prior = this.checkedTurn;
    let clean = known > 0 && current !== undefined && prior !== undefined && current >= prior ? Math.min(this.checkedUpTo, known) : 0;
    for (; current !== undefined && clean < at; clean++) {
      const x = m[clean]!;
      if (x.turn === undefined || x.turn < current || x.origin || x.role === 'system') continue;
      fail('whole-turns', x.turn === current ? `turn ${x.turn}, the current one, sent before its own messages (at ${clean})` : `turn ${x.turn}, a later one, sent (at ${clean})`);
      break;
    }

    // tool-pairs, and system-pinned: no system message after the others (one pass, going on from where the last prompt's
    // stopped, unless that prompt was system messages only and stopped before this one's conversation starts)
    const from = known > 0 && this.pass.at > start ? this.pass : { at: start, late: false, problems: [] };
    let late = from.late;
    const pass = [...from.problems];
    let resume: Pass | undefined;
    for (let i = from.at; i < m.length; i++) {
      const x = m[i]!;
      // A tool call whose results would lie past the prompt's end: a longer prompt reads it again, from here.
      if (!resume && x.toolCalls?.length && i + x.toolCalls.length >= m.length) resume = { at: i, late, problems: pass.slice() };
      if (x.role === 'system' && !late) {
        late = true;
        pass.push({ rule: 'system-pinned', detail: `system message at ${i} after the conversation started` });
      }
      if (x.role === 'tool') {
        pass.push({ rule: 'tool-pairs', detail: `tool result ${x.toolCallId} at ${i} without its call right before it` });
        continue;
      }
      if (!x.toolCalls?.length) continue;
      const ids = x.toolCalls.map((c) => c.id);
      if (answers(m, i, ids)) i += ids.length;
      else pass.push({ rule: 'tool-pairs', detail: `tool call ${ids.join(', ')} at ${i} without all its results right after it` });
    }
    out.push(...pass);
    this.last = m;
    this.pass = resume ?? { at: m.length, late, problems: pass };
    this.checkedUpTo = clean;
    this.checkedTurn = current;

    // budget
    if (budget === undefined) {
      if (plan.overBudget) fail('budget', 'overBudget without a budget');
    } else if (plan.overBudget) {
      const fixed = promptTokens(tokens, [...system, ...pending]);
      if (fixed <= budget) fail('budget', `overBudget, but the system prompt and the current turn take ${fixed} tokens of ${budget}`);
      // Only those: the current turn right after the system prompt, no memory between them (what follows its user message is
      // current-turn-last's: its rounds, an earlier one left out or with placeholders, and nothing after them).
      if (at !== head) fail('budget', 'over budget, but more than the system prompt and the current turn sent');
    } else {
      const total = promptTokens(tokens, m);
      if (total > budget) fail('budget', `${total} tokens sent, budget ${budget}`);
    }

    // plan
    if (!Number.isInteger(plan.stablePrefix) || plan.stablePrefix < head || plan.stablePrefix > at) {
      fail('plan', `stablePrefix ${plan.stablePrefix} outside ${head}…${at}`);
    }
    return out;
  }

  /**
   * How many leading messages of the plan were read with the last plan: all
   * of the last plan's when the plan's messages (another array: one changed
   * in place is read again) start with them; otherwise none.
   */
  private knownPrefix(plan: PromptPlan): number {
    const last = this.last;
    const m = typeof plan === 'object' && plan !== null ? plan.messages : undefined;
    return Array.isArray(m) && extendsList(m, last) ? last.length : 0;
  }
}

/** Where a pass over a prompt's messages stood: at a message, whether it had seen a late system message, the problems it had found. */
interface Pass {
  at: number;
  late: boolean;
  problems: PlanProblem[];
}

/**
 * Whether the messages right after the call message at `at` are its results:
 * one tool message for each of `ids`, in any order (providers match a result
 * to its call by id). Each id is matched, not joined: a call with the id ''
 * is not answered by nothing, nor by a result without an id.
 */
function answers(m: readonly Message[], at: number, ids: readonly string[]): boolean {
  const open = ids.slice();
  for (let j = 1; j <= ids.length; j++) {
    const r = m[at + j];
    const k = r?.role === 'tool' && r.toolCallId !== undefined ? open.indexOf(r.toolCallId) : -1;
    if (k < 0) return false;
    open.splice(k, 1);
  }
  return true;
}

/** Where the current turn starts in a prompt: the last place its user message is sent (-1: nowhere). */
export function currentTurnAt(m: readonly Message[], pending: readonly Message[]): number {
  for (let i = m.length - 1; i >= 0; i--) if (same(m[i]!, pending[0]!)) return i;
  return -1;
}

/**
 * What is wrong with what a prompt sends of the current turn after its user
 * message (`sent`), or undefined: the turn's rounds in order, each whole or
 * left out, a result verbatim or a placeholder with its call id; the newest
 * round verbatim; nothing else.
 */
function currentTurnProblem(sent: readonly Message[], pending: readonly Message[]): string | undefined {
  const rounds = roundsOf(pending.slice(1));
  let i = 0;
  for (const [k, round] of rounds.entries()) {
    const newest = k === rounds.length - 1;
    if (!newest && (i >= sent.length || !same(sent[i]!, round[0]!))) continue;
    for (const [j, x] of round.entries()) {
      const y = sent[i + j];
      if (!y) return `round ${k + 1} is cut short`;
      const placeholder = !newest && j > 0 && y.role === 'tool' && y.toolCallId === x.toolCallId;
      if (!same(y, x) && !placeholder) return `round ${k + 1} differs at its message ${j + 1}`;
    }
    i += round.length;
  }
  return i === sent.length ? undefined : `${sent.length - i} message(s) after it`;
}

/**
 * What is wrong with the shape of a plan (a policy written in JavaScript is
 * not type-checked), or undefined: its messages an array of messages, its
 * `overBudget` a boolean, its upkeep a list of calls, its `stablePrefix` a
 * number. Checked by hand, not by a schema: it runs on every call of a run.
 * The first `known` messages are known to be messages (read with the previous plan).
 */
export function planShape(plan: PromptPlan, known = 0): string | undefined {
  if (typeof plan !== 'object' || plan === null || isPromise(plan)) return `the plan is ${kindOf(plan)}, not an object {messages, overBudget, upkeep, stablePrefix}`;
  if (!Array.isArray(plan.messages)) return `messages is ${kindOf(plan.messages)}, not an array`;
  for (let i = known; i < plan.messages.length; i++) {
    const bad = messageShape(plan.messages[i]);
    if (bad) return `message ${i} ${bad}`;
  }
  if (typeof plan.overBudget !== 'boolean') return `overBudget is ${kindOf(plan.overBudget)}, not true or false`;
  if (typeof plan.stablePrefix !== 'number') return `stablePrefix is ${kindOf(plan.stablePrefix)}, not a number`;
  return upkeepShape(plan.upkeep);
}

/** What is wrong with a message's shape, or undefined. The usual case is tested first, without a lookup: it runs for every message of every call. */
function messageShape(m: Message | undefined): string | undefined {
  if (typeof m !== 'object' || m === null) return `is ${kindOf(m)}, not a message {role, content}`;
  const { role, content, toolCalls, origin } = m;
  const calls = toolCalls === undefined || (Array.isArray(toolCalls) && toolCalls.every((c) => typeof c?.id === 'string'));
  const made = origin === undefined || origin === 'summary' || origin === 'retrieved' || origin === 'facts';
  if (typeof content === 'string' && (role === 'user' || role === 'assistant' || role === 'tool' || role === 'system') && calls && made) return undefined;
  if (!['system', 'user', 'assistant', 'tool'].includes(role)) return `has role ${kindOf(role)} (expected system, user, assistant or tool)`;
  if (typeof content !== 'string') return `has content ${kindOf(content)}, not a string`;
  if (!calls) return 'has toolCalls that are not a list of calls {id, name, arguments}';
  // The origin is where a probe finds a value (probes.csv's source): one of the records' words.
  return `has origin ${kindOf(origin)} (expected summary, retrieved or facts)`;
}

/** The same message: the same object, or the same role, call ids and text. */
function same(a: Message, b: Message): boolean {
  if (a === b) return true;
  const ids = (m: Message) => m.toolCalls?.map((c) => c.id).join(',') ?? '';
  return a.role === b.role && a.toolCallId === b.toolCallId && ids(a) === ids(b) && messageText(a) === messageText(b);
}

/** A message as a problem names it: `a user message`, `an assistant tool call`. */
function describe(m: Message): string {
  if (m.role === 'assistant') return m.toolCalls?.length ? 'an assistant tool call' : 'an assistant message';
  return `a ${m.role} message`;
}
