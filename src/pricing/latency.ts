import type { CostSettings } from './settings.js';

/** How fast a model answers: every figure a model's latency settings hold (`CostSettings.latency`: time to first token, prefill and decode speed), the builtin ones filling in. */
export type Latency = Required<NonNullable<CostSettings['latency']>[string]>;

/**
 * Builtin figures: rough, round numbers for three classes of model, meant for
 * comparing policies, not for predicting a provider's speed. Override them
 * per model with the study's `latency:` key.
 */
const CLASSES: readonly { name: string; test: RegExp; figures: Latency }[] = [
  { name: 'embedding', test: /embed/i, figures: { ttftMs: 50, prefillTps: 20000, decodeTps: 1, cachedPrefillFactor: 0 } },
  {
    name: 'small',
    test: /mini|nano|haiku|flash|lite|small/i,
    figures: { ttftMs: 300, prefillTps: 8000, decodeTps: 100, cachedPrefillFactor: 0 },
  },
  { name: 'large', test: /(?:)/, figures: { ttftMs: 500, prefillTps: 4000, decodeTps: 50, cachedPrefillFactor: 0 } },
];

/** The latency figures of a model: builtin class figures, then the settings' `default`, then the model's own (the study's `latency:` key). */
export function latencyFor(model: string, overrides: CostSettings['latency'] = {}): Latency {
  const base = CLASSES.find((c) => c.test.test(model))!.figures;
  return { ...base, ...overrides.default, ...overrides[model] };
}

/**
 * Milliseconds until the reply is complete:
 * ttft + (uncached + cached × cachedPrefillFactor) / prefillTps + output / decodeTps.
 */
export function callLatencyMs(l: Latency, uncachedTokens: number, cachedTokens: number, outputTokens: number): number {
  return l.ttftMs + ((uncachedTokens + cachedTokens * l.cachedPrefillFactor) / l.prefillTps) * 1000 + (outputTokens / l.decodeTps) * 1000;
}
