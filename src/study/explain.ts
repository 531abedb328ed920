import { UsageError } from '../errors.js';
import { explainReplay } from '../engine/parallel.js';
import { replayTurn, type SentCall, type UpkeepPrice } from '../engine/replay.js';
import { replayContexts, type ModelContext } from '../engine/run.js';
import { runSpecOf } from '../engine/spec.js';
import { FactLedger, scoreProbe } from '../engine/score.js';
import type { CallCost } from '../pricing/meter.js';
import { closest } from '../pricing/prices.js';
import { normalize } from '../text/normalize.js';
import type { Conversation, Turn, UpkeepCall } from '../types.js';
import type { ProbeRecord, TurnRecord } from '../records/registry.js';
import type { RunnableStudy } from './pipeline.js';
import { displayPath } from '../output/display.js';
import { studyConversations, type Study } from './study.js';
import { studyUpkeep } from '../recording/upkeep.js';

/** One model call of the explained turn: what was sent, and what the run's meter charged for it. */
export interface ExplainedCall {
  sent: SentCall;
  cost: CallCost;
}

/** An upkeep call charged to the turn, priced on its own model; `beforeCall` is the call (from 1) the user waited for it before, absent when it came after the calls. */
export interface ExplainedUpkeep {
  upkeep: UpkeepCall;
  price: UpkeepPrice;
  beforeCall?: number;
}

/** A probe of the turn as the run scored it, with the value the first call's prompt held (as the scenario states it), if any. */
export interface ExplainedProbe {
  record: ProbeRecord;
  found?: string;
}

/** One turn of one conversation under one policy, replayed as `ctxsim run` replays it. */
export interface ExplainedTurn {
  conversation: Conversation;
  turn: Turn;
  policy: string;
  /** What the replay ran with: the settings (`spec`), the chat model, its token counter and encoding, the prices. */
  ctx: ModelContext;
  calls: ExplainedCall[];
  upkeep: ExplainedUpkeep[];
  /** The turn's record (its row of turns.csv): its cost is its calls' and its upkeep's. */
  record: TurnRecord;
  probes: ExplainedProbe[];
}

/** The study's conversation `id` (loaded as `run` loads them: of a generated set, only that one is made); without an id, its only one. */
export function studyConversation(study: Study, id: string | undefined): Conversation {
  const all = studyConversations(study.scenarios, { seed: study.seed });
  const ids = Array.from({ length: all.length }, (_, i) => all.id(i)!);
  const some = (shown: readonly string[]) => `${shown.join(', ')}${all.length > shown.length ? `, … (${all.length} in all)` : ''}`;
  if (id === undefined) {
    if (all.length === 1) return all.at(0);
    throw new UsageError(`--scenario: the study has ${all.length} scenarios, name one: ${some(ids.slice(0, 5))}`);
  }
  const found = ids.indexOf(id);
  if (found >= 0) return all.at(found);
  const near = closest(id, ids, 5);
  throw new UsageError(`--scenario ${id}: the study has no scenario of that id (${near.length ? `closest: ${some(near)}` : `it has ${some(ids.slice(0, 5))}`})`);
}

/** The study's chat model `model`; without one, its first. */
export function studyModel(study: Study, model: string | undefined): string {
  if (model === undefined) return study.models[0]!;
  if (!study.models.includes(model)) throw new UsageError(`--model ${model}: not a model of the study (${study.models.join(', ')})`);
  return model;
}

/**
 * Replays `conversation` through the study's one policy on `model`, with
 * the study's seed, tokenizer, prices, caching, tools and upkeep, in the
 * context `run` makes for it (`replayContexts`), and keeps turn number `n`
 * (from 1): each call as sent and priced, the upkeep charged to the turn,
 * its record and its probes as the run scored them. The whole conversation
 * is replayed, so settings that look at all of it price the turn as the
 * run did. A policy module is replayed as a run replays it
 * (`explainReplay`): on a worker thread, its code on a thread of its own,
 * under the run's limits.
 */
export async function explainTurn(study: RunnableStudy, conversation: Conversation, model: string, n: number): Promise<ExplainedTurn> {
  const variant = study.policies[0]!;
  const turn = conversation.turns[n - 1]!;
  const upkeep = await studyUpkeep(study, [conversation], displayPath);
  const settings = { ...study, models: [model], cacheFolder: false as const, ...upkeep };
  const ctx = replayContexts(runSpecOf(settings), settings)[0]!;
  const r = variant.module ? await explainReplay({ ...settings, policies: [variant] }, conversation, n) : replayTurn(conversation, variant, ctx, n);
  const upkeepCalls: ExplainedUpkeep[] = r.upkeep.map((u) => ({ ...u }));
  for (const u of upkeepCalls) {
    const i = r.calls.findIndex((c) => c.sent.plan.upkeep.includes(u.upkeep));
    if (i >= 0) u.beforeCall = i + 1;
  }
  const ledger = FactLedger.of(conversation);
  const probes = r.probes.map((record): ExplainedProbe => {
    const state = ledger.at(record.fact, turn.index)!;
    const { value } = scoreProbe(r.calls[0]!.sent.plan.messages, state.current.value, state.older);
    return value === undefined ? { record } : { record, found: stated(conversation, record.fact, value, turn.index) };
  });
  return { conversation, turn, policy: variant.name, ctx, calls: r.calls, upkeep: upkeepCalls, record: r.record!, probes };
}

/** A fact's normalized value as the scenario last stated it by turn `by`. */
function stated(conversation: Conversation, fact: string, value: string, by: number): string {
  const turns = conversation.turns.filter((t) => t.index <= by && t.facts[fact] !== undefined && normalize(t.facts[fact]) === value);
  return turns.at(-1)?.facts[fact] ?? value;
}
