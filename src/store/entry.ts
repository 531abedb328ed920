import { crc32 } from 'node:zlib';

/**
 * The one format of a store entry (integers little-endian):
 *
 * | offset | bytes | content                                     |
 * |--------|-------|---------------------------------------------|
 * | 0      | 8     | magic `ctxsimST`                            |
 * | 8      | 4     | format version (u32)                        |
 * | 12     | 4     | payload length n (u32)                      |
 * | 16     | 4     | CRC-32 of the key and the payload (u32)     |
 * | 20     | 64    | the key, hex                                |
 * | 84     | n     | the payload (its namespace's to read)       |
 *
 * The payload starts at a multiple of 4, so a payload of u32 words can be
 * read in place (the token counts are).
 */

const MAGIC = Buffer.from('ctxsimST', 'latin1');
const FORMAT_VERSION = 1;
const KEY_HEX = 64;

/** Bytes before the payload. */
const HEADER = 20 + KEY_HEX;

/** Whether `key` is a store key: 64 lowercase hex digits (a SHA-256). */
export function isKey(key: string): boolean {
  return /^[0-9a-f]{64}$/.test(key);
}

/** The header of an entry holding `payload` under `key`. */
export function entryHeader(key: string, payload: Uint8Array): Buffer {
  const head = Buffer.alloc(HEADER);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(FORMAT_VERSION, 8);
  head.writeUInt32LE(payload.length, 12);
  head.write(key, 20, KEY_HEX, 'latin1');
  const ofKey = crc32(head.subarray(20));
  // Node's crc32 of an empty view on an empty buffer is 0, whatever the value it continues: an empty payload adds nothing.
  head.writeUInt32LE(payload.length ? crc32(payload, ofKey) : ofKey, 16);
  return head;
}

/** An entry's payload, or why the bytes are not an entry of `key`. */
export function entryPayload(buf: Buffer, key: string): { status: 'ok'; payload: Buffer } | { status: 'damaged'; reason: string } {
  if (buf.length < HEADER || !buf.subarray(0, 8).equals(MAGIC)) return { status: 'damaged', reason: 'not a ctxsim cache entry' };
  const version = buf.readUInt32LE(8);
  if (version !== FORMAT_VERSION) return { status: 'damaged', reason: `format version ${version}, expected ${FORMAT_VERSION}` };
  const n = buf.readUInt32LE(12);
  if (buf.length !== HEADER + n) return { status: 'damaged', reason: `${buf.length} bytes, expected ${HEADER + n}` };
  if (crc32(buf.subarray(20)) !== buf.readUInt32LE(16)) return { status: 'damaged', reason: 'checksum mismatch' };
  if (buf.toString('latin1', 20, HEADER) !== key) return { status: 'damaged', reason: 'written for another key' };
  return { status: 'ok', payload: buf.subarray(HEADER) };
}
