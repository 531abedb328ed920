import { roundsOf } from '../../scenario/rounds.js';
import { UsageError } from '../../errors.js';
import { policyViolations } from '../../message-rules/blame.js';
import { RULE_SETS, type Rule } from '../../message-rules/provider.js';
import { normalize } from '../../text/normalize.js';
import { messageText, TokenCounter } from '../../tokens/counter.js';
import { extendsList } from '../../tokens/resume.js';
import type { Conversation, Message, Turn, UpkeepCall } from '../../types.js';
import { injectionQuote } from '../../upkeep/quote.js';
import { searchText } from '../../upkeep/mentions.js';
import { holds } from '../../upkeep/redact.js';
import { blocks } from '../blocks.js';
import { SessionDriver } from '../driver.js';
import { kindOf, startSession, upkeepShape } from '../session.js';
import { sessionTokens } from '../session-tokens.js';
import { promptTokens } from '../_transcript.js';
import { policyStream } from '../stream.js';
import { defaultOf, paramMeta } from '../params.js';
import { paramShape, resolvePolicy, type PolicyVariant } from '../spec.js';
import type { Artifact, ForgetFact, Policy, PolicySession, PromptPlan } from '../types.js';

/**
 * The contract every policy keeps, checked by replaying conversations
 * through it the way a run does (a model call after the user message and
 * one more after tool results, then the exchange is stored, then the
 * forget events that follow the turn):
 *
 * - `system-pinned`: the scenario's system messages are the first messages,
 *   in order, and every other system message (policy-made memories) comes
 *   right after them, before the first other one;
 * - `first-user`: the first message after the system messages is a user message;
 * - `current-turn-last`: the current turn is sent last: its user message,
 *   then its rounds of tool calls in order, the newest in full; an earlier
 *   round may be left out whole, or sent with a result replaced by a
 *   placeholder that keeps its call id (an agent's context management acts
 *   inside a long turn);
 * - `tool-pairs`: a tool call is followed right away by its results, one for
 *   each call id, in any order (providers match them by id), and no tool
 *   result is sent without its call;
 * - `whole-turns`: an earlier turn is sent whole or not at all, in the
 *   conversation's order, once — its user message, its rounds of tool calls
 *   (an agent's memory may leave out a round whole, or replace a result by a
 *   placeholder), its reply; no later turn is sent;
 * - `budget`: a policy with a `budget` parameter sends no more tokens unless
 *   the plan says `overBudget`, which it says only when the system prompt and
 *   the current turn alone exceed it (and then sends only those: an earlier
 *   round of the current turn may be left out or shortened as
 *   `current-turn-last` allows);
 * - `plan`: the stable prefix lies between the system prompt and the current
 *   turn; upkeep has whole token counts; a returned prompt is not changed
 *   afterwards;
 * - `provider-rules`: no other provider message rule (same role twice, empty
 *   message) is broken by the policy, under any rule set;
 * - `determinism`: the same seed gives the same prompts, upkeep and artifacts;
 * - `isolation`: replayed with another conversation's turns in between, a
 *   conversation gives the same records as alone;
 * - `forget-cascade`: under `forget: cascade`, after a forget event no
 *   artifact and no later prompt (before the current turn) holds an erased
 *   value, until a turn states it again;
 * - `moderation`: under `moderation: drop`, nothing of a turn flagged
 *   `injection: true` is stored, and storing it costs no upkeep.
 */

export type ContractRule =
  | 'system-pinned'
  | 'first-user'
  | 'current-turn-last'
  | 'tool-pairs'
  | 'whole-turns'
  | 'budget'
  | 'plan'
  | 'provider-rules'
  | 'determinism'
  | 'isolation'
  | 'forget-cascade'
  | 'moderation';

/** Every rule, in the order they are listed above. */
export const CONTRACT_RULES: readonly ContractRule[] = [
  'system-pinned',
  'first-user',
  'current-turn-last',
  'tool-pairs',
  'whole-turns',
  'budget',
  'plan',
  'provider-rules',
  'determinism',
  'isolation',
  'forget-cascade',
  'moderation',
];

/** One broken rule: which variant, where, and what was seen. */
export interface ContractViolation {
  /** The variant's canonical name, e.g. `window-tokens:budget=200`. */
  policy: string;
  rule: ContractRule;
  scenario: string;
  /** The turn (0: before the first turn; one past the last: the end of the conversation). */
  turn: number;
  detail: string;
}

export interface ContractOptions {
  /**
   * Parameter sets to check, each as given (`{ budget: 300 }`; a list makes a
   * sweep); default: `contractVariants(policy)`.
   */
  variants?: readonly Readonly<Record<string, unknown>>[];
  /** Counts for budgets (default: `chars4`). */
  tokens?: TokenCounter;
  /** Seed of the policy's random streams (default 42). */
  seed?: number;
  /** The chat model the policy is told (default `gpt-4o-mini`). */
  model?: string;
  /** Stop after this many violations (default 100). */
  limit?: number;
}

/** `policy:rule scenario turn N: detail`, one line. */
export function formatContractViolation(v: ContractViolation): string {
  return `${v.policy}: ${v.rule}: ${v.scenario} turn ${v.turn}: ${v.detail}`;
}

/**
 * The parameter sets a policy is checked with, derived from its schema: its
 * defaults; every defaulted number scaled down to a quarter (whole numbers
 * rounded, none below its minimum; probabilities halved), so that trimming,
 * folding and retrieval happen on short conversations; that with
 * `moderation: drop`; a tenth, with every optional parameter set (whole
 * numbers to their minimum + 2, e.g. `sessionCap=3`; durations to `30m`);
 * and that with `forget: naive`. A scaled set that breaks a rule between the
 * policy's parameters (a check on its parameter object) is left out.
 */
export function contractVariants(policy: Policy): Record<string, unknown>[] {
  const quarter: Record<string, unknown> = {};
  const tenth: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(paramShape(policy))) {
    const meta = paramMeta(schema);
    const def = defaultOf(schema);
    const min = meta.min ?? 0;
    if (typeof def === 'number') {
      const scaled = (by: number) => (meta.kind === 'probability' ? def / 2 : Math.max(min, meta.kind === 'int' ? Math.round(def / by) : def / by));
      quarter[name] = scaled(4);
      tenth[name] = scaled(10);
    } else if (def === undefined && meta.kind === 'int') tenth[name] = min + 2;
    else if (def === undefined && meta.kind === 'duration') tenth[name] = '30m';
  }
  const variants = [{}, quarter, { ...quarter, moderation: 'drop' }, tenth, { ...tenth, forget: 'naive' }];
  const seen = new Set<string>();
  // A scaled set that breaks a rule between the policy's parameters is not one it can run with (the defaults are checked as they are).
  const allowed = (v: Record<string, unknown>) => v === variants[0] || typeof resolvePolicy(policy, Object.entries(v)) !== 'string';
  return variants.filter((v) => !seen.has(JSON.stringify(v)) && !!seen.add(JSON.stringify(v)) && allowed(v));
}

/**
 * Replays the conversations through each variant of the policy and checks
 * the contract above; returns what was broken (empty when nothing was).
 */
export function checkPolicyContract(policy: Policy, conversations: readonly Conversation[], options: ContractOptions = {}): ContractViolation[] {
  const variants = (options.variants ?? contractVariants(policy)).flatMap((given) => {
    const resolved = resolvePolicy(policy, Object.entries(given));
    if (typeof resolved === 'string') throw new UsageError(`checkPolicyContract: ${resolved}`);
    return resolved;
  });
  return checkVariants(variants, conversations, options);
}

/**
 * `checkPolicyContract` for variants already resolved (a policy module's,
 * resolved on its own thread, are checked so on a worker thread).
 * @internal
 */
export function checkVariants(variants: readonly PolicyVariant[], conversations: readonly Conversation[], options: Omit<ContractOptions, 'variants'> = {}): ContractViolation[] {
  const tokens = options.tokens ?? new TokenCounter('chars4');
  const limit = options.limit ?? 100;
  const deps = { tokens, seed: options.seed ?? 42, model: options.model ?? 'gpt-4o-mini' };
  const out: ContractViolation[] = [];
  for (const variant of variants) {
    const report = (v: Omit<ContractViolation, 'policy'>) => out.length < limit && out.push({ policy: variant.name, ...v });
    const alone = conversations.map((c) => {
      const check = new Checker(c, variant, sessionTokens(tokens, c), report);
      return drain(replay(c, variant, deps, check));
    });
    // Each conversation replayed again with the next one's turns in between (a lone one with itself): it must give the same records.
    for (let i = 0; i < conversations.length; i += 2) {
      const a = conversations[i]!;
      const j = (i + 1) % conversations.length;
      const b = conversations[j]!;
      const [ra, rb] = interleave(replay(a, variant, deps), replay(b, variant, deps));
      for (const [c, k, r] of [[a, i, ra], [b, j, rb]] as const) {
        const turn = firstDifference(alone[k]!, r);
        if (turn === undefined) continue;
        const again = drain(replay(c, variant, deps));
        const changed = firstDifference(alone[k]!, again);
        if (changed !== undefined) report({ rule: 'determinism', scenario: c.id, turn: changed, detail: 'a second replay with the same seed gave other records' });
        else report({ rule: 'isolation', scenario: c.id, turn, detail: `replayed with ${(c === a ? b : a).id} in between, the records differ from a replay alone` });
      }
    }
    if (out.length >= limit) return out;
  }
  return out;
}

/** What a replay recorded, per turn: each call's plan, the upkeep after it, the artifacts at the end; as text, to compare replays. */
type Records = { turn: number; text: string }[];

interface Deps {
  tokens: TokenCounter;
  seed: number;
  model: string;
}

/** The checks of one replay (no checks: a replay only recorded). */
interface Watch {
  call(turn: Turn, k: number, plan: PromptPlan, pending: readonly Message[]): void;
  committed(turn: Turn, upkeep: readonly UpkeepCall[], session: Pick<PolicySession, 'artifacts'>): void;
  forgot(afterTurn: number, facts: readonly ForgetFact[], session: Pick<PolicySession, 'artifacts'>): void;
  end(artifacts: readonly Artifact[]): void;
}

/** Replays one conversation as a run does, a turn per step; returns its records. */
function* replay(conversation: Conversation, variant: PolicyVariant, deps: Deps, watch?: Watch): Generator<void, Records, void> {
  // What the policy throws, or returns of the wrong shape outside a plan, stops the check as it stops a run: one line
  // naming the variant, the turn and the scenario.
  const policyDeps = { tokens: sessionTokens(deps.tokens, conversation), random: policyStream(deps.seed, conversation.id, variant.name), model: deps.model, blocks };
  const driver = new SessionDriver(conversation, (start) => startSession(variant.policy, start, variant.params, policyDeps, variant.name));
  const records: Records = [];
  const record = (turn: number, value: unknown) => records.push({ turn, text: JSON.stringify(value) });
  // A prompt as text: the conversation's own messages by number (the same objects in every replay), others in full; a plan
  // of the wrong shape as its problem (the watch reports it).
  const own = ownMessages(conversation);
  const recordPlan = (turn: number, plan: PromptPlan) =>
    records.push({ turn, text: planShape(plan) ?? `${plan.overBudget} ${plan.stablePrefix} ${JSON.stringify(plan.upkeep)} ${plan.messages.map((m) => own.get(m) ?? JSON.stringify(m)).join(' ')}` });
  const forgetAfter = (afterTurn: number) => {
    for (const { facts, upkeep } of driver.forgetAfter(afterTurn)) {
      record(afterTurn, upkeep);
      watch?.forgot(afterTurn, facts, driver);
    }
  };
  forgetAfter(0);
  for (const turn of conversation.turns) {
    const info = driver.begin(turn);
    driver.prompt(turn, info).forEach(({ pending, plan }, k) => {
      recordPlan(turn.index, plan);
      watch?.call(turn, k, plan, pending);
    });
    const upkeep = driver.commit(turn, info);
    record(turn.index, upkeep);
    watch?.committed(turn, upkeep, driver);
    forgetAfter(turn.index);
    yield;
  }
  const artifacts = driver.artifacts();
  record(conversation.turns.length + 1, artifacts);
  watch?.end(artifacts);
  return records;
}

const numbered = new WeakMap<Conversation, Map<Message, string>>();

/** The conversation's messages, each with a number (`#n`). */
function ownMessages(conversation: Conversation): Map<Message, string> {
  let own = numbered.get(conversation);
  if (!own) {
    own = new Map();
    const all = [...conversation.system, ...conversation.turns.flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])])];
    for (const m of all) own.set(m, `#${own.size}`);
    numbered.set(conversation, own);
  }
  return own;
}

function drain(steps: Generator<void, Records, void>): Records {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs two replays a turn each in turn; returns both records. */
function interleave(a: Generator<void, Records, void>, b: Generator<void, Records, void>): [Records, Records] {
  let ra: Records | undefined;
  let rb: Records | undefined;
  while (!ra || !rb) {
    if (!ra) {
      const r = a.next();
      if (r.done) ra = r.value;
    }
    if (!rb) {
      const r = b.next();
      if (r.done) rb = r.value;
    }
  }
  return [ra, rb];
}

/** The turn of the first record that differs, or undefined when the records are the same. */
function firstDifference(a: Records, b: Records): number | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]?.text !== b[i]?.text) return (a[i] ?? b[i])!.turn;
  }
  return undefined;
}

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
function planShape(plan: PromptPlan, known = 0): string | undefined {
  if (typeof plan !== 'object' || plan === null) return `the plan is ${kindOf(plan)}, not an object {messages, overBudget, upkeep, stablePrefix}`;
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
  const { role, content, toolCalls } = m;
  const calls = toolCalls === undefined || (Array.isArray(toolCalls) && toolCalls.every((c) => typeof c?.id === 'string'));
  if (typeof content === 'string' && (role === 'user' || role === 'assistant' || role === 'tool' || role === 'system') && calls) return undefined;
  if (!['system', 'user', 'assistant', 'tool'].includes(role)) return `has role ${kindOf(role)} (expected system, user, assistant or tool)`;
  if (typeof content !== 'string') return `has content ${kindOf(content)}, not a string`;
  return 'has toolCalls that are not a list of calls {id, name, arguments}';
}

/** Rules the provider check adds to the ones checked here by name. */
const OTHER_PROVIDER_RULES: ReadonlySet<Rule> = new Set(['same-role-twice', 'empty-message']);

/** The per-prompt, forget and moderation checks of one replay. */
class Checker implements Watch {
  private readonly head: readonly Message[];
  private readonly budget: number | undefined;
  private readonly cascade: boolean;
  private readonly drop: boolean;
  /** Normalized text per message, made once. */
  /** Erased values not stated again since. */
  private readonly forgotten = new Set<string>();
  /** Quotes of the dropped injection turns so far (those no other turn holds). */
  private readonly marks: { turn: number; mark: string }[] = [];
  private last: { turn: number; k: number; messages: Message[]; copy: Message[] } | undefined;

  constructor(
    private readonly conversation: Conversation,
    variant: PolicyVariant,
    private readonly tokens: TokenCounter,
    private readonly report: (v: Omit<ContractViolation, 'policy'>) => void,
  ) {
    this.head = conversation.system;
    const budget = variant.params.budget;
    this.budget = typeof budget === 'number' ? budget : undefined;
    this.cascade = variant.params.forget !== 'naive';
    this.drop = variant.params.moderation === 'drop';
  }


  private fail(rule: ContractRule, turn: number, detail: string): void {
    this.report({ rule, scenario: this.conversation.id, turn, detail });
  }

  call(turn: Turn, k: number, plan: PromptPlan, pending: readonly Message[]): void {
    if (k === 0) this.startTurn(turn);
    const fail = (rule: ContractRule, detail: string) => this.fail(rule, turn.index, `call ${k + 1}: ${detail}`);
    for (const p of planProblems(plan, { system: this.head, pending, budget: this.budget, tokens: this.tokens })) fail(p.rule, p.detail);
    // The checks below read the messages: a plan not of the right shape has had its problem reported.
    if (planShape(plan)) return;
    const m = plan.messages;

    this.unchanged();
    this.last = { turn: turn.index, k, messages: m, copy: [...m] };

    // whole-turns
    const at = currentTurnAt(m, pending);
    this.wholeTurns(turn, m.slice(0, Math.max(0, at)), fail);

    // provider-rules
    const found = new Map<string, string[]>();
    for (const set of RULE_SETS) {
      for (const v of policyViolations(m, set, this.conversation)) {
        if (!OTHER_PROVIDER_RULES.has(v.rule)) continue;
        const key = `${v.rule}: ${v.detail}`;
        found.set(key, [...(found.get(key) ?? []), set]);
      }
    }
    for (const [key, sets] of found) fail('provider-rules', `${key} (${sets.join(', ')})`);

    // forget-cascade, moderation: the memory part of the prompt
    if (this.forgotten.size || this.marks.length) {
      const memory = m.slice(0, Math.max(0, at)).filter((x) => !this.head.includes(x));
      for (const v of this.forgotten) if (memory.some((x) => searchText(x).includes(v))) fail('forget-cascade', `the prompt holds the erased value "${v}"`);
      for (const { turn: t, mark } of this.marks) if (memory.some((x) => searchText(x).includes(mark))) fail('moderation', `the prompt holds dropped turn ${t}`);
    }
  }

  /** Earlier turns whole, in order, once (the current turn or a later one before it is the per-call check's). */
  private wholeTurns(turn: Turn, before: readonly Message[], fail: (rule: ContractRule, detail: string) => void): void {
    const verbatim = before.filter((x) => !x.origin && x.role !== 'system' && x.turn !== undefined);
    let i = 0;
    let previous = 0;
    while (i < verbatim.length) {
      const t = verbatim[i]!.turn!;
      let n = 0;
      while (i + n < verbatim.length && verbatim[i + n]!.turn === t) n++;
      const sent = verbatim.slice(i, i + n);
      i += n;
      // The current turn or a later one before it: the per-call check (planProblems) has named the first.
      if (t >= turn.index) continue;
      if (t <= previous) fail('whole-turns', `turn ${t} sent out of order or twice`);
      previous = Math.max(previous, t);
      const source = this.conversation.turns[t - 1];
      if (!source) continue;
      if (!sentWhole(sent, source)) {
        const whole = 1 + source.tools.length + (source.assistant ? 1 : 0);
        fail('whole-turns', `turn ${t} sent in part (${sent.length} of its ${whole} messages)`);
      }
    }
  }

  /** A turn starts: erased values it states again are no longer forgotten. */
  private startTurn(turn: Turn): void {
    if (!this.forgotten.size) return;
    const own = [turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])];
    const stated = new Set(Object.values(turn.facts).map(normalize));
    for (const v of [...this.forgotten]) if (stated.has(v) || own.some((x) => searchText(x).includes(v))) this.forgotten.delete(v);
  }

  committed(turn: Turn, upkeep: readonly UpkeepCall[], session: Pick<PolicySession, 'artifacts'>): void {
    if (!this.drop || !turn.injection) return;
    if (upkeep.length) this.fail('moderation', turn.index, `storing dropped turn ${turn.index} cost upkeep (${upkeep.map((u) => u.kind).join(', ')})`);
    const mark = normalize(injectionQuote(turn.user.content));
    // A quote another turn (or a system message) also holds cannot tell what was stored.
    const elsewhere = (x: Message) => searchText(x).includes(mark);
    const shared = this.conversation.turns.some((t) => t !== turn && [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])].some(elsewhere));
    if (!mark || shared || this.head.some(elsewhere)) return;
    this.marks.push({ turn: turn.index, mark });
    this.artifactsHold(session.artifacts(), turn.index);
  }

  forgot(afterTurn: number, facts: readonly ForgetFact[], session: Pick<PolicySession, 'artifacts'>): void {
    if (!this.cascade) return;
    for (const f of facts) for (const v of f.values) if (v) this.forgotten.add(v);
    this.artifactsHold(session.artifacts(), afterTurn);
  }

  end(artifacts: readonly Artifact[]): void {
    this.unchanged();
    this.artifactsHold(artifacts, this.conversation.turns.length + 1);
  }

  /** The last prompt returned is as it was returned. */
  private unchanged(): void {
    const last = this.last;
    if (last && (last.messages.length !== last.copy.length || last.messages.some((x, i) => x !== last.copy[i]))) {
      this.fail('plan', last.turn, `call ${last.k + 1}: its prompt was changed after it was returned`);
    }
  }

  /** Reports an artifact that still holds an erased value or a dropped turn. */
  private artifactsHold(artifacts: readonly Artifact[], turn: number): void {
    for (const a of artifacts) {
      for (const v of this.forgotten) if (a.texts.some((t) => holds(t, [v]))) this.fail('forget-cascade', turn, `the ${a.kind} artifact holds the erased value "${v}"`);
      for (const { turn: t, mark } of this.marks) if (a.texts.some((x) => normalize(x).includes(mark))) this.fail('moderation', turn, `the ${a.kind} artifact holds dropped turn ${t}`);
    }
  }
}

/** The same message: the object itself, or one with the same role, text and tool ids. */
/**
 * Whether the messages sent of an earlier turn are the turn, whole: its user
 * message, some of its rounds (each whole, in order; a result may be a
 * placeholder with its call id) and its reply. Messages are told apart by
 * role and call ids.
 */
function sentWhole(sent: readonly Message[], turn: Turn): boolean {
  const key = (x: Message) => `${x.role}:${x.toolCallId ?? x.toolCalls?.map((c) => c.id).join(',') ?? ''}`;
  const rounds = roundsOf(turn.tools).map((r) => r.map(key));
  const keys = sent.map(key);
  if (keys[0] !== key(turn.user)) return false;
  let i = 1;
  for (const round of rounds) if (round.every((k, j) => keys[i + j] === k)) i += round.length;
  if (turn.assistant && keys[i++] !== key(turn.assistant)) return false;
  return i === keys.length;
}

/** The same message: the same object, or the same role, call ids and text. */
function same(a: Message, b: Message): boolean {
  if (a === b) return true;
  const ids = (m: Message) => m.toolCalls?.map((c) => c.id).join(',') ?? '';
  return a.role === b.role && a.toolCallId === b.toolCallId && ids(a) === ids(b) && messageText(a) === messageText(b);
}

function describe(m: Message): string {
  if (m.role === 'assistant') return m.toolCalls?.length ? 'an assistant tool call' : 'an assistant message';
  return `a ${m.role} message`;
}
