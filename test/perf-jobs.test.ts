import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { autoJobs, PARALLEL_MIN_CHARS } from '../src/engine/parallel.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { capture } from './_io.js';

/** The byte identity of `--jobs 2` and `--jobs 1` outputs is checked by report-stream.test.ts (two worker threads against the records kept in memory). */

describe('--jobs', () => {
  it('rejects --jobs 0 with a usage error', async () => {
    const io = capture();
    expect(await runMain(['run', '--jobs', '0', '--out', '-'], io)).toBe(2);
    expect(io.stderr).toBe('ctxsim: --jobs: expected a whole number ≥ 1, got 0\n');
  });
});

describe('autoJobs: the default --jobs', () => {
  const small = generateConversations({ profile: 'support', count: 3, seed: 1, params: { turns: [5, 5] } });

  it('is 1 for a study under PARALLEL_MIN_CHARS characters, whatever the cores', () => {
    expect(autoJobs(small, 8)).toBe(1);
  });

  it('is 1 for a single scenario, however long', () => {
    const long = { ...small[0]!, turns: Array.from({ length: 20_000 }, (_, k) => ({ ...small[0]!.turns[0]!, index: k + 1 })) };
    expect(autoJobs([long], 8)).toBe(1);
  });

  it('is the cores for a large study, but never more than its scenarios', () => {
    // Each copy repeats its first turn until the three hold PARALLEL_MIN_CHARS characters of text.
    const turnChars = (t: (typeof small)[number]['turns'][number]) => t.user.content.length + (t.assistant?.content.length ?? 0);
    const repeat = Math.ceil(PARALLEL_MIN_CHARS / Math.min(...small.map((c) => turnChars(c.turns[0]!))) / small.length);
    const big = small.map((c) => ({ ...c, turns: Array.from({ length: repeat }, (_, k) => ({ ...c.turns[0]!, index: k + 1 })) }));
    const chars = big.reduce((n, c) => n + c.turns.reduce((m, t) => m + turnChars(t), 0), 0);
    expect(chars).toBeGreaterThanOrEqual(PARALLEL_MIN_CHARS);
    expect(autoJobs(big, 2)).toBe(2);
    expect(autoJobs(big, 8)).toBe(3);
  });
});
