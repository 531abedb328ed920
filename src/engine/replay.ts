import seedrandom from 'seedrandom';
import type { PolicyVariant } from '../policies/spec.js';
import type { PromptPlan } from '../policies/types.js';
import { Meter } from '../pricing/meter.js';
import type { PriceTable } from '../pricing/prices.js';
import { chooseModel, type CostSettings } from '../pricing/settings.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { Conversation, Message, ProbeRecord, TurnRecord, UpkeepCall } from '../types.js';
import { FactLedger, Presence } from './score.js';

/** What every replay of a run shares. */
export interface ReplayContext {
  seed: number;
  model: string;
  tokens: TokenCounter;
  prices: PriceTable;
  /** Caching, routing, fallback and latency settings (defaults when absent). */
  costs?: CostSettings;
  presence: Presence;
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
}

/** The seeded stream of one (seed, scenario, policy). */
export function streamFor(seed: number, scenario: string, policy: string): () => number {
  return seedrandom(`${seed}:${scenario}:${policy}\0`);
}

/**
 * Replays one conversation through one policy. Per turn: the policy builds the
 * prompt for each model call (after the user message, and again after tool
 * results); the meter prices the calls and the upkeep; probes are scored on the
 * prompt of the turn's first call. `onCall` sees every call (for `explain`).
 */
export function replay(
  conversation: Conversation,
  variant: PolicyVariant,
  ctx: ReplayContext,
  onCall?: (turn: number, call: SentCall) => void,
): Replay {
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
  const ledger = new FactLedger(conversation);
  const turns: TurnRecord[] = [];
  const probes: ProbeRecord[] = [];
  let time = 0;
  let cumulative = 0n;

  for (const turn of conversation.turns) {
    if (turn.index > 1) time += turn.gapSeconds;
    const info = { turn, time };
    const turnModel = chooseModel(ctx.costs?.route, model, tokens.output(turn.user));
    const exchange: Message[] = [turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])];
    const calls: SentCall[] = [];
    const first = session.prompt([turn.user], info);
    calls.push({ plan: first, promptTokens: tokens.prompt(first.messages), output: turn.tools[0] ?? turn.assistant });
    if (turn.tools.length) {
      const second = session.prompt([turn.user, ...turn.tools], info);
      calls.push({ plan: second, promptTokens: tokens.prompt(second.messages), output: turn.assistant });
    }
    const upkeep: UpkeepCall[] = calls.flatMap((c) => c.plan.upkeep);
    upkeep.push(...session.commit(exchange, info));

    const row: TurnRecord = {
      scenario: conversation.id,
      policy: variant.name,
      turn: turn.index,
      contextMessages: first.messages.length,
      model: turnModel,
      fallback: false,
      inputTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      auxInputTokens: 0,
      auxOutputTokens: 0,
      embedTokens: 0,
      cost: 0n,
      cumulativeCost: 0n,
      latencyMs: 0,
      overflow: false,
      overBudget: calls.some((c) => c.plan.overBudget),
      probes: turn.probe.length,
      retained: 0,
      costInput: 0n,
      costCached: 0n,
      costOutput: 0n,
      costUpkeep: 0n,
    };
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
      row.inputTokens += c.inputTokens;
      row.cachedTokens += c.cachedTokens;
      row.cacheWriteTokens += c.cacheWriteTokens;
      row.outputTokens += c.outputTokens;
      row.costInput += c.input;
      row.costCached += c.cached;
      row.costOutput += c.output;
      row.latencyMs += c.latencyMs;
      row.overflow ||= c.overflow;
      row.fallback ||= c.fallback;
    }
    for (const u of upkeep) {
      if (u.kind === 'embed') row.embedTokens += u.inputTokens;
      else {
        row.auxInputTokens += u.inputTokens;
        row.auxOutputTokens += u.outputTokens;
      }
      const priced = meter.upkeep(u.model, u.inputTokens, u.outputTokens);
      row.costUpkeep += priced.cost;
      row.overflow ||= priced.overflow;
      if (u.sync) row.latencyMs += priced.latencyMs;
    }
    row.latencyMs = Math.round(row.latencyMs);
    row.cost = row.costInput + row.costCached + row.costOutput + row.costUpkeep;
    cumulative += row.cost;
    row.cumulativeCost = cumulative;

    for (const fact of turn.probe) {
      const state = ledger.at(fact, turn.index)!;
      const { outcome, source } = ctx.presence.score(first.messages, state.current.value, state.older);
      if (outcome === 'retained') row.retained++;
      probes.push({
        scenario: conversation.id,
        policy: variant.name,
        turn: turn.index,
        fact,
        outcome,
        ageTurns: turn.index - state.current.turn,
        source,
      });
    }
    turns.push(row);
  }
  return { turns, probes };
}
