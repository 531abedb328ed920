import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A run replacing a report folder removes the record files an earlier run
 * of the other records mode wrote, so old and new are never side by side;
 * files of other names stay.
 */

const SMALL = ['--scenario', join(ROOT, 'scenarios', 'kavya-late-order.yaml'), '--policy', 'full', '--no-token-cache', '--quiet'];

describe('--records summary into a folder of a full run', () => {
  it('leaves no turns.csv or probes.csv of the earlier run; other files stay', async () => {
    const out = tempDir();
    expect((await cli('run', ...SMALL, '--out', out)).code).toBe(0);
    const full = readdirSync(out);
    expect(full).toEqual(expect.arrayContaining(['turns.csv', 'probes.csv', 'violations.csv']));
    writeFileSync(join(out, 'notes.txt'), 'mine\n');
    mkdirSync(join(out, 'old'));

    const r = await cli('run', ...SMALL, '--out', out, '--records', 'summary');
    expect(r.code, r.err).toBe(0);
    const summary = readdirSync(out).sort();
    expect(summary).toEqual([...full.filter((f) => f !== 'turns.csv' && f !== 'probes.csv'), 'notes.txt', 'old'].sort());

    // And back: a full run writes them again.
    expect((await cli('run', ...SMALL, '--out', out)).code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([...full, 'notes.txt', 'old'].sort());
  });

  it('a folder of that name is not ctxsim\'s: it stays', async () => {
    const out = tempDir();
    mkdirSync(join(out, 'turns.csv'));
    writeFileSync(join(out, 'turns.csv', 'mine.txt'), 'mine\n');
    expect((await cli('run', ...SMALL, '--out', out, '--records', 'summary')).code).toBe(0);
    expect(readdirSync(join(out, 'turns.csv'))).toEqual(['mine.txt']);
  });
});
