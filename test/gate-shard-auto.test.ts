import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { UsageError } from '../src/errors.js';
import { parseShard, shardFromEnv, shardNote } from '../src/gate/shard.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/** The usage error `fn` throws, as its message. */
function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('shardFromEnv: each engine', () => {
  it('GitLab CI parallel: CI_NODE_INDEX counts from 1', () => {
    expect(shardFromEnv('auto', { CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' })).toEqual({
      index: 2,
      count: 4,
      from: { engine: 'GitLab CI', variables: 'CI_NODE_INDEX=2, CI_NODE_TOTAL=4' },
    });
    expect(shardFromEnv('auto', { CI_NODE_INDEX: '4', CI_NODE_TOTAL: '4' })).toMatchObject({ index: 4, count: 4 });
  });

  it('Buildkite: BUILDKITE_PARALLEL_JOB counts from 0', () => {
    expect(shardFromEnv('auto', { BUILDKITE_PARALLEL_JOB: '0', BUILDKITE_PARALLEL_JOB_COUNT: '5' })).toEqual({
      index: 1,
      count: 5,
      from: { engine: 'Buildkite', variables: 'BUILDKITE_PARALLEL_JOB=0, BUILDKITE_PARALLEL_JOB_COUNT=5' },
    });
    expect(shardFromEnv('auto', { BUILDKITE_PARALLEL_JOB: '4', BUILDKITE_PARALLEL_JOB_COUNT: '5' })).toMatchObject({ index: 5, count: 5 });
  });

  it('CircleCI: CIRCLE_NODE_INDEX counts from 0', () => {
    expect(shardFromEnv('auto', { CIRCLE_NODE_INDEX: '1', CIRCLE_NODE_TOTAL: '3' })).toMatchObject({ index: 2, count: 3, from: { engine: 'CircleCI' } });
  });

  it('AWS Batch array jobs: AWS_BATCH_JOB_ARRAY_INDEX counts from 0', () => {
    expect(shardFromEnv('auto', { AWS_BATCH_JOB_ARRAY_INDEX: '9', AWS_BATCH_JOB_ARRAY_SIZE: '10' })).toMatchObject({
      index: 10,
      count: 10,
      from: { engine: 'AWS Batch' },
    });
  });

  it('Kubernetes Indexed Job: JOB_COMPLETION_INDEX counts from 0, the count from auto/N', () => {
    const s = shardFromEnv('auto/4', { JOB_COMPLETION_INDEX: '2' });
    expect(s).toEqual({ index: 3, count: 4, from: { engine: 'Kubernetes Indexed Job', variables: 'JOB_COMPLETION_INDEX=2, count 4 from --shard auto/4' } });
    expect(shardNote(s)).toBe('shard 3/4 (from Kubernetes Indexed Job: JOB_COMPLETION_INDEX=2, count 4 from --shard auto/4)');
    expect(usage(() => shardFromEnv('auto', { JOB_COMPLETION_INDEX: '2' }))).toBe(
      '--shard auto: JOB_COMPLETION_INDEX=2 (Kubernetes Indexed Job) is set but it gives no count; give the count as --shard auto/N',
    );
  });

  it('the stderr line names the engine and its variables', () => {
    expect(shardNote(shardFromEnv('auto', { CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' }))).toBe('shard 2/4 (from GitLab CI: CI_NODE_INDEX=2, CI_NODE_TOTAL=4)');
  });
});

describe('shardFromEnv: auto/N, K/N and errors', () => {
  it('auto/N agreeing with the engine count is fine; disagreeing is an error', () => {
    expect(shardFromEnv('auto/4', { CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' })).toMatchObject({ index: 2, count: 4 });
    expect(usage(() => shardFromEnv('auto/3', { CI_NODE_INDEX: '2', CI_NODE_TOTAL: '4' }))).toBe(
      '--shard auto/3: CI_NODE_TOTAL=4 (GitLab CI) says 4 shards, --shard says 3',
    );
    expect(usage(() => shardFromEnv('auto/2', { CIRCLE_NODE_INDEX: '0', CIRCLE_NODE_TOTAL: '3' }))).toContain('CIRCLE_NODE_TOTAL=3 (CircleCI) says 3 shards, --shard says 2');
  });

  it('auto/N lends the count to an engine whose count variable is missing', () => {
    expect(shardFromEnv('auto/3', { BUILDKITE_PARALLEL_JOB: '1' })).toMatchObject({ index: 2, count: 3 });
    expect(usage(() => shardFromEnv('auto', { BUILDKITE_PARALLEL_JOB: '1' }))).toBe(
      '--shard auto: BUILDKITE_PARALLEL_JOB=1 (Buildkite) is set but BUILDKITE_PARALLEL_JOB_COUNT is not set; give the count as --shard auto/N',
    );
  });

  it('no variable set: a usage error naming every variable looked for', () => {
    const message = usage(() => shardFromEnv('auto', { CI_NODE_TOTAL: '1', PATH: '/bin' }));
    expect(message).toBe(
      '--shard auto: no shard index in the environment; looked for CI_NODE_INDEX/CI_NODE_TOTAL (GitLab CI), ' +
        'BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT (Buildkite), CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL (CircleCI), ' +
        'AWS_BATCH_JOB_ARRAY_INDEX/AWS_BATCH_JOB_ARRAY_SIZE (AWS Batch), JOB_COMPLETION_INDEX (Kubernetes Indexed Job); or give --shard K/N',
    );
    expect(usage(() => shardFromEnv('auto/4', { CI_NODE_INDEX: '' }))).toMatch(/^--shard auto\/4: no shard index in the environment; looked for CI_NODE_INDEX/);
  });

  it('a bad value names the variable and its value', () => {
    expect(usage(() => shardFromEnv('auto', { CI_NODE_INDEX: 'two', CI_NODE_TOTAL: '4' }))).toBe('--shard auto: CI_NODE_INDEX="two" (GitLab CI) is not a whole number');
    expect(usage(() => shardFromEnv('auto', { CI_NODE_INDEX: '1.5', CI_NODE_TOTAL: '4' }))).toContain('CI_NODE_INDEX="1.5" (GitLab CI) is not a whole number');
    expect(usage(() => shardFromEnv('auto', { CI_NODE_INDEX: '-1', CI_NODE_TOTAL: '4' }))).toContain('CI_NODE_INDEX="-1"');
    expect(usage(() => shardFromEnv('auto', { CIRCLE_NODE_INDEX: '0', CIRCLE_NODE_TOTAL: 'x' }))).toBe(
      '--shard auto: CIRCLE_NODE_TOTAL="x" (CircleCI) is not a whole number ≥ 1',
    );
    expect(usage(() => shardFromEnv('auto', { AWS_BATCH_JOB_ARRAY_INDEX: '0', AWS_BATCH_JOB_ARRAY_SIZE: '0' }))).toContain('AWS_BATCH_JOB_ARRAY_SIZE="0"');
  });

  it('an index out of range names the variable, its value and the engine base', () => {
    expect(usage(() => shardFromEnv('auto', { CI_NODE_INDEX: '0', CI_NODE_TOTAL: '4' }))).toBe(
      '--shard auto: CI_NODE_INDEX=0 (GitLab CI, counting from 1) is out of range 1–4 for 4 shards',
    );
    expect(usage(() => shardFromEnv('auto', { CI_NODE_INDEX: '5', CI_NODE_TOTAL: '4' }))).toContain('CI_NODE_INDEX=5 (GitLab CI, counting from 1) is out of range 1–4');
    expect(usage(() => shardFromEnv('auto', { BUILDKITE_PARALLEL_JOB: '5', BUILDKITE_PARALLEL_JOB_COUNT: '5' }))).toBe(
      '--shard auto: BUILDKITE_PARALLEL_JOB=5 (Buildkite, counting from 0) is out of range 0–4 for 5 shards',
    );
    expect(usage(() => shardFromEnv('auto/4', { JOB_COMPLETION_INDEX: '4' }))).toContain('JOB_COMPLETION_INDEX=4 (Kubernetes Indexed Job, counting from 0) is out of range 0–3');
  });

  it('a malformed auto/N is a usage error', () => {
    for (const text of ['auto/0', 'auto/x', 'auto/', 'auto/2/3']) expect(usage(() => shardFromEnv(text, { CI_NODE_INDEX: '1', CI_NODE_TOTAL: '2' }))).toContain('expected auto/N');
  });

  it('K/N is parseShard, with no engine, whatever the environment says', () => {
    expect(shardFromEnv('2/3', { CI_NODE_INDEX: '1', CI_NODE_TOTAL: '4' })).toEqual({ index: 2, count: 3 });
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    expect(usage(() => shardFromEnv('4/3', {}))).toBe('--shard: expected K/N with 1 ≤ K ≤ N, got "4/3"');
    // A count past 2^53 − 1 is not the number typed (it would name shard 1 of 1e20).
    expect(usage(() => parseShard('1/99999999999999999999'))).toBe('--shard: expected K/N with 1 ≤ K ≤ N, got "1/99999999999999999999"');
  });

  it('several engines set: the first in the documented order wins', () => {
    const all = {
      JOB_COMPLETION_INDEX: '0',
      AWS_BATCH_JOB_ARRAY_INDEX: '1',
      AWS_BATCH_JOB_ARRAY_SIZE: '6',
      CIRCLE_NODE_INDEX: '2',
      CIRCLE_NODE_TOTAL: '6',
      BUILDKITE_PARALLEL_JOB: '3',
      BUILDKITE_PARALLEL_JOB_COUNT: '6',
      CI_NODE_INDEX: '5',
      CI_NODE_TOTAL: '6',
    };
    expect(shardFromEnv('auto', all)).toMatchObject({ index: 5, from: { engine: 'GitLab CI' } });
    const { CI_NODE_INDEX: _g, ...noGitLab } = all;
    expect(shardFromEnv('auto', noGitLab)).toMatchObject({ index: 4, from: { engine: 'Buildkite' } });
    const { BUILDKITE_PARALLEL_JOB: _b, ...noBuildkite } = noGitLab;
    expect(shardFromEnv('auto', noBuildkite)).toMatchObject({ index: 3, from: { engine: 'CircleCI' } });
    const { CIRCLE_NODE_INDEX: _c, ...noCircle } = noBuildkite;
    expect(shardFromEnv('auto', noCircle)).toMatchObject({ index: 2, from: { engine: 'AWS Batch' } });
    const { AWS_BATCH_JOB_ARRAY_INDEX: _a, ...onlyKubernetes } = noCircle;
    expect(shardFromEnv('auto/6', onlyKubernetes)).toMatchObject({ index: 1, from: { engine: 'Kubernetes Indexed Job' } });
  });
});

describe('ctxsim run --shard auto', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('under GitLab variables writes the same shard file as --shard 2/3, and says where the shard came from', async () => {
    const dir = tempDir('ctxsim-shard-auto-');
    for (const f of ['kavya-late-order.yaml', 'noah-amnesia.yaml']) cpSync(join(ROOT, 'scenarios', f), join(dir, 'scenarios', f));
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies:', '  - full', '  - window-turns: {turns: 2}', ''].join('\n'));
    vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
    for (const name of ['BUILDKITE_PARALLEL_JOB', 'CIRCLE_NODE_INDEX', 'AWS_BATCH_JOB_ARRAY_INDEX', 'JOB_COMPLETION_INDEX']) vi.stubEnv(name, '');

    const byHand = capture();
    expect(await runMain(['run', study, '--shard', '2/3', '--out', join(dir, 'hand'), '--quiet'], byHand)).toBe(0);

    vi.stubEnv('CI_NODE_INDEX', '2');
    vi.stubEnv('CI_NODE_TOTAL', '3');
    const auto = capture();
    expect(await runMain(['run', study, '--shard', 'auto', '--out', join(dir, 'auto')], auto)).toBe(0);
    expect(auto.stderr.split('\n')[0]).toBe('shard 2/3 (from GitLab CI: CI_NODE_INDEX=2, CI_NODE_TOTAL=3)');
    const file = 'shard-2-of-3.json';
    expect(readFileSync(join(dir, 'auto', file), 'utf8')).toBe(readFileSync(join(dir, 'hand', file), 'utf8'));

    const quiet = capture();
    expect(await runMain(['run', study, '--shard', 'auto', '--out', join(dir, 'quiet'), '--quiet'], quiet)).toBe(0);
    expect(quiet.stderr).toBe('');

    vi.stubEnv('CI_NODE_INDEX', '');
    const none = capture();
    expect(await runMain(['run', study, '--shard', 'auto', '--out', join(dir, 'none'), '--quiet'], none)).toBe(2);
    expect(none.stderr).toMatch(/^ctxsim: --shard auto: no shard index in the environment; looked for CI_NODE_INDEX\/CI_NODE_TOTAL \(GitLab CI\), .*JOB_COMPLETION_INDEX/);
  });
});
