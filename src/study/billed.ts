import { replay } from '../engine/replay.js';
import { replayContexts } from '../engine/run.js';
import { REGISTRY } from '../policies/index.js';
import { resolveSpec, type PolicyVariant } from '../policies/spec.js';
import { fraction, grouped } from '../records/format.js';
import type { Conversation } from '../types.js';
import type { Study } from './study.js';

/** What ctxsim counts for a transcript's calls against what the provider billed for them. */
export interface BilledCheck {
  scenario: string;
  model: string;
  /** Calls whose billed usage the transcript recorded. */
  calls: number;
  /** Prompt tokens ctxsim counts for those calls, sending everything (`full`). */
  counted: number;
  /** Prompt tokens the provider billed for them. */
  billed: number;
}

/** Whether a conversation records what a provider billed for any of its calls. */
const hasBilled = (c: Conversation) => c.turns.some((t) => t.tools.some((m) => m.billed) || t.assistant?.billed);

/**
 * For each conversation that records billed usage (an imported agent
 * transcript), ctxsim's count of the prompts of those calls under `full` on
 * the study's first model — tool definitions included — against the bill:
 * the check of ctxsim's accounting on real traffic.
 */
export function billedChecks(conversations: readonly Conversation[], study: Pick<Study, 'seed' | 'models' | 'tokenizer' | 'prices' | 'toolDefs'>): BilledCheck[] {
  const billedOnes = conversations.filter(hasBilled);
  if (!billedOnes.length) return [];
  const [ctx] = replayContexts({ ...study, models: study.models.slice(0, 1), tokenCache: false });
  const full = (resolveSpec(REGISTRY, 'full', []) as PolicyVariant[])[0]!;
  return billedOnes.map((c) => {
    const check: BilledCheck = { scenario: c.id, model: ctx!.model, calls: 0, counted: 0, billed: 0 };
    replay(c, full, ctx!, (_, call) => {
      const b = call.output?.billed;
      if (!b) return;
      check.calls++;
      check.counted += call.promptTokens;
      check.billed += b.input;
    });
    return check;
  });
}

/** `billed: s1 (full on deepseek-chat, 124 calls): ctxsim counts 4,505,698 prompt tokens, the provider billed 4,930,216 (−8.6%)`. */
export function billedLine(b: BilledCheck): string {
  const diff = b.counted / b.billed - 1;
  return `billed: ${b.scenario} (full on ${b.model}, ${b.calls} calls): ctxsim counts ${grouped(b.counted)} prompt tokens, the provider billed ${grouped(b.billed)} (${diff >= 0 ? '+' : '−'}${fraction(Math.abs(diff) * 100, 1)}%)`;
}
