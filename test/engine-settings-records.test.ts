import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { replay } from '../src/engine/replay.js';
import { replayContexts, runStudy, type RunResults } from '../src/engine/run.js';
import { RUN_SPEC_KEYS, RUN_UPKEEP, runSpecOf, type RunSpec, type RunUpkeep } from '../src/engine/spec.js';
import { definePolicy } from '../src/policies/define.js';
import { resolvePolicy, type PolicyVariant } from '../src/policies/spec.js';
import type { Message } from '../src/types.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { policiesFromFlags } from '../src/study/study.js';
import { Cassette, type CassetteEntry } from '../src/upkeep/cassette.js';
import { encodeVector, requestKey, type UpkeepRequest } from '../src/upkeep/request.js';
import { DEFAULT_PROMPTS } from '../src/upkeep/prompts.js';
import type { Miss } from '../src/upkeep/upkeep.js';
import { growing, priceFile, text } from './_pricing.js';

/**
 * Every setting of the spec keys the replay cache (engine-run-spec.test.ts);
 * this holds that each one also reaches the engine: a small study run at the
 * setting's default and at another value gives other records. A setting the
 * engine left unread would give the same records, and fail here. So does
 * each setting of a recorded upkeep (`RunUpkeep`), which is what the study's
 * own settings that decide records reach the engine as (its upkeep's mode
 * and cassette, answers and judge: `studyUpkeep`).
 */

/** A conversation whose first call found part of its prompt cached, with a fact and probes. */
const warm = scenarioFromText(
  'warm.yaml',
  JSON.stringify({
    id: 'warm',
    system: text('SYSTEM You are a helpful assistant.', 1200),
    warm_start: { cached: 1100 },
    turns: [
      { user: 'Hi, I am Ada. My order number is 4411.', facts: { order: '4411' }, assistant: 'Noted, thanks.' },
      { user: text('Tell me everything about the weather on Mars.', 300), assistant: text('Cold and dusty.', 200), gap: '10m' },
      { user: 'What is my order number?', probe: ['order'], assistant: 'It is 4411.' },
      { user: text('And on Venus?', 300), assistant: text('Hot.', 200), gap: '2m' },
      { user: 'Remind me of my order number.', probe: ['order'], assistant: 'Sure: 4411.' },
    ],
  }),
);

/** A policy that sends everything with a note of its own before each user message: two user messages in a row, which the OpenAI rules take and the Anthropic rules (roles alternate) do not. */
const noted = definePolicy({
  id: 'noted',
  describe: 'sends everything, with a note before the user message',
  params: z.object({}),
  start(conversation) {
    const stored: Message[] = [...conversation.system];
    return {
      prompt: (pending) => ({ messages: [...stored, { role: 'user', content: 'Be brief.', origin: 'summary' }, ...pending], overBudget: false, upkeep: [], stablePrefix: conversation.system.length }),
      commit(exchange) {
        stored.push(...exchange);
        return [];
      },
      forget: () => [],
      artifacts: () => [],
    };
  },
});

/** The small golden study: two conversations (one long, with a gap past the default cache TTL), a policy that keeps all, a window, a summary and `noted`. */
const conversations = [warm, growing('growing', 8, { system: 300, gaps: { 4: 900 } })];
const policies = [...policiesFromFlags(['full', 'window-turns:turns=1', 'summary:threshold=1200,summaryTokens=60']), ...(resolvePolicy(noted, []) as PolicyVariant[])];
const BASE: RunSpec = { seed: 42, models: ['gpt-4o-mini'], tokenizer: 'chars4' };

/**
 * What the study's replays made: their records, without what the run tells
 * besides them, and without the summary's fields that say only how the run
 * was measured (where memory came from, whether answers were, and by a
 * judge: set from the settings, not from what the replay did), so that a
 * setting shows here only if the replay reads it.
 */
const records = (r: RunResults) => ({
  turns: r.turns,
  probes: r.probes,
  summary: r.summary.map(({ memory: _memory, answered: _answered, answerRetention: _answerRetention, judgedUnsent: _judgedUnsent, ...made }) => made),
  violations: r.violations,
});

/**
 * How each setting of the spec is changed (`to`), and what else the study
 * sets for the change to show (`with`, in both runs: a seed shows only
 * where something is drawn, a breakpoint only on an explicit cache).
 * Typed, so a setting added to `RUN_SPEC` fails to compile until it is
 * listed here.
 */
const CHANGES: { [K in keyof RunSpec]-?: () => { to: Exclude<RunSpec[K], undefined>; with?: Partial<RunSpec> } } = {
  seed: () => ({ to: 8, with: { fallback: { model: 'gpt-4.1-mini', rate: 0.5 } } }),
  models: () => ({ to: ['gpt-4.1-mini'] }),
  tokenizer: () => ({ to: 'o200k_base' }),
  // A factor applies to a model whose tokenizer stands in for its own.
  tokenFactor: () => ({ to: 1.1, with: { models: ['claude-haiku-4-5'], tokenizer: 'auto' } }),
  prices: () => ({ to: priceFile({ 'gpt-4o-mini': { litellm_provider: 'openai', mode: 'chat', input_cost_per_token: 2e-7, output_cost_per_token: 6e-7, max_input_tokens: 128000 } }) }),
  promptCache: () => ({ to: 'off' }),
  promptCacheTtl: () => ({ to: 3600 }),
  cacheBreakpoint: () => ({ to: 'turn', with: { models: ['claude-haiku-4-5'] } }),
  coldStart: () => ({ to: true }),
  route: () => ({ to: { light: 'gpt-4o-mini', strong: 'gpt-4.1', strongWhen: { userTokensOver: 100 } } }),
  fallback: () => ({ to: { model: 'gpt-4.1-mini', rate: 0.5 } }),
  latency: () => ({ to: { 'gpt-4o-mini': { ttftMs: 123 } } }),
  messageRules: () => ({ to: 'anthropic' }),
  toolDefs: () => ({ to: [{ name: 'lookup_order', description: 'Find an order by its number' }] }),
  upkeep: () => ({ to: { prompts: { ...DEFAULT_PROMPTS, summary: 'Summarize the conversation so far, briefly, in about {summaryTokens} tokens.' } } }),
};

describe('every setting of the spec reaches the engine', () => {
  it('the changes cover every setting of the spec', () => {
    expect(Object.keys(CHANGES).sort()).toEqual([...RUN_SPEC_KEYS].sort());
  });

  it.each(RUN_SPEC_KEYS)('%s: another value gives other records of the golden study', (key) => {
    const change = CHANGES[key]();
    const run = (over: Partial<RunSpec>) => records(runStudy({ conversations, policies, ...BASE, ...change.with, ...over }));
    const before = run({});
    expect(before.turns.length).toBeGreaterThan(0);
    expect(run({ [key]: change.to })).not.toEqual(before);
  });
});

/** A recorded upkeep's settings but its responses, and what the recorded model's summaries say. */
interface Recording {
  upkeep: Omit<RunUpkeep, 'recorded'>;
  summary?: string;
}

/** The recorded model: a response follows from the request (its input counted in characters), a summary says `summary`, an answer never holds a value, the judge says yes. */
function respond(r: UpkeepRequest, summary: string): CassetteEntry {
  const head = { key: requestKey(r), kind: r.kind, model: r.model };
  if (r.kind === 'embed') return { ...head, vector: encodeVector([1, r.input.length % 7, 0, 0]), usage: { input: r.input.length, output: 0 } };
  const text = r.kind === 'summary' ? summary : r.kind === 'extract' ? 'none' : r.kind === 'answer' ? 'I cannot say.' : 'Yes.';
  return { ...head, text, usage: { input: JSON.stringify(r.messages).length, output: text.length } };
}

/** The golden study with a recorded upkeep: its cassette recorded in-process (each round answers what the last replay lacked), then the study run on it. */
function recordedRun({ upkeep, summary = 'The user gave an order number.' }: Recording): RunResults {
  const cassette = new Cassette();
  // The recording replays with the upkeep's settings; its responses are the cassette's so far.
  for (const ctx of replayContexts(runSpecOf({ ...BASE, upkeep }), { cacheFolder: false })) {
    for (const conversation of conversations) {
      for (const variant of policies) {
        for (let round = 0; ; round++) {
          if (round === 20) throw new Error(`recording ${conversation.id} × ${variant.name} did not end in 20 rounds`);
          const missing: UpkeepRequest[] = [];
          const onMiss = (m: Miss) => {
            if (!m.dependent) missing.push(m.request);
          };
          replay(conversation, variant, { ...ctx, recorded: { cassette, onMiss } });
          if (!missing.length) break;
          for (const r of missing) cassette.add(respond(r, summary));
        }
      }
    }
  }
  return runStudy({ conversations, policies, ...BASE, upkeep: { ...upkeep, recorded: { entries: cassette.entries() } } });
}

/**
 * How each setting of a recorded upkeep is changed (`to`), from a
 * recording with none of them (or `from`). Typed, so a setting added to
 * `RUN_UPKEEP` fails to compile until it is listed here.
 */
const UPKEEP_CHANGES: { [K in keyof RunUpkeep]-?: { from?: Recording; to: Recording } } = {
  prompts: { to: { upkeep: { prompts: { ...DEFAULT_PROMPTS, summary: 'Summarize the conversation so far, briefly, in about {summaryTokens} tokens.' } } } },
  recorded: { to: { upkeep: {}, summary: 'The user gave an order number, and asked about the weather on Mars and on Venus.' } },
  answers: { to: { upkeep: { answers: true } } },
  judge: { from: { upkeep: { answers: true } }, to: { upkeep: { answers: true, judge: 'gpt-4.1-mini' } } },
};

describe('every setting of a recorded upkeep reaches the engine', () => {
  it('the changes cover every setting of the upkeep', () => {
    expect(Object.keys(UPKEEP_CHANGES).sort()).toEqual(Object.keys(RUN_UPKEEP.shape).sort());
  });

  it.each(Object.keys(RUN_UPKEEP.shape) as (keyof RunUpkeep)[])('upkeep.%s: another value gives other records of the golden study', (key) => {
    const change = UPKEEP_CHANGES[key];
    const before = recordedRun(change.from ?? { upkeep: {} });
    expect(before.summary.some((s) => s.memory === 'recorded')).toBe(true);
    expect(records(recordedRun(change.to))).not.toEqual(records(before));
  });
});
