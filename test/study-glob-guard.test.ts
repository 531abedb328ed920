import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

/**
 * A scenario glob with many wildcards in one part of its path backtracks
 * exponentially in the matcher against a long file name (24 ran for
 * minutes): it is refused before anything is matched. Five are enough to
 * show it and few enough to end: unguarded, the match against the long
 * name below takes tens of seconds and finds nothing, so a broken guard
 * fails these tests (a message other than the refusal) rather than hang
 * them for hours, which no test timeout can cut (the match never yields).
 */

/** `*a` 5 times: every file name below holds its a's, so the matcher tries every way to place them before it fails on `.yaml`. */
const HOSTILE = '*a'.repeat(5);

/** A folder with a scenario and a file whose name is 200 a's. */
function project(scenarios: string): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'ok.yaml'), 'id: ok\nturns:\n  - user: hi\n');
  writeFileSync(join(dir, `${'a'.repeat(200)}.yaml`), 'id: long\nturns:\n  - user: hi\n');
  writeFileSync(join(dir, 'study.yaml'), `scenarios: [${JSON.stringify(scenarios)}]\npolicies: [full]\ntokenizer: chars4\n`);
  return dir;
}

async function run(args: string[], dir: string): Promise<{ code: number; err: string }> {
  const io = capture();
  const code = await runMain([...args, '--no-token-cache', '--quiet', '--out', join(dir, 'out')], io);
  return { code, err: io.stderr.replaceAll(`${dir}/`, '') };
}

describe('a scenario glob with too many wildcards in one part', () => {
  it('is refused at its entry in the study, one line, exit 2, before anything is matched', async () => {
    const dir = project(HOSTILE);
    expect(await run(['run', join(dir, 'study.yaml')], dir)).toEqual({
      code: 2,
      err: `ctxsim: study.yaml:1:13 scenarios[0]: 5 wildcards (*) in one part of the glob, "${HOSTILE}": at most 3 (matching more against a long file name can take hours)\n`,
    });
  });

  it('is refused as --scenario, and as calibrate’s transcripts', async () => {
    const dir = project('ok.yaml');
    expect(await run(['run', '--scenario', join(dir, `sub/**/${HOSTILE}`), '--policy', 'full'], dir)).toEqual({
      code: 2,
      err: `ctxsim: --scenario sub/**/${HOSTILE}: 5 wildcards (*) in one part of the glob, "${HOSTILE}": at most 3 (matching more against a long file name can take hours)\n`,
    });
    const io = capture();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(await runMain(['calibrate', HOSTILE], io)).toBe(2);
    } finally {
      process.chdir(cwd);
    }
    expect(io.stderr).toBe(`ctxsim: ${HOSTILE}: 5 wildcards (*) in one part of the glob, "${HOSTILE}": at most 3 (matching more against a long file name can take hours)\n`);
  });

  it('three runs of * in a part (** counting as one, in a part of its own) still match', async () => {
    const dir = project('**/*o***k*.yaml');
    expect(await run(['run', join(dir, 'study.yaml')], dir)).toMatchObject({ code: 0 });
  });

  it('an extended glob is not read: +(…) repeats a repetition, and is taken as written', async () => {
    const dir = project('+(*a).yaml');
    const r = await run(['run', join(dir, 'study.yaml')], dir);
    expect(r).toEqual({ code: 2, err: 'ctxsim: study.yaml:1:13 scenarios[0]: no scenario file matches "+(*a).yaml"\n' });
  });
});
