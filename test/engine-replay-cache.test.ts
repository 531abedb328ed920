import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runStudy, type RunResults } from '../src/engine/run.js';
import type { RunOptions } from '../src/engine/spec.js';
import { evictStore, storeStats } from '../src/store/store.js';
import { REGISTRY } from '../src/policies/index.js';
import type { PolicyVariant } from '../src/policies/spec.js';
import { policiesFromFlags } from '../src/study/study.js';
import { cache } from '../src/cli/cache.js';
import { UsageError } from '../src/errors.js';
import { builtSince, runBuilt } from './_built.js';
import { capture, cli, expectSameFiles, folder } from './_io.js';
import { conversation } from './_policies.js';
import { priceFile } from './_pricing.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The replay cache: a unit (scenario × model × policy variant) whose inputs
 * did not change is not replayed again, and what the cache gives back is
 * what a replay makes, to the byte.
 */

afterEach(() => delete process.env.SOURCE_DATE_EPOCH);

function chat(id: string, extra = ''): ReturnType<typeof conversation> {
  return conversation({
    id,
    system: 'You are a helpful assistant.',
    turns: [
      { user: `Hi, I am ${id}. My order number is 4411${extra}.`, assistant: 'Noted, thanks.' },
      { user: 'What is the weather like on Mars?', assistant: 'Cold and dusty, about -60 °C.' },
      { user: 'And on Venus?', assistant: 'Hot: over 450 °C at the surface.' },
      { user: 'What was my order number?', assistant: `It is 4411${extra}.` },
    ],
  });
}

const SPECS = ['full', 'window-turns:turns=1', 'summary:threshold=40'];

function options(dir: string | false, over: Partial<RunOptions> = {}): RunOptions {
  return {
    conversations: [chat('a'), chat('b'), chat('c')],
    policies: policiesFromFlags(SPECS),
    seed: 7,
    models: ['gpt-4o-mini'],
    tokenizer: 'chars4',
    cacheFolder: dir,
    ...over,
  };
}

/** What a run produced, without what tells how it ran. */
const records = (r: RunResults) => ({ turns: r.turns, probes: r.probes, summary: r.summary, violations: r.violations, policies: r.policies });

const counts = (r: RunResults) => ({ replayed: r.replayedUnits, cached: r.cachedUnits });

/** Every entry file of a namespace of the cache folder `dir` (`replay/<2 hex>/<key>`, …). */
function entryFiles(dir: string, namespace = 'replay'): string[] {
  const space = join(dir, namespace);
  if (!existsSync(space)) return [];
  return readdirSync(space, { recursive: true, encoding: 'utf8' })
    .filter((f) => /^[0-9a-f]{2}\/[0-9a-f]{64}$/.test(f))
    .map((f) => join(space, f))
    .sort();
}

describe('replay cache (library)', () => {
  it('a rerun replays no unit and gives back the records a replay makes, field for field', () => {
    const dir = tempDir();
    const cold = runStudy(options(dir));
    expect(counts(cold)).toEqual({ replayed: 9, cached: 0 });
    expect(entryFiles(dir)).toHaveLength(9);
    const warm = runStudy(options(dir));
    expect(counts(warm)).toEqual({ replayed: 0, cached: 9 });
    expect(warm.warnings).toEqual([]);
    expect(records(warm)).toStrictEqual(records(cold));
    const none = runStudy(options(false));
    expect(counts(none)).toEqual({ replayed: 9, cached: 0 });
    expect(records(none)).toStrictEqual(records(cold));
  });

  it('a changed scenario replays its units only', () => {
    const dir = tempDir();
    runStudy(options(dir));
    const changed = options(dir, { conversations: [chat('a'), chat('b', '7'), chat('c')] });
    const r = runStudy(changed);
    expect(counts(r)).toEqual({ replayed: 3, cached: 6 });
    expect(records(r)).toStrictEqual(records(runStudy({ ...changed, cacheFolder: false })));
    // Where a scenario was read from is not its content: a moved file replays nothing.
    expect(counts(runStudy(options(dir, { conversations: [{ ...chat('a'), source: 'moved/a.yaml' }] })))).toEqual({ replayed: 0, cached: 3 });
  });

  it('a changed policy parameter replays that variant’s units only', () => {
    const dir = tempDir();
    runStudy(options(dir));
    const changed = options(dir, { policies: policiesFromFlags(['full', 'window-turns:turns=2', 'summary:threshold=40']) });
    const r = runStudy(changed);
    expect(counts(r)).toEqual({ replayed: 3, cached: 6 });
    expect(records(r)).toStrictEqual(records(runStudy({ ...changed, cacheFolder: false })));
  });

  it('a changed policy module (its hash) replays that variant’s units only', () => {
    const dir = tempDir();
    const moduleVariant = (hash: string): PolicyVariant => ({ name: 'keep-all', policy: REGISTRY.get('full')!, params: {}, module: { file: '/policies/keep-all.mjs', hash } });
    const with_ = (hash: string) => options(dir, { policies: [...policiesFromFlags(['window-turns:turns=1']), moduleVariant(hash)] });
    expect(counts(runStudy(with_('1111')))).toEqual({ replayed: 6, cached: 0 });
    expect(counts(runStudy(with_('1111')))).toEqual({ replayed: 0, cached: 6 });
    expect(counts(runStudy(with_('2222')))).toEqual({ replayed: 3, cached: 3 });
  });

  it('a changed file a policy module imports (its imports’ hash) replays that variant’s units only', () => {
    const dir = tempDir();
    const moduleVariant = (imports?: string): PolicyVariant => ({ name: 'keep-all', policy: REGISTRY.get('full')!, params: {}, module: { file: '/policies/keep-all.mjs', hash: '1111', ...(imports && { imports }) } });
    const with_ = (imports?: string) => options(dir, { policies: [...policiesFromFlags(['window-turns:turns=1']), moduleVariant(imports)] });
    expect(counts(runStudy(with_('aaaa')))).toEqual({ replayed: 6, cached: 0 });
    expect(counts(runStudy(with_('aaaa')))).toEqual({ replayed: 0, cached: 6 });
    expect(counts(runStudy(with_('bbbb')))).toEqual({ replayed: 3, cached: 3 });
    // A module that imports nothing keys as its file alone.
    expect(counts(runStudy(with_()))).toEqual({ replayed: 3, cached: 3 });
    expect(counts(runStudy(with_()))).toEqual({ replayed: 0, cached: 6 });
  });

  it('a changed price replays the units of that model only; a model added replays its units only', () => {
    const dir = tempDir();
    const entry = (input: number) => ({ litellm_provider: 'openai', input_cost_per_token: input, output_cost_per_token: 0.000002, max_input_tokens: 100000 });
    const two = (prices: string) => options(dir, { models: ['m-one', 'm-two'], prices });
    expect(counts(runStudy(two(priceFile({ 'm-one': entry(0.000001), 'm-two': entry(0.000003) }))))).toEqual({ replayed: 18, cached: 0 });
    const changed = two(priceFile({ 'm-one': entry(0.000001), 'm-two': entry(0.000005) }));
    const r = runStudy(changed);
    expect(counts(r)).toEqual({ replayed: 9, cached: 9 });
    expect(r.summary.filter((s) => s.model === 'm-two')).toStrictEqual(runStudy({ ...changed, cacheFolder: false }).summary.filter((s) => s.model === 'm-two'));
    const three = runStudy(options(dir, { models: ['m-one', 'm-two', 'gpt-4o-mini'], prices: changed.prices! }));
    expect(counts(three)).toEqual({ replayed: 9, cached: 18 });
  });

  it('a changed seed or tokenizer replays every unit', () => {
    const dir = tempDir();
    runStudy(options(dir));
    expect(counts(runStudy(options(dir, { seed: 8 })))).toEqual({ replayed: 9, cached: 0 });
    expect(counts(runStudy(options(dir, { tokenizer: 'o200k_base' })))).toEqual({ replayed: 9, cached: 0 });
  });

  it('a damaged entry is replayed again with a warning, and replaced', () => {
    const dir = tempDir();
    const cold = runStudy(options(dir));
    const [first, second, third] = entryFiles(dir);
    const bytes = readFileSync(first!);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0xff;
    writeFileSync(first!, bytes);
    writeFileSync(second!, readFileSync(second!).subarray(0, 50));
    writeFileSync(third!, 'not an entry');
    const r = runStudy(options(dir));
    expect(counts(r)).toEqual({ replayed: 3, cached: 6 });
    expect(r.warnings).toHaveLength(3);
    expect(r.warnings.join('\n')).toMatch(/replay cache entry .* is damaged \(checksum mismatch\); replaying its unit again/);
    expect(r.warnings.join('\n')).toMatch(/damaged \(not a ctxsim cache entry\)/);
    expect(records(r)).toStrictEqual(records(cold));
    const again = runStudy(options(dir));
    expect(counts(again)).toEqual({ replayed: 0, cached: 9 });
    expect(again.warnings).toEqual([]);
  });

  it('past its size bound the cache drops the least recently used entries', () => {
    const dir = tempDir();
    runStudy(options(dir));
    const old = new Date('2001-01-01T00:00:00Z');
    // Every entry made long ago: the nine units' and the simulated summary's readings.
    const made = [...entryFiles(dir), ...entryFiles(dir, 'readings')];
    expect(made).toHaveLength(10);
    for (const f of made) utimesSync(f, old, old);
    // A rerun of one scenario uses (and so touches) its three entries, and reads no text.
    expect(counts(runStudy(options(dir, { conversations: [chat('b')] })))).toEqual({ replayed: 0, cached: 3 });
    const recent = entryFiles(dir).filter((f) => statSync(f).mtimeMs > old.getTime());
    expect(recent).toHaveLength(3);
    const bound = recent.reduce((n, f) => n + statSync(f).size, 0);
    expect(evictStore(dir, bound)).toBe(7);
    expect(entryFiles(dir)).toEqual(recent);
    expect(entryFiles(dir, 'readings')).toEqual([]);
    expect(storeStats(dir).total).toEqual({ entries: 3, bytes: bound });
    // A run with a bound of 0 keeps nothing.
    runStudy(options(dir, { cacheMaxBytes: 0 }));
    expect(storeStats(dir).total).toEqual({ entries: 0, bytes: 0 });
  });
});

const built = builtSince('engine/replay-cache.ts');

describe('replay cache (command line)', () => {
  const scenarios = ['--scenario', join(ROOT, 'scenarios', 'noah-amnesia.yaml'), '--scenario', join(ROOT, 'scenarios', 'kavya-late-order.yaml')];
  const policies = ['--policy', 'full', '--policy', 'window-turns:turns=2', '--policy', 'summary'];
  const common = [...scenarios, ...policies, '--tokenizer', 'chars4', '--quiet'];

  it('a rerun says on stderr how much the cache served', async () => {
    const dir = tempDir();
    const args = [...scenarios, ...policies, '--tokenizer', 'chars4', '--token-cache', join(dir, 'cache')];
    expect((await cli('run', ...args, '--out', join(dir, 'a'))).err).not.toContain('replay cache:');
    // Two scenarios × three policies on one model: six units.
    expect((await cli('run', ...args, '--out', join(dir, 'b'))).err).toContain('replay cache: 6 of 6 units served, 0 replayed\n');
  });

  it(`a rerun writes the bytes of a cold run, on one thread, two${built ? '' : ' (skipped: dist/ is missing or stale)'} and in shards`, async () => {
    process.env.SOURCE_DATE_EPOCH = '1700000000';
    const dir = tempDir();
    const cache = join(dir, 'cache');
    const run = (out: string, ...more: string[]) => cli('run', ...common, '--token-cache', cache, '--out', join(dir, out), ...more);
    expect((await cli('run', ...common, '--no-token-cache', '--out', join(dir, 'nocache'), '--jobs', '1')).code).toBe(0);
    const expected = folder(join(dir, 'nocache'));
    expect(existsSync(cache)).toBe(false);
    expect((await run('cold', '--jobs', '1')).code).toBe(0);
    // Six units, and the report's five charts.
    expect([entryFiles(cache).length, entryFiles(cache, 'charts').length]).toEqual([6, 5]);
    expectSameFiles(join(dir, 'cold'), expected);
    expect((await run('warm', '--jobs', '1')).code).toBe(0);
    expectSameFiles(join(dir, 'warm'), expected);
    if (built) {
      // Two worker threads, from an empty cache and then from a full one.
      const other = join(dir, 'cache2');
      const inodes = () => [...entryFiles(other), ...entryFiles(other, 'charts')].map((f) => statSync(f).ino);
      let before: number[] = [];
      for (const out of ['jobs-cold', 'jobs-warm']) {
        expect((await runBuilt(['run', ...common, '--token-cache', other, '--out', join(dir, out), '--jobs', '2'])).code).toBe(0);
        expectSameFiles(join(dir, out), expected);
        if (out === 'jobs-cold') before = inodes();
      }
      // The warm run rewrote no entry: every unit and chart came from the cache; nor does a run on one thread.
      expect(before).toHaveLength(11);
      expect(inodes()).toEqual(before);
      expect((await runBuilt(['run', ...common, '--token-cache', other, '--out', join(dir, 'one-warm'), '--jobs', '1'])).code).toBe(0);
      expectSameFiles(join(dir, 'one-warm'), expected);
      expect(inodes()).toEqual(before);
    }
    for (const k of [1, 2]) expect((await run(`p${k}`, '--shard', `${k}/2`)).code).toBe(0);
    expect((await cli('merge', join(dir, 'p1'), join(dir, 'p2'), '--out', join(dir, 'merged'), '--quiet')).code).toBe(0);
    expectSameFiles(join(dir, 'merged'), expected);
    expect([entryFiles(cache).length, entryFiles(cache, 'charts').length]).toEqual([6, 5]);
  });

  it('--no-token-cache (and its old name --no-cache) use no cache', async () => {
    const dir = tempDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect((await cli('run', ...common, '--no-token-cache', '--out', join(dir, 'a'))).code).toBe(0);
      expect((await cli('run', ...common, '--no-cache', '--out', join(dir, 'b'))).code).toBe(0);
      expect(existsSync(join(dir, '.ctxsim-cache'))).toBe(false);
    } finally {
      process.chdir(cwd);
    }
  });

  it('`cache info` shows what the cache holds; `cache clear` empties it', async () => {
    const dir = tempDir();
    const cache = join(dir, 'cache');
    expect((await cli('run', ...common, '--token-cache', cache, '--out', join(dir, 'a'))).code).toBe(0);
    const info = await cli('cache', 'info', '--token-cache', cache);
    expect(info.code).toBe(0);
    // Six units and the five charts of the report (chars4 keeps no token counts).
    const bytes = (ns: string) => entryFiles(cache, ns).reduce((n, f) => n + statSync(f).size, 0);
    const [units, charts] = [bytes('replay'), bytes('charts')];
    const kB = (n: number) => `${(n / 1000).toFixed(1)} kB`;
    expect(info.out).toBe(
      [
        `cache folder: ${cache}`,
        `replay/ (replayed units): 6 entries, ${kB(units)}`,
        `charts/ (rendered charts): 5 entries, ${kB(charts)}`,
        `tokens/ (token counts): 0 entries, 0 B`,
        `readings/ (texts read): 0 entries, 0 B`,
        `in all: 11 entries, ${kB(units + charts)} (bound 1.0 GB, least recently used removed past it)`,
        '',
      ].join('\n'),
    );
    const clear = await cli('cache', 'clear', '--token-cache', cache);
    expect(clear.code).toBe(0);
    expect(clear.out).toBe(
      [`cleared ${cache}: 11 entries, ${kB(units + charts)}`, `  replay/ (replayed units): 6 entries, ${kB(units)}`, `  charts/ (rendered charts): 5 entries, ${kB(charts)}`, `  tokens/ (token counts): 0 entries, 0 B`, `  readings/ (texts read): 0 entries, 0 B`, ''].join('\n'),
    );
    expect(readdirSync(cache)).toEqual([]);
    expect((await cli('cache', 'info', '--token-cache', cache)).out).toMatch(/\nin all: 0 entries, 0 B \(bound/);
    expect((await cli('cache', 'nothing')).code).toBe(2);
  });

  it('the library `cache` clears only for the action clear: an unknown one is refused', async () => {
    const dir = tempDir();
    const cacheDir = join(dir, 'cache');
    expect((await cli('run', ...common, '--token-cache', cacheDir, '--out', join(dir, 'a'))).code).toBe(0);
    const before = entryFiles(cacheDir);
    expect(() => cache({ action: 'wipe', tokenCache: cacheDir }, capture())).toThrow(new UsageError('cache: "wipe" is not one of "info", "clear"'));
    expect(entryFiles(cacheDir)).toEqual(before);
  });
});
