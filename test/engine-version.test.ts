import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../src/engine/replay-cache.js';
import type { RunSpec } from '../src/engine/spec.js';
import { DEFAULT_PROMPTS } from '../src/upkeep/prompts.js';
import { replayContexts, runStudy } from '../src/engine/run.js';
import { ENGINE_VERSION, engineId, GOLDEN_HASHES } from '../src/engine/version.js';
import { POLICIES } from '../src/policies/index.js';
import { policiesCsv, probesCsv, summaryCsv, turnsCsv, violationsCsv } from '../src/records/csv.js';
import { loadScenarios, policiesFromFlags } from '../src/study/study.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The replay cache's keys hold ctxsim's version and ENGINE_VERSION, not a
 * hash of its files: this test is what keeps that honest. It hashes the
 * engine's golden outputs — the records of every built-in policy (its
 * defaults) on the shipped scenarios, with prices pinned here, once with the
 * default settings and chars4 counts and once with every other setting of
 * the spec (SETTINGS), and the record hashes the benchmark wrote
 * (bench/*.md) — and holds
 * them to the last of GOLDEN_HASHES, whose count is ENGINE_VERSION. Records that
 * change fail it until the version is bumped.
 */

/** Prices pinned here, so a refreshed builtin table does not move the hash (prices are in the key anyway). */
const PRICES = {
  'gpt-4o-mini': { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: 1.5e-7, output_cost_per_token: 6e-7, cache_read_input_token_cost: 7.5e-8, max_input_tokens: 128000 },
  'text-embedding-3-small': { litellm_provider: 'openai', mode: 'embedding', input_cost_per_token: 2e-8, output_cost_per_token: 0, max_input_tokens: 8191 },
  'claude-haiku-4-5': {
    litellm_provider: 'anthropic',
    mode: 'chat',
    input_cost_per_token: 1e-6,
    output_cost_per_token: 5e-6,
    cache_read_input_token_cost: 1e-7,
    cache_creation_input_token_cost: 1.25e-6,
    max_input_tokens: 200000,
  },
};

/**
 * The second golden run: the settings the first leaves at their defaults, so
 * that what the engine does with them is held too — an explicit cache with
 * its breakpoints and TTL, routing, fallback, latency, another rule set, tool
 * definitions, upkeep prompts, a real tokenizer.
 */
const SETTINGS = {
  models: ['claude-haiku-4-5'],
  tokenizer: 'o200k_base',
  promptCacheTtl: 600,
  cacheBreakpoint: 'turn',
  route: { light: 'gpt-4o-mini', strong: 'claude-haiku-4-5', strongWhen: { userTokensOver: 40 } },
  fallback: { model: 'gpt-4o-mini', rate: 0.2 },
  latency: { 'claude-haiku-4-5': { ttftMs: 300, prefillTps: 4000, decodeTps: 90 } },
  messageRules: 'anthropic',
  toolDefs: [{ name: 'lookup_order', description: 'Find an order by its number', parameters: { type: 'object', properties: { order: { type: 'string' } } } }],
  upkeep: { prompts: { ...DEFAULT_PROMPTS, summary: 'Summarize the conversation so far in about {summaryTokens} tokens.' } },
} as const satisfies Partial<RunSpec>;

/** The record-file hash lines of the committed benchmark results (`- \`turns.csv\` <sha256>`). */
function benchHashes(): string {
  return ['bench/results-quick.md', 'bench/results.md']
    .filter((f) => existsSync(join(ROOT, f)))
    .flatMap((f) => readFileSync(join(ROOT, f), 'utf8').split('\n').filter((l) => /^- `[a-z]+\.(csv|json)` [0-9a-f]{64}$/.test(l)).map((l) => `${f} ${l}`))
    .join('\n');
}

describe('ENGINE_VERSION', () => {
  it('moves when the golden outputs do', () => {
    const file = join(tempDir(), 'prices.json');
    writeFileSync(file, JSON.stringify(PRICES));
    const run = (settings: Partial<RunSpec>) =>
      runStudy({
        conversations: loadScenarios([{ kind: 'glob', pattern: 'scenarios/*.yaml', base: ROOT }]),
        policies: policiesFromFlags(POLICIES.map((p) => p.id)),
        seed: 42,
        models: ['gpt-4o-mini'],
        tokenizer: 'chars4',
        prices: file,
        ...settings,
      });
    const hash = createHash('sha256');
    for (const r of [run({}), run(SETTINGS)]) {
      expect(r.turns.length).toBeGreaterThan(1000);
      for (const text of [turnsCsv(r), probesCsv(r), summaryCsv(r), violationsCsv(r), policiesCsv(r)]) hash.update(text).update('\0');
    }
    hash.update(benchHashes());
    const golden = hash.digest('hex');
    if (golden !== GOLDEN_HASHES.at(-1)) {
      throw new Error(
        `golden outputs changed: append '${golden}' to GOLDEN_HASHES in src/engine/version.ts (ENGINE_VERSION becomes ${ENGINE_VERSION + 1}) ` +
          '(so that the replay cache serves no records made before the change)',
      );
    }
  });

  it('is all of ctxsim’s code a replay key holds: its version and the engine’s', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(engineId()).toBe(`ctxsim@${version} engine@${ENGINE_VERSION}`);
    // A unit's key follows the code id given.
    const [ctx] = replayContexts({ seed: 1, models: ['gpt-4o-mini'], tokenizer: 'chars4' });
    const [variant] = policiesFromFlags(['full']);
    const key = (cache: ReplayCache) => cache.unitKey('c0ffee', variant!, ctx!, { seed: 1 });
    const dir = tempDir();
    expect(key(new ReplayCache(dir, 'ctxsim@0.1.0 engine@999'))).not.toBe(key(new ReplayCache(dir)));
  });

  const built = existsSync(join(ROOT, 'dist', 'engine', 'version.js')) && statSync(join(ROOT, 'dist', 'engine', 'version.js')).mtimeMs >= statSync(join(ROOT, 'src', 'engine', 'version.ts')).mtimeMs;

  it.skipIf(!built)('an edited file keeps the key — a reporter, the CLI, even the engine, for which ENGINE_VERSION speaks (dist/ copied and edited)', () => {
    const copy = join(tempDir(), 'ctxsim');
    cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const idOf = (root: string) => execFileSync(process.execPath, ['--input-type=module', '-e', `import(${JSON.stringify(join(root, 'dist', 'engine', 'version.js'))}).then((m) => process.stdout.write(m.engineId()))`], { encoding: 'utf8' });
    const before = idOf(copy);
    for (const f of ['report/markdown.js', 'cli/main.js', 'engine/run.js']) appendFileSync(join(copy, 'dist', f), '\n// edited\n');
    expect(idOf(copy)).toBe(before);
    expect(before).toBe(engineId());
  });
});
