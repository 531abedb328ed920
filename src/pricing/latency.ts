import type { CostSettings } from './settings.js';

/** The latency settings by model (the study's `latency:` key; `default` applies to every model), each figure optional. */
type LatencySettings = NonNullable<CostSettings['latency']>;

/** How fast a model answers: every figure a model's latency settings hold (time to first token, prefill and decode speed), the builtin ones filling in. */
export type Latency = Required<LatencySettings[string]>;

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

/** The latency figures of a model: builtin class figures, then `default`, then the model's own overrides. */
export function latencyFor(model: string, overrides: LatencySettings = {}): Latency {
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
