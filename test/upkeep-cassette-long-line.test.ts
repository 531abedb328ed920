import { closeSync, copyFileSync, ftruncateSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CASSETTE_LINE_BYTES } from '../src/upkeep/cassette.js';
import { recordCli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A cassette or journal line longer than MAX_CASSETTE_LINE_BYTES (64 MiB) is
 * refused in one line naming the file and the line, as soon as that much of
 * it is read: a file of one line of 600 MB is never made a string. The files
 * are sparse (600 MB of zero bytes after a whole line), so they cost no disk.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml');
const LINE = '{"key":"0123456789abcdef0123456789abcdef","kind":"summary","model":"gpt-4o-mini","text":"hi","usage":{"input":1,"output":1}}\n';

/** A study replaying (or recording into) `upkeep.cassette.jsonl` beside it; returns its folder. */
function project(): string {
  const dir = tempDir();
  copyFileSync(SCENARIO, join(dir, 'scenario.yaml'));
  writeFileSync(join(dir, 'study.yaml'), ['scenarios: [scenario.yaml]', 'policies: [summary]', "upkeep: {mode: replay, baseURL: 'http://127.0.0.1:9/v1'}", ''].join('\n'));
  return dir;
}

/** `file`: a whole line, then `bytes` in all (zeros: a second line without end). */
function oneHugeLine(file: string, bytes: number): void {
  const fd = openSync(file, 'w');
  writeSync(fd, LINE);
  ftruncateSync(fd, bytes);
  closeSync(fd);
}

describe('a cassette line longer than the bound', () => {
  it('is 64 MiB', () => {
    expect(MAX_CASSETTE_LINE_BYTES).toBe(64 * 1024 * 1024);
  });

  it('in the cassette: one line naming the file and the line, exit 2, before the line is read whole', async () => {
    const dir = project();
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    oneHugeLine(cassette, 600_000_000);
    const r = await recordCli(['run', join(dir, 'study.yaml'), '--upkeep', 'replay', '--quiet', '--no-token-cache']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `ctxsim: ${cassette}:2:1: a line longer than 67108864 bytes (64 MiB), more than any response a recording writes\n` });
  });

  it('in the journal of a recording: the same, nothing sent', async () => {
    const dir = project();
    const journal = join(dir, 'upkeep.cassette.jsonl.journal');
    oneHugeLine(journal, MAX_CASSETTE_LINE_BYTES + LINE.length + 1);
    const r = await recordCli(['run', join(dir, 'study.yaml'), '--upkeep', 'record', '--quiet', '--no-token-cache']);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `ctxsim: ${journal}:2:1: a line longer than 67108864 bytes (64 MiB), more than any response a recording writes\n` });
  });

  it('a line of exactly the bound is read (and judged as a line: here, not JSON)', async () => {
    const dir = project();
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    oneHugeLine(cassette, LINE.length + MAX_CASSETTE_LINE_BYTES);
    const r = await recordCli(['run', join(dir, 'study.yaml'), '--upkeep', 'replay', '--quiet', '--no-token-cache']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^ctxsim: ${cassette.replace(/[.]/g, '\\.')}:2:1: not a JSON object \\(`));
  });
});
