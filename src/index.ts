/**
 * ctxsim's public API. The pipeline, one way:
 *
 *   scenario sources (YAML, generator, importers) → conversations
 *   → engine: for each conversation × policy, turn by turn —
 *       policy: what is sent · tokens: counted once · pricing: cost, cache, latency
 *       · scoring: fact retention
 *   → records (turns, probes, summaries) → reports (CSV, charts, markdown, HTML, JSON, gate)
 */
export { runMain } from './cli/_app.js';
export { replay, streamFor, type ReplayContext, type SentCall } from './engine/replay.js';
export { tuneHeap } from './engine/heap.js';
export { streamStudyParallel } from './engine/parallel.js';
export { replayContext, runStudy, streamStudy, type Conversations, type RecordSink, type RunInfo, type RunOptions, type RunResults, type ScenarioRecords } from './engine/run.js';
export { byPolicy, markPareto, summarize } from './engine/summarize.js';
export { CtxsimError, ScenarioError, UsageError, formatProblem, type Problem } from './errors.js';
export { baselineJson, makeBaseline, type Baseline } from './gate/baseline.js';
export { compare, type GateLimits, type GateResult } from './gate/compare.js';
export { POLICIES, REGISTRY } from './policies/index.js';
export { canonicalName, resolveSpec, type PolicyVariant } from './policies/spec.js';
export type { Policy, PolicyDeps, PolicySession, PromptPlan } from './policies/types.js';
export { builtinPrices, loadPrices } from './pricing/load.js';
export { lookup, type ModelPrice, type PriceTable } from './pricing/prices.js';
export { checkPrompt, type RuleSet, type Violation } from './rules/provider.js';
export { loadScenarioFile, parseScenario } from './scenario/load.js';
export { defaultStudy, loadScenarios, loadStudy, policyFromString, type Study } from './study/study.js';
export { TokenCounter, messageText } from './tokens/counter.js';
export { encodingForModel, textCounter, type EncodingName } from './tokens/encoding.js';
export type * from './types.js';
