/**
 * `ctxsim/engine`: replay conversations you already have through policy
 * variants — a whole set (`runStudy`, `streamStudy`, on worker threads
 * `runStudyParallel`, `streamStudyParallel`) or one conversation
 * (`replay`) — and make the per-policy rows from records.
 *
 * @packageDocumentation
 * @module ctxsim/engine
 */

export {
  replayContext,
  replayContexts,
  runStudy,
  streamStudy,
  type Conversations,
  type EncodedScenario,
  type ModelContext,
  type RecordLists,
  type RecordSink,
  type RunInfo,
  type RunModel,
  type RunOptions,
  type RunResults,
  type RunUpkeep,
  type ScenarioRecordLists,
  type ScenarioRecords,
} from '../engine/run.js';
export { runStudyParallel, streamStudyParallel } from '../engine/parallel.js';
export { replay, type Replay, type ReplayContext, type SentCall } from '../engine/replay.js';
export { byPolicy, summaryOf } from '../engine/summary.js';
