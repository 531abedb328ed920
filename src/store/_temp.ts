import { randomBytes } from 'node:crypto';
import { threadId } from 'node:worker_threads';

/**
 * The temp files of the store: an entry being written, `<key>.<pid>-<thread>-<random>.tmp`,
 * or a lock being removed, `<key>.lock.<pid>-<thread>-<random>.tmp` (_lock.ts). Sweeps
 * find them by `TEMP` (the pid tells whether their run is alive).
 */

/** A temp file's name beside `path`, this thread's own. */
export function tempName(path: string): string {
  return `${path}.${process.pid}-${threadId}-${randomBytes(4).toString('hex')}.tmp`;
}

/** A temp file of an entry (its key is group 1, its run's pid group 2). */
export const TEMP = /^([0-9a-f]{64})(?:\.lock)?\.(\d+)-\d+-[0-9a-f]{8}\.tmp$/;
