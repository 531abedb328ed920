import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Meter, priceUsage } from '../src/pricing/meter.js';
import type { ModelPrice, PriceTable } from '../src/pricing/prices.js';
import { AUTOMATIC } from '../src/pricing/cache-rules.js';
import type { Message, Pico } from '../src/types.js';

const RUNS = { seed: 42, numRuns: 300 };

/** A model with the given rule and prices (pico per token); cache write ≥ input as every provider sets it. */
const priceArb = fc
  .record({
    input: fc.bigInt({ min: 0n, max: 10_000_000n }),
    output: fc.bigInt({ min: 0n, max: 10_000_000n }),
    readShare: fc.integer({ min: 0, max: 100 }),
    writeExtra: fc.bigInt({ min: 0n, max: 10_000_000n }),
    kind: fc.constantFrom('none', 'automatic', 'explicit'),
    minTokens: fc.constantFrom(1024, 2048, 4096),
  })
  .map(({ input, output, readShare, writeExtra, kind, minTokens }): ModelPrice => {
    const cacheRead: Pico = (input * BigInt(readShare)) / 100n;
    return {
      model: 'm',
      provider: 'test',
      mode: 'chat',
      input,
      output,
      cacheRead,
      cacheWrite: input + writeExtra,
      cacheWrite1h: 2n * input + writeExtra,
      cacheRule: kind === 'none' ? { kind } : kind === 'automatic' ? AUTOMATIC : { kind, minTokens },
    };
  });

const table = (p: ModelPrice): PriceTable => ({ date: 'test', source: 'test', models: new Map([[p.model, p]]) });

interface CallSpec {
  /** Indices into the message pool. */
  messages: number[];
  stablePrefix: number;
  gap: number;
  output: number;
}

const callsArb = fc.array(
  fc.record({
    messages: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 6 }),
    stablePrefix: fc.integer({ min: 0, max: 6 }),
    gap: fc.integer({ min: 0, max: 400 }),
    output: fc.integer({ min: 0, max: 2000 }),
  }),
  { minLength: 1, maxLength: 5 },
);

/** Prices a sequence of calls, plus a last call that ends with a fresh message; returns every call's cost. */
function costs(p: ModelPrice, cache: 'auto' | 'off', pool: readonly number[], calls: readonly CallSpec[], fresh: number, lastOutput: number): bigint[] {
  const msgs: Message[] = pool.map((_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
  const freshMsg: Message = { role: 'user', content: 'fresh' };
  const tokens = new Map<Message, number>([...msgs.map((m, i) => [m, pool[i]!] as const), [freshMsg, fresh]]);
  const meter = new Meter(table(p), { settings: { promptCache: cache, promptCacheTtl: 300 }, count: (m) => tokens.get(m)! });
  let time = 0;
  const out: bigint[] = [];
  const all = [...calls, { messages: [], stablePrefix: calls[calls.length - 1]!.stablePrefix, gap: 30, output: lastOutput }];
  all.forEach((c, i) => {
    time += c.gap;
    const messages = [...c.messages.map((j) => msgs[j]!), ...(i === all.length - 1 ? [freshMsg] : [])];
    let promptTokens = 0;
    for (const m of messages) promptTokens += tokens.get(m)!;
    const r = meter.call({ model: 'm', messages, promptTokens, stablePrefix: c.stablePrefix, outputTokens: c.output, time });
    out.push(r.input + r.cached + r.output);
  });
  return out;
}

const sum = (xs: readonly bigint[]) => xs.reduce((a, b) => a + b, 0n);

describe('cost never decreases when a token count increases', () => {
  it('for the price of one call, in each of uncached, cached, written and output tokens', () => {
    fc.assert(
      fc.property(
        priceArb,
        fc.record({ u: fc.nat(100_000), c: fc.nat(100_000), w: fc.nat(100_000), o: fc.nat(100_000) }),
        fc.constantFrom('u', 'c', 'w', 'o'),
        fc.integer({ min: 1, max: 10_000 }),
        (p, t, field, delta) => {
          const total = (x: typeof t) => {
            const r = priceUsage(p, { input: x.u + x.c + x.w, cached: x.c, written: x.w, output: x.o });
            return r.input + r.cached + r.output;
          };
          expect(total({ ...t, [field]: t[field] + delta })).toBeGreaterThanOrEqual(total(t));
        },
      ),
      RUNS,
    );
  });

  it('with caching off: any message or output of any call', () => {
    fc.assert(
      fc.property(
        priceArb,
        fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 6, maxLength: 6 }),
        callsArb,
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 2000 }),
        (p, pool, calls, fresh, which, delta) => {
          const before = sum(costs(p, 'off', pool, calls, fresh, 10));
          const bumped = which < 6 ? pool.map((n, i) => (i === which ? n + delta : n)) : pool;
          const after = sum(costs(p, 'off', bumped, calls, which === 6 ? fresh + delta : fresh, 10));
          expect(after).toBeGreaterThanOrEqual(before);
        },
      ),
      RUNS,
    );
  });

  it('with caching on: the new part of a prompt and the output', () => {
    // Tokens a call shares with earlier calls may cross a cache threshold and lower the bill
    // (that is how providers price it); tokens no earlier call sent never can.
    fc.assert(
      fc.property(
        priceArb,
        fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 6, maxLength: 6 }),
        callsArb,
        fc.integer({ min: 1, max: 3000 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 3000 }),
        (p, pool, calls, fresh, bumpOutput, delta) => {
          const last = (f: number, o: number) => costs(p, 'auto', pool, calls, f, o).at(-1)!;
          const before = last(fresh, 100);
          const after = bumpOutput ? last(fresh, 100 + delta) : last(fresh + delta, 100);
          expect(after).toBeGreaterThanOrEqual(before);
        },
      ),
      RUNS,
    );
  });
});
