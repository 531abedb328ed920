import type { StudyFingerprint } from '../gate/baseline.js';
import type { ReportInfo } from '../records/info.js';
import type { ResultsMeta, StreamedList } from '../records/json.js';
import type { OutputSet } from './files.js';
import type { StudyRecords } from './record-encoder.js';

/**
 * The sink contract: every output of a study goes through a `StudySink`
 * (sinks.ts: every record kept in memory, only the digest, an output
 * folder, one output's text, a shard file, the gate's). The pipeline
 * (study/pipeline.ts) feeds one from a replay, `ctxsim merge`
 * (study/merge.ts) from shard files.
 */

/** What a finished run tells a sink besides the records it was given. */
export interface StudyDone {
  fingerprint: StudyFingerprint;
  info: ReportInfo;
  /** results.json's meta. */
  meta: ResultsMeta;
}

/**
 * Where a study's records go as it runs, and what is made of them at the
 * end. `add` takes each scenario's records in study order; `finish` makes the
 * output once the run is done; `abort` undoes what `add` began when the run
 * fails (no half-written file stays). Given `outputs`, `finish` stages the
 * files it writes there, for its owner to commit with the command's other
 * outputs; without, it commits them itself.
 */
export interface StudySink<R> {
  /**
   * The record lists whose text worker threads make for this sink: each
   * scenario is then encoded on its thread (`recordEncoder`,
   * record-encoder.ts: its bytes in the record files of these lists and its
   * part of the report digest), and `add` gets that instead of the lists;
   * absent: the lists.
   * @internal The protocol between ctxsim's own sinks and the worker threads.
   */
  readonly encodedLists?: readonly StreamedList[];
  add(records: StudyRecords, index: number): void;
  finish(done: StudyDone, outputs?: OutputSet): Promise<R>;
  abort(): void;
}
