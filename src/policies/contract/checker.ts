import { roundsOf } from '../../scenario/rounds.js';
import { UsageError } from '../../errors.js';
import { policyViolations } from '../../message-rules/blame.js';
import { RULE_SETS, type Rule } from '../../message-rules/provider.js';
import { normalize } from '../../text/normalize.js';
import { TokenCounter } from '../../tokens/counter.js';
import type { Conversation, Message, Turn, UpkeepCall } from '../../types.js';
import { injectionQuote } from '../../upkeep/quote.js';
import { searchText } from '../../upkeep/mentions.js';
import { simulatedUpkeep } from '../../upkeep/upkeep.js';
import { holds } from '../../upkeep/redact.js';
import { blocks } from '../blocks.js';
import { drain, SessionDriver } from '../driver.js';
import { startSession } from '../session.js';
import { sessionTokens } from '../session-tokens.js';
import { policyStream } from '../stream.js';
import { defaultOf, paramMeta } from '../params.js';
import { paramShape, resolvePolicy, type PolicyVariant } from '../spec.js';
import type { Artifact, ForgetFact, Policy, PolicySession, PromptPlan } from '../types.js';
import { currentTurnAt, planProblems, planShape } from './plan-checks.js';
import type { ContractRule, ContractViolation } from './rules.js';

/**
 * The whole-run checker of the contract (rules.ts): it replays conversations
 * through each variant of a policy as a run does, through the session
 * driver's turn loop (driver.ts), and checks each call with the per-call
 * checks (plan-checks.ts) and what only a whole conversation tells: earlier
 * turns sent whole, the provider rules, erased values and dropped turns kept
 * nowhere, a returned prompt left unchanged, the same records from the same
 * seed, and alone as interleaved with another conversation.
 */

/** How `checkPolicyContract` checks a policy. */
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
 * the contract (rules.ts); returns what was broken (empty when nothing was).
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

/** Replays one conversation as a run does, a turn per step of the driver's turn loop; returns its records. */
function* replay(conversation: Conversation, variant: PolicyVariant, deps: Deps, watch?: Watch): Generator<void, Records, void> {
  // What the policy throws, or returns of the wrong shape outside a plan, stops the check as it stops a run: one line
  // naming the variant, the turn and the scenario.
  // `upkeep` as a run gives it (simulated): a policy that calls `deps.upkeep` itself, as the docs advise, is checked as it runs.
  const tokens = sessionTokens(deps.tokens, conversation);
  const policyDeps = { tokens, random: policyStream(deps.seed, conversation.id, variant.name), model: deps.model, blocks, upkeep: simulatedUpkeep(tokens) };
  const driver = new SessionDriver(conversation, (start) => startSession(variant.policy, start, variant.params, policyDeps, variant.name));
  const records: Records = [];
  const record = (turn: number, value: unknown) => records.push({ turn, text: JSON.stringify(value) });
  // A prompt as text: the conversation's own messages by number (the same objects in every replay), others in full; a plan
  // of the wrong shape as its problem (the watch reports it).
  const own = ownMessages(conversation);
  const recordPlan = (turn: number, plan: PromptPlan) =>
    records.push({ turn, text: planShape(plan) ?? `${plan.overBudget} ${plan.stablePrefix} ${JSON.stringify(plan.upkeep)} ${plan.messages.map((m) => own.get(m) ?? JSON.stringify(m)).join(' ')}` });
  const artifacts = yield* driver.turns({
    prompted: (turn, calls) =>
      calls.forEach(({ pending, plan }, k) => {
        recordPlan(turn.index, plan);
        watch?.call(turn, k, plan, pending);
      }),
    committed: (turn, upkeep) => {
      record(turn.index, upkeep);
      watch?.committed(turn, upkeep, driver);
    },
    forgot: (afterTurn, { facts, upkeep }) => {
      record(afterTurn, upkeep);
      watch?.forgot(afterTurn, facts, driver);
    },
    end: () => undefined,
  });
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

/** Rules the provider check adds to the ones checked here by name. */
const OTHER_PROVIDER_RULES: ReadonlySet<Rule> = new Set(['same-role-twice', 'empty-message', 'invalid-name']);

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
