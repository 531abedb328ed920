import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeModuleHost, openModuleHost } from '../src/policies/module.js';
import { ModuleLink } from '../src/policies/module-link.js';
import { builtSince } from './_built.js';
import { tempDir } from './_tmp.js';

/**
 * What a policy module writes reaches the run's stderr whole, also when
 * the run ends its thread at once after the module wrote: the thread posts
 * each write on a port of its own, which `closeModuleHost` drains. (A
 * worker thread's own stdout sends a chunk once the one before is taken,
 * and ending the thread drops what is still on its way.)
 */

const built = builtSince('policies/module-host.ts');

describe.skipIf(!built)(`a policy module's output${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
  it('is all on stderr when its thread is ended right after the module wrote it', async () => {
    const file = join(tempDir(), 'loud.mjs');
    writeFileSync(file, "for (let i = 0; i < 500; i++) console.log(`line ${i}`);\nprocess.stderr.write('last line\\n');\nexport default { id: 'loud', describe: 'writes', params: {}, start() { throw new Error('not run'); } };\n");
    const hash = createHash('sha256').update(readFileSync(file)).digest('hex');
    const host = openModuleHost([{ file, hash, shown: file }], 64, 'replay');
    const link = new ModuleLink(host.port, host.signal, [{ id: 'loud', file }], 64);
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => written.push(Buffer.from(chunk).toString()) > 0) as typeof process.stderr.write;
    try {
      // The import runs while this thread waits for its reply: nothing the module writes is read here until the thread is ended.
      link.load(0);
      await closeModuleHost(host);
    } finally {
      process.stderr.write = write;
    }
    const lines = written.join('').split('\n');
    expect(lines.filter((l) => l.startsWith('line '))).toEqual(Array.from({ length: 500 }, (_, i) => `line ${i}`));
    expect(lines).toContain('last line');
  });
});
