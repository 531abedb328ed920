import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { ScenarioError } from '../src/errors.js';
import type { IO } from '../src/cli/_io.js';

/** An IO that records what a command prints. */
export function capture(): IO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    isTTY: false,
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
  };
  return io;
}

/** The problems `fn` throws as a ScenarioError, one line each (none when it does not throw). */
export function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  return [];
}

/** The problems an async `fn` rejects with as a ScenarioError, one line each (none when it resolves). */
export async function asyncProblems(fn: () => Promise<unknown>): Promise<string[]> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  return [];
}

/** Runs the command line in this process: its exit code and what it printed. */
export async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture();
  const code = await runMain(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

/** Runs the command line in this process as the recording tests do: `SOURCE_DATE_EPOCH` pinned and `env` set (unstubbed after each test by the suite's config or the caller). */
export async function recordCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = capture();
  vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  const code = await runMain([...args], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/**
 * A command's arguments with `--upkeep record` added when it runs a study
 * file (`run`, `check`, `table`) and names no mode: the recording tests'
 * studies say `mode: record`, and only the command line opens the network.
 */
export function recording(args: readonly string[]): string[] {
  const study = ['run', 'check', 'table'].includes(args[0] ?? '') && /\.ya?ml$/.test(args[1] ?? '');
  return study && !args.includes('--upkeep') ? [...args, '--upkeep', 'record'] : [...args];
}

/** Runs the command line and expects exit 2 with exactly this one line on stderr, no stack trace, and nothing on stdout. */
export async function expectUsage(args: readonly string[], line: string | RegExp): Promise<void> {
  const { code, out, err } = await cli(...args);
  expect(out).toBe('');
  expect(err).not.toContain('    at ');
  const lines = err.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(code).toBe(2);
}

/** Each file of a folder, by name. */
export function folder(dir: string): Map<string, Buffer> {
  return new Map(
    readdirSync(dir)
      .sort()
      .map((f) => [f, readFileSync(join(dir, f))]),
  );
}

/** Expects a folder to hold exactly these files, byte for byte. */
export function expectSameFiles(dir: string, expected: Map<string, Buffer>): void {
  const got = folder(dir);
  expect([...got.keys()]).toEqual([...expected.keys()]);
  for (const [f, b] of expected) expect(got.get(f)!.equals(b), `${dir}/${f}`).toBe(true);
}

/** Every file of a folder, name → text, in name order. */
export function textFiles(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/**
 * A CSV file's rows as objects, by the header's names (quoted cells
 * unquoted; a missing cell is empty); with `columns`, those only, in that
 * order, each of which the header must name: what a test compares exactly
 * stays the same when a column is added to the file.
 */
export function csvRows(text: string, columns?: readonly string[]): Record<string, string>[] {
  const split = (line: string) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].slice(0, -1).map((m) => m[1]!.replace(/^"|"$/g, '').replaceAll('""', '"'));
  const [head, ...rows] = text.trimEnd().split('\n');
  const names = split(head!);
  for (const c of columns ?? []) if (!names.includes(c)) throw new Error(`the CSV header has no column ${c}: ${head}`);
  const at = (columns ?? names).map((n) => [n, names.indexOf(n)] as const);
  return rows.map((r) => {
    const cells = split(r);
    return Object.fromEntries(at.map(([n, i]) => [n, cells[i] ?? '']));
  });
}

/**
 * Records `study` (`run` is the test's CLI), replays it in two shards and
 * merges them into `dir/merged`: the merged probes, summaries, policies and
 * report are the whole run's. Returns the recorded run's files.
 */
export async function expectShardsMergeToRun(study: string, dir: string, run: (args: string[]) => Promise<{ code: number }>): Promise<Map<string, string>> {
  expect((await run(['run', study, '--out', join(dir, 'rec'), '--quiet'])).code).toBe(0);
  for (const k of ['1/2', '2/2']) expect((await run(['run', study, '--upkeep', 'replay', '--shard', k, '--out', join(dir, 'shards'), '--quiet'])).code).toBe(0);
  const io = capture();
  expect(await runMain(['merge', join(dir, 'shards'), '--out', join(dir, 'merged'), '--quiet'], io), io.stderr).toBe(0);
  const rec = textFiles(join(dir, 'rec'));
  const merged = textFiles(join(dir, 'merged'));
  for (const f of ['probes.csv', 'summary.csv', 'policies.csv', 'report.md']) expect(merged.get(f), f).toBe(rec.get(f));
  return rec;
}
