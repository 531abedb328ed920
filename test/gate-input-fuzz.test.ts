import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { CtxsimError } from '../src/errors.js';
import { readBaseline, type Baseline } from '../src/gate/baseline.js';
import { DEFAULT_LIMITS } from '../src/gate/limits.js';
import { compare } from '../src/gate/compare.js';
import { POLICY_RECORD, SUMMARY_RECORD } from '../src/records/registry.js';
import { gateJson, gateJunit, gateMarkdown } from '../src/report/gate.js';
import { mergeShardFiles } from '../src/study/merge.js';
import { textSink } from '../src/output/sinks.js';
import { capture, cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A baseline and two shard files written by a real run, mutated at random
 * (a value replaced by a hostile one or nudged, a key removed or added, an
 * item dropped or repeated, the text cut or a character put in or taken
 * out), read by the readers `check`, `merge` and the library share. Each
 * mutation is refused with a CtxsimError whose every line names the file and
 * a line:col or a field path (a JSON syntax error: one line, with line:col),
 * or it gives a baseline the gate uses meaningfully (no NaN, no negative
 * count, no share over 100%) and shards that merge into finite figures.
 * Never another error, never exit 70.
 */
const SEED = 43;

/** Made outside a test: removed after the file's tests. */
const dir = tempDir();
let baselineText: string;
let shardTexts: [string, string];
let current: Baseline;

beforeAll(async () => {
  for (const f of ['kavya-late-order.yaml', 'noah-amnesia.yaml']) cpSync(join(ROOT, 'scenarios', f), join(dir, 'scenarios', f));
  writeFileSync(study(), ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies:', '  - full', '  - window-turns: {turns: 2}', ''].join('\n'));
  const base = ['--no-token-cache', '--quiet'];
  expect((await cli('run', study(), '--save-baseline', join(dir, 'baseline.json'), '--out', join(dir, 'turns.csv'), ...base)).code).toBe(0);
  for (const k of ['1/2', '2/2']) expect((await cli('run', study(), '--shard', k, '--out', join(dir, 'shards'), ...base)).code).toBe(0);
  baselineText = readFileSync(join(dir, 'baseline.json'), 'utf8');
  shardTexts = [readFileSync(join(dir, 'shards', 'shard-1-of-2.json'), 'utf8'), readFileSync(join(dir, 'shards', 'shard-2-of-2.json'), 'utf8')];
  current = readBaseline(join(dir, 'baseline.json'));
});

const study = () => join(dir, 'study.yaml');

// ---- mutations ----------------------------------------------------------

/** JSON texts put in place of a value as they are: numbers JSON can write but a double cannot hold, odd spellings, a key named `__proto__`. */
const RAW = ['1e400', '-1e400', '9'.repeat(30), '-0', '1.0', '9223372036854775808', '1E2', '{"__proto__": {"x": 1}, "constructor": 1}', '[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]'];
const HOSTILE: unknown[] = [
  null, true, false, 0, -1, 1, 2, 0.5, -0.5, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, -(2 ** 53),
  '', 'x', '{{7*7}}', '__proto__', 'constructor', '-1', '1e3', 'NaN', 'Infinity', 'a\u001b[2Jb\nc',
  '0.000051300000', '-0.000051300000', '9999999999999999.000000000000', 'full', 'window-turns:turns=2', 'noah-amnesia', 'gpt-4o-mini', 'name@5', 'name@0',
  [], {}, [1], ['x'], { a: 1 },
  { $pico: '-1' }, { $pico: '1e3' }, { $pico: '9'.repeat(28) }, { $pico: 1 }, { $pico: '5', x: 1 }, { $pico: '' }, { $pico: '0' },
  ...RAW.map((_r, raw) => ({ raw })),
];
const KEYS = ['__proto__', 'constructor', 'extra', 'costMicroUsd', 'totalCost', 'answered', 'lost', 'model', 'calls', '$pico'];
const CHARS = ['{', '}', '[', ']', ',', ':', '"', '\\', '\n', 'x', '1', '-', '.', 'e', '\u0000', '\ufeff', ' '];

type Path = (string | number)[];

/** Every place in a value: the root, then each key and item, depth first. */
function paths(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}

type Mutation =
  | { kind: 'replace'; at: number; value: number }
  | { kind: 'nudge'; at: number; how: number }
  | { kind: 'remove'; at: number }
  | { kind: 'repeat'; at: number }
  | { kind: 'add'; at: number; key: number; value: number }
  | { kind: 'cut'; at: number }
  | { kind: 'insert'; at: number; char: number }
  | { kind: 'delete'; at: number };

const index = fc.nat({ max: 1_000_000 });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: index, value: fc.nat({ max: HOSTILE.length - 1 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('nudge' as const), at: index, how: fc.nat({ max: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: index }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('repeat' as const), at: index }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), at: index, key: fc.nat({ max: KEYS.length - 1 }), value: fc.nat({ max: HOSTILE.length - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: index }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: index, char: fc.nat({ max: CHARS.length - 1 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: index }) },
);

/** A number or string nudged: the value a careless or a hostile edit makes of it. */
function nudged(v: unknown, how: number): unknown {
  if (typeof v === 'number') return [v + 1, v - 1, -v - 1, v * 1e6 + 0.5, v + 0.5, v * 2 ** 60][how];
  if (typeof v === 'string') return [`${v}x`, '', v.toUpperCase(), ` ${v}`, v.slice(1), `-${v}`][how];
  if (typeof v === 'boolean') return !v;
  return HOSTILE[how];
}

/** `text` (JSON; `pretty`: written over several lines, as a baseline is) with one mutation. */
function mutate(text: string, m: Mutation, pretty: boolean): string {
  if (m.kind === 'cut') return text.slice(0, m.at % text.length);
  if (m.kind === 'insert') return text.slice(0, m.at % text.length) + CHARS[m.char]! + text.slice(m.at % text.length);
  if (m.kind === 'delete') return text.slice(0, m.at % text.length) + text.slice((m.at % text.length) + 1);
  const root = JSON.parse(text) as unknown;
  const all = paths(root);
  const at = all[m.at % all.length]!;
  const parentOf = (p: Path) => p.slice(0, -1).reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], root) as Record<string | number, unknown>;
  const last = at[at.length - 1];
  let out: unknown = root;
  const put = (v: unknown) => {
    if (at.length === 0) out = v;
    else parentOf(at)[last!] = v;
  };
  const here = at.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], root);
  switch (m.kind) {
    case 'replace':
      put(structuredClone(HOSTILE[m.value]));
      break;
    case 'nudge':
      put(nudged(here, m.how));
      break;
    case 'remove':
      if (at.length === 0) out = {};
      else if (Array.isArray(parentOf(at))) (parentOf(at) as unknown as unknown[]).splice(last as number, 1);
      else delete parentOf(at)[last!];
      break;
    case 'repeat':
      if (at.length && Array.isArray(parentOf(at))) (parentOf(at) as unknown as unknown[]).push(structuredClone(here));
      else put([here, here]);
      break;
    case 'add':
      if (here && typeof here === 'object' && !Array.isArray(here)) Object.defineProperty(here, KEYS[m.key]!, { value: structuredClone(HOSTILE[m.value]), enumerable: true, configurable: true, writable: true });
      else put({ [KEYS[m.key]!]: here });
      break;
  }
  // A `{raw}` value is written as its text: what no value built here can be written as.
  return JSON.stringify(out, null, pretty ? 2 : undefined).replace(/\{\s*"raw":\s*(\d+)\s*\}/g, (_m, i: string) => RAW[Number(i)]!);
}

// ---- what a refusal and an acceptance must be ------------------------------

/** Every line of a refusal names the file and a line:col, then the field's path if any (or says how many more problems there are): these files are small enough to be placed. */
function expectLocated(e: unknown, files: readonly string[]): void {
  if (!(e instanceof CtxsimError)) throw e;
  const lines = e.message.split('\n');
  if (lines.some((l) => l.includes('invalid JSON'))) {
    // A syntax error is one line, at its line and column.
    expect(lines, e.message).toHaveLength(1);
    expect(files.some((f) => new RegExp(`^${escape(f)}:\\d+:\\d+: invalid JSON: .+$`).test(lines[0]!)), lines[0]).toBe(true);
    return;
  }
  for (const l of lines) {
    const located = files.some((f) => {
      const at = `^${escape(f)}`;
      // A path may hold any character a key may (`turns[0]. cachedTokens`).
      return new RegExp(`${at}:\\d+:\\d+( .+)?: .`).test(l) || new RegExp(`${at}: and \\d+ more problems?$`).test(l);
    });
    // A merge of shards that all read may miss one whole: no single file to name.
    expect(located || /^merge: missing shard\(s\) [\d/, ]+$/.test(l), l).toBe(true);
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every number in a value (bigints aside) is a number: no NaN anywhere. */
function expectNoNaN(v: unknown, where: string): void {
  if (typeof v === 'number') expect(Number.isNaN(v), where).toBe(false);
  else if (Array.isArray(v)) v.forEach((x, i) => expectNoNaN(x, `${where}[${i}]`));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) expectNoNaN(x, `${where}.${k}`);
}

const COUNTS = ['inputTokens', 'cachedTokens', 'outputTokens', 'auxTokens', 'probes', 'retained', 'overflowTurns', 'latencyP95Ms'] as const;

/** A baseline read: every count whole and at least 0, retained and answered at most the probes, a finite cost; the gate's comparison and reports have no NaN. */
function expectUsable(b: Baseline): void {
  expect(b.rows.length).toBeGreaterThan(0);
  for (const r of b.rows) {
    for (const k of COUNTS) expect(Number.isSafeInteger(r[k]) && r[k] >= 0, `${k}: ${r[k]}`).toBe(true);
    if (r.answered !== undefined) expect(Number.isSafeInteger(r.answered) && r.answered >= 0 && r.answered <= r.probes).toBe(true);
    expect(r.retained).toBeLessThanOrEqual(r.probes);
    expect(r.cachedTokens).toBeLessThanOrEqual(r.inputTokens);
    expect(Number.isFinite(r.costMicroUsd) && r.costMicroUsd >= 0, String(r.costMicroUsd)).toBe(true);
    for (const k of ['scenario', 'policy', 'model'] as const) expect(typeof r[k]).toBe('string');
  }
  for (const [before, after] of [[b, current], [current, b]] as const) {
    const result = compare(before, after, DEFAULT_LIMITS);
    expectNoNaN(result, 'result');
    for (const report of [gateMarkdown(result), gateJson(result), gateJunit(result)]) expect(report).not.toContain('NaN');
  }
}

// ---- the properties ------------------------------------------------------

describe('mutated baselines', () => {
  it('read by the library: each refused in located lines, or usable by the gate', () => {
    const file = join(dir, 'mutated.json');
    let accepted = 0;
    fc.assert(
      fc.property(mutation, (m) => {
        writeFileSync(file, mutate(baselineText, m, true));
        let b: Baseline;
        try {
          b = readBaseline(file);
        } catch (e) {
          expectLocated(e, [file]);
          return;
        }
        accepted++;
        expectUsable(b);
      }),
      { seed: SEED, numRuns: 400 },
    );
    // Some mutations keep a usable baseline (a count nudged up within its bounds, an unknown key): the property ran on both sides.
    expect(accepted).toBeGreaterThan(10);
  });

  it('through ctxsim check: exit 0, 1 or 2, never a stack trace or an internal error; a refusal is located', async () => {
    const file = join(dir, 'check.json');
    await fc.assert(
      fc.asyncProperty(mutation, async (m) => {
        writeFileSync(file, mutate(baselineText, m, true));
        const io = capture();
        const code = await runMain(['check', study(), '--baseline', file, '--no-token-cache', '--quiet'], io);
        expect([0, 1, 2], io.stderr).toContain(code);
        expect(io.stderr).not.toContain('internal error');
        if (code === 2) expectLocated(new CtxsimError(io.stderr.trimEnd().split('\n').map((l) => l.replace(/^ctxsim: /, '')).join('\n'), 'input'), [file]);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });
});

describe('mutated shard files', () => {
  /** Writes both shards, the one at `which` mutated, into a fresh folder. */
  function shards(m: Mutation, which: 0 | 1): { folder: string; files: string[] } {
    const folder = join(dir, 'fuzz');
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder);
    const files = [join(folder, 'shard-1-of-2.json'), join(folder, 'shard-2-of-2.json')];
    files.forEach((f, i) => writeFileSync(f, i === which ? mutate(shardTexts[i]!, m, false) : shardTexts[i]!));
    return { folder, files };
  }

  it('merged by the library: each refused in located lines, or merged into finite figures', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(mutation, fc.constantFrom(0 as const, 1 as const), async (m, which) => {
        const { folder, files } = shards(m, which);
        let merged;
        try {
          merged = await mergeShardFiles([folder], textSink('md'));
        } catch (e) {
          expectLocated(e, files);
          return;
        }
        accepted++;
        expectNoNaN(merged.summary, 'summary');
        expectNoNaN(merged.policies, 'policies');
        for (const [kind, rows] of [[SUMMARY_RECORD, merged.summary], [POLICY_RECORD, merged.policies]] as const) {
          for (const c of kind.columns.filter((c) => c.kind === 'count')) {
            for (const r of rows as readonly Record<string, unknown>[]) {
              const v = r[c.key];
              if (v !== null) expect(Number.isSafeInteger(v) && (v as number) >= 0, `${kind.name} ${c.key}: ${String(v)}`).toBe(true);
            }
          }
        }
        for (const p of merged.policies) {
          expect(p.retained).toBeLessThanOrEqual(p.probes);
          if (p.retention !== null) expect(p.retention >= 0 && p.retention <= 1, String(p.retention)).toBe(true);
        }
        expect(merged.output).not.toContain('NaN');
      }),
      { seed: SEED, numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(10);
  });

  it('through ctxsim merge: exit 0 or 2, never a stack trace or an internal error; a refusal is located', async () => {
    const out = join(dir, 'merged');
    await fc.assert(
      fc.asyncProperty(mutation, fc.constantFrom(0 as const, 1 as const), async (m, which) => {
        const { folder, files } = shards(m, which);
        rmSync(out, { recursive: true, force: true });
        const io = capture();
        const code = await runMain(['merge', folder, '--out', out, '--quiet'], io);
        expect([0, 2], io.stderr).toContain(code);
        expect(io.stderr).not.toContain('internal error');
        if (code === 2) expectLocated(new CtxsimError(io.stderr.trimEnd().split('\n').map((l) => l.replace(/^ctxsim: /, '')).join('\n'), 'input'), files);
      }),
      { seed: SEED, numRuns: 30 },
    );
  });
});
