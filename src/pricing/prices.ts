import { UsageError } from '../errors.js';
import type { Pico } from '../types.js';

/** One model's prices (pico-dollars per token) and limits. */
export interface ModelPrice {
  model: string;
  provider: string;
  mode: 'chat' | 'embedding';
  input: Pico;
  output: Pico;
  cacheRead?: Pico;
  cacheWrite?: Pico;
  maxInputTokens?: number;
}

export interface PriceTable {
  /** The date of the snapshot, shown in captions. */
  date: string;
  models: ReadonlyMap<string, ModelPrice>;
}

/** USD per token as a float → exact pico-dollars (prices are rounded to the pico-dollar). */
export function picoPerToken(usd: number): Pico {
  return BigInt(Math.round(usd * 1e12));
}

const entry = (model: string, provider: string, inUsd: number, outUsd: number, maxInputTokens?: number, cacheUsd?: number): ModelPrice => ({
  model,
  provider,
  mode: outUsd === 0 ? 'embedding' : 'chat',
  input: picoPerToken(inUsd),
  output: picoPerToken(outUsd),
  ...(cacheUsd !== undefined && { cacheRead: picoPerToken(cacheUsd) }),
  ...(maxInputTokens !== undefined && { maxInputTokens }),
});

/** A small flat table until the generated snapshot lands. */
export const BUILTIN: PriceTable = {
  date: '2026-03-11',
  models: new Map(
    [
      entry('gpt-4o-mini', 'openai', 1.5e-7, 6e-7, 128000, 7.5e-8),
      entry('gpt-4o', 'openai', 2.5e-6, 1e-5, 128000, 1.25e-6),
      entry('gpt-3.5-turbo', 'openai', 5e-7, 1.5e-6, 16385),
      entry('text-embedding-3-small', 'openai', 2e-8, 0, 8191),
    ].map((m) => [m.model, m]),
  ),
};

/** Looks a model up; an unknown one is a usage error naming the closest known names. */
export function lookup(table: PriceTable, model: string): ModelPrice {
  const m = table.models.get(model);
  if (m) return m;
  const near = closest(model, [...table.models.keys()], 3);
  throw new UsageError(`unknown model "${model}"${near.length ? ` (closest: ${near.join(', ')})` : ''}`);
}

/** The `n` names nearest to `name` by edit distance, ties broken by name. */
export function closest(name: string, names: readonly string[], n: number): string[] {
  return names
    .map((c) => [c, distance(name, c)] as const)
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, n)
    .map(([c]) => c);
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
