import type { Pico } from '../types.js';

const PICO_PER_USD = 1_000_000_000_000n;

/** Decimals of money in results.json: 12, i.e. exact to the pico-dollar. */
export const MONEY_DECIMALS = 12;

/** Pico-dollars as USD with a fixed number of decimals, rounded half away from zero. */
export function usd(p: Pico, decimals = 8): string {
  if (p < -SAFE || p > SAFE) {
    // Beyond exact doubles: bigint arithmetic. Units of 10^-decimals USD, as digits: the last `decimals` of them are the fraction.
    const abs = p < 0n ? -p : p;
    const digits = ((abs + HALF_UNIT[decimals]!) / UNIT[decimals]!).toString().padStart(decimals + 1, '0');
    const cut = digits.length - decimals;
    return `${p < 0n ? '-' : ''}${digits.slice(0, cut)}${decimals ? `.${digits.slice(cut)}` : ''}`;
  }
  // Exact in doubles (records are written by the million; bigint division and printing are slow).
  const abs = Math.abs(Number(p));
  let units = abs;
  if (decimals < 12) {
    const [whole, rest] = divide(abs, UNIT_NUMBER[decimals]!);
    units = 2 * rest >= UNIT_NUMBER[decimals]! ? whole + 1 : whole;
  }
  const [whole, fraction] = divide(units, TEN_TO[decimals]!);
  return `${p < 0n ? '-' : ''}${whole}${decimals ? `.${fractionDigits(fraction, decimals)}` : ''}`;
}

/** `n` ÷ `d` for integers below 2^53: the quotient and the remainder (0 ≤ remainder < d), exact. */
function divide(n: number, d: number): [number, number] {
  let q = Math.floor(n / d);
  let rest = n - q * d;
  // The quotient of doubles can be one off: correct it.
  if (rest < 0) {
    q--;
    rest += d;
  } else if (rest >= d) {
    q++;
    rest -= d;
  }
  return [q, rest];
}

/** `n` (0 ≤ n < 10^digits) as exactly `digits` decimal digits: four at a time from a table. */
function fractionDigits(n: number, digits: number): string {
  let out = '';
  // The first chunk takes what is over a multiple of four.
  for (let left = digits, size = ((digits - 1) % 4) + 1; left > 0; left -= size, size = 4) {
    const scale = TEN_TO[left - size]!;
    const chunk = Math.floor(n / scale);
    n -= chunk * scale;
    out += size === 4 ? FOUR_DIGITS[chunk]! : FOUR_DIGITS[chunk]!.slice(4 - size);
  }
  return out;
}

/** Pico-dollars per unit of 10^-d USD (d = 0 … 12), and half of it (for rounding half up). */
const UNIT = Array.from({ length: 13 }, (_, d) => 10n ** BigInt(12 - d));
const HALF_UNIT = UNIT.map((u) => u / 2n);
const UNIT_NUMBER = UNIT.map(Number);
const TEN_TO = Array.from({ length: 13 }, (_, d) => 10 ** d);
const FOUR_DIGITS = Array.from({ length: 10_000 }, (_, i) => String(i).padStart(4, '0'));
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Pico-dollars as a float of USD, for charts only. */
export function usdNumber(p: Pico): number {
  return Number(p) / Number(PICO_PER_USD);
}

/** A ratio as a fixed-precision fraction, empty when undefined. */
export function fraction(r: number | null, decimals = 4): string {
  return r === null ? '' : r.toFixed(decimals);
}

/** Digits grouped by thousands with commas: `1234567` → `1,234,567`. */
export function grouped(n: number | bigint | string): string {
  const s = String(n);
  const neg = s.startsWith('-');
  const [whole, frac] = (neg ? s.slice(1) : s).split('.') as [string, string?];
  const g = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${g}${frac !== undefined ? `.${frac}` : ''}`;
}

/** A count with its noun, grouped: `1 probe`, `1,204 probes`, `2 policies` (`many` when adding an s will not do). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${grouped(n)} ${n === 1 ? one : many}`;
}

/** Pico-dollars as `$1,234.56` with a fixed number of decimals (rounded half away from zero). */
export function dollars(p: Pico, decimals: number): string {
  const s = grouped(usd(p, decimals));
  return s.startsWith('-') ? `-$${s.slice(1)}` : `$${s}`;
}

/** A ratio as a percentage with fixed decimals, `-` when undefined. */
export function percent(r: number | null, decimals = 1): string {
  return r === null ? '-' : `${(r * 100).toFixed(decimals)}%`;
}

/** `a / b` for bigints, rounded half away from zero (b > 0). */
export function divRound(a: bigint, b: bigint): bigint {
  const half = b / 2n;
  return a >= 0n ? (a + half) / b : -((-a + half) / b);
}

/**
 * A policy's cost per 1,000 conversations, rounded to nearest: the weighted
 * figure when scenarios have weights, else 1,000 × total over scenarios.
 */
export function costPer1000(p: { totalCost: Pico; scenarios: number; costPer1000?: Pico }): Pico {
  return p.costPer1000 ?? divRound(p.totalCost * 1000n, BigInt(Math.max(1, p.scenarios)));
}

/**
 * A policy's mean cost of a conversation, rounded to nearest, as the tables and
 * charts show it: total over scenarios, or, when scenarios have weights, the
 * weighted mean of 1,000 over 1,000.
 */
export function meanCost(p: { totalCost: Pico; scenarios: number; costPer1000?: Pico }): Pico {
  return p.costPer1000 === undefined ? divRound(p.totalCost, BigInt(Math.max(1, p.scenarios))) : divRound(p.costPer1000, 1000n);
}

/**
 * Decimals for a money column: enough for three significant digits of its
 * smallest non-zero value, at least `min`, so cheap policies still differ.
 * One precision per column, so the column lines up.
 */
export function moneyDecimals(values: readonly Pico[], min: number): number {
  const nonZero = values.filter((v) => v > 0n);
  if (!nonZero.length) return min;
  const smallest = nonZero.reduce((a, b) => (b < a ? b : a));
  // Digits after the point before the first significant one, from the pico-dollar integer (exact).
  const leading = 12 - String(smallest).length;
  return Math.min(12, Math.max(min, leading + 3));
}

/**
 * Weights are taken to millionths: a weight w counts as the whole number
 * round(w × 1,000,000) (at least 1), so weighted sums of pico-dollars stay
 * exact bigints.
 */
export const WEIGHT_SCALE = 1_000_000;

/** A weight in millionths, at least one (a product of entry and file weights may be smaller). */
export function weightUnits(w: number): bigint {
  return BigInt(Math.max(1, Math.round(w * WEIGHT_SCALE)));
}

/**
 * A formatter for one column of latencies: seconds with one decimal
 * (`1,106.2 s`) when any of them is 10 s or more, else whole milliseconds
 * (`670 ms`), so a column has one unit.
 */
export function latencyFormat(values: readonly number[]): (ms: number) => string {
  if (!values.some((v) => v >= 10_000)) return (ms) => `${grouped(Math.round(ms))} ms`;
  return (ms) => `${oneDecimal(ms, 1000)} s`;
}

/** `a / b` (a ≥ 0, b > 0) with one decimal, rounded half up, digits grouped: `oneDecimal(1106216, 1000)` is `1,106.2`. */
export function oneDecimal(a: number, b: number): string {
  // Tenths from one division: a × 10 / b is exact at a half, where a / b then × 10 may not be.
  const tenths = Math.round((a * 10) / b);
  return `${grouped(Math.trunc(tenths / 10))}.${tenths % 10}`;
}

/** Probes retained of probes, `37/40`, with `, 3 overflowed` when some fell on calls over the context window; `-` without probes. */
export function retainedOf(r: { retained: number; probes: number; overflowProbes: number }): string {
  if (!r.probes) return '-';
  return `${grouped(r.retained)}/${grouped(r.probes)}${r.overflowProbes ? `, ${grouped(r.overflowProbes)} overflowed` : ''}`;
}
