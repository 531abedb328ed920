import seedrandom from 'seedrandom';

/**
 * The seeded streams policies draw from. A stream remembers the key it was
 * seeded with, so a session that runs on a policy module's own thread is
 * given a stream seeded alike there (module-link.ts): the same draws, in the
 * same order, as on the thread that replays.
 */

const KEYS = new WeakMap<() => number, string>();

/** The seeded stream of one (seed, scenario, policy): uniform in [0, 1). */
export function policyStream(seed: number, scenario: string, policy: string): () => number {
  return seededStream(`${seed}:${scenario}:${policy}\0`);
}

/** A stream seeded with `key`, which `streamKey` tells again. */
export function seededStream(key: string): () => number {
  const stream = seedrandom(key);
  KEYS.set(stream, key);
  return stream;
}

/** The key a stream made here was seeded with; undefined for any other function. */
export function streamKey(stream: () => number): string | undefined {
  return KEYS.get(stream);
}
