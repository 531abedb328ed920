import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { divRound, dollars, grouped, moneyDecimals, percent, usd } from '../src/records/format.js';
import { picoFromUsd } from '../src/records/json.js';

describe('number formats', () => {
  it('prints pico-dollars as USD with d decimals, rounded half away from zero', () => {
    expect(usd(13_500_000n)).toBe('0.00001350'); // 13.5 µUSD
    expect(usd(4_999n)).toBe('0.00000000'); // below half a unit of 10^-8 USD
    expect(usd(5_000n)).toBe('0.00000001');
    expect(usd(-5_000n)).toBe('-0.00000001');
    expect(usd(1_234_567_890_123_456n, 4)).toBe('1234.5679');
    expect(usd(1n, 12)).toBe('0.000000000001');
    expect(usd(2_500_000_000_000n, 0)).toBe('3');
    // Against the definition: round(|p| / 10^(12-d)) as an integer, then a decimal point d digits from the right.
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: 0, max: 12 }), (p, d) => {
        const scale = 10n ** BigInt(12 - d);
        const units = ((p < 0n ? -p : p) + scale / 2n) / scale;
        const whole = units / 10n ** BigInt(d);
        const frac = (units % 10n ** BigInt(d)).toString().padStart(d, '0');
        expect(usd(p, d)).toBe(`${p < 0n ? '-' : ''}${whole}${d ? `.${frac}` : ''}`);
      }),
      { seed: 42, numRuns: 1000 },
    );
  });

  it('prints amounts near the limit of exact doubles as bigint arithmetic does (property)', () => {
    const definition = (p: bigint, d: number) => {
      const scale = 10n ** BigInt(12 - d);
      const units = ((p < 0n ? -p : p) + scale / 2n) / scale;
      return `${p < 0n ? '-' : ''}${units / 10n ** BigInt(d)}${d ? `.${(units % 10n ** BigInt(d)).toString().padStart(d, '0')}` : ''}`;
    };
    const safe = BigInt(Number.MAX_SAFE_INTEGER);
    // Below and just above 2^53, small amounts, and exact halves of every unit (the rounding edge).
    const amount = fc.oneof(
      fc.bigInt({ min: -safe - 10n, max: safe + 10n }),
      fc.bigInt({ min: safe - 100_000n, max: safe + 10n }),
      fc.bigInt({ min: -1_000_000n, max: 1_000_000n }),
      fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 15n / 2n }), fc.integer({ min: 0, max: 12 })).map(([k, d]) => k * 10n ** BigInt(12 - d) + 10n ** BigInt(12 - d) / 2n),
    );
    fc.assert(
      fc.property(amount, fc.integer({ min: 0, max: 12 }), (p, d) => {
        expect(usd(p, d)).toBe(definition(p, d));
      }),
      { seed: 42, numRuns: 5000 },
    );
  });

  it('groups thousands', () => {
    expect(grouped(0)).toBe('0');
    expect(grouped(999)).toBe('999');
    expect(grouped(1000)).toBe('1,000');
    expect(grouped(1234567)).toBe('1,234,567');
    expect(grouped(-1234567)).toBe('-1,234,567');
    expect(grouped('1234567.891234')).toBe('1,234,567.891234');
    expect(grouped(12345678901234567890n)).toBe('12,345,678,901,234,567,890');
  });

  it('writes dollars with fixed decimals, rounded half away from zero', () => {
    // 1,234,567,890,000,000 pico = $1,234.56789; to 2 decimals: $1,234.57.
    expect(dollars(1_234_567_890_000_000n, 2)).toBe('$1,234.57');
    // 5,000,000,000 pico = $0.005: exactly half a cent rounds up.
    expect(dollars(5_000_000_000n, 2)).toBe('$0.01');
    expect(dollars(4_999_999_999n, 2)).toBe('$0.00');
    expect(dollars(-5_000_000_000n, 2)).toBe('-$0.01');
    expect(dollars(0n, 4)).toBe('$0.0000');
  });

  it('writes percentages with one decimal', () => {
    expect(percent(2 / 3)).toBe('66.7%');
    expect(percent(1)).toBe('100.0%');
    expect(percent(null)).toBe('-');
  });

  it('divides bigints rounding half up', () => {
    expect(divRound(7n, 2n)).toBe(4n);
    expect(divRound(5n, 2n)).toBe(3n);
    expect(divRound(4n, 3n)).toBe(1n);
    expect(divRound(-7n, 2n)).toBe(-4n);
  });

  it('picks money decimals for three significant digits of the smallest value', () => {
    // $0.000500000001 → 500,000,001 pico, 9 digits → 3 zeros after the point → 6 decimals.
    expect(moneyDecimals([1_234_567_892n, 500_000_001n], 4)).toBe(6);
    // $1.23 → never below the minimum.
    expect(moneyDecimals([1_230_000_000_000n], 4)).toBe(4);
    expect(moneyDecimals([0n], 2)).toBe(2);
    // 1 pico → capped at 12 decimals.
    expect(moneyDecimals([1n], 2)).toBe(12);
  });

  it('keeps digits: grouped text without commas is the number, and 12-decimal dollars parse back exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 24n }), (p) => {
        expect(grouped(p).replace(/,/g, '')).toBe(String(p));
        expect(picoFromUsd(dollars(p, 12).slice(1).replace(/,/g, ''))).toBe(p);
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});
