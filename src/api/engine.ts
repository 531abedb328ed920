/**
 * `ctxsim/engine`: replay conversations you already have through policy
 * variants — a whole set (`runStudy`, `streamStudy`, on worker threads
 * `runStudyParallel`, `streamStudyParallel`) or one conversation
 * (`replay`) — and make the per-policy rows from records. A run's options
 * are its work, its `RunSpec` (what decides the records: checked by
 * `RUN_SPEC`, the replay cache's key) and its `Execution` (how it runs).
 *
 * @packageDocumentation
 * @module ctxsim/engine
 */

export {
  replayContext,
  runStudy,
  streamStudy,
  type ListSink,
  type ModelContext,
  type RecordLists,
  type RecordSink,
  type RunInfo,
  type RunModel,
  type RunResults,
  type ScenarioRecordLists,
  type ScenarioRecords,
} from '../engine/run.js';
export { RUN_SPEC, type Conversations, type Execution, type RunOptions, type RunSpec, type RunUpkeep, type RunWork } from '../engine/spec.js';
export { runStudyParallel, streamStudyParallel } from '../engine/parallel.js';
export { replay, type OnCall, type OnUpkeep, type Replay, type ReplayContext, type SentCall, type UpkeepPrice } from '../engine/replay.js';
export { byPolicy, summaryOf } from '../engine/summary.js';
