import type { ArtifactKind, MemoryKind, ProbeAnswer, ProbeExpectation, ProbeOutcome, ProbeSource } from '../types.js';
import { defineRecord, type RecordKind, type RecordOf } from './columns.js';

/**
 * The records a run makes, one registry per kind: each column once, in
 * results.json order, with its CSV header, kind, aggregation and doc line.
 * The record types below, the CSV files, results.json, the sums of
 * summary and policy rows, the baseline row and docs/columns.md are derived
 * from these lists. To add a column, add an entry at the end of its list
 * (ARCHITECTURE.md, "How to add a column").
 */

const OUTCOMES = ['retained', 'stale', 'missing', 'overflow'] as const satisfies readonly ProbeOutcome[];
const SOURCES = ['window', 'summary', 'retrieved', 'facts', 'none'] as const satisfies readonly ProbeSource[];
const EXPECTATIONS = ['retained', 'missing'] as const satisfies readonly ProbeExpectation[];
const ANSWERS = ['answered', 'unanswered'] as const satisfies readonly ProbeAnswer[];
const MEMORY = ['none', 'simulated', 'recorded'] as const satisfies readonly MemoryKind[];
const ARTIFACTS = ['transcript', 'summary', 'vectors', 'facts'] as const satisfies readonly ArtifactKind[];

/** One row per scenario × policy × turn: `turns.csv`, results.json's `turns`. */
export const TURN_RECORD = defineRecord(
  'turns',
  [
    { key: 'scenario', csv: 'scenario', kind: 'text', agg: 'none', doc: 'the scenario (conversation) id' },
    { key: 'policy', csv: 'policy', kind: 'text', agg: 'none', doc: "the policy variant's name (`window-turns:turns=4`)" },
    { key: 'turn', csv: 'turn', kind: 'count', agg: 'none', doc: 'the turn number, from 1' },
    { key: 'contextMessages', csv: 'context_messages', kind: 'count', agg: 'none', doc: "messages in the prompt of the turn's first call" },
    { key: 'model', csv: 'model', kind: 'text', agg: 'none', doc: "the chat model the turn's calls went to: the run's model, or the one `route` chose" },
    { key: 'fallback', csv: 'fallback', kind: 'flag', agg: 'none', doc: 'a call of the turn failed and was retried on the fallback model' },
    { key: 'inputTokens', csv: 'input_tokens', kind: 'count', agg: 'sum', doc: "prompt tokens over the turn's model calls, `cached_tokens` and `cache_write_tokens` included" },
    { key: 'cachedTokens', csv: 'cached_tokens', kind: 'count', agg: 'sum', doc: "prompt tokens read from the provider's cache" },
    { key: 'cacheWriteTokens', csv: 'cache_write_tokens', kind: 'count', agg: 'sum', doc: 'prompt tokens written to an explicit (Anthropic-style) cache' },
    { key: 'outputTokens', csv: 'output_tokens', kind: 'count', agg: 'sum', doc: "reply tokens over the turn's model calls" },
    { key: 'auxInputTokens', csv: 'aux_input_tokens', kind: 'count', agg: 'sum', doc: 'input tokens of the upkeep calls (summaries, fact extraction)' },
    { key: 'auxOutputTokens', csv: 'aux_output_tokens', kind: 'count', agg: 'sum', doc: 'output tokens of the upkeep calls' },
    { key: 'embedTokens', csv: 'embed_tokens', kind: 'count', agg: 'sum', doc: 'tokens embedded for retrieval' },
    { key: 'cost', csv: 'cost_usd', kind: 'money', agg: 'sum', doc: "what the turn cost: its model calls and its upkeep" },
    { key: 'cumulativeCost', csv: 'cumulative_cost_usd', kind: 'money', agg: 'none', doc: 'what the conversation has cost so far, this turn included' },
    { key: 'latencyMs', csv: 'latency_ms', kind: 'duration', agg: 'sum', doc: "modelled time until the turn's reply is complete, synchronous upkeep included" },
    { key: 'overflow', csv: 'overflow', kind: 'flag', agg: 'none', doc: "a call of the turn, or one of its upkeep calls, was over its model's context window (and not charged)" },
    { key: 'overBudget', csv: 'over_budget', kind: 'flag', agg: 'none', doc: 'the system prompt and the current turn alone exceeded the policy\'s budget, so it sent more' },
    { key: 'probes', csv: 'probes', kind: 'count', agg: 'count', doc: 'retention probes scored on the turn (a probe of a forgotten fact is not one)' },
    { key: 'retained', csv: 'retained', kind: 'count', agg: 'count', doc: 'of them, the probes whose current value was in the prompt' },
    { key: 'violations', csv: 'violations', kind: 'count', agg: 'sum', doc: "provider message rules broken by the turn's prompts (every call)" },
    { key: 'zombiePrompt', csv: 'zombie_prompt', kind: 'flag', agg: 'none', doc: 'a prompt of the turn still held a value the user asked to forget' },
    { key: 'injectionExposed', csv: 'injection_exposed', kind: 'flag', agg: 'none', doc: "the turn's first prompt still held an earlier injection turn (verbatim, quoted in a summary, retrieved or in the fact sheet)" },
    { key: 'costInput', kind: 'money', agg: 'sum', doc: 'of `cost`: uncached input' },
    { key: 'costCached', kind: 'money', agg: 'sum', doc: 'of `cost`: cached input' },
    { key: 'costOutput', kind: 'money', agg: 'sum', doc: 'of `cost`: output' },
    { key: 'costUpkeep', kind: 'money', agg: 'sum', doc: 'of `cost`: upkeep calls' },
    { key: 'estimatedTokens', csv: 'estimated_tokens', kind: 'flag', agg: 'none', doc: "the turn's counts are estimates: a stand-in tokenizer, a text too long to count exactly, or a chat template given the prompt adapted" },
    { key: 'calls', csv: 'calls', kind: 'count', agg: 'count', doc: 'model calls the turn made: one after the user message, and one after each round of tool calls' },
  ],
  // prettier-ignore
  ['scenario', 'policy', 'turn', 'contextMessages', 'inputTokens', 'cachedTokens', 'outputTokens', 'auxInputTokens', 'auxOutputTokens', 'embedTokens', 'cost', 'cumulativeCost', 'latencyMs', 'overflow', 'probes', 'retained', 'overBudget', 'model', 'fallback', 'cacheWriteTokens', 'estimatedTokens', 'violations', 'zombiePrompt', 'injectionExposed', 'calls'],
);

/** One row per probe (a fact a turn needs): `probes.csv`, results.json's `probes`. */
export const PROBE_RECORD = defineRecord(
  'probes',
  [
    { key: 'scenario', csv: 'scenario', kind: 'text', agg: 'none', doc: 'the scenario (conversation) id' },
    { key: 'policy', csv: 'policy', kind: 'text', agg: 'none', doc: "the policy variant's name" },
    { key: 'model', csv: 'model', kind: 'text', agg: 'none', doc: "the run's chat model (a study may run several)" },
    { key: 'turn', csv: 'turn', kind: 'count', agg: 'none', doc: 'the turn that needs the fact' },
    { key: 'fact', csv: 'fact', kind: 'text', agg: 'none', doc: "the fact's name" },
    {
      key: 'outcome',
      csv: 'outcome',
      kind: 'text',
      values: OUTCOMES,
      agg: 'none',
      doc: "what the prompt of the turn's first call held: the current value (`retained`), only an older one (`stale`), none (`missing`); `overflow` when that call was over the context window",
    },
    { key: 'ageTurns', csv: 'age_turns', kind: 'count', agg: 'none', doc: "turns since the fact's current value was stated" },
    { key: 'source', csv: 'source', kind: 'text', values: SOURCES, agg: 'none', doc: 'where the value was found: the window of messages, a summary, a retrieved memory, the fact sheet, or `none`' },
    { key: 'expected', csv: 'expected', kind: 'text', values: EXPECTATIONS, agg: 'none', doc: '`missing` for a fact the user asked to forget (and did not state again): then finding it is a violation' },
    { key: 'violation', csv: 'violation', kind: 'flag', agg: 'none', doc: 'the probe found a value of a forgotten fact (never on an `overflow`)' },
    {
      key: 'answer',
      csv: 'answer',
      kind: 'text',
      values: ANSWERS,
      optional: true,
      agg: 'none',
      doc: "with answers measured: whether the chat model's reply to the turn's first prompt held the fact's current value; empty when not measured or the fact was forgotten",
    },
    {
      key: 'judged',
      csv: 'judged',
      kind: 'flag',
      optional: true,
      agg: 'none',
      doc: "with a judge: the reply did not hold the value as written and the judge's yes made the probe `answered` (the value was in the prompt); empty without a judge or an `answer`",
    },
    {
      key: 'judgedUnsent',
      csv: 'judged_unsent',
      kind: 'flag',
      optional: true,
      agg: 'none',
      doc: "with a judge: the judge said yes, but the fact's current value was not in the prompt (`outcome` not `retained`): the probe stays `unanswered`, counted apart; empty without a judge or an `answer`",
    },
  ],
  ['scenario', 'policy', 'turn', 'fact', 'outcome', 'ageTurns', 'source', 'expected', 'violation', 'model', 'answer', 'judged', 'judgedUnsent'],
);

/** One row per scenario × policy (× model): `summary.csv`, results.json's `summary`. */
export const SUMMARY_RECORD = defineRecord(
  'summary',
  [
    { key: 'scenario', csv: 'scenario', kind: 'text', agg: 'none', doc: 'the scenario (conversation) id' },
    { key: 'policy', csv: 'policy', kind: 'text', agg: 'none', doc: "the policy variant's name" },
    { key: 'model', csv: 'model', kind: 'text', agg: 'none', doc: "the run's chat model (a study may run several)" },
    { key: 'turns', csv: 'turns', kind: 'count', agg: 'count', doc: 'turns of the conversation' },
    { key: 'inputTokens', csv: 'input_tokens', kind: 'count', agg: 'sum', doc: 'prompt tokens sent to the chat model, cached ones included' },
    { key: 'cachedTokens', csv: 'cached_tokens', kind: 'count', agg: 'sum', doc: "prompt tokens read from the provider's cache" },
    { key: 'outputTokens', csv: 'output_tokens', kind: 'count', agg: 'sum', doc: 'reply tokens' },
    { key: 'auxTokens', csv: 'aux_tokens', kind: 'count', agg: 'sum', of: ['auxInputTokens', 'auxOutputTokens', 'embedTokens'], doc: 'upkeep tokens: summaries and fact extraction (input and output) and embeddings' },
    { key: 'totalCost', csv: 'total_cost_usd', kind: 'money', agg: 'sum', of: 'cost', doc: 'what the conversation cost: chat and upkeep calls' },
    { key: 'costPerTurn', csv: 'cost_per_turn_usd', kind: 'money', agg: 'none', doc: 'total cost ÷ turns, rounded down' },
    { key: 'peakInputTokens', csv: 'peak_input_tokens', kind: 'count', agg: 'max', of: 'inputTokens', doc: "the largest turn's prompt tokens" },
    { key: 'overflowTurns', csv: 'overflow_turns', kind: 'count', agg: 'sum', of: 'overflow', doc: "turns with a call (or an upkeep call) over its model's context window" },
    { key: 'overBudgetTurns', csv: 'over_budget_turns', kind: 'count', agg: 'sum', of: 'overBudget', doc: "turns that sent more than the policy's budget" },
    { key: 'probes', csv: 'probes', kind: 'count', agg: 'count', doc: 'retention probes (a probe of a forgotten fact is not one)' },
    { key: 'retained', csv: 'retained', kind: 'count', agg: 'count', doc: "probes that found the fact's current value" },
    { key: 'stale', csv: 'stale', kind: 'count', agg: 'count', doc: 'probes that found only an older value' },
    { key: 'missing', csv: 'missing', kind: 'count', agg: 'count', doc: 'probes that found no value' },
    { key: 'overflowProbes', csv: 'overflow_probes', kind: 'count', agg: 'count', doc: 'probes scored on a call over the context window: not retained, counted apart' },
    { key: 'retention', csv: 'retention', kind: 'ratio', nullable: true, agg: 'none', doc: 'retained ÷ probes; empty without probes' },
    { key: 'firstLostTurn', csv: 'first_lost_turn', kind: 'count', nullable: true, agg: 'none', doc: 'the first probe turn at which a fact was not retained; empty when none was lost' },
    { key: 'latencyP50Ms', csv: 'latency_p50_ms', kind: 'duration', agg: 'p50', of: 'latencyMs', doc: "the median turn's latency (nearest rank)" },
    { key: 'latencyP95Ms', csv: 'latency_p95_ms', kind: 'duration', agg: 'p95', of: 'latencyMs', doc: "the 95th-percentile turn's latency (nearest rank)" },
    { key: 'zombieArtifacts', csv: 'zombie_artifacts', kind: 'count', agg: 'none', doc: 'how many kinds of artifact still hold a forgotten value at the end of the conversation' },
    { key: 'zombies', csv: 'zombies', kind: 'list', values: ARTIFACTS, agg: 'none', doc: 'which ones, in the order transcript, summary, vectors, facts (`summary;vectors`)' },
    { key: 'zombiePromptTurns', csv: 'zombie_prompt_turns', kind: 'count', agg: 'sum', of: 'zombiePrompt', doc: 'turns with a prompt (any call) holding a forgotten value' },
    { key: 'zombieProbes', csv: 'zombie_probes', kind: 'count', agg: 'count', doc: 'probes of a forgotten fact that found a value' },
    { key: 'injectionExposureTurns', csv: 'injection_exposure_turns', kind: 'count', agg: 'sum', of: 'injectionExposed', doc: 'turns whose first prompt still held an earlier injection turn' },
    { key: 'violations', csv: 'violations', kind: 'count', agg: 'sum', doc: 'provider message rules broken, over every call' },
    { key: 'storedBytes', csv: 'stored_bytes', kind: 'count', agg: 'none', doc: 'UTF-8 bytes the policy stores at the end of the conversation (embeddings at dimensions × 4)' },
    { key: 'weight', csv: 'weight', kind: 'number', agg: 'none', doc: 'what the scenario counts for in the per-policy means, in real conversations: a positive number, fractions allowed (0.5 counts half as much as 1; 1 by default)' },
    { key: 'answered', csv: 'answered', kind: 'count', nullable: true, agg: 'count', doc: "probes whose fact the chat model's reply held; empty when answers were not measured" },
    { key: 'answerRetention', csv: 'answer_retention', kind: 'ratio', nullable: true, agg: 'none', doc: 'answered ÷ probes; empty when answers were not measured, or without probes' },
    { key: 'memory', csv: 'memory', kind: 'text', values: MEMORY, agg: 'none', doc: "where the memory sent in this conversation came from: `simulated` or `recorded` upkeep, or `none` when upkeep made none (a policy that keeps none, or one that made none in this conversation and sent the messages themselves)" },
    {
      key: 'judgedUnsent',
      csv: 'judged_unsent',
      kind: 'count',
      nullable: true,
      agg: 'count',
      doc: "with a judge: probes the judge said yes to whose value was not in the prompt; not in `answered`; empty without a judge",
    },
  ],
  // prettier-ignore
  ['scenario', 'policy', 'turns', 'inputTokens', 'cachedTokens', 'outputTokens', 'auxTokens', 'totalCost', 'costPerTurn', 'peakInputTokens', 'overflowTurns', 'probes', 'retained', 'stale', 'missing', 'retention', 'firstLostTurn', 'overBudgetTurns', 'latencyP50Ms', 'latencyP95Ms', 'zombieArtifacts', 'zombiePromptTurns', 'injectionExposureTurns', 'violations', 'storedBytes', 'zombies', 'zombieProbes', 'overflowProbes', 'weight', 'model', 'answered', 'answerRetention', 'memory'],
);

/**
 * The summary columns a baseline row keeps (`--save-baseline`), in the order
 * of its fields, as baselines have had them: a column joins baseline rows by
 * its key added at the end.
 */
export const BASELINE_ORDER = ['scenario', 'policy', 'model', 'inputTokens', 'cachedTokens', 'outputTokens', 'auxTokens', 'totalCost', 'probes', 'retained', 'overflowTurns', 'latencyP95Ms', 'answered'] as const;

/** One row per policy (× model) over every scenario: `policies.csv`, results.json's `policies`. */
export const POLICY_RECORD = defineRecord(
  'policies',
  [
    { key: 'policy', csv: 'policy', kind: 'text', agg: 'none', doc: "the policy variant's name" },
    { key: 'model', csv: 'model', kind: 'text', agg: 'none', doc: "the run's chat model: a row per policy × model" },
    { key: 'scenarios', csv: 'scenarios', kind: 'count', agg: 'count', doc: 'conversations the row is over' },
    { key: 'turns', csv: 'turns', kind: 'count', agg: 'sum', doc: 'turns over the conversations' },
    { key: 'inputTokens', csv: 'input_tokens', kind: 'count', agg: 'sum', doc: 'prompt tokens, cached ones included' },
    { key: 'cachedTokens', csv: 'cached_tokens', kind: 'count', agg: 'sum', doc: "prompt tokens read from the provider's cache" },
    { key: 'outputTokens', csv: 'output_tokens', kind: 'count', agg: 'sum', doc: 'reply tokens' },
    { key: 'auxTokens', csv: 'aux_tokens', kind: 'count', agg: 'sum', doc: 'upkeep tokens' },
    { key: 'totalCost', csv: 'total_cost_usd', kind: 'money', agg: 'sum', doc: 'what every conversation cost, together' },
    { key: 'costPerConversation', csv: 'cost_per_conversation_usd', kind: 'money', agg: 'weighted mean', doc: "the mean cost of a conversation, weighted by the scenarios' weights, rounded down" },
    { key: 'costPer1000', kind: 'money', optional: true, agg: 'weighted mean', doc: "the weighted mean cost of 1,000 conversations, rounded to nearest; only when a scenario's weight is not 1" },
    { key: 'costPerTurn', csv: 'cost_per_turn_usd', kind: 'money', agg: 'none', doc: 'total cost ÷ turns, rounded down' },
    { key: 'overflowTurns', csv: 'overflow_turns', kind: 'count', agg: 'sum', doc: "turns with a call (or an upkeep call) over its model's context window" },
    { key: 'probes', csv: 'probes', kind: 'count', agg: 'sum', doc: 'retention probes' },
    { key: 'retained', csv: 'retained', kind: 'count', agg: 'sum', doc: "probes that found the fact's current value" },
    { key: 'stale', csv: 'stale', kind: 'count', agg: 'sum', doc: 'probes that found only an older value' },
    { key: 'missing', csv: 'missing', kind: 'count', agg: 'sum', doc: 'probes that found no value' },
    { key: 'overflowProbes', csv: 'overflow_probes', kind: 'count', agg: 'sum', doc: 'probes scored on a call over the context window: not retained, counted apart' },
    { key: 'retention', csv: 'retention', kind: 'ratio', nullable: true, agg: 'weighted mean', doc: 'weighted: Σ(weight × retained) ÷ Σ(weight × probes); empty without probes' },
    { key: 'storedBytesMean', csv: 'stored_bytes_mean', kind: 'count', agg: 'mean', of: 'storedBytes', doc: 'bytes stored at the end of a conversation: the mean over the conversations, rounded' },
    { key: 'storedBytesP95', csv: 'stored_bytes_p95', kind: 'count', agg: 'p95', of: 'storedBytes', doc: 'bytes stored at the end of a conversation: the 95th percentile over the conversations (nearest rank)' },
    { key: 'latencyP95Ms', csv: 'latency_p95_ms', kind: 'duration', agg: 'p95', doc: "the 95th percentile over the conversations of each one's 95th-percentile turn latency (nearest rank)" },
    { key: 'zombieArtifacts', csv: 'zombie_artifacts', kind: 'count', agg: 'sum', doc: 'artifacts still holding a forgotten value at the end, over the conversations' },
    { key: 'zombiePromptTurns', csv: 'zombie_prompt_turns', kind: 'count', agg: 'sum', doc: 'turns with a prompt holding a forgotten value' },
    { key: 'zombieProbes', csv: 'zombie_probes', kind: 'count', agg: 'sum', doc: 'probes of a forgotten fact that found a value' },
    { key: 'injectionExposureTurns', csv: 'injection_exposure_turns', kind: 'count', agg: 'sum', doc: 'turns whose first prompt still held an earlier injection turn' },
    { key: 'violations', csv: 'violations', kind: 'count', agg: 'sum', doc: 'provider message rules broken, over every call' },
    { key: 'answered', csv: 'answered', kind: 'count', nullable: true, agg: 'sum', doc: "probes whose fact the chat model's reply held; empty when answers were not measured" },
    {
      key: 'answerRetention',
      csv: 'answer_retention',
      kind: 'ratio',
      nullable: true,
      agg: 'weighted mean',
      doc: 'weighted as `retention`: Σ(weight × answered) ÷ Σ(weight × probes); empty when answers were not measured, or without probes',
    },
    { key: 'memory', csv: 'memory', kind: 'text', values: MEMORY, agg: 'none', doc: "where the policy's memory comes from (`simulated` or `recorded` when any of its rows says so)" },
    { key: 'pareto', csv: 'pareto', kind: 'flag', agg: 'none', doc: 'on the Pareto frontier: no other row is both as cheap and retains as much, and better at one' },
    {
      key: 'judgedUnsent',
      csv: 'judged_unsent',
      kind: 'count',
      nullable: true,
      agg: 'sum',
      doc: "with a judge: probes the judge said yes to whose value was not in the prompt; not in `answered`; empty without a judge",
    },
  ],
  // prettier-ignore
  ['policy', 'scenarios', 'turns', 'inputTokens', 'cachedTokens', 'outputTokens', 'auxTokens', 'totalCost', 'costPerConversation', 'costPerTurn', 'overflowTurns', 'probes', 'retained', 'stale', 'missing', 'retention', 'pareto', 'storedBytesMean', 'storedBytesP95', 'zombieArtifacts', 'zombiePromptTurns', 'zombieProbes', 'injectionExposureTurns', 'violations', 'overflowProbes', 'latencyP95Ms', 'model', 'answered', 'answerRetention', 'memory'],
);

/** One row per provider message rule a call's prompt broke: `violations.csv`, results.json's `violations`. */
export const VIOLATION_RECORD = defineRecord(
  'violations',
  [
    { key: 'scenario', csv: 'scenario', kind: 'text', agg: 'none', doc: 'the scenario (conversation) id' },
    { key: 'policy', csv: 'policy', kind: 'text', agg: 'none', doc: "the policy variant's name" },
    { key: 'model', csv: 'model', kind: 'text', agg: 'none', doc: "the run's chat model" },
    { key: 'turn', csv: 'turn', kind: 'count', agg: 'none', doc: 'the turn whose call broke it' },
    { key: 'call', csv: 'call', kind: 'count', agg: 'none', doc: 'which call of the turn: 1 after the user message, 2 and on after tool results' },
    { key: 'rule', csv: 'rule', kind: 'text', agg: 'none', doc: 'the rule broken (`orphan-tool-result`, `same-role-twice`, …)' },
    { key: 'detail', csv: 'detail', kind: 'text', agg: 'none', doc: 'where, in words' },
  ],
  ['scenario', 'policy', 'turn', 'rule', 'detail', 'call', 'model'],
);

/** The kind whose rows each kind's `sum`, `max`, percentile and mean columns are made from (their `of`). */
export const MADE_FROM = { summary: TURN_RECORD, policies: SUMMARY_RECORD } as const;

/** Every record kind, from the turn up (the order of docs/columns.md). */
export const RECORD_KINDS: readonly RecordKind[] = [TURN_RECORD, PROBE_RECORD, SUMMARY_RECORD, POLICY_RECORD, VIOLATION_RECORD];

export type TurnRecord = RecordOf<typeof TURN_RECORD.columns>;
export type ProbeRecord = RecordOf<typeof PROBE_RECORD.columns>;
export type SummaryRecord = RecordOf<typeof SUMMARY_RECORD.columns>;
export type PolicyRecord = RecordOf<typeof POLICY_RECORD.columns>;
export type ViolationRecord = RecordOf<typeof VIOLATION_RECORD.columns>;

/** Every record of a run. */
export interface Results {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  summary: SummaryRecord[];
  policies: PolicyRecord[];
  violations: ViolationRecord[];
}
