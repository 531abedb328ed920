import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { CacheSpace } from '../src/store/store.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

/**
 * `ctxsim cache info` and `cache clear` go through no symbolic link inside
 * the cache folder, as a run does not; like the run, they say so, in one
 * line, rather than skip the link without a word.
 */

/** A cache folder with one entry of its own, its `replay/` a link out, a fan-out folder of `tokens/` a link out, and an entry of `charts/` a link to a file outside. */
function planted(): { root: string; outside: string; links: string[] } {
  const root = tempDir();
  const outside = tempDir();
  const own = new CacheSpace(root, 'tokens');
  own.put(own.keyOf('own'), Buffer.from('own'));
  const theirs = new CacheSpace(outside, 'replay');
  const a = theirs.keyOf('a');
  theirs.put(a, Buffer.from('planted'));
  symlinkSync(join(outside, 'replay'), join(root, 'replay'));
  // A fan-out folder beside the entry's own.
  const fan = join(root, 'tokens', own.keyOf('own').startsWith('ff') ? '00' : 'ff');
  symlinkSync(join(outside, 'replay', a.slice(0, 2)), fan);
  const charts = new CacheSpace(root, 'charts');
  const c = charts.keyOf('c');
  mkdirSync(join(root, 'charts', c.slice(0, 2)), { recursive: true });
  symlinkSync(theirs.file(a), charts.file(c));
  // In namespace order.
  return { root, outside, links: [join(root, 'replay'), charts.file(c), fan] };
}

async function cache(action: string, root: string): Promise<{ code: number; out: string; err: string }> {
  const io = capture();
  const code = await runMain(['cache', action, '--token-cache', root], io);
  return { code, out: io.stdout, err: io.stderr };
}

describe('cache info and cache clear with symbolic links inside the cache folder', () => {
  it('info counts only the entries of its own and says, in one line, which links it skipped', async () => {
    const { root, links } = planted();
    const r = await cache('info', root);
    expect(r.code).toBe(0);
    expect(r.out).toContain('in all: 1 entry,');
    expect(r.err).toBe(`ctxsim: warning: skipped 3 symbolic links inside the cache folder, which the cache never follows: ${links.join(', ')}\n`);
  });

  it('clear removes its own entries, nothing where the links lead, and says which links it left', async () => {
    const { root, outside, links } = planted();
    const r = await cache('clear', root);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^cleared \S+: 1 entry,/);
    expect(r.err).toBe(`ctxsim: warning: left 3 symbolic links inside the cache folder, which the cache never follows: ${links.join(', ')}\n`);
    expect(readdirSync(join(outside, 'replay')).length).toBe(1);
    for (const l of links) expect(existsSync(l)).toBe(true);
  });

  it('says nothing when there is no link', async () => {
    const root = tempDir();
    const own = new CacheSpace(root, 'tokens');
    own.put(own.keyOf('own'), Buffer.from('own'));
    expect((await cache('info', root)).err).toBe('');
    expect((await cache('clear', root)).err).toBe('');
  });
});
