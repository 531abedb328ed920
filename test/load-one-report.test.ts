import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

/** A study with problems of its own also reports its scenario files' problems, in the same run. */

describe('every problem of every file, in one report', () => {
  it('lists the study problem and the scenario problem together (exit 2)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.yaml'), 'id: a\nturns:\n  - user: Hi, I am Ana.\n    facts: {name: Anna}\n');
    writeFileSync(join(dir, 's.yaml'), 'scenarios: [a.yaml]\npolicies: [nope]\n');
    const io = capture();
    expect(await runMain(['run', join(dir, 's.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr.split('\n')).toEqual([
      `ctxsim: ${join(dir, 's.yaml')}:2:12 policies[0]: unknown policy "nope" (expected one of full, window-turns, window-tokens, window, summary, summary-buffer, priority, retrieval, facts, mask-observations, clear-tool-results, compact, pipeline)`,
      `ctxsim: ${join(dir, 'a.yaml')}:4:19 turns[0].facts.name: fact "name": "Anna" occurs nowhere in this turn (user message, tool calls and results, assistant reply)`,
      '',
    ]);
  });

  it('a study without problems loads its scenarios once, in the run', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.yaml'), 'id: a\nturns:\n  - user: Hi, I am Ana.\n    facts: {name: Anna}\n');
    writeFileSync(join(dir, 's.yaml'), 'scenarios: [a.yaml]\npolicies: [full]\n');
    const io = capture();
    expect(await runMain(['run', join(dir, 's.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  });
});
