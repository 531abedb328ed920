import { replay } from '../engine/replay.js';
import { replayContext, type ModelContext } from '../engine/run.js';
import { loadPrices } from '../pricing/load.js';
import { REGISTRY } from '../policies/index.js';
import { resolveSpec, type PolicyVariant } from '../policies/spec.js';
import { fraction, grouped } from '../records/format.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { Conversation } from '../types.js';
import type { Study } from './study.js';

/** What ctxsim counts for a transcript's calls against what the provider billed for them. */
export interface BilledCheck {
  scenario: string;
  model: string;
  /** Calls compared: those whose billed usage the transcript recorded, or, against a total, every call of the replay. */
  calls: number;
  /** Prompt tokens ctxsim counts for those calls, sending everything (`full`). */
  counted: number;
  /** Prompt tokens the provider billed for them. */
  billed: number;
  /** Against a conversation's billed total (`billed:`): the calls the bill covers. */
  billedCalls?: number;
}

/** Whether a conversation records what a provider billed for any of its calls. */
const hasBilledCalls = (c: Conversation) => c.turns.some((t) => t.tools.some((m) => m.billed) || t.assistant?.billed);

/**
 * For each conversation that records billed usage (an imported agent
 * transcript), ctxsim's count of the prompts of those calls under `full` —
 * tool definitions included — against the bill: the check of ctxsim's
 * accounting on real traffic. A conversation that records a total only
 * (`billed:`) is compared over all of `full`'s calls. The replay is on the
 * model the transcript was recorded on when it names one the price table
 * knows, else on the study's first model.
 */
export function billedChecks(conversations: readonly Conversation[], study: Pick<Study, 'seed' | 'models' | 'tokenizer' | 'prices' | 'toolDefs'>): BilledCheck[] {
  const billedOnes = conversations.filter((c) => hasBilledCalls(c) || c.billed);
  if (!billedOnes.length) return [];
  const prices = typeof study.prices === 'object' ? study.prices : loadPrices(study.prices ?? 'builtin');
  const counters = new Map<string, TokenCounter>();
  const contexts = new Map<string, ModelContext>();
  const contextFor = (model: string): ModelContext => {
    let ctx = contexts.get(model);
    if (!ctx) contexts.set(model, (ctx = replayContext({ ...study, model, prices, tokenCache: false }, counters)));
    return ctx;
  };
  const full = (resolveSpec(REGISTRY, 'full', []) as PolicyVariant[])[0]!;
  return billedOnes.map((c) => {
    const ctx = contextFor(c.model !== undefined && prices.models.has(c.model) ? c.model : study.models[0]!);
    const total = hasBilledCalls(c) ? undefined : c.billed!;
    const check: BilledCheck = { scenario: c.id, model: ctx.model, calls: 0, counted: 0, billed: total?.input ?? 0, ...(total && { billedCalls: total.calls }) };
    replay(c, full, ctx, (_, call) => {
      const b = call.output?.billed;
      if (!total && !b) return;
      check.calls++;
      check.counted += call.promptTokens;
      if (b) check.billed += b.input;
    });
    return check;
  });
}

/**
 * `billed: s1 (full on deepseek-chat, 124 calls): ctxsim counts 4,505,698 prompt tokens, the provider billed 4,930,216 (−8.6%)`;
 * against a total over a different number of calls than the replay makes, `(full on gpt-4o, 12 calls; 13 billed)`.
 */
export function billedLine(b: BilledCheck): string {
  const diff = b.counted / b.billed - 1;
  const calls = `${b.calls} calls${b.billedCalls !== undefined && b.billedCalls !== b.calls ? `; ${b.billedCalls} billed` : ''}`;
  return `billed: ${b.scenario} (full on ${b.model}, ${calls}): ctxsim counts ${grouped(b.counted)} prompt tokens, the provider billed ${grouped(b.billed)} (${diff >= 0 ? '+' : '−'}${fraction(Math.abs(diff) * 100, 1)}%)`;
}
