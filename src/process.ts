import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmdirSync, statSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';

/** ctxsim's own folder, where it is installed: above `dist/` (or `src/`), with its package.json and shipped scenarios. */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

let version: string | undefined;

/** ctxsim's own version, from its package.json. */
export function ctxsimVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** Whether process `pid` is alive on this machine (a process of another user counts). */
export function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: alive, but another user's.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What is where a file should be, when it is not a regular file: `a FIFO`, `a folder`, … (undefined for a file). */
function fileKind(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a folder';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'something else';
}

/**
 * A cache file's bytes, read safely; never throws. It is opened without
 * blocking and checked before it is read: a FIFO or a device in its place is
 * never read (a FIFO would wait forever).
 */
export function readRegularFile(file: string): { status: 'ok'; buf: Buffer } | { status: 'missing' } | { status: 'unreadable'; reason: string } {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const kind = fileKind(fstatSync(fd));
    if (kind) return { status: 'unreadable', reason: `not a regular file but ${kind}` };
    return { status: 'ok', buf: readFileSync(fd) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? { status: 'missing' } : { status: 'unreadable', reason: code ?? String(e) };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Calls `onLine` with each line of the file at `path` (without its `\n`),
 * numbered from 1, reading `chunk` bytes at a time: a file larger than a
 * string can be is read all the same. With `partial: false`, a last line
 * without its newline is left out. Returns the file's size in bytes and
 * the bytes up to its last newline.
 */
export function eachLine(path: string, onLine: (line: string, n: number) => void, opts: { partial?: boolean; chunk?: number } = {}): { bytes: number; whole: number } {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(opts.chunk ?? 1 << 20);
    const text = new StringDecoder('utf8');
    let rest = '';
    let n = 0;
    let bytes = 0;
    let whole = 0;
    for (let got; (got = readSync(fd, buffer, 0, buffer.length, null)) > 0; bytes += got) {
      const last = buffer.lastIndexOf(0x0a, got - 1);
      if (last >= 0) whole = bytes + last + 1;
      const lines = (rest + text.write(buffer.subarray(0, got))).split('\n');
      rest = lines.pop()!;
      for (const line of lines) onLine(line, ++n);
    }
    rest += text.end();
    if (rest && opts.partial !== false) onLine(rest, ++n);
    return { bytes, whole };
  } finally {
    closeSync(fd);
  }
}

const requireCjs = createRequire(import.meta.url);

/** The root folder of an installed package, as Node would find it from here (whether or not its `exports` list package.json). */
export function packageRoot(pkg: string): string | undefined {
  for (const dir of requireCjs.resolve.paths(pkg) ?? []) {
    const root = join(dir, pkg);
    if (existsSync(join(root, 'package.json'))) return root;
  }
  return undefined;
}

/** An installed package's version: `missing` when it is not installed, `unknown` when its package.json names none. */
export function packageVersion(pkg: string): string {
  const root = packageRoot(pkg);
  if (!root) return 'missing';
  try {
    return String((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/**
 * Makes a folder and the missing folders above it, one at a time; returns
 * the first folder made (undefined when the folder was there), as
 * `mkdirSync(dir, { recursive: true })` does. That one loops forever where
 * making a folder fails with ENOENT under a folder that exists (under
 * `/proc`): here the failure is thrown, as any other.
 */
export function makeDirs(dir: string): string | undefined {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      statSync(at);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      missing.push(at);
      if (dirname(at) === at) break;
    }
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      // Made meanwhile by another process: as good.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d).isDirectory()) throw e;
    }
  }
  return missing[0];
}

/**
 * Why a folder cannot be made (the error's code, e.g. `ENOENT` under
 * `/proc`, `EACCES`), or undefined when it is there or can be made. The
 * folders made to find out are removed again (each only while empty).
 */
export function folderProblem(dir: string): string | undefined {
  let made: string | undefined;
  try {
    made = makeDirs(dir);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? String(e);
  }
  if (made) {
    for (let d = resolve(dir); ; d = dirname(d)) {
      try {
        rmdirSync(d);
      } catch {
        // Another run put something there meanwhile: it stays.
        break;
      }
      if (d === made) break;
    }
  }
  return undefined;
}

/**
 * Gives the event loop a turn (after pending I/O and timers): a long
 * computation on the main thread awaits it between pieces of work, so that a
 * signal (Ctrl-C, SIGTERM) is heard then, not when the computation ends.
 * (An awaited promise that is already settled gives no such turn.)
 */
export function eventLoopTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The longest a long computation runs between two turns it gives the event loop (see `turnTaker`). */
const TURN_MS = 20;

/**
 * For a long computation on the main thread: a function to call between two
 * pieces of work, which gives the event loop a turn (a promise to await)
 * once `ms` have passed since the last, and otherwise nothing (costs a clock
 * read).
 */
export function turnTaker(ms = TURN_MS): () => Promise<void> | undefined {
  let last = performance.now();
  return () => {
    if (performance.now() - last < ms) return undefined;
    return eventLoopTurn().then(() => {
      last = performance.now();
    });
  };
}

/**
 * Runs a computation written as steps (a generator that pauses with `yield`
 * between pieces of work) to its end without a pause; its return value.
 */
export function finishSteps<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `finishSteps` that gives the event loop a turn between steps, at most every `TURN_MS` (`turnTaker`). */
export async function finishStepsPausing<T>(steps: Generator<void, T>): Promise<T> {
  const turn = turnTaker();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    const paused = turn();
    if (paused) await paused;
  }
}

/**
 * The compiled file `name` of ctxsim's own code (a path below `dist/`, such
 * as `engine/worker.js`), for a worker thread to run: beside the running
 * code when it is compiled; from the TypeScript sources (the tests), the
 * compiled package's, when it has been built (`npm run build`).
 */
export function compiledFile(name: string): string | undefined {
  const here = fileURLToPath(import.meta.url);
  const file = join(here.endsWith('.js') ? dirname(here) : join(PACKAGE_DIR, 'dist'), name);
  return existsSync(file) ? file : undefined;
}
