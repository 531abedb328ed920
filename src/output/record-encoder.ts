import type { EncodeScenario, ScenarioRecords } from '../engine/run.js';
import type { ScenarioEncoder } from '../engine/spec.js';
import { DigestBuilder, type DigestPart } from '../records/digest.js';
import { recordText, textBuffers, type RecordText } from '../records/encode.js';
import type { StreamedList } from '../records/json.js';

/**
 * The encoder the file sinks name (`Execution.encoder`): a worker thread
 * imports this module and turns each scenario's records into what those
 * sinks take of them — their text in the record files and their part of the
 * report digest — so the turn, probe and violation records never cross
 * threads and the writing thread only writes bytes and adds up sums. On one
 * thread the sinks get the lists and make the same text themselves.
 */

/** A scenario's records as this encoder sends them: their bytes in the record files, their sums in the report digest. */
export interface RecordEncoding {
  text: RecordText;
  digest: DigestPart;
}

/** One scenario's records as a study sink takes them: as lists, or encoded by this module on a worker thread. */
export type StudyRecords = ScenarioRecords<RecordEncoding>;

/** The record lists whose text is made (any other list's text is empty). */
export interface RecordEncoderOptions {
  lists: readonly StreamedList[];
}

/**
 * Encodes one scenario on a worker thread (the function the worker calls).
 * @public (imported by URL, `recordEncoder`)
 */
export const encodeScenario: EncodeScenario<RecordEncoderOptions, RecordEncoding> = (records, options, ctx) => {
  const text = recordText(records, options.lists);
  const digest = new DigestBuilder(ctx.models.length > 1).add(records).part();
  return { encoded: { text, digest }, transfer: textBuffers(text) };
};

/**
 * This module as the encoder of a sink that writes the lists given. A worker
 * imports it from where it is loaded here (dist/ in a built package; a run
 * from the TypeScript sources stays on one thread, as its worker is the
 * compiled one).
 */
export function recordEncoder(lists: readonly StreamedList[]): ScenarioEncoder {
  const options: RecordEncoderOptions = { lists };
  return { module: import.meta.url, options };
}
