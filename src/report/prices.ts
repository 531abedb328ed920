import { usd } from '../records/format.js';
import { align } from './text.js';
import type { Pico } from '../types.js';
import { latencyFor } from '../pricing/latency.js';
import { encodingForModel, type TokenFactor } from '../tokens/encoding.js';
import type { ModelPrice, PriceTable } from '../pricing/prices.js';
import { MAX_SANE_PRICE, OUTLIER_RATIO, outlierText, perMillionText, type PriceOutlier } from '../pricing/outliers.js';
import { DEFAULT_PROMPT_CACHE_TTL, FIVE_MINUTES, ONE_HOUR, type CostSettings } from '../pricing/settings.js';

/** USD per million tokens from pico-dollars per token, with at least two decimals. */
export function perMillion(p: Pico): string {
  return usd(p * 1_000_000n, 6).replace(/(\.\d\d\d*?)0+$/, '$1');
}

function seconds(s: number): string {
  if (s % 3600 === 0 && s >= 3600) return `${s / 3600}h`;
  if (s % 60 === 0 && s >= 60) return `${s / 60}m`;
  return `${s}s`;
}

/** The cache rule of a model as it will be applied under the settings. */
function ruleText(p: ModelPrice, s: CostSettings): string {
  if (s.promptCache === 'off') return 'off';
  const ttl = s.promptCacheTtl ?? DEFAULT_PROMPT_CACHE_TTL;
  switch (p.cacheRule.kind) {
    case 'none':
      return 'none';
    case 'automatic':
      return `auto prefix ≥${p.cacheRule.minTokens}, ${p.cacheRule.step}-token steps, ttl ${seconds(ttl)}`;
    case 'explicit':
      return `breakpoints per ${s.cacheBreakpoint ?? 'call'} ≥${p.cacheRule.minTokens}, ttl ${seconds(Math.min(ttl, ONE_HOUR))}${ttl > FIVE_MINUTES ? ' (1h writes)' : ''}`;
  }
}

/** How tokens are counted: the run's tokenizer setting and factor, and what keeps an open-weight tokenizer from loading (its packages not installed). */
export interface Counting {
  tokenizer?: string;
  tokenFactor?: TokenFactor;
  /** Why a tokenizer cannot count here (the install command), or undefined when it can. */
  unavailable?: (tokenizer: string) => string | undefined;
}

/** How a model's tokens are counted: its tokenizer, and whether its counts are exact or an estimate (× the study's factor); `not installed` when they cannot be made here. */
function counting(model: string, c: Counting, unavailable: (tokenizer: string) => string | undefined): [string, string] {
  const e = encodingForModel(model, c.tokenizer ?? 'auto', c.tokenFactor);
  const how = `${e.estimate ? 'estimate' : 'exact'}${e.factor === undefined ? '' : ` × ${e.factor}`}`;
  return [e.name, unavailable(e.name) ? `${how}, not installed` : how];
}

/**
 * The table `ctxsim prices` prints: USD per million tokens (input, cache read,
 * cache write, output), context window, cache rule, latency figures and how
 * tokens are counted (tokenizer, exact or estimate, and whether an
 * open-weight tokenizer's packages are missing, with a line saying what to
 * install), under a caption naming the table's source and date.
 */
export function pricesTable(
  table: PriceTable,
  models: readonly ModelPrice[],
  s: CostSettings,
  tokens: Counting = {},
): string {
  const dash = (p: Pico | undefined) => (p === undefined ? '-' : perMillion(p));
  // What a run on those models would stop with, asked once per tokenizer.
  const missing = new Map<string, string | undefined>();
  const unavailable = (n: string) => {
    if (!missing.has(n)) missing.set(n, tokens.unavailable?.(n));
    return missing.get(n);
  };
  const rows = [
    ['model', 'provider', 'mode', 'input $/1M', 'cached $/1M', 'write $/1M', 'output $/1M', 'context', 'cache rule', 'ttft ms', 'prefill tok/s', 'decode tok/s', 'tokenizer', 'counts'],
    ...models.map((p) => {
      const l = latencyFor(p.model, s.latency);
      const cached = s.promptCache === 'off' || p.cacheRule.kind === 'none' ? undefined : p.cacheRead;
      const write = s.promptCache === 'off' || p.cacheRule.kind !== 'explicit' ? undefined : (s.promptCacheTtl ?? DEFAULT_PROMPT_CACHE_TTL) > FIVE_MINUTES ? p.cacheWrite1h : p.cacheWrite;
      return [
        p.model,
        p.provider,
        p.mode,
        perMillion(p.input),
        dash(cached),
        dash(write),
        perMillion(p.output),
        p.maxInputTokens === undefined ? '-' : String(p.maxInputTokens),
        ruleText(p, s),
        String(l.ttftMs),
        String(l.prefillTps),
        p.mode === 'embedding' ? '-' : String(l.decodeTps),
        // An embedding model's input is counted with the run's chat tokenizer.
        ...(p.mode === 'embedding' ? ['-', '-'] : counting(p.model, tokens, unavailable)),
      ];
    }),
  ];
  const caption = `prices: ${table.source} (LiteLLM table of ${table.date}) · cache: ${s.promptCache}${s.promptCache === 'off' ? '' : `, ttl ${seconds(s.promptCacheTtl ?? DEFAULT_PROMPT_CACHE_TTL)}`}\n`;
  const notes = [...missing.values()].flatMap((why) => (why ? [`not installed: ${why}\n`] : []));
  return caption + align(rows, new Set([3, 4, 5, 6, 7, 9, 10, 11])) + notes.join('');
}

/**
 * What `ctxsim prices --check` prints: the table checked and how many
 * entries, then each price that looks wrong on a line of its own (the
 * entry, the field, the price and what it was held to), or a line saying
 * none does.
 */
export function pricesCheck(table: PriceTable, checked: number, outliers: readonly PriceOutlier[]): string {
  const rule = `at least ${OUTLIER_RATIO}× the median of the same model elsewhere, or above ${perMillionText(MAX_SANE_PRICE)} per million tokens`;
  const head = `prices: ${table.source} (LiteLLM table of ${table.date}) · ${checked.toLocaleString('en-US')} entr${checked === 1 ? 'y' : 'ies'} checked\n`;
  if (!outliers.length) return `${head}no price looks wrong (${rule})\n`;
  const n = outliers.length;
  return `${head}${n} price${n === 1 ? '' : 's'} look${n === 1 ? 's' : ''} wrong (${rule}):\n${outliers.map((o) => `${outlierText(o)}\n`).join('')}`;
}
