/**
 * The gate's limits: how much worse a scenario × policy may get (cost,
 * retention, answers), read from a study's words or a flag's, recorded in a
 * baseline, and the limits a check applies.
 */
import { UsageError } from '../errors.js';

/** Retention may drop by a number of probes (`1`) or by percentage points of retention (`2%`). */
export type RetentionLimit = { probes: number } | { points: number };

export interface GateLimits {
  /** Largest allowed relative cost increase, e.g. 0.05 for 5%. */
  maxCostIncrease: number;
  maxRetentionDrop: RetentionLimit;
  /** How far answer retention may drop, where both runs measured answers (default: `DEFAULT_ANSWER_DROP`, 0 probes). */
  maxAnswerDrop?: RetentionLimit;
}

export const DEFAULT_LIMITS: GateLimits = { maxCostIncrease: 0.05, maxRetentionDrop: { probes: 0 } };

/** The answer limit of limits that name none: as the retention limit's default, no more probes unanswered. */
export const DEFAULT_ANSWER_DROP: RetentionLimit = { probes: 0 };

/** A fraction as the percentage it was written as, unrounded: 0.0025 → `0.25%`. */
export function limitPercent(fraction: number): string {
  return `${Number((fraction * 100).toPrecision(12))}%`;
}

/**
 * Parses a percentage such as `5%` (0.05). A bare number is refused: `0.25`
 * could mean a quarter or a quarter of a percent.
 */
export function parsePercent(flag: string, value: string | number): number {
  return named(flag, percent(value));
}

/** Parses a retention limit: `2%` (points of retention) or `1` (probes). */
export function parseRetentionLimit(flag: string, value: string | number): RetentionLimit {
  return named(flag, retentionLimit(value));
}

/** What is wrong with a study's `gate` limit, or undefined (the reason alone: the study names the key at its place). */
export function gateLimitProblem(key: 'maxCostIncrease' | 'maxRetentionDrop' | 'maxAnswerDrop', value: string | number): string | undefined {
  const r = key === 'maxCostIncrease' ? percent(value) : retentionLimit(value);
  return typeof r === 'object' && 'problem' in r ? r.problem : undefined;
}

/** A value, or why the text is not one (without the flag or key: the caller names it). */
type Parsed<T> = T | { problem: string };

function named<T>(flag: string, r: Parsed<T>): T {
  if (typeof r === 'object' && r !== null && 'problem' in r) throw new UsageError(`${flag}: ${r.problem}`);
  return r as T;
}

function percent(value: string | number): Parsed<number> {
  const s = String(value).trim();
  const m = /^(-?\d+(?:\.\d+)?)\s*(%?)$/.exec(s);
  if (!m) return { problem: `expected a percentage such as 5%, got ${JSON.stringify(value)}` };
  // A limit is how much worse a row may get: below 0 every unchanged row would fail.
  if (m[1]!.startsWith('-')) return { problem: `a limit is at least 0%, got ${s}` };
  const n = Number(m[1]);
  if (!m[2]) return { problem: `write ${limitPercent(n)} or ${m[1]}% (a bare number could be a fraction or a percentage), got ${s}` };
  return n / 100;
}

function retentionLimit(value: string | number): Parsed<RetentionLimit> {
  const s = String(value).trim();
  if (s.endsWith('%')) {
    const points = percent(s);
    if (typeof points !== 'number') return points;
    if (points > 1) return { problem: `retention cannot drop by more than 100%, got ${s}` };
    return { points };
  }
  if (/^-\d+$/.test(s)) return { problem: `a limit is at least 0 probes, got ${s}` };
  if (!/^\d+$/.test(s)) return { problem: `expected a number of probes (1) or a percentage (2%), got ${JSON.stringify(value)}` };
  return { probes: Number(s) };
}

/** The limits in words: `cost up to +5%, up to 0 more probes lost`; with `answers` (the runs measured them), the answer limit too. */
export function limitsText(limits: GateLimits, answers = false): string {
  const lim = limits.maxRetentionDrop;
  const retention = 'probes' in lim ? `up to ${lim.probes} more probe${lim.probes === 1 ? '' : 's'} lost` : `retention down by up to ${limitPercent(lim.points)} (points)`;
  const a = limits.maxAnswerDrop ?? DEFAULT_ANSWER_DROP;
  const answered = 'probes' in a ? `up to ${a.probes} more probe${a.probes === 1 ? '' : 's'} unanswered` : `answer retention down by up to ${limitPercent(a.points)} (points)`;
  return `cost up to +${limitPercent(limits.maxCostIncrease)}, ${retention}${answers ? `, ${answered}` : ''}`;
}

/** A limit's key, as a study's `gate:` and a baseline's `study.gate` name it. */
export type LimitKey = 'maxCostIncrease' | 'maxRetentionDrop' | 'maxAnswerDrop';

export const LIMIT_KEYS: readonly LimitKey[] = ['maxCostIncrease', 'maxRetentionDrop', 'maxAnswerDrop'];

/** Limits in a study's words, every one given (`5%`, `0`, `2%`): as a baseline records the limits of the study it was saved from. */
export type LimitsText = Record<LimitKey, string>;

/** A retention limit in a study's words: probes as a whole number, points as a percentage. */
const retentionText = (l: RetentionLimit) => ('probes' in l ? String(l.probes) : limitPercent(l.points));

/** Limits in a study's words, a default given for each left out. */
export function limitsWords(limits: GateLimits): LimitsText {
  return {
    maxCostIncrease: limitPercent(limits.maxCostIncrease),
    maxRetentionDrop: retentionText(limits.maxRetentionDrop),
    maxAnswerDrop: retentionText(limits.maxAnswerDrop ?? DEFAULT_ANSWER_DROP),
  };
}

/** Limits read from their words (checked: see `gateLimitProblem`). */
export function limitsOfWords(words: LimitsText): Required<GateLimits> {
  return {
    maxCostIncrease: parsePercent('maxCostIncrease', words.maxCostIncrease),
    maxRetentionDrop: parseRetentionLimit('maxRetentionDrop', words.maxRetentionDrop),
    maxAnswerDrop: parseRetentionLimit('maxAnswerDrop', words.maxAnswerDrop),
  };
}

/** A study's limits (its `gate:` keys), a default for each it leaves out. */
export function studyLimits(gate: Partial<GateLimits> = {}): GateLimits {
  return {
    maxCostIncrease: gate.maxCostIncrease ?? DEFAULT_LIMITS.maxCostIncrease,
    maxRetentionDrop: gate.maxRetentionDrop ?? DEFAULT_LIMITS.maxRetentionDrop,
    ...(gate.maxAnswerDrop && { maxAnswerDrop: gate.maxAnswerDrop }),
  };
}

/** The stricter of two retention limits; of two kinds (probes, points), which have no order, `kept`. */
function stricterRetention(kept: RetentionLimit, other: RetentionLimit): RetentionLimit {
  if ('probes' in kept && 'probes' in other) return other.probes < kept.probes ? other : kept;
  if ('points' in kept && 'points' in other) return other.points < kept.points ? other : kept;
  return kept;
}

/**
 * The limits a check applies: each given one (a flag of the command line,
 * which a workflow sets) as given; else the stricter of the study's and
 * those `recorded` in the baseline (absent in a baseline saved before it
 * recorded them), the baseline's when they are of two kinds. A study's file
 * comes with the pull request it checks: raising a limit there loosens
 * nothing until a baseline saved with it is committed.
 */
export function appliedLimits(study: GateLimits, recorded: GateLimits | undefined, given: Partial<GateLimits> = {}): GateLimits {
  const answers = study.maxAnswerDrop ?? DEFAULT_ANSWER_DROP;
  const limits: Required<GateLimits> = recorded
    ? {
        maxCostIncrease: Math.min(recorded.maxCostIncrease, study.maxCostIncrease),
        maxRetentionDrop: stricterRetention(recorded.maxRetentionDrop, study.maxRetentionDrop),
        maxAnswerDrop: stricterRetention(recorded.maxAnswerDrop ?? DEFAULT_ANSWER_DROP, answers),
      }
    : { ...study, maxAnswerDrop: answers };
  // A key given as undefined gives nothing.
  return { ...limits, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
}
