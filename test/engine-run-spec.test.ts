import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../src/engine/replay-cache.js';
import { replayContext, replayContexts, runStudy, type RunResults, type UnitContext } from '../src/engine/run.js';
import { runStudyParallel } from '../src/engine/parallel.js';
import { RUN_SPEC_KEYS, RUN_UPKEEP, runSpecOf, type Execution, type RunOptions, type RunSpec, type RunUpkeep } from '../src/engine/spec.js';
import { UsageError } from '../src/errors.js';
import { storeStats } from '../src/store/store.js';
import { policiesFromFlags } from '../src/study/study.js';
import { Cassette } from '../src/upkeep/cassette.js';
import { DEFAULT_PROMPTS } from '../src/upkeep/prompts.js';
import { writeFileAtomic } from '../src/output/files.js';
import { displayPath } from '../src/output/display.js';
import { recordEncoder } from '../src/output/record-encoder.js';
import { defaultUpkeep, studyUpkeep } from '../src/recording/upkeep.js';
import { conversation } from './_policies.js';
import { priceFile } from './_pricing.js';
import { tempDir } from './_tmp.js';

/**
 * A run is its work, its `RunSpec` and its `Execution`: every setting of
 * the spec keys the replay cache (a run that changes it replays every unit
 * again), and no setting of the execution does (a run that changes them all
 * replays nothing and gives back the same records).
 */

const chat = (id: string) =>
  conversation({
    id,
    system: 'You are a helpful assistant.',
    turns: [
      { user: `Hi, I am ${id}. My order number is 4411.`, assistant: 'Noted, thanks.' },
      { user: 'What is the weather like on Mars? Tell me everything you know about it.', assistant: 'Cold and dusty, about -60 °C.' },
      { user: 'And on Venus?', assistant: 'Hot: over 450 °C at the surface.' },
    ],
  });

const BASE: RunSpec = { seed: 7, models: ['gpt-4o-mini'], tokenizer: 'chars4' };
const UNITS = 4; // 2 conversations × 2 policies × 1 model

function options(dir: string, over: Partial<RunOptions> = {}): RunOptions {
  return { conversations: [chat('a'), chat('b')], policies: policiesFromFlags(['full', 'window-turns:turns=1']), ...BASE, cacheFolder: dir, ...over };
}

const counts = (r: RunResults) => ({ replayed: r.replayedUnits, cached: r.cachedUnits });
/** The keys of the replayed units kept in the cache folder `dir`. */
const replayKeys = (dir: string) => readdirSync(join(dir, 'replay'), { recursive: true, encoding: 'utf8' }).filter((f) => /[0-9a-f]{64}$/.test(f)).sort();
const records = (r: RunResults) => ({ turns: r.turns, probes: r.probes, summary: r.summary, violations: r.violations });

const price = (input: number) => ({ litellm_provider: 'openai', input_cost_per_token: input, output_cost_per_token: 0.0000006, max_input_tokens: 128000 });

/** A change of every setting of the spec; typed, so a setting added to `RUN_SPEC` cannot be left out. */
const SPEC_CHANGES: { [K in keyof RunSpec]-?: () => Exclude<RunSpec[K], undefined> } = {
  seed: () => 8,
  models: () => ['gpt-4.1-mini'],
  tokenizer: () => 'o200k_base',
  tokenFactor: () => 1.1,
  prices: () => priceFile({ 'gpt-4o-mini': price(0.0000002) }),
  promptCache: () => 'off',
  promptCacheTtl: () => 600,
  cacheBreakpoint: () => 'turn',
  coldStart: () => true,
  route: () => ({ light: 'gpt-4o-mini', strong: 'gpt-4.1', strongWhen: { userTokensOver: 12 } }),
  fallback: () => ({ model: 'gpt-4.1-mini', rate: 0.2 }),
  latency: () => ({ 'gpt-4o-mini': { ttftMs: 123 } }),
  messageRules: () => 'anthropic',
  toolDefs: () => [{ name: 'lookup_order', description: 'Find an order by its number' }],
  upkeep: () => ({ prompts: { ...DEFAULT_PROMPTS, summary: 'Summarize in {summaryTokens} tokens.' } }),
};

/** A change of every setting of the spec's upkeep, over a recorded upkeep (answers and the judge need one). */
const UPKEEP_CHANGES: { [K in keyof RunUpkeep]-?: () => RunUpkeep } = {
  prompts: () => ({ recorded: { entries: [] }, prompts: { ...DEFAULT_PROMPTS, extract: 'List the facts.' } }),
  recorded: () => ({ recorded: { entries: [{ key: 'k', kind: 'summary', model: 'gpt-4o-mini', text: 'a summary', usage: { input: 10, output: 2 } }] } }),
  answers: () => ({ recorded: { entries: [] }, answers: true }),
  judge: () => ({ recorded: { entries: [] }, answers: true, judge: 'gpt-4o' }),
};

/**
 * A change of every setting of the execution. The cache folder stays, and so
 * do its replays: it is where the keys are looked up (another folder, or
 * `cacheReplays: false`, replays every unit: see below).
 */
const EXECUTION_CHANGES = (dir: string): { [K in keyof Execution]-?: Exclude<Execution[K], undefined> } => ({
  shard: { index: 1, count: 1 },
  onProgress: () => {},
  cacheFolder: dir,
  cacheReplays: true,
  cacheMaxBytes: 10_000_000_000,
  jobs: 2,
  policyTimeout: 3,
  policyMemory: 256,
  encoder: recordEncoder(['turns', 'probes', 'violations']),
  cassette: { file: 'elsewhere.jsonl', recordCommand: 'ctxsim run other.yaml --upkeep record' },
});

describe('RunSpec and Execution', () => {
  it('the changes below cover every setting of the spec and of its upkeep', () => {
    expect(Object.keys(SPEC_CHANGES).sort()).toEqual([...RUN_SPEC_KEYS].sort());
    expect(Object.keys(UPKEEP_CHANGES).sort()).toEqual(Object.keys(RUN_UPKEEP.shape).sort());
  });

  it('changing any setting of the spec replays every unit again', () => {
    const dir = tempDir();
    expect(counts(runStudy(options(dir)))).toEqual({ replayed: UNITS, cached: 0 });
    for (const key of RUN_SPEC_KEYS) {
      const r = runStudy(options(dir, { [key]: SPEC_CHANGES[key]() }));
      expect(counts(r), key).toEqual({ replayed: UNITS, cached: 0 });
    }
    // …and each setting of its upkeep, from a run with a recorded upkeep of no responses.
    const recorded = { upkeep: { recorded: { entries: [] } } };
    expect(counts(runStudy(options(dir, recorded)))).toEqual({ replayed: UNITS, cached: 0 });
    for (const [key, upkeep] of Object.entries(UPKEEP_CHANGES)) {
      expect(counts(runStudy(options(dir, { upkeep: upkeep() }))), `upkeep.${key}`).toEqual({ replayed: UNITS, cached: 0 });
    }
    // …and a value inside a setting, its models the same: the prices a unit keys by would not tell.
    const routed = { route: SPEC_CHANGES.route(), fallback: SPEC_CHANGES.fallback() };
    expect(counts(runStudy(options(dir, routed)))).toEqual({ replayed: UNITS, cached: 0 });
    const inside = { 'fallback.rate': { fallback: { ...routed.fallback, rate: 0.5 } }, 'route.strongWhen': { route: { ...routed.route, strongWhen: { userTokensOver: 1 } } } };
    for (const [what, over] of Object.entries(inside)) expect(counts(runStudy(options(dir, { ...routed, ...over }))), what).toEqual({ replayed: UNITS, cached: 0 });
    // The baseline is still there: nothing above replaced its units.
    expect(counts(runStudy(options(dir)))).toEqual({ replayed: 0, cached: UNITS });
  });

  it('what this machine counts with keys a unit too: the token counter’s id (tokenizer files, libraries, Unicode version)', () => {
    const [ctx] = replayContexts(runSpecOf({ ...BASE, tokenizer: 'o200k_base' })) as [UnitContext];
    const cache = new ReplayCache(tempDir());
    const [variant] = policiesFromFlags(['full']);
    const key = (c: UnitContext) => cache.unitKey('conversation', variant!, c, c.unitSpec);
    expect(ctx.tokens.id).toMatch(/^o200k_base js-tiktoken@\S+ bounded@\d+ unicode@/);
    const elsewhere = Object.assign(Object.create(ctx.tokens) as typeof ctx.tokens, { id: ctx.tokens.id.replace(/unicode@\S+/, 'unicode@99.0') });
    expect(key({ ...ctx, tokens: elsewhere })).not.toBe(key(ctx));
    expect(key({ ...ctx })).toBe(key(ctx));
  });

  it('a setting given as its default is the same spec: the same key', () => {
    const dir = tempDir();
    runStudy(options(dir));
    expect(counts(runStudy(options(dir, { prices: 'builtin', promptCache: 'auto' })))).toEqual({ replayed: 0, cached: UNITS });
    // Nor are the settings by model of a model no call of a unit goes to (another chat model's latency, or token factor).
    expect(counts(runStudy(options(dir, { latency: { 'gpt-4.1': { ttftMs: 900 } }, tokenFactor: { 'gpt-4.1': 1.2 } })))).toEqual({ replayed: 0, cached: UNITS });
    // A price of a model no unit can use is not part of its key.
    expect(counts(runStudy(options(dir, { prices: priceFile({ 'some-other-model': price(0.000009) }) })))).toEqual({ replayed: 0, cached: UNITS });
  });

  it('changing every setting of the execution replays nothing and gives back the same records', () => {
    const dir = tempDir();
    const cold = runStudy(options(dir));
    const all = EXECUTION_CHANGES(dir);
    const warm = runStudy(options(dir, all));
    expect(counts(warm)).toEqual({ replayed: 0, cached: UNITS });
    expect(records(warm)).toStrictEqual(records(cold));
    for (const [key, value] of Object.entries(all)) expect(counts(runStudy(options(dir, { [key]: value }))), key).toEqual({ replayed: 0, cached: UNITS });
  });

  it('another cache folder replays every unit into the same records, kept under the same keys', () => {
    const dir = tempDir();
    const cold = runStudy(options(dir));
    const other = tempDir();
    const moved = runStudy(options(other));
    expect(counts(moved)).toEqual({ replayed: UNITS, cached: 0 });
    expect(records(moved)).toStrictEqual(records(cold));
    expect(replayKeys(other)).toHaveLength(UNITS);
    expect(replayKeys(other)).toEqual(replayKeys(dir));
  });

  it('cacheReplays: false replays every unit into the same records and keeps only token counts in the folder', () => {
    const dir = tempDir();
    const counted = { tokenizer: 'o200k_base' } as const;
    const cold = runStudy(options(dir, { ...counted, cacheReplays: false }));
    expect(counts(cold)).toEqual({ replayed: UNITS, cached: 0 });
    expect(storeStats(dir).namespaces).toMatchObject({ replay: { entries: 0 }, tokens: { entries: 1 } });
    const warm = runStudy(options(dir, { ...counted, cacheReplays: false }));
    expect(counts(warm)).toEqual({ replayed: UNITS, cached: 0 });
    expect(warm.tokenizerCalls).toBe(0);
    expect(records(warm)).toStrictEqual(records(cold));
    // The replays kept by a run that caches them are the same records.
    expect(records(runStudy(options(dir, counted)))).toStrictEqual(records(cold));
    expect(counts(runStudy(options(dir, counted)))).toEqual({ replayed: 0, cached: UNITS });
  });

  it('a library caller’s setting that does not hold is one usage error naming it and its value', () => {
    const fails = (over: Partial<RunSpec>) => () => runSpecOf({ ...BASE, ...over } as RunSpec);
    expect(fails({ seed: 1.5 })).toThrow(new UsageError('run settings: seed: Invalid input: expected int, received number (got 1.5)'));
    expect(fails({ promptCache: 'sometimes' as 'off' })).toThrow(/^run settings: promptCache: .*"auto".*"off".* \(got sometimes\)$/);
    expect(fails({ upkeep: { prompts: DEFAULT_PROMPTS, answer: true } as RunUpkeep })).toThrow(/^run settings: upkeep: Unrecognized key: "answer" \(got \{"prompts":.*\)$/);
    expect(fails({ models: [] })).toThrow(new UsageError('run settings: models: no chat model given (got [])'));
    expect(fails({ models: ['gpt-4o', 'gpt-4o-mini', 'gpt-4o'] })).toThrow(new UsageError('run settings: models[2]: model gpt-4o is listed twice (also models[0]) (got gpt-4o)'));
    // One model's context is checked the same way.
    expect(() => replayContext({ seed: 7, tokenizer: 'chars4', model: 'gpt-4o-mini', promptCacheTtl: -5 })).toThrow(new UsageError('run settings: promptCacheTtl: Too small: expected number to be >0 (got -5)'));
    expect(() => replayContext({ seed: 7, tokenizer: 'chars4', model: 'gpt-4o-mini', fallback: { model: 'gpt-4o', rate: 2 } })).toThrow(/^run settings: fallback\.rate: .* \(got 2\)$/);
  });

  it('a shard outside 1 ≤ index ≤ count is one usage error naming it, before anything runs (it would run no unit at all)', async () => {
    const dir = tempDir();
    const bad = (shard: Execution['shard']) => new UsageError(`run options: shard: expected whole numbers with 1 ≤ index ≤ count, got ${JSON.stringify(shard)}`);
    for (const shard of [{ index: 0, count: 2 }, { index: 3, count: 2 }, { index: 1, count: 0 }, { index: 1.5, count: 2 }]) {
      expect(() => runStudy(options(dir, { shard }))).toThrow(bad(shard));
      await expect(runStudyParallel({ ...options(dir, { shard }), jobs: 2 })).rejects.toThrow(bad(shard));
    }
    expect(counts(runStudy(options(dir, { shard: { index: 2, count: 2 } })))).toEqual({ replayed: UNITS / 2, cached: 0 });
  });

  it('a study’s upkeep settings are not a run’s: the error says how to make them one, and studyUpkeep does', async () => {
    const dir = tempDir();
    const study = { ...BASE, models: ['gpt-4o-mini'], prices: 'builtin', policies: [], upkeepSource: { ...defaultUpkeep(dir), prompts: { ...DEFAULT_PROMPTS, summary: 'Sum up in {summaryTokens} tokens.' } } };
    expect(() => runStudy(options(dir, study as Partial<RunOptions>))).toThrow(/^run settings: upkeep: a study’s upkeep settings \(its mode, endpoint and cassette\) are not a run’s: give the run `...await studyUpkeep\(study, conversations\)`/);
    // …and so is the study's given as the run's.
    expect(() => runStudy(options(dir, { upkeep: study.upkeepSource } as Partial<RunOptions>))).toThrow(/^run settings: upkeep: a study’s upkeep settings/);
    const upkeep = await studyUpkeep(study, [], displayPath);
    expect(upkeep).toEqual({ upkeep: { prompts: study.upkeepSource.prompts } });
    expect(counts(runStudy(options(dir, { upkeepSource: study.upkeepSource, ...upkeep } as Partial<RunOptions>)))).toEqual({ replayed: UNITS, cached: 0 });
    expect(counts(runStudy(options(dir, { upkeep: SPEC_CHANGES.upkeep() })))).toEqual({ replayed: UNITS, cached: 0 });
  });

  it('a recorded upkeep keys a unit by its cassette file’s SHA-256, not by its text: the key never holds a string as large as the cassette', () => {
    const entries = [
      { key: 'b'.repeat(32), kind: 'summary' as const, model: 'gpt-4o-mini', text: 'née à Zürich', usage: { input: 10, output: 2 } },
      { key: 'a'.repeat(32), kind: 'summary' as const, model: 'gpt-4o-mini', text: 'a summary', usage: { input: 9, output: 2 } },
    ];
    const [ctx] = replayContexts(runSpecOf({ ...BASE, upkeep: { recorded: { entries } } }));
    // The file a recording writes: one line per entry, in key order.
    const file = join(tempDir(), 'upkeep.cassette.jsonl');
    writeFileAtomic(file, new Cassette(entries).lines());
    expect(ctx!.unitSpec.upkeep).toEqual({ recorded: { sha256: createHash('sha256').update(readFileSync(file)).digest('hex') } });
  });

  it('the canonical spec has the defaults, in schema order, and keeps the values given as they are', () => {
    const tool = { name: 't', parameters: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } };
    const spec = runSpecOf({ toolDefs: [tool], ...BASE });
    expect(Object.keys(spec)).toEqual(['seed', 'models', 'tokenizer', 'prices', 'promptCache', 'toolDefs']);
    expect(spec).toMatchObject({ prices: 'builtin', promptCache: 'auto' });
    expect(Object.keys(spec.toolDefs![0]!.parameters!)).toEqual(['type', 'properties', 'required']);
    expect(spec.toolDefs![0]).toBe(tool);
  });
});
