import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../src/engine/replay-cache.js';
import { replay } from '../src/engine/replay.js';
import { runSpecOf, type RunSpec } from '../src/engine/spec.js';
import type { PolicyVariant } from '../src/policies/spec.js';
import type { Conversation } from '../src/types.js';
import { Cassette, type CassetteEntry } from '../src/upkeep/cassette.js';
import { encodeVector, requestKey, type UpkeepRequest } from '../src/upkeep/request.js';
import { DEFAULT_PROMPTS } from '../src/upkeep/prompts.js';
import type { Miss } from '../src/upkeep/upkeep.js';
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
 * defaults) on the shipped scenarios, with prices pinned here, in three
 * runs: with simulated upkeep at the default settings and chars4 counts;
 * with simulated upkeep at every other setting of the spec (SETTINGS); and
 * with recorded upkeep (a cassette recorded in-process from `respond`'s
 * deterministic responses: summaries, extractions, embeddings), answers to
 * probe turns and a judge — and the record hashes the benchmark wrote
 * (bench/*.md), and holds them to the last of GOLDEN_HASHES, whose count is
 * ENGINE_VERSION. Records that change fail it until the version is bumped.
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
 * definitions, upkeep prompts, a real tokenizer. Every setting of the spec
 * is listed (its type says so: a setting added to `RUN_SPEC` fails to
 * compile until it is), those kept as the first run has them too; but the
 * prices, pinned in a file the test writes.
 */
const SETTINGS = {
  // The first run's: the fallback below draws from it.
  seed: 42,
  models: ['claude-haiku-4-5'],
  tokenizer: 'o200k_base',
  // The model's own tokenizer is given: a factor of a stand-in's counts does not apply.
  tokenFactor: 1,
  promptCache: 'auto',
  promptCacheTtl: 600,
  cacheBreakpoint: 'turn',
  coldStart: false,
  route: { light: 'gpt-4o-mini', strong: 'claude-haiku-4-5', strongWhen: { userTokensOver: 40 } },
  fallback: { model: 'gpt-4o-mini', rate: 0.2 },
  latency: { 'claude-haiku-4-5': { ttftMs: 300, prefillTps: 4000, decodeTps: 90 } },
  messageRules: 'anthropic',
  toolDefs: [{ name: 'lookup_order', description: 'Find an order by its number', parameters: { type: 'object', properties: { order: { type: 'string' } } } }],
  upkeep: { prompts: { ...DEFAULT_PROMPTS, summary: 'Summarize the conversation so far in about {summaryTokens} tokens.' } },
} as const satisfies { [K in Exclude<keyof RunSpec, 'prices'>]-?: RunSpec[K] };

/** The third golden run's judge: another model than the chat model, so that a verdict's request is told apart from an answer's. */
const JUDGE = 'claude-haiku-4-5';

const words = (text: string) => text.split(/\s+/).filter(Boolean);

/**
 * The recorded model of the third golden run: its response to an upkeep
 * request follows from the request alone (as the test server's do, but
 * fixed here, so that the golden outputs move with the engine only), and
 * usage counts words.
 *
 *  - a summary holds the lines of its request that state a digit or an `@`,
 *    within `max_tokens` words (a summary of nothing of the kind says so);
 *  - an extraction is `name: NAME` for each "I'm NAME", `name: value` for
 *    each "my NAME is VALUE" and `detail: WORD` for each word with a digit
 *    or an `@` of its user lines (or `none`);
 *  - an embedding counts the words of the input by their first letter, in
 *    16 dimensions;
 *  - a reply to a probe turn's prompt is the prompt's last lines, within
 *    `max_tokens` words, each line's words reversed for half of the prompts
 *    (by key): a value of several words is there in other words, and one
 *    far back not at all;
 *  - the judge says yes when every word of the value is a word of the reply.
 */
function respond(r: UpkeepRequest): CassetteEntry {
  const head = { key: requestKey(r), kind: r.kind, model: r.model };
  if (r.kind === 'embed') {
    const v = Array.from({ length: 16 }, () => 0);
    for (const w of words(r.input.toLowerCase())) v[w.codePointAt(0)! % 16]! += 1;
    return { ...head, vector: encodeVector(v), usage: { input: words(r.input).length, output: 0 } };
  }
  const said = r.messages.map((m) => [m.content, ...(('tool_calls' in m && m.tool_calls) || []).map((c) => `${c.function.name}(${c.function.arguments})`)].filter(Boolean).join('\n'));
  const text = r.kind === 'answer' ? replyTo(said.join('\n'), r.maxTokens, parseInt(head.key[0]!, 16) % 2 === 1) : r.kind === 'judge' ? verdict(said[0]!) : r.kind === 'extract' ? extraction(said[1]!) : summaryOf(said[1]!, r.maxTokens);
  return { ...head, text, usage: { input: words(said.join('\n')).length, output: words(text).length } };
}

function summaryOf(body: string, maxTokens: number): string {
  const stated = body.split('\n').filter((l) => /\d|@/.test(l));
  return words(stated.join(' ')).slice(0, maxTokens).join(' ') || 'Nothing to note.';
}

function extraction(body: string): string {
  const user = body.split('\n').filter((l) => l.startsWith('user: ')).join('\n');
  const named = [...user.matchAll(/\bmy ([a-z ]+?) is ([^\s,;!?]+)/gi)].map((m) => `${m[1]!.replace(/\s+/g, '_')}: ${m[2]!.replace(/\.$/, '')}`);
  const introduced = [...user.matchAll(/\bI'm (\p{Lu}\p{L}+)/gu)].map((m) => `name: ${m[1]}`);
  const details = words(user).filter((w) => /\d|@/.test(w)).map((w) => `detail: ${w.replace(/[.,;:!?)]+$/, '')}`);
  return [...introduced, ...named, ...details].join('\n') || 'none';
}

function replyTo(prompt: string, maxTokens: number, reversed: boolean): string {
  const lines = prompt.split('\n').map((l) => (reversed ? words(l).reverse().join(' ') : l));
  const kept: string[] = [];
  for (let i = lines.length - 1, n = 0; i >= 0 && (n += words(lines[i]!).length) <= maxTokens; i--) kept.unshift(lines[i]!);
  return kept.join('\n');
}

/** The default judge prompt as a pattern: its question, value and reply, by name. */
const JUDGE_PARTS = (() => {
  const parts = DEFAULT_PROMPTS.judge.split(/\{(question|value|reply)\}/);
  const source = parts.map((p, i) => (i % 2 ? '([\\s\\S]*?)' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return { pattern: new RegExp(`^${source}$`), names: parts.filter((_, i) => i % 2) };
})();

function verdict(request: string): string {
  const m = JUDGE_PARTS.pattern.exec(request)!;
  const part = (name: string) => m[JUDGE_PARTS.names.indexOf(name) + 1]!;
  const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const reply = new Set(wordsOf(part('reply')));
  return wordsOf(part('value')).every((w) => reply.has(w)) ? 'Yes.' : 'No, it does not.';
}

/**
 * The third golden run's cassette, recorded in-process as a recording
 * finds what to send: every unit is replayed with what the cassette has,
 * the requests it lacks (those that hold no stand-in) are answered by
 * `respond`, until a replay lacks none.
 */
function recordGolden(conversations: readonly Conversation[], policies: readonly PolicyVariant[], spec: RunSpec): Cassette {
  const cassette = new Cassette();
  // The recording replays with the upkeep's settings; its responses are the cassette's so far.
  for (const ctx of replayContexts(runSpecOf({ ...spec, upkeep: { prompts: DEFAULT_PROMPTS, answers: true, judge: JUDGE } }), { cacheFolder: false })) {
    for (const conversation of conversations) {
      for (const variant of policies) {
        for (let round = 0; ; round++) {
          // Each round answers what the last one lacked; a response the cassette does not find again would loop.
          if (round === 100) throw new Error(`recording ${conversation.id} × ${variant.name} did not end in 100 rounds: a response is not found again`);
          const missing: UpkeepRequest[] = [];
          const onMiss = (m: Miss) => {
            if (!m.dependent) missing.push(m.request);
          };
          replay(conversation, variant, { ...ctx, recorded: { cassette, onMiss } });
          if (!missing.length) break;
          for (const r of missing) cassette.add(respond(r));
        }
      }
    }
  }
  return cassette;
}

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
    const conversations = loadScenarios([{ kind: 'glob', pattern: 'scenarios/*.yaml', base: ROOT }]);
    const policies = policiesFromFlags(POLICIES.map((p) => p.id));
    const base: RunSpec = { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'chars4', prices: file };
    const run = (settings: Partial<RunSpec>) => runStudy({ conversations, policies, ...base, ...settings });
    const cassette = recordGolden(conversations, policies, base);
    const recorded = run({ upkeep: { recorded: { entries: cassette.entries() }, answers: true, judge: JUDGE } });
    const hash = createHash('sha256');
    for (const r of [run({}), run(SETTINGS), recorded]) {
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
    // The recorded run takes each kind of response, with content, and scores answers every way.
    const kinds = new Set(cassette.entries().map((e) => e.kind));
    expect([...kinds].sort()).toEqual(['answer', 'embed', 'extract', 'judge', 'summary']);
    expect(cassette.entries().some((e) => e.kind === 'extract' && e.text !== 'none')).toBe(true);
    const answered = (answer: string, judged: boolean) => recorded.probes.filter((p) => p.answer === answer && p.judged === judged).length;
    for (const [answer, judged] of [['answered', false], ['answered', true], ['unanswered', false]] as const) expect(answered(answer, judged), `${answer}${judged ? ', judged' : ''}`).toBeGreaterThan(0);
    // Recorded where upkeep made a memory: compact never compacts the shipped scenarios, so it sent the messages themselves.
    expect(new Set(recorded.summary.filter((s) => s.memory === 'recorded').map((s) => s.policy))).toEqual(new Set(['summary', 'summary-buffer', 'retrieval', 'facts', 'pipeline:mask-observations > summary-buffer']));
  });

  it('is all of ctxsim’s code a replay key holds: its version and the engine’s', () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(engineId()).toBe(`ctxsim@${version} engine@${ENGINE_VERSION}`);
    // A unit's key follows the code id given.
    const [ctx] = replayContexts(runSpecOf({ seed: 1, models: ['gpt-4o-mini'], tokenizer: 'chars4' }));
    const [variant] = policiesFromFlags(['full']);
    const key = (cache: ReplayCache) => cache.unitKey('c0ffee', variant!, ctx!, { seed: 1 });
    const dir = tempDir();
    expect(key(new ReplayCache(dir, 'ctxsim@0.1.0 engine@999'))).not.toBe(key(new ReplayCache(dir)));
  });

  const built = existsSync(join(ROOT, 'dist', 'engine', 'version.js')) && statSync(join(ROOT, 'dist', 'engine', 'version.js')).mtimeMs >= statSync(join(ROOT, 'src', 'engine', 'version.ts')).mtimeMs;

  it.skipIf(!built)(`an edited file keeps the key — a reporter, the CLI, even the engine, for which ENGINE_VERSION speaks (dist/ copied and edited)${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
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
