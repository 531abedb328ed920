import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { CtxsimError } from '../errors.js';
import { alive, fileKind, makeDirs, turnTaker } from '../process.js';
import { linkOnTheWay } from './real-path.js';
import { seal, sealed } from './_seal.js';

/**
 * Output files written all-or-nothing, through one staging folder per run
 * inside the output folder (`.ctxsim-staging-<pid>-<random>/`): every file
 * is written there first (`new/`), and nothing is in place until `commit`.
 *
 * `commit` first writes the list of the files it places (`commit.json` in
 * the staging folder), then moves the previous run's files of the same
 * names aside (into `old/`), then moves the new ones in, then removes
 * `commit.json` — the moment the new run is committed — and the staging
 * folder with the previous files. Files of other names in the folder are
 * never touched.
 *
 * A run killed during a commit leaves `commit.json`: the next run that
 * writes into the same folder first rolls that commit back (`recoverStaging`),
 * so the previous run is whole again before anything else happens, even if
 * the next run then fails. A staging folder left by a run that died before
 * or after its commit holds nothing of the folder's files and is removed
 * (`removeStaleStaging`); the command line removes its own when stopped by
 * Ctrl-C or SIGTERM (`abortOpenStaging`). Another run touches a staging
 * folder only when it proves that a run of this user's made it for this
 * folder (its seal, `_seal.ts`): an output folder may come with a checkout
 * of someone else's, and a folder planted there is left as it is.
 *
 * The outputs of one command in several places (a report folder, a
 * baseline, a JUnit file) are committed together by an `OutputSet`.
 */

/** The name prefix of a run's staging folder. */
export const STAGING_PREFIX = '.ctxsim-staging-';

/** A staging folder older than this is stale even when its process id belongs to a live process (the id was reused). */
export const STAGING_STALE_MS = 7 * 24 * 3600 * 1000;

/** The file in a staging folder that lists the files of a commit under way (see `commit`). */
export const COMMIT_FILE = 'commit.json';

/** What `commit.json` holds: the names the commit places, the names it retires, and its seal. */
interface CommitList {
  names: string[];
  retired: string[];
}

/**
 * The file in a staging folder that holds its seal (`_seal.ts`): proof that
 * a run of this user's made it, for this folder, under this name. A staging
 * folder without one that checks is never touched by another run.
 */
const OWNER_FILE = 'owner';

/** Where the notices of staging folders left as they are go (see `onStagingNotice`). */
let notice = (line: string): void => {
  process.stderr.write(`ctxsim: warning: ${line}\n`);
};

/** Staging folders already reported by this process: each is reported once. */
const reported = new Set<string>();

/**
 * Sends the one-line notices of staging folders that `removeStaleStaging`
 * leaves as they are to `to` (default: stderr, as `ctxsim: warning: …`);
 * returns the previous receiver.
 */
export function onStagingNotice(to: (line: string) => void): (line: string) => void {
  const was = notice;
  notice = to;
  return was;
}

/**
 * Cleans up after runs into `dir` that died: a staging folder whose process
 * is no longer alive, or older than `STAGING_STALE_MS`. One that died in the
 * middle of its commit is rolled back first (`recoverStaging`): the previous
 * run's files go back into place; if that fails, the folder is left as it
 * is, holding them (see docs/reports.md). Only a folder that proves a run of
 * this user's made it for `dir` (its seal checks, and so does its commit
 * list's, whose every name is a plain name inside `dir` reached through no
 * link) is touched: any other is left as it is and reported in one line
 * (`onStagingNotice`). Best effort: returns the names removed.
 */
export function removeStaleStaging(dir: string, now = Date.now()): string[] {
  let names: string[];
  let real: string;
  try {
    names = readdirSync(dir);
    real = realpathSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = /^\.ctxsim-staging-(\d+)-[0-9a-f]+$/.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    try {
      if (alive(Number(m[1])) && now - lstatSync(path).mtimeMs <= STAGING_STALE_MS) continue;
      const list = trusted(dir, real, name);
      if (typeof list === 'string') {
        if (!reported.has(path)) notice(`${path}: left as it is: ${list}; if no run of yours is using it, look inside and remove it`);
        reported.add(path);
        continue;
      }
      // Claimed first (a rename is atomic): two runs starting together never both roll it back.
      const claimed = join(dir, `${STAGING_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
      renameSync(path, claimed);
      if (list && !recoverStaging(dir, claimed, list)) continue;
      rmSync(claimed, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed;
}

/**
 * Whether staging folder `name` of `dir` (whose real path is `real`) may be
 * cleaned up: its commit list when it holds one (null when none), or why not.
 */
function trusted(dir: string, real: string, name: string): CommitList | null | string {
  const path = join(dir, name);
  if (!lstatSync(path).isDirectory()) return 'not a folder';
  if (!sealed(readSmall(join(path, OWNER_FILE)), 'staging', real, name)) return 'not made by a ctxsim run of this user for this folder';
  const text = readSmall(join(path, COMMIT_FILE));
  if (text === undefined) return null;
  let list: CommitList & { seal?: unknown };
  try {
    list = JSON.parse(text) as CommitList & { seal?: unknown };
  } catch {
    return 'its commit list cannot be read';
  }
  const { names, retired } = list;
  if (!Array.isArray(names) || !Array.isArray(retired) || !sealed(list.seal, 'commit', real, name, JSON.stringify({ names, retired }))) return 'its commit list was not written by a ctxsim run of this user for this folder';
  for (const n of [...names, ...retired] as unknown[]) {
    if (!plainName(n)) return `its commit list names ${JSON.stringify(n)}, not a plain name inside the folder`;
    for (const root of [dir, join(path, 'new'), join(path, 'old')]) if (linkOnTheWay(join(root, n), root)) return `its commit list names ${JSON.stringify(n)}, which leads through a link`;
  }
  return { names, retired };
}

/** A small file's text (a seal, a commit list), or undefined when it is missing, a link, not a file or too large. */
function readSmall(path: string): string | undefined {
  const st = (() => {
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  })();
  if (!st?.isFile() || st.size > 1 << 20) return undefined;
  return readFileSync(path, 'utf8');
}

/** Whether `name` is a plain relative name of a file inside a folder: parts without `.`, `..`, a backslash or a NUL; not absolute. */
function plainName(name: unknown): name is string {
  return typeof name === 'string' && name !== '' && !isAbsolute(name) && !/[\\\0]/.test(name) && name.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/**
 * Rolls back the commit a dead run left half done in staging folder
 * `staging` of `dir`, from its commit list (checked by `trusted`). Each
 * name is put back in two moves, each atomic and each skipped once done, so
 * a recovery that is itself stopped is resumed by the next: a new file in
 * place goes back to `new/`, then the previous file comes back from `old/`.
 * Returns whether the folder holds the previous files again (false:
 * something could not be moved back; the staging folder must then be kept,
 * since it holds them).
 */
function recoverStaging(dir: string, staging: string, list: CommitList): boolean {
  try {
    rollBack(dir, staging, list);
    unlinkSync(join(staging, COMMIT_FILE));
    return true;
  } catch {
    return false;
  }
}

/**
 * Puts the files of `dir` back as they were before a commit from `staging`
 * began, from what is where: a name whose new file is no longer in `new/`
 * was placed, so its file goes back there; a name with a file in `old/`
 * has it moved back. Only for a commit that began (every new file was in
 * `new/` when it did).
 */
function rollBack(dir: string, staging: string, { names, retired }: CommitList): void {
  for (const name of names) {
    const fresh = join(staging, 'new', name);
    if (!exists(fresh) && exists(join(dir, name))) {
      makeDirs(dirname(fresh));
      renameSync(join(dir, name), fresh);
    }
  }
  for (const name of [...names, ...retired]) {
    const previous = join(staging, 'old', name);
    if (!exists(previous)) continue;
    makeDirs(dirname(join(dir, name)));
    renameSync(previous, join(dir, name));
  }
}

/** Throws when `target` exists and is not a regular file (a device, FIFO, socket or folder): such a target is never replaced. */
export function checkFileTarget(target: string): void {
  let kind: string | undefined;
  try {
    kind = fileKind(statSync(target));
    if (kind === undefined) return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') notAFolder(target, dirname(target));
    // Said of the stat, it would read "cannot read": the file is to be written, and its name is what is wrong.
    if (code === 'ENAMETOOLONG') throw new CtxsimError(`${target}: the name is too long for a file (${Buffer.byteLength(basename(target))} bytes; ENAMETOOLONG); cannot write it`, 'output');
    throw e;
  }
  throw new CtxsimError(`${target}: ${kind === 'something else' ? 'not a regular file' : `is ${kind}, not a regular file`}; refusing to write it`, 'output');
}

/**
 * Throws, naming it, when `dir` or a folder above it is a file (or anything
 * but a folder): there `mkdir` only says EEXIST or ENOTDIR, which names no
 * culprit. Returns when the path is clear.
 */
function notAFolder(target: string, dir: string): void {
  for (let d = dir; ; d = dirname(d)) {
    let st;
    try {
      st = statSync(d);
    } catch {
      if (dirname(d) === d) return;
      continue;
    }
    if (!st.isDirectory()) throw new CtxsimError(`cannot write ${target}: ${d === target ? 'it' : d} ${st.isFile() ? 'is a file, not a folder' : 'is not a folder'}`, 'output');
    return;
  }
}

/**
 * Runs `write`; a failed write that names no file (as a write to an open
 * descriptor fails: a full disk, ENOSPC) is made to name `path`, so the error
 * the command prints says where.
 */
export function naming<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err instanceof Error && typeof err.code === 'string' && err.path === undefined) err.path = path;
    throw e;
  }
}

/** The staged files not yet committed nor aborted: what a signal's handler removes. */
const open = new Set<StagedFiles>();

/**
 * Aborts every staged output of this process (its staging folders, and the
 * folders made for them if left empty). For a handler of SIGINT or SIGTERM:
 * JavaScript runs between system calls, so no commit is then half done.
 */
export function abortOpenStaging(): void {
  for (const staged of open) staged.abort();
}

export class StagedFiles {
  /** The names (relative to the folder) of the files staged so far. */
  private readonly names: string[] = [];
  /** Names whose previous file goes on commit, with no new one (see `retire`). */
  private readonly retired: string[] = [];
  /** The run's staging folder, made on first use. */
  private staging: string | undefined;
  /** The first folder the constructor created, if the folder did not exist. */
  private readonly created: string | undefined;
  /** While placed (see `place`), until settled or restored: the commit's list, to put the previous files back. */
  private placing: CommitList | undefined;

  constructor(readonly dir: string) {
    notAFolder(dir, dir);
    this.created = makeDirs(dir);
    open.add(this);
    removeStaleStaging(dir);
  }

  private stage(): string {
    if (this.staging === undefined) {
      const name = `${STAGING_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
      const staging = join(this.dir, name);
      makeDirs(join(staging, 'new'));
      this.staging = staging;
      const owner = seal('staging', this.real(), name);
      if (owner !== undefined) writeFileSync(join(staging, OWNER_FILE), owner);
    }
    return this.staging;
  }

  /** The folder's real path: what its staging folder's seals name. */
  private real(): string {
    return realpathSync(this.dir);
  }

  /**
   * The staged path to write file `name` (relative to the folder) at; it
   * goes into place on `commit`. Refuses a target that is not a regular
   * file, and one in a subfolder reached through a symbolic link inside the
   * folder (a folder may come with someone else's links, leading anywhere).
   */
  path(name: string): string {
    const target = join(this.dir, name);
    checkFileTarget(target);
    const link = dirname(target) === this.dir ? undefined : linkOnTheWay(dirname(target), this.dir);
    if (link) throw new CtxsimError(`${target}: ${link.link} is a symbolic link (to ${link.leadsTo}); refusing to write through it`, 'output');
    const tmp = join(this.stage(), 'new', name);
    makeDirs(dirname(tmp));
    this.names.push(name);
    return tmp;
  }

  /**
   * Marks file `name` as one this run replaces with nothing: a regular file
   * of that name goes on commit, as a previous file does (a record file an
   * earlier run wrote that this run does not write, so old and new are never
   * side by side).
   */
  retire(name: string): void {
    this.stage();
    this.retired.push(name);
  }

  /** A path for a piece of work in the staging folder, removed on `commit` and on `abort`. */
  scratch(name: string): string {
    const dir = join(this.stage(), 'scratch');
    makeDirs(dir);
    return join(dir, name);
  }

  /** Writes file `name` to its staged path. */
  write(name: string, content: FileContent): void {
    const staged = this.path(name);
    naming(join(this.dir, name), () => {
      if (typeof content === 'string' || content instanceof Uint8Array) return writeFileSync(staged, content);
      // Written a part at a time: a file larger than a string can be.
      const fd = openSync(staged, 'w');
      try {
        for (const part of content) writeFileSync(fd, part);
      } finally {
        closeSync(fd);
      }
    });
  }

  /** The paths the staged files go to. */
  targets(): string[] {
    return this.names.map((n) => join(this.dir, n));
  }

  /** Places the files (`place`) and removes the staging folder; returns the targets. */
  commit(): string[] {
    this.place();
    this.settle();
    return this.targets();
  }

  /**
   * Writes the commit's list (`commit.json`), then moves the previous files
   * of the same names (and the retired ones) aside into the staging folder,
   * then every new file into place. A failure puts the previous files back;
   * after success, `settle` removes the previous files for good, or
   * `restore` puts them back.
   */
  place(): void {
    for (const t of this.targets()) checkFileTarget(t);
    if (this.staging === undefined) return;
    const staging = this.staging;
    // Every new file is there before the list says the commit began (a roll back reads a missing one as placed).
    for (const name of this.names) lstatSync(join(staging, 'new', name));
    const list: CommitList = { names: [...this.names], retired: this.retired.filter((name) => !this.names.includes(name)) };
    writeFileSync(join(staging, COMMIT_FILE), JSON.stringify({ ...list, seal: seal('commit', this.real(), basename(staging), JSON.stringify(list)) }));
    this.placing = list;
    try {
      for (const name of list.names) {
        if (!exists(join(this.dir, name))) continue;
        makeDirs(dirname(join(staging, 'old', name)));
        renameSync(join(this.dir, name), join(staging, 'old', name));
      }
      for (const name of list.retired) {
        // Only a file: a folder of that name is not ctxsim's.
        if (!isFile(join(this.dir, name))) continue;
        makeDirs(dirname(join(staging, 'old', name)));
        renameSync(join(this.dir, name), join(staging, 'old', name));
      }
      for (const name of list.names) {
        makeDirs(dirname(join(this.dir, name)));
        renameSync(join(staging, 'new', name), join(this.dir, name));
      }
    } catch (e) {
      // Put the previous files back, so a failed commit leaves the folder as it was.
      this.restore();
      throw e;
    }
  }

  /** Undoes `place`: moves the new files placed back into the staging folder, and the previous ones back into place. */
  restore(): void {
    if (this.placing === undefined || this.staging === undefined) return;
    rollBack(this.dir, this.staging, this.placing);
    rmSync(join(this.staging, COMMIT_FILE), { force: true });
    this.placing = undefined;
  }

  /** After `place`: the commit is done — its list (`commit.json`) goes, so nothing puts the previous files back any more. */
  committed(): void {
    if (this.placing && this.staging !== undefined) unlinkSync(join(this.staging, COMMIT_FILE));
    this.placing = undefined;
  }

  /** After `place`: the commit is done (`committed`); removes the staging folder, with the previous files in it. */
  settle(): void {
    open.delete(this);
    this.committed();
    if (this.staging === undefined) return;
    rmSync(this.staging, { recursive: true, force: true });
    this.staging = undefined;
  }

  /** Removes the staging folder, and the folders the constructor created if they are left empty; the folder's files stay as they were. */
  abort(): void {
    open.delete(this);
    this.restore();
    if (this.staging !== undefined) {
      try {
        rmSync(this.staging, { recursive: true, force: true });
      } catch {
        // Best effort: the next run removes it.
      }
      this.staging = undefined;
    }
    if (this.created === undefined) return;
    for (let d = this.dir; ; d = dirname(d)) {
      try {
        rmdirSync(d);
      } catch {
        return;
      }
      if (d === this.created) return;
    }
  }
}

/**
 * The outputs of one command, in one or several places (a report folder, a
 * baseline, a JUnit file), committed together: each is staged beside its
 * target, and none is in place until all are written. If placing one fails,
 * the ones placed before it are put back, so the command leaves every
 * target as it was.
 */
export class OutputSet {
  private readonly parts: StagedFiles[] = [];

  /** @internal Adds the staged files of a folder, to be committed with the rest. */
  add(staged: StagedFiles): void {
    this.parts.push(staged);
  }

  /** Stages one file, beside `path`. */
  file(path: string, content: string | Uint8Array): void {
    // Refused before any folder is made for it.
    checkFileTarget(path);
    const staged = new StagedFiles(dirname(path));
    this.parts.push(staged);
    staged.write(basename(path), content);
  }

  /** Places every part, or none; returns every target. */
  commit(): string[] {
    const placed: StagedFiles[] = [];
    try {
      for (const part of this.parts) {
        part.place();
        placed.push(part);
      }
    } catch (e) {
      for (const part of placed.reverse()) part.restore();
      throw e;
    }
    // One moment commits every part (the lists go one after another, with no work between), then the previous files are removed.
    for (const part of this.parts) part.committed();
    for (const part of this.parts) part.settle();
    return this.parts.flatMap((p) => p.targets());
  }

  /** Aborts every part: no target changes. */
  abort(): void {
    for (const part of this.parts) part.abort();
  }
}

/** Whether a regular file (not a link) is at `path`. */
function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** Whether anything (a file, a folder, a link) is at `path`. */
export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes files all-or-nothing: each goes to the staging folder first, and
 * only when all are written are they moved into place.
 */
export function writeFilesAtomic(dir: string, files: ReadonlyMap<string, FileContent>): string[] {
  // Refused before any folder is made (a file on the way is named).
  for (const name of files.keys()) checkFileTarget(join(dir, name));
  const staged = new StagedFiles(dir);
  try {
    for (const [name, content] of files) staged.write(name, content);
    return staged.commit();
  } catch (e) {
    staged.abort();
    throw e;
  }
}

/**
 * `writeFilesAtomic` of files made one at a time (`content(i)` for
 * `names[i]`), giving the event loop a turn between them (`turnTaker`): a
 * long set written on the main thread still hears Ctrl-C or SIGTERM, whose
 * handler then removes the staging folder. Returns the paths written.
 */
export async function writeFilesPausing(dir: string, names: readonly string[], content: (i: number) => string | Uint8Array): Promise<string[]> {
  for (const name of names) checkFileTarget(join(dir, name));
  const staged = new StagedFiles(dir);
  const turn = turnTaker();
  try {
    for (const [i, name] of names.entries()) {
      staged.write(name, content(i));
      const paused = turn();
      if (paused) await paused;
    }
    return staged.commit();
  } catch (e) {
    staged.abort();
    throw e;
  }
}

/** What a file is written from: its text or bytes, or its parts in order. */
export type FileContent = string | Uint8Array | Iterable<string>;

/** Writes one file all-or-nothing (staged beside it, renamed into place). */
export function writeFileAtomic(path: string, content: FileContent): void {
  writeFilesAtomic(dirname(path), new Map([[basename(path), content]]));
}
