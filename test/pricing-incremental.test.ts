import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUTOMATIC } from '../src/pricing/cache-rules.js';
import { Meter, type CallRequest } from '../src/pricing/meter.js';
import type { ModelPrice } from '../src/pricing/prices.js';
import { BreakpointCache, PrefixCache, sameMessage, type CacheUse } from '../src/pricing/prompt-cache.js';
import type { Message } from '../src/types.js';

const RUNS = { seed: 42, numRuns: 400 };

/**
 * A pool of messages; a prompt is built from indices into it. Indices 0–7 are
 * eight objects of four different messages (each message twice: equal, not
 * the same object), so prompts share prefixes both ways.
 */
const POOL: Message[] = Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i % 4}` }));
/** The tool definitions, as the whole-prompt definitions see them: a message before the prompt's. */
const HEAD: Message = { role: 'system', content: 'tools' };
const size = (m: Message): number => (m === HEAD ? 700 : 100 + 37 * Number(m.content.slice(1)));

/** One step of a conversation's prompts: the next prompt made from the previous one. */
type Step =
  | { op: 'grow'; add: number[] }
  | { op: 'cut'; keep: number; add: number[] }
  | { op: 'replace'; at: number; with: number }
  | { op: 'new'; prompt: number[] };

const index = fc.integer({ min: 0, max: POOL.length - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('grow' as const), add: fc.array(index, { maxLength: 6 }) }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('cut' as const), keep: fc.nat(30), add: fc.array(index, { maxLength: 4 }) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('replace' as const), at: fc.nat(30), with: index }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('new' as const), prompt: fc.array(index, { maxLength: 12 }) }), weight: 1 },
);
const callArb = fc.record({
  step: stepArb,
  /** Where the breakpoint goes: leading messages of the prompt (may exceed it). */
  stable: fc.nat(40),
  /** Breakpoint just before the newest message instead (a growing transcript's). */
  lastButOne: fc.boolean(),
  /** Another breakpoint at the end of the prompt (caching each call). */
  end: fc.boolean(),
  gap: fc.integer({ min: 0, max: 400 }),
});
const sequenceArb = fc.record({
  calls: fc.array(callArb, { minLength: 1, maxLength: 25 }),
  /** Tool definitions offered with every call. */
  tools: fc.boolean(),
  minTokens: fc.constantFrom(0, 500, 1024, 2048),
  ttl: fc.constantFrom(60, 300, 3600),
});

/** The prompts of a sequence: each a fresh array, as a policy returns them. */
function prompts(calls: readonly { step: Step }[]): Message[][] {
  let prev: Message[] = [];
  return calls.map(({ step }) => {
    let next: Message[];
    if (step.op === 'grow') next = [...prev, ...step.add.map((i) => POOL[i]!)];
    else if (step.op === 'cut') next = [...prev.slice(0, step.keep), ...step.add.map((i) => POOL[i]!)];
    else if (step.op === 'replace') next = prev.map((m, i) => (i === step.at % Math.max(1, prev.length) ? POOL[step.with]! : m));
    else next = step.prompt.map((i) => POOL[i]!);
    return (prev = next);
  });
}

/** The explicit cache by its definition, on whole prompts: each entry a copy of its prefix, each call summing the prefixes and comparing every entry. */
class PlainBreakpoints {
  private entries: { messages: Message[]; tokens: number; expires: number }[] = [];

  constructor(
    private readonly minTokens: number,
    private readonly ttl: number,
  ) {}

  call(messages: readonly Message[], breakpoints: readonly number[], time: number): CacheUse {
    this.entries = this.entries.filter((e) => time <= e.expires);
    const tokens = (n: number) => messages.slice(0, n).reduce((t, m) => t + size(m), 0);
    const isPrefix = (e: { messages: Message[] }, n: number) => e.messages.length <= n && e.messages.every((m, i) => sameMessage(m, messages[i]!));
    const marks = breakpoints.map((b) => Math.min(b, messages.length));
    const k = Math.max(...marks);
    const cacheable = marks.filter((b) => tokens(b) > 0 && tokens(b) >= this.minTokens);
    if (!cacheable.length) return { read: 0, written: 0 };
    let hit: (typeof this.entries)[number] | undefined;
    for (const e of this.entries) if (isPrefix(e, k) && (!hit || e.messages.length > hit.messages.length)) hit = e;
    if (hit) hit.expires = time + this.ttl;
    for (const b of new Set(cacheable)) {
      const same = this.entries.find((e) => e.messages.length === b && isPrefix(e, b));
      if (same) same.expires = time + this.ttl;
      else this.entries.push({ messages: messages.slice(0, b), tokens: tokens(b), expires: time + this.ttl });
    }
    return { read: hit?.tokens ?? 0, written: tokens(k) - (hit?.tokens ?? 0) };
  }
}

/** The automatic cache by its definition (SPEC §5), on whole prompts. */
function plainPrefix(messages: readonly Message[], previous: { messages: readonly Message[]; time: number } | undefined, time: number, rule: { minTokens: number; step: number }, ttl: number): number {
  if (!previous || time - previous.time > ttl) return 0;
  let n = 0;
  while (n < Math.min(messages.length, previous.messages.length) && sameMessage(messages[n]!, previous.messages[n]!)) n++;
  const p = messages.slice(0, n).reduce((t, m) => t + size(m), 0);
  return p < rule.minTokens ? 0 : Math.floor(p / rule.step) * rule.step;
}

describe('caches priced call by call equal the whole-prompt definitions', () => {
  it('explicit breakpoints (after the stable prefix, and at the end of the prompt or not): growing, cut, replaced and unrelated prompts, with and without tool definitions', () => {
    fc.assert(
      fc.property(sequenceArb, ({ calls, tools, minTokens, ttl }) => {
        const cache = new BreakpointCache(minTokens, ttl, tools ? size(HEAD) : 0);
        const plain = new PlainBreakpoints(minTokens, ttl);
        let time = 0;
        prompts(calls).forEach((messages, i) => {
          const c = calls[i]!;
          time += c.gap;
          const marks = [c.lastButOne ? Math.max(0, messages.length - 1) : c.stable, ...(c.end ? [messages.length] : [])];
          const expected = tools ? plain.call([HEAD, ...messages], marks.map((b) => b + 1), time) : plain.call(messages, marks, time);
          expect(cache.call(messages, marks, time, size)).toEqual(expected);
        });
      }),
      RUNS,
    );
  });

  it('automatic prefix: the same prompts, the tool definitions sent before the messages', () => {
    const rule = { minTokens: 1024, step: 128 };
    fc.assert(
      fc.property(sequenceArb, ({ calls, tools, ttl }) => {
        const cache = new PrefixCache(rule, ttl, tools ? size(HEAD) : 0);
        let previous: { messages: readonly Message[]; time: number } | undefined;
        let time = 0;
        prompts(calls).forEach((messages, i) => {
          const c = calls[i]!;
          time += c.gap;
          const whole = tools ? [HEAD, ...messages] : messages;
          expect(cache.call(messages, time, size)).toBe(plainPrefix(whole, previous, time, rule, ttl));
          previous = { messages: whole, time };
        });
      }),
      RUNS,
    );
  });

  it('a meter given the tool definitions’ tokens prices every call as it prices them copied into the prompt', () => {
    const price = (kind: 'automatic' | 'explicit'): ModelPrice => ({
      model: 'm',
      provider: 'test',
      mode: 'chat',
      input: 3_000_000n,
      output: 15_000_000n,
      cacheRead: 300_000n,
      cacheWrite: 3_750_000n,
      cacheWrite1h: 6_000_000n,
      cacheRule: kind === 'automatic' ? AUTOMATIC : { kind, minTokens: 1024 },
    });
    fc.assert(
      fc.property(sequenceArb, fc.constantFrom('automatic' as const, 'explicit' as const), fc.constantFrom(300, 3600), fc.constantFrom('call' as const, 'turn' as const), ({ calls }, kind, ttl, cacheBreakpoint) => {
        const p = price(kind);
        const meter = (toolTokens?: number) => new Meter({ date: 'test', source: 'test', models: new Map([['m', p]]) }, { settings: { promptCache: 'auto', promptCacheTtl: ttl, cacheBreakpoint }, count: size, ...(toolTokens && { toolTokens }) });
        const apart = meter(size(HEAD));
        const copied = meter();
        let time = 0;
        prompts(calls).forEach((messages, i) => {
          const c = calls[i]!;
          time += c.gap;
          const promptTokens = size(HEAD) + messages.reduce((t, m) => t + size(m), 0);
          const req: CallRequest = { model: 'm', messages, promptTokens, stablePrefix: c.stable, outputTokens: 50, time };
          expect(apart.call(req)).toEqual(copied.call({ ...req, messages: [HEAD, ...messages], stablePrefix: c.stable + 1 }));
        });
      }),
      RUNS,
    );
  });
});
