import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDirs, userFolder } from '../process.js';

/**
 * The seal of what a run leaves in an output folder for a later run to act
 * on (a staging folder, the list of a commit under way): an HMAC-SHA256 under
 * a key of the user's that never lies in a project (`staging.key` in
 * `userFolder('state')`, 32 random bytes made on first use, readable by the
 * user alone). A folder planted in a checkout cannot carry a seal that
 * checks: it would need the key.
 */

/** The key's length in bytes. */
const KEY_BYTES = 32;

/** The key, once read or made: undefined until then, null when there is none to be had. */
let key: Buffer | null | undefined;

/** The seal of `parts` (hex), or undefined when no key can be read or made. */
export function seal(...parts: readonly string[]): string | undefined {
  const k = sealKey();
  if (!k) return undefined;
  const mac = createHmac('sha256', k);
  for (const part of parts) mac.update(`${Buffer.byteLength(part)}:${part}`);
  return mac.digest('hex');
}

/** Whether `claimed` is the seal of `parts`. */
export function sealed(claimed: unknown, ...parts: readonly string[]): boolean {
  const want = seal(...parts);
  if (want === undefined || typeof claimed !== 'string' || claimed.length !== want.length) return false;
  return timingSafeEqual(Buffer.from(claimed), Buffer.from(want));
}

/** The key: read from its file, or made there; null when neither can be done (a run then seals nothing). */
function sealKey(): Buffer | null {
  if (key !== undefined) return key;
  let file: string;
  try {
    file = join(userFolder('state'), 'staging.key');
  } catch {
    // No home folder: no key, and nothing sealed.
    return (key = null);
  }
  try {
    key = readKey(file);
  } catch {
    try {
      makeDirs(dirname(file));
      key = makeKey(file);
    } catch {
      // Made meanwhile by another run, or no room to make it.
      try {
        key = readKey(file);
      } catch {
        key = null;
      }
    }
  }
  return key;
}

/** Reads the key: a regular file of the user's, not a link, of the key's length, that no one else may read or write. */
function readKey(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    const mine = process.getuid === undefined || st.uid === process.getuid();
    if (!st.isFile() || !mine || st.size !== KEY_BYTES || (process.platform !== 'win32' && (st.mode & 0o077) !== 0)) throw new Error(`${file}: not a key of this user's`);
    const buf = Buffer.alloc(KEY_BYTES);
    if (readSync(fd, buf, 0, KEY_BYTES, 0) !== KEY_BYTES) throw new Error(`${file}: short`);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** Makes the key's file whole, never over an existing one: written beside it, then linked into place (atomic). */
function makeKey(file: string): Buffer {
  const buf = randomBytes(KEY_BYTES);
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    writeSync(fd, buf);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  return buf;
}
