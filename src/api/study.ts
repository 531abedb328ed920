/**
 * `ctxsim/study`: the rest of running a study — the sinks beyond the root's
 * (one output's text or file, a shard), merging shard files, staged output
 * files, the study file's JSON Schema, the pipeline's events, and a study's
 * upkeep as a run takes it (`studyUpkeep`). The root
 * export has `loadStudy`, `runStudyPipeline` and the common sinks.
 *
 * @packageDocumentation
 * @module ctxsim/study
 */

export { studyJsonSchema } from '../study/study.js';
export { resultsMeta, type SinkOutcome, type StudyEvents } from '../study/pipeline.js';
export type { StudyDone } from '../output/sink.js';
export { fileSink, shardSink, textSink, type ReportedResults } from '../output/sinks.js';
export { mergeShardFiles } from '../study/merge.js';
export { OutputSet } from '../output/files.js';
export type { StudyRecords } from '../output/record-encoder.js';
export { studyUpkeep, type RunUpkeepOf } from '../recording/upkeep.js';
