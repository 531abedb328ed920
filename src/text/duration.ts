const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** A duration as text: a number, then optionally one of ms, s, m, h, d, w (seconds when none). */
export const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/;

/** Parses a duration (`45s`, `5m`, `2h`, `3d`, or a number of seconds) to seconds; undefined if malformed. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = DURATION_PATTERN.exec(value);
  if (!m) return undefined;
  const seconds = Number(m[1]) * UNITS[m[2] ?? 's']!;
  // Hundreds of digits overflow to Infinity: not a duration.
  return Number.isFinite(seconds) ? seconds : undefined;
}
