import { closeSync, ftruncateSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachLine, type LineLimit } from '../src/process.js';
import { tempDir } from './_tmp.js';

/**
 * `eachLine` reads a file a chunk at a time (a cassette may be larger than a
 * string can be): its lines must be the file's, whatever the chunk size —
 * a character or a newline split across two chunks included.
 */

const TEXT = '{"k":"café"}\n\n{"k":"☕ – naïve"}\r\nlast line, no newline';

function lines(text: string, chunk: number, partial?: boolean): { got: [string, number][]; read: { bytes: number; whole: number } } {
  const file = join(tempDir(), 'c.jsonl');
  writeFileSync(file, text);
  const got: [string, number][] = [];
  const read = eachLine(file, (line, n) => got.push([line, n]), { chunk, ...(partial !== undefined && { partial }) });
  return { got, read };
}

describe('eachLine', () => {
  it.each([1, 2, 3, 5, 7, 64, 1 << 20])('gives the lines split("\\n") gives, numbered, with chunks of %i bytes', (chunk) => {
    const { got, read } = lines(TEXT, chunk);
    expect(got).toEqual(TEXT.split('\n').map((l, i) => [l, i + 1]));
    const bytes = Buffer.byteLength(TEXT);
    expect(read).toEqual({ bytes, whole: Buffer.from(TEXT).lastIndexOf(0x0a) + 1 });
  });

  it('leaves out a last line without its newline when told, and gives no empty line after a final newline', () => {
    expect(lines(TEXT, 4, false).got.map(([l]) => l)).toEqual(TEXT.split('\n').slice(0, -1));
    expect(lines('a\nb\n', 1).got).toEqual([['a', 1], ['b', 2]]);
    expect(lines('', 8)).toEqual({ got: [], read: { bytes: 0, whole: 0 } });
    // The last newline is at byte 3 of the first chunk: a search into the second chunk's stale bytes would say 8.
    expect(lines('abc\nde', 4).read).toEqual({ bytes: 6, whole: 4 });
  });
});

describe('eachLine with a bound on its lines', () => {
  /** The lines read, or the line refused, with a bound of `bytes` and chunks of `chunk` bytes. */
  function bounded(text: string, bytes: number, chunk: number, partial?: boolean): { got: string[]; refused?: number } {
    const file = join(tempDir(), 'c.jsonl');
    writeFileSync(file, text);
    const got: string[] = [];
    const limit: LineLimit = { bytes, exceeded: (line) => Object.assign(new Error('too long'), { line }) };
    try {
      eachLine(file, (line) => got.push(line), { chunk, limit, ...(partial !== undefined && { partial }) });
    } catch (e) {
      return { got, refused: (e as { line: number }).line };
    }
    return { got };
  }

  it.each([1, 3, 4, 5, 16, 1 << 20])('a line of the bound passes, one byte more is refused at its number, in bytes (é is 2), whatever the chunk (%i)', (chunk) => {
    expect(bounded('abcd\né\nxy\n', 4, chunk)).toEqual({ got: ['abcd', 'é', 'xy'] });
    // Lines before it may have been given already (those of earlier chunks); never the long one nor any after it.
    const long = bounded('ab\nabcde\nxy\n', 4, chunk);
    expect(long.refused).toBe(2);
    expect(['ab'].slice(0, long.got.length)).toEqual(long.got);
    expect(bounded('ab\nabcé\n', 4, chunk).refused).toBe(2);
    // A long last line, with or without its newline, and one left out as cut short (partial: false).
    expect(bounded('ab\n\nabcde', 4, chunk).refused).toBe(3);
    expect(bounded('ab\n\nabcde', 4, chunk, false).refused).toBe(3);
    expect(bounded('ab\n\nabcd', 4, chunk, false)).toEqual({ got: ['ab', ''] });
  });

  it('a file of one line of 600 MB (sparse: no disk) is refused after reading about the bound, not the line', () => {
    const file = join(tempDir(), 'huge.jsonl');
    const fd = openSync(file, 'w');
    ftruncateSync(fd, 600_000_000);
    closeSync(fd);
    let read = 0;
    const limit: LineLimit = { bytes: 1000, exceeded: (line) => new Error(`line ${line} too long after ${read} lines`) };
    expect(() => eachLine(file, () => read++, { chunk: 4096, limit })).toThrow(/^line 1 too long after 0 lines$/);
  });
});

describe('eachLine and bytes that are no UTF-8', () => {
  /** The message eachLine refuses `bytes` with, read `chunk` bytes at a time, or the lines it gave. */
  function read(bytes: Buffer, chunk: number, partial?: boolean): string | string[] {
    const file = join(tempDir(), 'c.jsonl');
    writeFileSync(file, bytes);
    const got: string[] = [];
    try {
      eachLine(file, (line) => got.push(line), { chunk, shown: 'rec.jsonl', ...(partial !== undefined && { partial }) });
    } catch (e) {
      return (e as Error).message;
    }
    return got;
  }

  it.each([1, 2, 3, 4, 7, 1 << 20])('a Latin-1 byte is refused at its line (chunks of %i), never read as U+FFFD', (chunk) => {
    // "naïve" in Latin-1 on line 3: ï is the lone byte 0xEF.
    const bytes = Buffer.concat([Buffer.from('{"a":"café"}\n{"b":"☕"}\n{"c":"na'), Buffer.from([0xef]), Buffer.from('ve"}\n')]);
    const refused = read(bytes, chunk);
    expect(refused).toMatch(/^rec\.jsonl: is not UTF-8 text: at line 3(, column 9)?, byte 0xEF starts no UTF-8 character; save it as UTF-8$/);
    // Where the line starts in the chunk, the column and the byte are exact.
    if (chunk >= bytes.length) expect(refused).toBe('rec.jsonl: is not UTF-8 text: at line 3, column 9, byte 0xEF starts no UTF-8 character; save it as UTF-8');
  });

  it('a character cut short at the end of the file is refused, except in a last line left out as cut short (partial: false)', () => {
    const cut = Buffer.concat([Buffer.from('{"a":1}\n{"b":"'), Buffer.from('☕').subarray(0, 2)]);
    expect(read(cut, 5)).toBe('rec.jsonl: is not UTF-8 text: at line 2, byte 0xE2 starts no UTF-8 character; save it as UTF-8');
    expect(read(cut, 5, false)).toEqual(['{"a":1}']);
    // A real U+FFFD, written as its three bytes, is text like any other.
    expect(read(Buffer.from('x\uFFFDy\n'), 2)).toEqual(['x\uFFFDy']);
  });
});
