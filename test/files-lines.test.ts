import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachLine } from '../src/process.js';
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
