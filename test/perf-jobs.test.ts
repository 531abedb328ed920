import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { autoJobs, PARALLEL_MIN_CHARS } from '../src/engine/parallel.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { ROOT } from './_shared.js';

/**
 * Worker threads load the compiled worker (a Worker cannot load .ts), so the
 * byte-identity check runs the built CLI. `npm test` builds first; a run of
 * vitest alone with a missing or stale dist/ skips it and says why.
 */
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

function newestIn(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestIn(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = existsSync(MAIN) && existsSync(join(ROOT, 'dist', 'engine', 'worker.js')) && statSync(MAIN).mtimeMs >= newestIn(join(ROOT, 'src')) - 1;
const describeBuilt = built ? describe : describe.skip;
const skipNote = built ? '' : ' (skipped: dist/ is missing or older than src/; run `npm run build`, or `npm test` which builds first)';

const dir = mkdtempSync(join(tmpdir(), 'ctxsim-jobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function files(out: string): Map<string, Buffer> {
  return new Map(readdirSync(out).sort().map((f) => [f, readFileSync(join(out, f))]));
}

describeBuilt(`--jobs: worker threads${skipNote}`, () => {
  it('--jobs 2 writes every output byte for byte as --jobs 1', () => {
    const study = join(dir, 'study.yaml');
    // Five scenarios over two workers: every policy, uneven lengths, tools (coding), probes and corrections (support).
    writeFileSync(study, ['seed: 3', 'scenarios:', '  - generate: {profile: support, count: 3, turns: 8-14}', '  - generate: {profile: coding, count: 2, turns: 6-9}', ''].join('\n'));
    const env = { ...process.env, SOURCE_DATE_EPOCH: '0' };
    const run = (jobs: number) => {
      const out = join(dir, `out${jobs}`);
      execFileSync(process.execPath, [MAIN, 'run', study, '--out', out, '--jobs', String(jobs), '--no-token-cache', '--quiet'], { env, cwd: dir });
      return files(out);
    };
    const one = run(1);
    const two = run(2);
    expect([...two.keys()]).toEqual([...one.keys()]);
    expect(one.get('turns.csv')!.length).toBeGreaterThan(1000);
    for (const [name, bytes] of one) expect(two.get(name)!.equals(bytes), name).toBe(true);
  });

  it('rejects --jobs 0 with a usage error', () => {
    let code = 0;
    let stderr = '';
    try {
      execFileSync(process.execPath, [MAIN, 'run', '--jobs', '0', '--out', join(dir, 'x')], { cwd: dir, stdio: 'pipe' });
    } catch (e) {
      code = (e as { status: number }).status;
      stderr = String((e as { stderr: Buffer }).stderr);
    }
    expect(code).toBe(2);
    expect(stderr).toBe('ctxsim: --jobs: expected a whole number ≥ 1, got 0\n');
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
