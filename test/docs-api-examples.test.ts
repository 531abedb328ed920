import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { builtSince } from './_built.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The library examples docs/api.md shows with what they print print it, run
 * as a user runs them: compiled to JavaScript (types stripped, nothing
 * checked here: npm run consumer checks the declarations), importing the
 * built package by its name (`ctxsim`, `ctxsim/engine`, …), in a folder
 * holding the study getting-started.md has its reader write (its
 * `<!-- docs-outputs: write PATH -->` blocks). An example's output is the
 * plain block after it, or its closing `// ` comment lines.
 * `npm run build` first.
 */

const API = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8').split('\n');
const FENCE = /^```(\w*)$/;

/** The fenced blocks of a page's lines: their info string, first body line (0-based) and body. */
function blocks(lines: readonly string[]): { lang: string; at: number; body: string[] }[] {
  const out: { lang: string; at: number; body: string[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    out.push({ lang: open[1]!, at: i + 1, body: lines.slice(i + 1, end) });
    i = end;
  }
  return out;
}

/** The blocks of api.md's section under a heading (up to the next heading of any level), `at` a page line (0-based). */
function sectionBlocks(heading: string): { lang: string; at: number; body: string[] }[] {
  const from = API.indexOf(heading);
  if (from < 0) throw new Error(`docs/api.md has no heading "${heading}"`);
  const to = API.findIndex((l, i) => i > from && /^#+ /.test(l));
  return blocks(API.slice(from, to < 0 ? undefined : to)).map((b) => ({ ...b, at: b.at + from }));
}

/** A folder with getting-started's study and the built package installed as `ctxsim`. */
function userFolder(): string {
  const dir = tempDir();
  const page = readFileSync(join(ROOT, 'docs', 'getting-started.md'), 'utf8').split('\n');
  for (const [i, line] of page.entries()) {
    const path = /^<!-- docs-outputs: write (\S+) -->$/.exec(line)?.[1];
    if (!path) continue;
    const [block] = blocks(page.slice(i + 1));
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), `${block!.body.join('\n')}\n`);
  }
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'ctxsim'), 'dir');
  return dir;
}

/** Runs a TypeScript example in `dir` with Node: what it printed on stdout, as lines. */
function runExample(dir: string, code: string): string[] {
  const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  writeFileSync(join(dir, 'example.mjs'), js);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CTXSIM_')));
  const out = execFileSync(process.execPath, ['example.mjs'], { cwd: dir, env: { ...env, XDG_CACHE_HOME: join(dir, '.cache') }, encoding: 'utf8' });
  return out.replace(/\n$/, '').split('\n');
}

describe('the library examples of docs/api.md print what the page shows', () => {
  it('needs the built package, no older than the entry points the examples import', () => {
    expect(builtSince('index.ts', 'api/engine.ts', 'api/study.ts'), 'npm run build').toBe(true);
  });

  it('Run a study: the per-policy totals of getting-started’s study, and the files written', () => {
    const [example, shown] = sectionBlocks('## Run a study');
    expect(example!.lang).toBe('ts');
    expect(runExample(userFolder(), example!.body.join('\n')), `docs/api.md:${shown!.at + 1}`).toEqual(shown!.body);
  });

  it('Replay one conversation: the probes of one replay', () => {
    const [example] = sectionBlocks('## Replay one conversation');
    const shown = example!.body.filter((l) => l.startsWith('// ')).map((l) => l.slice(3));
    expect(shown.length).toBeGreaterThan(0);
    expect(runExample(userFolder(), example!.body.join('\n')), `docs/api.md:${example!.at + 1}`).toEqual(shown);
  });
});
