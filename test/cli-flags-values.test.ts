import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyFromString } from '../src/study/study.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';

/**
 * A bad flag value is one line on stderr that names the flag (or file) and
 * the value as typed, with exit code 2; a value the docs show is accepted.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'email-correction.yaml');

describe('a pipeline on the command line', () => {
  const LONG = 'pipeline:stages=mask-observations:keep=5 > summary-buffer';
  const SHORT = 'pipeline:mask-observations:keep=5 > summary-buffer';

  it('takes its stages with or without their name, stages=', () => {
    const names = (spec: string) => {
      const r = policyFromString(spec);
      return typeof r === 'string' ? r : r.map((v) => v.name);
    };
    expect(names(LONG)).toEqual(['pipeline:mask-observations:keep=5 > summary-buffer']);
    expect(names(SHORT)).toEqual(names(LONG));
    expect(names('pipeline: stages = mask-observations > window-turns:turns=1|2')).toEqual([
      'pipeline:mask-observations > window-turns:turns=1',
      'pipeline:mask-observations > window-turns:turns=2',
    ]);
  });

  it('runs as --policy stages=…', async () => {
    const r = await cli('explain', SCENARIO, '--policy', LONG, '--turn', '2');
    expect(r.err).toBe('');
    expect(r.out.split('\n')[0]).toContain(' · pipeline:mask-observations:keep=5 > summary-buffer · turn 2 · ');
    expect(r.code).toBe(0);
  });
});
