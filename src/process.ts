import { constants as bufferConstants, isUtf8 } from 'node:buffer';
import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, rmdirSync, statSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, posix, resolve, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CtxsimError } from './errors.js';

/** ctxsim's own folder, where it is installed: above `dist/` (or `src/`), with its package.json and shipped scenarios. */
export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

let version: string | undefined;

/** ctxsim's own version, from its package.json. */
export function ctxsimVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** The environment variable that names the cache folder when no flag does (CI jobs that keep one folder between runs). */
export const CACHE_DIR_ENV = 'CTXSIM_CACHE_DIR';

/** Where the caches live unless `--token-cache` or `$CTXSIM_CACHE_DIR` says otherwise, as the help says it: the user's cache folder (`userFolder('cache')`). */
export const DEFAULT_CACHE_FOLDER = 'the user’s cache folder (~/.cache/ctxsim on Linux)';

/** What ctxsim keeps for a user, outside every project: `cache` (the cache folder), `state` (what it remembers between runs). */
export type UserFolderKind = 'cache' | 'state';

/**
 * The folder ctxsim keeps a kind of its own files in for this user, outside
 * every project: `$XDG_CACHE_HOME/ctxsim` (`$XDG_STATE_HOME/ctxsim`) when
 * the variable names an absolute path, on any system; else the system's
 * place — on Linux and other Unixes `~/.cache/ctxsim` (`~/.local/state/ctxsim`),
 * on macOS `~/Library/Caches/ctxsim` (`~/Library/Application Support/ctxsim`),
 * on Windows `%LOCALAPPDATA%\ctxsim\Cache` (`…\State`). Only named: the
 * folder is not made here. Throws a `CtxsimError` (code `no-home`) when no
 * home folder can be found. `env` and `platform` are the process's unless
 * given (for tests).
 */
export function userFolder(kind: UserFolderKind, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const path = platform === 'win32' ? win32 : posix;
  const xdg = env[kind === 'cache' ? 'XDG_CACHE_HOME' : 'XDG_STATE_HOME'];
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'ctxsim');
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA && path.isAbsolute(env.LOCALAPPDATA) ? env.LOCALAPPDATA : path.join(homeFolder(env, platform), 'AppData', 'Local');
    return path.join(local, 'ctxsim', kind === 'cache' ? 'Cache' : 'State');
  }
  const home = homeFolder(env, platform);
  if (platform === 'darwin') return path.join(home, 'Library', kind === 'cache' ? 'Caches' : 'Application Support', 'ctxsim');
  return kind === 'cache' ? path.join(home, '.cache', 'ctxsim') : path.join(home, '.local', 'state', 'ctxsim');
}

/** The user's home folder: `$HOME` (`%USERPROFILE%` on Windows), else the system's record of the user; absolute, or a `no-home` error. */
function homeFolder(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  const path = platform === 'win32' ? win32 : posix;
  const variable = platform === 'win32' ? 'USERPROFILE' : 'HOME';
  const given = env[variable];
  if (given && path.isAbsolute(given)) return given;
  let system: string | undefined;
  try {
    // $HOME first, then the password database: only when the environment is the process's.
    system = env === process.env ? homedir() : undefined;
  } catch {
    system = undefined;
  }
  if (system && path.isAbsolute(system)) return system;
  throw new CtxsimError(`${variable} ${given ? `is not an absolute path (${given})` : 'is not set'} and the system names no home folder`, 'no-home');
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
export function fileKind(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a folder';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'something else';
}

/**
 * The most bytes an input file read whole may have: V8's longest string
 * (`MAX_STRING_LENGTH`, 536,870,888 characters on 64-bit Node), as UTF-8
 * text has at least as many bytes as characters. Past it, reading it whole
 * would fail (or, for a file that never ends, as `/dev/zero`, abort).
 */
export const MAX_INPUT_BYTES = bufferConstants.MAX_STRING_LENGTH;

/**
 * An input file ctxsim does not read, and why, in words that follow the
 * file's name: `is a FIFO, not a regular file`, `is too large to read whole
 * (…)`, `is a symbolic link, which is not followed here`. The message is
 * `<file>: <reason>`, as `checkFileTarget` words a target it refuses to write.
 */
export class InputFileError extends CtxsimError {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`, 'input');
  }
}

/** How a reader's failure is told after the file's name: an `InputFileError`'s reason, else `cannot read <what> (<code>)`. */
export function unreadableReason(e: unknown, what = 'file'): string {
  if (e instanceof InputFileError) return e.reason;
  return `cannot read ${what} (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
}

/** How an input file is opened (`openInputFile`). */
export interface InputOptions {
  /** How messages name the file (default: its path). */
  shown?: string;
  /** False: a symbolic link in the file's place is refused, not followed (O_NOFOLLOW where the system has it). Default true. */
  follow?: boolean;
}

const megabytes = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/**
 * Opens an input file to read and checks what it is before anything is
 * read: opened without blocking (a FIFO with no writer would wait forever),
 * then `fstat`ed, so a FIFO, a device (`/dev/zero`, `/dev/urandom`), a
 * socket or a folder — where a symbolic link leads too — is an
 * `InputFileError` and never read. Other failures (ENOENT, EACCES) are
 * thrown as the system gives them. The caller closes the descriptor.
 */
export function openInputFile(file: string, opts: InputOptions = {}): { fd: number; size: number } {
  const shown = opts.shown ?? file;
  const noFollow = opts.follow === false;
  if (noFollow) refuseLink(file, shown);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (noFollow ? (constants.O_NOFOLLOW ?? 0) : 0));
  } catch (e) {
    // A link put there since the check above: O_NOFOLLOW refuses it with ELOOP.
    if (noFollow && (e as NodeJS.ErrnoException).code === 'ELOOP') throw new InputFileError(shown, NOT_FOLLOWED);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    const kind = fileKind(st);
    if (kind) throw new InputFileError(shown, `is ${kind}, not a regular file`);
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Why a symbolic link is refused where an input is opened with `follow: false`. */
export const NOT_FOLLOWED = 'is a symbolic link, which is not followed here';

/** Throws when `file` is a symbolic link (for a file opened with `follow: false`, where the system may lack O_NOFOLLOW). */
function refuseLink(file: string, shown: string): void {
  let st: Stats;
  try {
    st = lstatSync(file);
  } catch {
    return; // Not there: opening it says so.
  }
  if (st.isSymbolicLink()) throw new InputFileError(shown, NOT_FOLLOWED);
}

/**
 * An input file's bytes, read whole after `openInputFile`'s checks; one
 * larger than `maxBytes` (default `MAX_INPUT_BYTES`) is refused before it is
 * read, and reading stops there too if the file grows (or its size said
 * nothing, as files of `/proc` say 0).
 */
export function readInputFile(file: string, opts: InputOptions & { maxBytes?: number } = {}): Buffer {
  const max = opts.maxBytes ?? MAX_INPUT_BYTES;
  const shown = opts.shown ?? file;
  const tooLarge = (size: string) => new InputFileError(shown, `is too large to read whole (${size}; at most ${megabytes(max)})`);
  const { fd, size } = openInputFile(file, opts);
  try {
    if (size > max) throw tooLarge(megabytes(size));
    // One byte more than the size said: reading it finds the end, or a file that grew.
    let buf = Buffer.allocUnsafe(Math.min(Math.max(size + 1, 1 << 16), max + 1));
    let got = 0;
    for (;;) {
      if (got === buf.length) {
        if (got > max) throw tooLarge(`more than ${megabytes(max)}`);
        const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, max + 1));
        buf.copy(grown, 0, 0, got);
        buf = grown;
      }
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/**
 * The most `{`, `[` and `,` a file read for `JSON.parse` may hold (`json:
 * true`): 40 million. Parsing costs up to about 45 bytes of heap for each
 * (100 MB of `[{},{},…]`, 66 million of them, took 2.9 GB, and past the
 * heap the process aborts), so the bound keeps the costliest file within
 * 2 GB; a dataset of text has one in 20 to 50 bytes, so a file within
 * `MAX_INPUT_BYTES` stays well within it. Counted in strings too: an
 * overcount only makes the bound safer.
 */
export const MAX_JSON_MARKS = 40_000_000;

/**
 * `readInputFile` as UTF-8 text. With `json: true`, a file with more than
 * `MAX_JSON_MARKS` of `{`, `[` and `,` is refused before it is parsed. A
 * file that is not UTF-8 (Latin-1, UTF-16) is refused at its first byte
 * that is not: decoded, each would be a U+FFFD in the text, silently.
 */
export function readInputText(file: string, opts: InputOptions & { maxBytes?: number; json?: boolean } = {}): string {
  const buf = readInputFile(file, opts);
  if (opts.json && marksOver(buf, MAX_JSON_MARKS)) {
    throw new InputFileError(opts.shown ?? file, `holds too many JSON values to parse (over ${MAX_JSON_MARKS.toLocaleString('en-US')} of \`{\`, \`[\` and \`,\`)`);
  }
  if (!isUtf8(buf)) throw new InputFileError(opts.shown ?? file, notUtf8(buf));
  return buf.toString('utf8');
}

/** Why `buf`, which is not UTF-8, is refused: UTF-16 by its byte order mark, else where its first byte that is no UTF-8 character is. */
function notUtf8(buf: Buffer): string {
  if ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff)) return 'is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8';
  const at = notUtf8At(buf);
  const start = at === 0 ? 0 : buf.lastIndexOf(0x0a, at - 1) + 1;
  const line = countNewlines(buf, 0, start) + 1;
  const column = buf.subarray(start, at).toString('utf8').length + 1;
  return notUtf8Byte(`line ${line}, column ${column}`, buf[at]!);
}

/** Why a file is refused whose byte `byte` at `where` starts no UTF-8 character. */
function notUtf8Byte(where: string, byte: number): string {
  return `is not UTF-8 text: at ${where}, byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} starts no UTF-8 character; save it as UTF-8`;
}

/** The offset of the first byte in `b` that starts no valid UTF-8 sequence (overlong, surrogate, past U+10FFFF or cut short); its length when there is none. */
function notUtf8At(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (n === 0 || i + n >= b.length) return i;
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const d = b[i + k]!;
      if ((d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < [0, 0x80, 0x800, 0x10000][n]! || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return b.length;
}

/** Whether `buf` holds more than `max` bytes `{`, `[` or `,`. */
function marksOver(buf: Buffer, max: number): boolean {
  if (buf.length <= max) return false;
  let n = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if ((b === 0x2c || b === 0x7b || b === 0x5b) && ++n > max) return true;
  }
  return false;
}

/**
 * A cache file's bytes, read safely; never throws. It is opened and checked
 * as an input file is (`openInputFile`): a FIFO or a device in its place is
 * never read (with `follow: false`, nor a symbolic link).
 */
export function readRegularFile(file: string, opts: InputOptions = {}): { status: 'ok'; buf: Buffer } | { status: 'missing' } | { status: 'unreadable'; reason: string } {
  try {
    return { status: 'ok', buf: readInputFile(file, opts) };
  } catch (e) {
    if (e instanceof InputFileError) return { status: 'unreadable', reason: e.reason.replace(/^is (.*), not a regular file$/, 'not a regular file but $1') };
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? { status: 'missing' } : { status: 'unreadable', reason: code ?? String(e) };
  }
}

/** A bound on a file's lines: a line longer than `bytes` (its newline aside) is refused with the error `exceeded` makes of its number. */
export interface LineLimit {
  bytes: number;
  exceeded: (line: number) => Error;
}

/**
 * Calls `onLine` with each line of the file at `path` (without its `\n`),
 * numbered from 1, reading `chunk` bytes at a time: a file larger than a
 * string can be is read all the same. With `partial: false`, a last line
 * without its newline is left out. The file is opened and checked as an
 * input file is (`openInputFile`: a FIFO or a device is refused; `follow:
 * false` refuses a symbolic link too). With `limit`, a line longer than its
 * bytes is refused as soon as that many bytes of it are read, before it is
 * made a string (so a file of one huge line costs a chunk of memory, not
 * the line). A byte that starts no UTF-8 character is refused at its line
 * (an `InputFileError`), never read as U+FFFD. Returns the file's size in
 * bytes and the bytes up to its last newline.
 */
export function eachLine(path: string, onLine: (line: string, n: number) => void, opts: { partial?: boolean; chunk?: number; limit?: LineLimit } & InputOptions = {}): { bytes: number; whole: number } {
  const { fd } = openInputFile(path, opts);
  try {
    const buffer = Buffer.allocUnsafe(opts.chunk ?? 1 << 20);
    // Fatal: a byte that starts no UTF-8 character is refused at its line, not read as U+FFFD.
    const text = new TextDecoder('utf-8', { fatal: true });
    const max = opts.limit?.bytes ?? Infinity;
    let rest: string[] = [];
    /** The bytes of a character the chunks so far cut short (the decoder holds them until the next chunk). */
    let carried: Buffer = Buffer.alloc(0);
    let n = 0;
    let bytes = 0;
    let whole = 0;
    /** Bytes of the line under way before this chunk. */
    let pending = 0;
    for (let got; (got = readSync(fd, buffer, 0, buffer.length, null)) > 0; bytes += got) {
      const last = buffer.lastIndexOf(0x0a, got - 1);
      if (last >= 0) whole = bytes + last + 1;
      if (opts.limit) {
        // Each line's length in bytes, checked before any of it is decoded.
        let start = 0;
        for (let nl = buffer.indexOf(0x0a); nl >= 0 && nl < got; nl = buffer.indexOf(0x0a, nl + 1)) {
          if (pending + nl - start > max) throw opts.limit.exceeded(n + 1 + countNewlines(buffer, 0, start));
          pending = 0;
          start = nl + 1;
        }
        pending += got - start;
        if (pending > max) throw opts.limit.exceeded(n + 1 + countNewlines(buffer, 0, start));
      }
      // The line under way is kept in pieces, joined once its newline comes: a line over many chunks is copied once, not once a chunk.
      let decoded: string;
      try {
        decoded = text.decode(buffer.subarray(0, got), { stream: true });
      } catch {
        throw new InputFileError(opts.shown ?? path, notUtf8InChunk(Buffer.concat([carried, buffer.subarray(0, got)]), n, rest.length > 0 || carried.length > 0));
      }
      carried = cutShort(Buffer.concat([carried, buffer.subarray(Math.max(0, got - 3), got)]));
      let from = 0;
      for (let nl = decoded.indexOf('\n'); nl >= 0; nl = decoded.indexOf('\n', from)) {
        rest.push(decoded.slice(from, nl));
        onLine(rest.join(''), ++n);
        rest = [];
        from = nl + 1;
      }
      if (from < decoded.length) rest.push(decoded.slice(from));
    }
    try {
      rest.push(text.decode());
    } catch {
      // A last line cut short inside a character: left out with partial: false (a write a kill cut short), refused otherwise.
      if (opts.partial !== false) throw new InputFileError(opts.shown ?? path, notUtf8Byte(`line ${n + 1}`, carried[0]!));
    }
    const last = rest.join('');
    if (last && opts.partial !== false) onLine(last, ++n);
    return { bytes, whole };
  } finally {
    closeSync(fd);
  }
}

/**
 * Why a file is refused whose bytes `chunk` (a chunk read after `lines`
 * whole lines, after the bytes of a character the chunks before cut short;
 * `inLine`: the line under way began before it) hold a byte that starts no
 * UTF-8 character.
 */
function notUtf8InChunk(chunk: Buffer, lines: number, inLine: boolean): string {
  const at = notUtf8At(chunk);
  const before = countNewlines(chunk, 0, at);
  const start = before ? chunk.lastIndexOf(0x0a, at - 1) + 1 : 0;
  const where = before || !inLine ? `line ${lines + before + 1}, column ${chunk.subarray(start, at).toString('utf8').length + 1}` : `line ${lines + 1}`;
  return notUtf8Byte(where, chunk[at]!);
}

/** The bytes at the end of `b` (its last three at most) that begin a character and are too few to end it; none when its last character is whole. */
function cutShort(b: Buffer): Buffer {
  for (let i = b.length - 1; i >= Math.max(0, b.length - 3); i--) {
    const c = b[i]!;
    if (c < 0x80) break;
    if (c >= 0xc0) return b.length - i < (c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2) ? Buffer.from(b.subarray(i)) : Buffer.alloc(0);
  }
  return Buffer.alloc(0);
}

/** The newlines in `buffer` from `from` up to `to`. */
function countNewlines(buffer: Buffer, from: number, to: number): number {
  let count = 0;
  for (let nl = buffer.indexOf(0x0a, from); nl >= 0 && nl < to; nl = buffer.indexOf(0x0a, nl + 1)) count++;
  return count;
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
