import type { Pico } from '../types.js';

const PICO_PER_USD = 1_000_000_000_000n;

/** Pico-dollars as USD with a fixed number of decimals, rounded half away from zero. */
export function usd(p: Pico, decimals = 8): string {
  const neg = p < 0n;
  const abs = neg ? -p : p;
  const scale = 10n ** BigInt(12 - decimals);
  const units = (abs + scale / 2n) / scale;
  const whole = units / 10n ** BigInt(decimals);
  const frac = (units % 10n ** BigInt(decimals)).toString().padStart(decimals, '0');
  return `${neg ? '-' : ''}${whole}${decimals ? `.${frac}` : ''}`;
}

/** Pico-dollars as whole micro-dollars (for baselines and JSON). */
export function microUsd(p: Pico): number {
  return Number((p + 500_000n) / 1_000_000n);
}

/** Pico-dollars as a float of USD, for charts only. */
export function usdNumber(p: Pico): number {
  return Number(p) / Number(PICO_PER_USD);
}

/** A ratio as a fixed-precision fraction, empty when undefined. */
export function fraction(r: number | null, decimals = 4): string {
  return r === null ? '' : r.toFixed(decimals);
}
