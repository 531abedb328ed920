/**
 * ctxsim's public API. The pipeline, one way:
 *
 *   scenario sources (YAML, generator, importers) → conversations
 *   → engine: for each conversation × policy, turn by turn —
 *       policy: what is sent · tokens: counted once · pricing: cost, cache, latency
 *       · scoring: fact retention
 *   → records (turns, probes, summaries) → reports (CSV, charts, markdown, HTML, JSON, gate)
 *
 * `runStudyPipeline` runs a study end to end into a sink (`memorySink` keeps
 * every record; `folderSink` writes what `ctxsim run` writes). The reporters
 * return strings or bytes and write nothing.
 *
 * @packageDocumentation
 */

// Errors
export { CtxsimError, ScenarioError, UsageError, formatProblem, type Problem } from './errors.js';

// Studies
export { displayPath } from './study/package.js';
export { contractScenarios, defaultStudy, loadScenarios, loadStudy, policiesFromFlags, policyFromString, studyJsonSchema, type GenerateSource, type GlobSource, type ImportSource, type LoadOptions, type ScenarioSource, type Study, type StudyOverrides } from './study/study.js';
export {
  resultsMeta,
  runStudyPipeline,
  type PipelineOptions,
  type RunnableStudy,
  type SinkOutcome,
  type StudyDone,
  type StudyEvents,
  type StudyOutcome,
  type StudySink,
} from './study/pipeline.js';
export { digestSink, fileSink, folderSink, gateSink, memorySink, shardSink, textSink, type KeptResults, type ReportedResults } from './study/sinks.js';
export { mergeShardFiles } from './study/merge.js';
export { OutputSet } from './study/files.js';
export { calibrateTokenFactor, calibrationReport, tokenFactorLine, type CalibrateOptions, type Calibration, type CalibrationCall, type LeftOut, type ModelCalibration, type SkippedTranscript } from './study/calibrate.js';
export { loadPolicyModules, specModules, type ModuleRequest, type PolicyModules } from './study/policy-modules.js';
export { defaultUpkeep, planText, upkeepPlan, UPKEEP_MODES, type UpkeepMode, type UpkeepOverrides, type UpkeepPlan, type UpkeepSettings } from './study/upkeep.js';

// Scenarios: load, parse, generate, import, write
export { loadScenarioFile, parseScenario } from './scenario/load.js';
export { generateConversations, generateDocs, PROFILES, type GenerateRequest, type Profile } from './scenario/generate/index.js';
export { formatImportReport, IMPORTERS, importDataset, type Imported, type ImportInput, type Importer, type ImportReport, type ImportResult, type Quirk, type RecordedModel } from './scenario/import/index.js';
export { scenarioToYaml, scenariosToYamlStream } from './scenario/yaml.js';
export type { ScenarioOut } from './scenario/docs.js';
export { scenarioJsonSchema } from './scenario/schema.js';

// Running conversations through policies
export { runStudy, streamStudy, type RunUpkeep, type Conversations, type ModelContext, type RunModel, type EncodedScenario, type RecordLists, type RecordSink, type RunInfo, type RunOptions, type RunResults, type ScenarioRecordLists, type ScenarioRecords } from './engine/run.js';
export { runStudyParallel, streamStudyParallel } from './engine/parallel.js';
export { replay, type Replay, type ReplayContext, type SentCall } from './engine/replay.js';
export { replayContext, replayContexts } from './engine/run.js';
export { byPolicy, summaryOf } from './engine/summary.js';

// Policies: the registry, specs, writing one's own, the contract every policy keeps
export { AGENT_POLICIES, CHAT_POLICIES, POLICIES, REGISTRY } from './policies/index.js';
export { canonicalName, resolveSpec, type PolicyVariant } from './policies/spec.js';
export type { Artifact, ForgetFact, ForgetInfo, ParamSpec, ParamTable, ParamValue, Params, Policy, PolicyDeps, PolicySession, PromptPlan, SessionStart, TurnInfo, TurnStart } from './policies/types.js';
export { SessionDriver, sessionStart, type DrivenCall, type DrivenForget } from './policies/driver.js';
export { definePolicy, type PolicyParams } from './policies/define.js';
export { blocks } from './policies/blocks.js';
export type { Blocks, Exchange, FactSheetBlock, FactSheetParams, History, RunningSummaryBlock, SessionParams, SummaryParams, TranscriptBlock } from './policies/types.js';
export type { Vector } from './upkeep/embedder.js';
export type { Hit, Stored, VectorStore } from './upkeep/store.js';
export type { ForgetSummaryRequest, SummarizeRequest, Summary } from './upkeep/summarizer.js';
export type { Fact, Injected } from './upkeep/types.js';
export { Cassette, requestKey, type BilledUsage, type CassetteEntry, type ChatMessage, type UpkeepRequest } from './upkeep/cassette.js';
export { DEFAULT_PROMPTS, type UpkeepPrompts } from './upkeep/prompts.js';
export { CassetteMissError, recordedUpkeep, simulatedUpkeep, type Miss, type MissHandler, type RecordedOptions, type Upkeep } from './upkeep/upkeep.js';
export type { ExtractRequest } from './upkeep/extractor.js';
export { COMMON_PARAMS, paramsFromTable, type CommonParams } from './policies/params.js';
export { param } from './policies/param.js';
export {
  checkPolicyContract,
  CONTRACT_RULES,
  contractVariants,
  formatContractViolation,
  planProblems,
  type ContractOptions,
  type ContractRule,
  type ContractViolation,
  type PlanCall,
  type PlanProblem,
} from './policies/contract.js';
export { guardPolicy } from './policies/guard.js';
export { isPolicyPath, loadPolicyModule, type PolicyModule } from './policies/module.js';

// Prices and provider rules
export { builtinPrices, loadPrices } from './pricing/load.js';
export { lookup, type ModelPrice, type PriceTable } from './pricing/prices.js';
export type { CostSettings } from './pricing/settings.js';
export { checkPrompt, type RuleSet, type Violation } from './message-rules/provider.js';

// Token counting
export { openTokenCounter, messageText, TokenCounter } from './tokens/counter.js';
export { encodingForModel, textCounter, TOKENIZERS, type EncodingName, type ResolvedEncoding, type TextCounter, type TokenFactor, type TokenizerName } from './tokens/encoding.js';
export { OPEN_WEIGHTS, type OpenWeightName, type OpenWeightSource } from './tokens/open-weights.js';

// Records: CSV, results.json, money
export { policiesCsv, probesCsv, summaryCsv, turnsCsv, violationsCsv } from './records/csv.js';
export { parseResultsJson, resultsJson, type ResultsDocument, type ResultsMeta } from './records/json.js';
export { dollars, percent, usd } from './records/format.js';
export type { ModelInfo, PolicyInfo, ReportInfo, ScenarioInfo } from './records/info.js';
export type { Reported } from './records/digest.js';

// Reports: strings and bytes
export { reportFiles, reportOnlyFiles, reportOutput, singleOutput, type OutputFormat, type ReportFilesOptions } from './report/outputs.js';
export { charts, type Chart } from './report/charts.js';
export { specJson } from './report/spec-json.js';
export { reportMarkdown, budgetMarkdown } from './report/markdown.js';
export { reportHtml } from './report/html.js';
export { budgetCsv } from './report/budget.js';
export { policyTable, runSummary, TABLE_SORTS, type TableOptions, type TableSort } from './report/text.js';
export { verdict, DEFAULT_MIN_RETENTION } from './report/verdict.js';
export { pricesTable, type Counting } from './report/prices.js';
export { gateAnnotations, gateJson, gateJunit, gateMarkdown } from './report/gate.js';

// The CI gate
export { baselineJson, makeBaseline, readBaseline, type Baseline, type BaselineRow, type StudyFingerprint } from './gate/baseline.js';
export { compare, DEFAULT_LIMITS, type GateLimits, type GateResult, type LostFact, type PolicyComparison, type RetentionLimit, type RowComparison, type Verdict } from './gate/compare.js';

export type * from './types.js';
