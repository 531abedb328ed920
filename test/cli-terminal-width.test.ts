import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * `ctxsim run` lays its table, caption, notes and verdict out for stdout's
 * width: the terminal's when stdout is one, 100 columns when it is not.
 * The built CLI runs under a pseudo-terminal of 80 and of 100 columns made
 * by util-linux's `script` (its size set with `stty cols`), and into a
 * pipe; in this process the width comes through the IO layer
 * (`IO.outColumns`), as the terminal gives it.
 */

const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** The built CLI is current when its run command is no older than the files that lay the table out. */
const built = ['cli/run', 'cli/_table', 'cli/_io', 'report/text', 'report/verdict'].every((f) => {
  const js = join(ROOT, 'dist', `${f}.js`);
  return existsSync(js) && statSync(js).mtimeMs >= statSync(join(ROOT, 'src', `${f}.ts`)).mtimeMs;
});
const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
const hasScript = script.status === 0 && /util-linux/.test(script.stdout);
const why = !built ? ' (skipped: dist/ is missing or stale; npm run build)' : !hasScript ? ' (skipped: no util-linux script to make a pseudo-terminal)' : '';

/** The shipped scenarios through every policy: nine rows, a memory note, a verdict of several lines. */
const ARGS = ['run', '--scenario', join(ROOT, 'scenarios', '*.yaml'), '--quiet'];

/** A shell word, quoted. */
const quoted = (w: string) => `'${w.replaceAll("'", "'\\''")}'`;

/** What the built CLI prints on a terminal of `columns` (its carriage returns dropped). */
function onTerminal(columns: number, args: readonly string[]): string {
  const command = `stty cols ${columns} rows 50; ${[process.execPath, MAIN, ...args].map(quoted).join(' ')}`;
  const r = spawnSync('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: tempDir(), encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.replaceAll('\r', '');
}

/** What the built CLI prints into a pipe. */
function intoPipe(args: readonly string[]): string {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: tempDir(), encoding: 'utf8', timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

const lines = (text: string) => text.trimEnd().split('\n');
const headerOf = (text: string) => lines(text).find((l) => l.startsWith('policy '))!.split(/\s{2,}/);

describe(`the run table and verdict at the terminal's width${why}`, () => {
  it.skipIf(!!why)('fit 80 and 100 columns on a terminal, and 100 into a pipe; --wide keeps every column and each note on one line', { timeout: 300_000 }, () => {
    const cache = tempDir();
    // One output file: the table and verdict print as with a report folder, and no chart is rendered.
    const args = [...ARGS, '--out', join(cache, 'results.json'), '--token-cache', cache];
    const [eighty, hundred, piped, wide] = [onTerminal(80, args), onTerminal(100, args), intoPipe(args), onTerminal(80, [...args, '--wide'])];
    for (const [text, width] of [[eighty, 80], [hundred, 100]] as const) {
      expect(lines(text).filter((l) => l.length > width), `${width} columns`).toEqual([]);
      expect(text).toMatch(/\n\nVerdict: Use summary: it keeps 100% of probed facts for 55% less than full,/);
      // The memory note, wrapped: its next lines indented.
      expect(text).toMatch(/\nSimulated memory \(summary keep 1, [^\n]*\n {2}\S/);
    }
    // Columns leave in the table's rank order: at 80, upkeep tokens is the last that fits; at 100, p95 s and cost/conv USD join.
    expect(headerOf(eighty)).toEqual(['policy', 'cost/1k conv USD', 'vs full', 'retention', 'pareto', 'upkeep tokens']);
    expect(headerOf(hundred)).toEqual(['policy', 'cost/1k conv USD', 'vs full', 'retention', 'pareto', 'upkeep tokens', 'p95 s']);
    expect(lines(eighty)[2]).toMatch(/^window\s+4\.8022\s+-61\.0%\s+30\.0% \(3\/10\)\s+yes\s+0$/);
    // Not a terminal: 100 columns, the same text.
    expect(piped).toBe(hundred);
    // --wide: as before, every column, the note on one line.
    expect(headerOf(wide).at(-1)).toBe('scenarios');
    expect(lines(wide)).toContain(lines(wide).find((l) => l.startsWith('Simulated memory (')));
    expect(lines(wide).find((l) => l.startsWith('Simulated memory ('))).toMatch(/an upper bound on what a model would answer$/);
  });
});

describe('the width through the IO layer', () => {
  it('lays the output out at the width the IO gives (a terminal’s), at least 40 columns, and at 100 without one', async () => {
    const dir = tempDir();
    const run = async (outColumns?: number) => {
      const io = Object.assign(capture(), outColumns === undefined ? {} : { outColumns });
      expect(await runMain([...ARGS, '--policy', 'full', '--policy', 'summary', '--policy', 'window', '--out', join(dir, 'results.json'), '--token-cache', dir], io)).toBe(0);
      return io.stdout;
    };
    const [sixty, none, ten] = [await run(60), await run(), await run(10)];
    expect(lines(sixty).filter((l) => l.length > 60)).toEqual([]);
    // The caption wrapped between its parts.
    expect(lines(sixty).slice(0, 2)).toEqual([expect.stringMatching(/^gpt-4o-mini · prices of \S+ · tokenizer o200k_base$/), '  5 conversations']);
    expect(headerOf(sixty)).toEqual(['policy', 'cost/1k conv USD', 'vs full', 'retention', 'pareto']);
    expect(lines(sixty).at(-1)!.length).toBeLessThanOrEqual(60);
    expect(lines(none).filter((l) => l.length > 100)).toEqual([]);
    expect(lines(none).some((l) => l.length > 60)).toBe(true);
    // Narrower than 40: laid out at 40.
    expect(lines(ten).filter((l) => !l.startsWith('policy') && !/^\S+\s+\d/.test(l)).every((l) => l.length <= 40)).toBe(true);
    expect(lines(ten).some((l) => l.length > 30 && l.length <= 40)).toBe(true);
  });
});
