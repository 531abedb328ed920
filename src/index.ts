/**
 * ctxsim's public API: what a user of the library needs to run a study,
 * load scenarios and studies, define and check a policy, read the results
 * and gate a change. The pipeline, one way:
 *
 *   scenario sources (YAML, generator, importers) → conversations
 *   → engine: for each conversation × policy, turn by turn —
 *       policy: what is sent · tokens: counted once · pricing: cost, cache, latency
 *       · scoring: fact retention
 *   → records (turns, probes, summaries) → reports (CSV, charts, markdown, HTML, JSON, gate)
 *
 * `runStudyPipeline` runs a study end to end into a sink (`memorySink` keeps
 * every record; `folderSink` writes what `ctxsim run` writes). The rest of
 * the library is in sub-paths, one per concern: `ctxsim/study`,
 * `ctxsim/engine`, `ctxsim/scenarios`, `ctxsim/policies`, `ctxsim/upkeep`,
 * `ctxsim/tokens`, `ctxsim/pricing`, `ctxsim/records`, `ctxsim/reports` and
 * `ctxsim/gate`; each name is exported by exactly one of them or by this root.
 *
 * @packageDocumentation
 * @module ctxsim
 */

// Errors
export { CtxsimError, ScenarioError, UsageError, formatProblem, type Problem } from './errors.js';

// Run a study
export { contractScenarios, defaultStudy, loadScenarios, loadStudy, policyFromString, type ScenarioSource, type Study, type StudyOverrides } from './study/study.js';
export { runStudyPipeline, type PipelineOptions, type RunnableStudy, type StudyOutcome } from './study/pipeline.js';
export type { StudySink } from './output/sink.js';
export { digestSink, folderSink, memorySink, type KeptResults } from './output/sinks.js';
export { loadScenarioFile } from './study/scenario-file.js';

// Define and check a policy
export { POLICIES } from './policies/index.js';
export type { CommonParams } from './policies/params.js';
export type { Policy, PolicySession, PolicyVariant, PromptPlan } from './policies/types.js';
export { definePolicy } from './policies/define.js';
export { param } from './policies/param.js';
export { checkPolicyContract } from './policies/contract/checker.js';
export { formatContractViolation, type ContractViolation } from './policies/contract/rules.js';

// Read results
export { parseResultsJson, type ResultsDocument } from './records/json.js';
export { usd } from './records/format.js';
export type { Conversation, Message } from './types.js';
export type { PolicyRecord, ProbeRecord, Results, SummaryRecord, TurnRecord, ViolationRecord } from './records/registry.js';

// Gate
export { baselineJson, makeBaseline, readBaseline, type Baseline, type StudyFingerprint } from './gate/baseline.js';
export { compare, type GateResult } from './gate/compare.js';
export { DEFAULT_LIMITS, type GateLimits } from './gate/limits.js';
