import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';
import { cli } from './_io.js';
import { tempDir } from './_tmp.js';

describe('a study’s out: "-"', () => {
  it('writes to stdout, as --out - does, and makes no folder named -; --out still overrides it', async () => {
    const dir = tempDir();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, `scenarios: [${JSON.stringify(join(ROOT, 'scenarios', 'kavya-late-order.yaml'))}]\npolicies: [full]\nout: "-"\n`);
    const r = await cli('run', study, '--no-token-cache');
    expect(r.code, r.err).toBe(0);
    const flag = await cli('run', study, '--no-token-cache', '--out', '-');
    expect(r.out).toBe(flag.out);
    expect(r.out.split('\n')[0]).toMatch(/^scenario,policy,turn,/);
    expect(existsSync(join(dir, '-'))).toBe(false);
    const folder = await cli('run', study, '--no-token-cache', '--out', join(dir, 'reports'));
    expect(folder.code, folder.err).toBe(0);
    expect(readdirSync(join(dir, 'reports'))).toContain('turns.csv');
  });
});
