import seedrandom from 'seedrandom';
import type { PolicyVariant } from '../policies/spec.js';
import type { Artifact, PromptPlan } from '../policies/types.js';
import { Meter } from '../pricing/meter.js';
import type { PriceTable } from '../pricing/prices.js';
import { chooseModel, type CostSettings } from '../pricing/settings.js';
import { policyViolations } from '../rules/blame.js';
import type { RuleSet } from '../rules/provider.js';
import { PromptTokens, type TokenCounter } from '../tokens/counter.js';
import type { Conversation, Message, ProbeRecord, TurnRecord, UpkeepCall, ViolationRecord } from '../types.js';
import { SafetyWatch } from './safety.js';
import { FactLedger, Presence } from './score.js';
import type { ConversationEnd } from './summary.js';

/** What every replay of a run shares. */
export interface ReplayContext {
  seed: number;
  model: string;
  tokens: TokenCounter;
  prices: PriceTable;
  /** Caching, routing, fallback and latency settings (defaults when absent). */
  costs?: CostSettings;
  presence: Presence;
  /** The provider message rules every prompt is checked against. */
  rules: RuleSet;
}

/** One model call of a turn, as sent. */
export interface SentCall {
  plan: PromptPlan;
  promptTokens: number;
  output?: Message;
}

export interface Replay {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  violations: ViolationRecord[];
  /** What the policy stores at the end of the conversation. */
  artifacts: Artifact[];
  /** Zombie artifacts and stored bytes at the end, for the summary row. */
  end: ConversationEnd;
}

/** The seeded stream of one (seed, scenario, policy). */
export function streamFor(seed: number, scenario: string, policy: string): () => number {
  return seedrandom(`${seed}:${scenario}:${policy}\0`);
}

/**
 * Replays one conversation through one policy. Per turn: the policy builds the
 * prompt for each model call (after the user message, and again after tool
 * results); each prompt is checked against the provider's message rules and
 * for forgotten values; the first for injections still in memory; the policy
 * stores the exchange; forget events after the turn are carried out; the meter
 * prices the calls and the upkeep; probes are scored on the prompt of the
 * turn's first call. At the end, the artifacts the policy stores are
 * inspected. `onCall` sees every call (for `explain`).
 */
export function replay(
  conversation: Conversation,
  variant: PolicyVariant,
  ctx: ReplayContext,
  onCall?: (turn: number, call: SentCall) => void,
): Replay {
  const steps = replaySteps(conversation, variant, ctx, onCall);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * The same replay, one turn at a time: yields each turn's record and returns
 * the whole replay. Several may run interleaved (sessions are independent).
 */
export function* replaySteps(
  conversation: Conversation,
  variant: PolicyVariant,
  ctx: ReplayContext,
  onCall?: (turn: number, call: SentCall) => void,
): Generator<TurnRecord, Replay, void> {
  const { tokens, model } = ctx;
  const session = variant.policy.start(conversation, variant.params, {
    tokens,
    random: streamFor(ctx.seed, conversation.id, variant.name),
    model,
  });
  const meter = new Meter(ctx.prices, {
    settings: ctx.costs,
    count: (m) => tokens.message(m),
    // Its own stream, so drawing failures leaves the policy's draws unchanged.
    random: streamFor(ctx.seed, conversation.id, `${variant.name}:fallback`),
  });
  const promptTokens = new PromptTokens(tokens);
  const ledger = new FactLedger(conversation);
  const watch = new SafetyWatch(ctx.presence);
  const turns: TurnRecord[] = [];
  const probes: ProbeRecord[] = [];
  const violations: ViolationRecord[] = [];
  let time = 0;
  let cumulative = 0n;

  // The forget events after each turn (most conversations have none).
  const forgetsAfter = new Map<number, Conversation['forgets']>();
  for (const event of conversation.forgets) forgetsAfter.set(event.afterTurn, [...(forgetsAfter.get(event.afterTurn) ?? []), event]);

  /** Carries out the forget events that follow `afterTurn`; adds their upkeep to `upkeep`. */
  const forgetAfter = (afterTurn: number, upkeep: UpkeepCall[]): void => {
    for (const event of forgetsAfter.get(afterTurn) ?? []) {
      const facts = event.facts.map((name) => ({ name, values: ledger.valuesUpTo(name, afterTurn) }));
      watch.forget(facts);
      for (const u of session.forget(facts, { afterTurn, time })) upkeep.push(u);
    }
  };
  // A forget before the first turn is charged to turn 1.
  let carried: UpkeepCall[] = [];
  forgetAfter(0, carried);

  for (const turn of conversation.turns) {
    if (turn.index > 1) time += turn.gapSeconds;
    const info = { turn, time };
    watch.startTurn(turn);
    const turnModel = chooseModel(ctx.costs?.route, model, tokens.output(turn.user));
    const exchange: Message[] = [turn.user, ...turn.tools];
    if (turn.assistant) exchange.push(turn.assistant);
    const first = session.prompt([turn.user], info);
    const calls: SentCall[] = [{ plan: first, promptTokens: promptTokens.count(first.messages), output: turn.tools[0] ?? turn.assistant }];
    if (turn.tools.length) {
      const second = session.prompt([turn.user, ...turn.tools], info);
      calls.push({ plan: second, promptTokens: promptTokens.count(second.messages), output: turn.assistant });
    }

    // What was sent, before the turn changes memory.
    let broken = 0;
    let zombiePrompt = false;
    let overBudget = false;
    let estimatedTokens = false;
    const upkeep = carried;
    carried = [];
    for (let k = 0; k < calls.length; k++) {
      const { plan, output } = calls[k]!;
      for (const v of policyViolations(plan.messages, ctx.rules, conversation)) {
        violations.push({ scenario: conversation.id, policy: variant.name, turn: turn.index, call: k + 1, rule: v.rule, detail: v.detail });
        broken++;
      }
      zombiePrompt ||= watch.zombieIn(plan.messages);
      overBudget ||= plan.overBudget;
      estimatedTokens ||= tokens.anyEstimated && (tokens.estimatedIn(plan.messages) || (output !== undefined && tokens.estimated(output)));
      for (const u of plan.upkeep) upkeep.push(u);
    }
    const injectionExposed = watch.exposedIn(first.messages, 1);
    for (const u of session.commit(exchange, info)) upkeep.push(u);
    forgetAfter(turn.index, upkeep);
    watch.endTurn(turn);

    let inputTokens = 0;
    let cachedTokens = 0;
    let cacheWriteTokens = 0;
    let outputTokens = 0;
    let costInput = 0n;
    let costCached = 0n;
    let costOutput = 0n;
    let latencyMs = 0;
    let overflow = false;
    let fallback = false;
    for (const call of calls) {
      onCall?.(turn.index, call);
      const c = meter.call({
        model: turnModel,
        messages: call.plan.messages,
        promptTokens: call.promptTokens,
        stablePrefix: call.plan.stablePrefix,
        outputTokens: call.output ? tokens.output(call.output) : 0,
        time,
      });
      inputTokens += c.inputTokens;
      cachedTokens += c.cachedTokens;
      cacheWriteTokens += c.cacheWriteTokens;
      outputTokens += c.outputTokens;
      costInput += c.input;
      costCached += c.cached;
      costOutput += c.output;
      latencyMs += c.latencyMs;
      overflow ||= c.overflow;
      fallback ||= c.fallback;
    }
    let auxInputTokens = 0;
    let auxOutputTokens = 0;
    let embedTokens = 0;
    let costUpkeep = 0n;
    for (const u of upkeep) {
      if (u.kind === 'embed') embedTokens += u.inputTokens;
      else {
        auxInputTokens += u.inputTokens;
        auxOutputTokens += u.outputTokens;
      }
      const priced = meter.upkeep(u.model, u.inputTokens, u.outputTokens);
      costUpkeep += priced.cost;
      overflow ||= priced.overflow;
      if (u.sync) latencyMs += priced.latencyMs;
    }
    const cost = costInput + costCached + costOutput + costUpkeep;
    cumulative += cost;

    // Made whole in one go, its fields in the order of TurnRecord (the order results.json lists them in).
    const row: TurnRecord = {
      scenario: conversation.id,
      policy: variant.name,
      turn: turn.index,
      contextMessages: first.messages.length,
      model: turnModel,
      fallback,
      inputTokens,
      cachedTokens,
      cacheWriteTokens,
      outputTokens,
      auxInputTokens,
      auxOutputTokens,
      embedTokens,
      cost,
      cumulativeCost: cumulative,
      latencyMs: Math.round(latencyMs),
      overflow,
      overBudget,
      probes: 0,
      retained: 0,
      violations: broken,
      zombiePrompt,
      injectionExposed,
      costInput,
      costCached,
      costOutput,
      costUpkeep,
      estimatedTokens,
    };

    for (const fact of turn.probe) {
      const state = ledger.at(fact, turn.index)!;
      // A forgotten fact has no current value: finding its last (or an older) value is a violation.
      const { outcome, source } = ctx.presence.score(first.messages, state.current.value, state.older);
      if (!state.forgotten) {
        row.probes++;
        if (outcome === 'retained') row.retained++;
      }
      probes.push({
        scenario: conversation.id,
        policy: variant.name,
        turn: turn.index,
        fact,
        outcome,
        ageTurns: turn.index - state.current.turn,
        source,
        expected: state.forgotten ? 'missing' : 'retained',
        violation: state.forgotten && outcome !== 'missing',
      });
    }
    turns.push(row);
    yield row;
  }
  const artifacts = session.artifacts();
  const storedBytes = artifacts.reduce((n, a) => n + a.bytes, 0);
  return { turns, probes, violations, artifacts, end: { zombies: watch.zombies(artifacts), storedBytes } };
}
