import { z } from 'zod';
import type { ScenarioOut } from '../docs.js';
import type { Stream } from './stream.js';

/** Parameters every profile has: turn range and message-length distributions. */
export interface CommonProfileParams {
  /** Turns per conversation, inclusive range. */
  turns: readonly [number, number];
  /** Median words of a user message. */
  userWords: number;
  /** Median words of an assistant reply. */
  assistantWords: number;
  /** Log-normal sigma of message lengths: the tail (p95 ≈ median × e^(1.645·spread)). */
  spread: number;
}

/** What a profile's builder gets for one conversation. */
export interface BuildContext<P extends CommonProfileParams> {
  id: string;
  rng: Stream;
  /** Turns this conversation has (already drawn from `params.turns`). */
  turns: number;
  params: P;
}

/** A conversation profile: defaults, the schema of its overrides, and a builder. */
export interface Profile<P extends CommonProfileParams = CommonProfileParams> {
  id: string;
  describe: string;
  defaults: P;
  /** Overrides a study may give (every key optional, unknown keys rejected). */
  overrides: z.ZodType<Partial<P>>;
  build(ctx: BuildContext<P>): ScenarioOut;
}

/** Parses `MIN-MAX` (or one number) into an inclusive range of whole numbers ≥ 1. */
export function parseRange(value: unknown): [number, number] | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1 ? [value, value] : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(value);
  if (!m) return undefined;
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : Number(m[2]);
  return lo >= 1 && hi >= lo ? [lo, hi] : undefined;
}

/**
 * The most a `MIN-MAX` range may reach: 10,000 turns (or steps, sessions…)
 * in one conversation, 30 times the longest a profile makes by default.
 * Past it a conversation costs gigabytes to generate (10,000 agent steps
 * take 1.5 GB), and 99,999,999 turns ran the heap out and aborted the process.
 */
const MAX_RANGE = 10_000;

/** A `MIN-MAX` range field with at least `min`, at most `MAX_RANGE`. */
export function rangeField(min = 1) {
  return z
    .union([z.string(), z.number()])
    .transform((v, ctx) => {
      const r = parseRange(v);
      if (!r || r[0] < min) {
        ctx.addIssue({ code: 'custom', message: `expected a range MIN-MAX of whole numbers from ${min}, such as ${Math.max(min, 5)}-40` });
        return z.NEVER;
      }
      if (r[1] > MAX_RANGE) {
        ctx.addIssue({ code: 'custom', message: `expected a range MIN-MAX of whole numbers up to ${MAX_RANGE}` });
        return z.NEVER;
      }
      return r as readonly [number, number];
    });
}

/** Override fields shared by all profiles. */
export const commonOverrides = {
  turns: rangeField(1).optional(),
  userWords: z.number().positive().optional(),
  assistantWords: z.number().positive().optional(),
  spread: z.number().min(0).max(2).optional(),
};

/** A share between 0 and 1. */
export const share = z.number().min(0).max(1);
