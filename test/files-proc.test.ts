import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';

/**
 * A folder that cannot be made where the file system says so with ENOENT
 * although the folder above exists (under /proc) is refused at once: Node's
 * recursive mkdir would loop on it forever. Each case runs the built code in
 * a child process killed after a generous limit, so a loop fails the test
 * instead of hanging the suite.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const linux = existsSync('/proc/self');
const ready = linux && existsSync(MAIN);
const why = !linux ? ' (skipped: no /proc here)' : !existsSync(MAIN) ? ' (skipped: dist/ is missing; npm test builds it)' : '';
const LIMIT_MS = 60_000;

function node(args: string[]) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: LIMIT_MS, killSignal: 'SIGKILL', cwd: ROOT });
  return { code: r.status, signal: r.signal, err: r.stderr };
}

describe(`a folder under /proc${why}`, () => {
  it.skipIf(!ready)('makeDirs throws ENOENT instead of looping', () => {
    const url = pathToFileURL(join(ROOT, 'dist', 'process.js')).href;
    const script = `import(${JSON.stringify(url)}).then(({ makeDirs }) => { try { makeDirs('/proc/ctxsim-none/a'); console.error('made'); } catch (e) { console.error(e.code); } })`;
    expect(node(['-e', script])).toMatchObject({ code: 0, signal: null, err: 'ENOENT\n' });
  });

  it.skipIf(!ready).each([
    [['run', '--out', '/proc/ctxsim-none', '--no-token-cache'], /^ctxsim: cannot write \/proc\/ctxsim-none: no such file or folder \(ENOENT\)\n$/],
    [['run', '--token-cache', '/proc/ctxsim-none', '--out', '-'], /^ctxsim: --token-cache \/proc\/ctxsim-none: the folder cannot be made \(ENOENT\)\n$/],
    [['generate', '--profile', 'support', '--count', '1', '--out', '/proc/ctxsim-none'], /^ctxsim: cannot write \/proc\/ctxsim-none: no such file or folder \(ENOENT\)\n$/],
  ])('ctxsim %j: exit 2, one line', (args, line) => {
    const r = node([MAIN, ...args]);
    expect(r.signal).toBeNull();
    expect(r.err).toMatch(line);
    expect(r.code).toBe(2);
  });
});
