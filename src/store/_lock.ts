import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, linkSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { readRegularFile } from '../process.js';
import { tempName } from './_temp.js';

/**
 * The lock of a store entry that runs merge into: `<entry>.lock`, a file
 * created exclusively that holds its owner's token (pid, thread, random), so
 * that only its owner releases it.
 *
 * A lock older than LOCK_STALE_MS was left by a run that died, and is
 * broken. Two runs may find the same stale lock, and one may break it and
 * take a fresh one before the other acts: so a run never removes the lock
 * by its name, which may by then be another's. It first moves the file away
 * to a name of its own (a rename: atomic, so a file is moved by one run
 * only, and what it moved no other run can reach), then looks at what it
 * moved: the stale lock (still older than LOCK_STALE_MS), or on release its
 * own token, is removed; anything else (a fresh lock another run took
 * meanwhile) is put back by a hard link, which fails rather than replace a
 * lock a third run took in that instant. Two runs can still merge at once
 * only when a lock moved by mistake cannot be put back (a third run took
 * the lock within those microseconds, or the file system has no hard
 * links), or when a live run holds a lock past LOCK_STALE_MS (a merge takes
 * well under a second): the last rename wins, and counts are lost, never
 * wrong.
 *
 * The moved name is a temp file's, `<entry>.lock.<pid>-<thread>-<random>.tmp`,
 * so a run that dies before removing it leaves a file the store's sweeps
 * remove.
 */

/** How long a run waits for a lock another run holds before it merges without it. */
export const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a run that died (a merge holds its lock for well under a second). */
export const LOCK_STALE_MS = 30_000;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Takes `<file>.lock`, waiting up to `waitMs` while a live run holds it and
 * breaking it at once when it is stale. Returns its release (which never
 * throws, and removes the lock only while it is still this taking's), or
 * undefined when it stayed taken.
 */
export function takeLock(file: string, waitMs = LOCK_WAIT_MS): (() => void) | undefined {
  const path = `${file}.lock`;
  const token = `${process.pid}-${threadId}-${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + waitMs;
  for (let wait = 1; ; wait = Math.min(2 * wait, 50)) {
    if (tryLock(path, token)) return () => void releaseLock(path, token);
    if (breakStale(path)) continue;
    if (Date.now() > deadline) return undefined;
    Atomics.wait(pause, 0, 0, wait);
  }
}

/** Creates the lock `path` holding `token` when there is none; whether it did. */
export function tryLock(path: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeFileSync(fd, token);
  } catch (e) {
    // Just made, so ours: no lock is left that no one can release.
    closeSync(fd);
    rmSync(path, { force: true });
    throw e;
  }
  closeSync(fd);
  return true;
}

/** Removes the lock `path` if it still holds `token` (a lock broken as stale may since be another run's); whether it did. Never throws. */
export function releaseLock(path: string, token: string): boolean {
  // Missing, it may be moved aside for a moment by a run breaking what it saw stale, which puts it back at once: look again.
  for (let tries = 0; tries < 5; tries++) {
    if (holds(path, token)) return removeIf(path, (moved) => holds(moved, token));
    if (existsSync(path)) return false;
    Atomics.wait(pause, 0, 0, 1);
  }
  return false;
}

/**
 * Breaks the lock `path` if it is stale (older than LOCK_STALE_MS — a file,
 * or a folder some other tool made); whether it is gone (broken, or released
 * meanwhile), so that taking it may be tried again at once.
 */
export function breakStale(path: string): boolean {
  try {
    if (!stale(path)) return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
  return breakIfStill(path);
}

/**
 * The second half of `breakStale`, once `path` was found stale: another run
 * may have broken it and taken a fresh lock since, so the lock is moved away
 * and removed only if what was moved is still stale (else put back).
 * Whether `path` is now free.
 */
export function breakIfStill(path: string): boolean {
  return removeIf(path, (moved) => {
    try {
      return stale(moved);
    } catch {
      // Swept meanwhile as an hour-old temp file: stale indeed.
      return true;
    }
  });
}

function stale(path: string): boolean {
  return Date.now() - statSync(path).mtimeMs > LOCK_STALE_MS;
}

function holds(path: string, token: string): boolean {
  // Read as any cache file is: a FIFO put in its place is never waited on.
  const r = readRegularFile(path);
  return r.status === 'ok' && r.buf.toString('latin1') === token;
}

/**
 * Moves what is at `path` to a name of this run's own and removes it if
 * `isIt` says it is the lock meant, else puts it back (a hard link: never
 * over a lock taken meanwhile). Whether it was removed (true too when
 * nothing was there). Never throws.
 */
export function removeIf(path: string, isIt: (moved: string) => boolean): boolean {
  const moved = tempName(path);
  try {
    renameSync(path, moved);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
  const it = isIt(moved);
  if (!it) {
    try {
      linkSync(moved, path);
    } catch {
      // A third run took the lock meanwhile (or links are not supported): theirs stays, the one moved is lost.
    }
  }
  try {
    rmSync(moved, { recursive: true, force: true });
  } catch {
    // Not ours to remove: a later sweep takes it.
  }
  return it;
}
