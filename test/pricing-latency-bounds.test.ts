import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/** Latency figures a study sets are bounded, so a turn's latency is always a finite number of milliseconds. */

describe('latency figures in a study', () => {
  it('refuses a rate too slow and a time to first token too long, at their place in the file', async () => {
    const file = join(tempDir(), 'study.yaml');
    const scenario = join(ROOT, 'scenarios', 'noah-amnesia.yaml');
    writeFileSync(file, `scenarios: [${JSON.stringify(scenario)}]\npolicies: [full]\nlatency:\n  gpt-4o-mini: {prefillTps: 1e-320, ttftMs: 1e300}\n`);
    const io = capture();
    expect(await runMain(['run', file, '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr).toBe(
      [
        `ctxsim: ${file}:4:45 latency.gpt-4o-mini.ttftMs: expected a number ≤ 86400000, got 1e+300`,
        `ctxsim: ${file}:4:29 latency.gpt-4o-mini.prefillTps: expected a number ≥ 0.001, got 1e-320`,
        '',
      ].join('\n'),
    );
  });
});
