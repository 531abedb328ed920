import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, expectUsage } from './_io.js';
import { fixture, labels, trace } from './_policies.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/*
 * summary-buffer sends its summary beside the pinned system prompt and the
 * current turn, all within `budget`: a `summaryTokens` of `budget` or more
 * could never be sent at its size (every fold would shorten it to the room
 * its turn left, and a longer turn would then leave it out). Such a variant
 * is refused when it is resolved, on the command line and in a study file;
 * one token less runs.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'late-order-tools.yaml');
const REFUSED = 'summaryTokens (400) must leave room in budget (300) for the system prompt and the current turn: give summaryTokens below 300, or a larger budget';

describe('summary-buffer refuses a summaryTokens that leaves no room in its budget', () => {
  it('on the command line: exit 2, one line naming the variant and both values', async () => {
    await expectUsage(
      ['run', '--scenario', SCENARIO, '--policy', 'summary-buffer:summaryTokens=400,budget=300', '--out', '-', '--no-token-cache', '--quiet'],
      `ctxsim: --policy summary-buffer:summaryTokens=400,budget=300: policy summary-buffer:budget=300,summaryTokens=400: ${REFUSED}`,
    );
    // Equal is refused too; a default summaryTokens (200) counts against a budget given alone.
    await expectUsage(['run', '--scenario', SCENARIO, '--policy', 'summary-buffer:budget=200', '--out', '-', '--no-token-cache', '--quiet'], /^ctxsim: --policy summary-buffer:budget=200: policy summary-buffer:budget=200: summaryTokens \(200\) must leave room in budget \(200\) /);
  });

  it('in a study file: at the entry, each refused entry at once; a sweep names the variant that breaks it, a pipeline its stage', async () => {
    const dir = tempDir();
    const file = join(dir, 'study.yaml');
    writeFileSync(
      file,
      [
        `scenarios: [${JSON.stringify(SCENARIO)}]`,
        'policies:',
        '  - full',
        '  - summary-buffer: {budget: 300, summaryTokens: 400}',
        '  - summary-buffer: {budget: [2000, 300], summaryTokens: 300}',
        '  - pipeline: [mask-observations, {summary-buffer: {budget: 150}}]',
        '',
      ].join('\n'),
    );
    const { code, out, err } = await cli('run', file, '--out', '-', '--no-token-cache', '--quiet');
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err.replaceAll(file, 'study.yaml').split('\n')).toEqual([
      `ctxsim: study.yaml:4:5 policies[1]: policy summary-buffer:budget=300,summaryTokens=400: ${REFUSED}`,
      'ctxsim: study.yaml:5:5 policies[2]: policy summary-buffer:budget=300,summaryTokens=300: summaryTokens (300) must leave room in budget (300) for the system prompt and the current turn: give summaryTokens below 300, or a larger budget',
      'ctxsim: study.yaml:6:5 policies[3]: pipeline stage 2: policy summary-buffer:budget=150: summaryTokens (200) must leave room in budget (150) for the system prompt and the current turn: give summaryTokens below 150, or a larger budget',
      '',
    ]);
  });

  it('runs a variant just inside the limit, and sends its summary', async () => {
    const { code, out, err } = await cli('run', '--scenario', SCENARIO, '--policy', 'summary-buffer:budget=300,summaryTokens=299,keepRecent=1', '--tokenizer', 'chars4', '--out', '-', '--no-token-cache', '--quiet');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('summary-buffer:budget=300,keepRecent=1,summaryTokens=299');
    // Room is kept for a summary of 299 tokens, so a fold leaves no exchange verbatim; the summary is sent on every later call.
    const calls = trace(fixture('late-order-tools.yaml'), 'summary-buffer:budget=300,keepRecent=1,summaryTokens=299').flatMap((t) => t.calls);
    expect(labels(calls[2]!.messages)).toEqual(['system', 'summary', 'u3']);
    expect(calls.slice(2).every((c) => labels(c.messages)[1] === 'summary' && !c.overBudget)).toBe(true);
  });
});
