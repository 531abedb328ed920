import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import type { RecordSink } from '../engine/run.js';
import { byPolicy } from '../engine/summarize.js';
import { DigestBuilder, type Reported } from '../report/aggregate.js';
import { csvHeader, PROBE_COLUMNS, TURN_COLUMNS, VIOLATION_COLUMNS } from '../report/csv.js';
import { EMPTY_LIST, LIST_CLOSE, LIST_OPEN, STREAMED_LISTS, type ResultsJsonFrame, type StreamedList } from '../report/json.js';
import { recordText, type RecordBatch, type RecordText } from '../report/records.js';
import type { SummaryRecord } from '../types.js';
import type { StagedFiles } from './_io.js';

/**
 * The record files of an output folder, written as the records stream in:
 * turns.csv, probes.csv and violations.csv (the header first), and the
 * turns, probes and violations lists of results.json to scratch files, each
 * through a buffer; a batch's text comes made by the worker thread that
 * replayed it, or is made here. `finish` then writes
 * results.json: its head (policies and summary are known only at the end),
 * each list copied from its scratch file in chunks, its end. All of it goes
 * through `staged`, so nothing is in place until the folder is committed.
 */

/** Bytes a file collects before they go to disk. */
const BUFFER = 1 << 20;

/**
 * A file written through a buffer: text and bytes are copied into it as they
 * come, and it goes to disk when full, and on `flush`. A chunk larger than
 * the buffer goes straight to the file.
 */
export class BufferedFile {
  private readonly buffer = Buffer.allocUnsafe(BUFFER);
  private at = 0;
  /** Chunks written so far. */
  writes = 0;

  constructor(readonly fd: number) {}

  write(chunk: string | Uint8Array): void {
    this.writes++;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = typeof chunk === 'string' ? 3 * chunk.length : chunk.length;
    if (this.at + most > BUFFER) {
      this.flush();
      if (most > BUFFER) {
        writeFileSync(this.fd, chunk);
        return;
      }
    }
    if (typeof chunk === 'string') this.at += this.buffer.write(chunk, this.at);
    else {
      this.buffer.set(chunk, this.at);
      this.at += chunk.length;
    }
  }

  /** Writes what the buffer holds (writeFileSync on a descriptor writes at its position, and all of it). */
  flush(): void {
    if (this.at) writeFileSync(this.fd, this.buffer.subarray(0, this.at));
    this.at = 0;
  }
}

/** Bytes copied per read from a scratch file into results.json. */
const CHUNK = 1 << 20;

export class RecordFiles {
  private readonly csv: Record<StreamedList, BufferedFile>;
  private readonly json: Record<StreamedList, BufferedFile>;
  private readonly results: string;
  private closed = false;

  /** Opens the files in `staged` (names: turns.csv, probes.csv, violations.csv, results.json). */
  constructor(staged: StagedFiles) {
    const fds: number[] = [];
    const open = (path: string, flags: string): BufferedFile => {
      const fd = openSync(path, flags);
      fds.push(fd);
      return new BufferedFile(fd);
    };
    try {
      this.csv = {
        turns: open(staged.path('turns.csv'), 'w'),
        probes: open(staged.path('probes.csv'), 'w'),
        violations: open(staged.path('violations.csv'), 'w'),
      };
      // Read back in `finish`: opened for writing and reading.
      this.json = {
        turns: open(staged.scratch('results.json.turns'), 'w+'),
        probes: open(staged.scratch('results.json.probes'), 'w+'),
        violations: open(staged.scratch('results.json.violations'), 'w+'),
      };
      this.results = staged.path('results.json');
    } catch (e) {
      for (const fd of fds) closeSync(fd);
      throw e;
    }
    this.csv.turns.write(csvHeader(TURN_COLUMNS));
    this.csv.probes.write(csvHeader(PROBE_COLUMNS));
    this.csv.violations.write(csvHeader(VIOLATION_COLUMNS));
  }

  /** Appends the next batch of records (in run order) to every file: its text as it comes made, or made here. */
  add(batch: RecordBatch & { text?: RecordText }): void {
    const text = batch.text ?? recordText(batch);
    for (const list of STREAMED_LISTS) {
      const { csv, json } = text[list];
      if (csv.length) this.csv[list].write(csv);
      if (!json.length) continue;
      if (this.json[list].writes) this.json[list].write(',\n');
      this.json[list].write(json);
    }
  }

  /** Writes results.json from its frame and the streamed lists, and closes every file. */
  finish(frame: ResultsJsonFrame): void {
    for (const list of STREAMED_LISTS) this.csv[list].flush();
    const out = openSync(this.results, 'w');
    try {
      const buffer = Buffer.allocUnsafe(CHUNK);
      for (const list of STREAMED_LISTS) {
        const file = this.json[list];
        file.flush();
        writeFileSync(out, frame.before[list]);
        if (!file.writes) {
          writeFileSync(out, EMPTY_LIST);
          continue;
        }
        writeFileSync(out, LIST_OPEN);
        for (let at = 0, n; (n = readSync(file.fd, buffer, 0, CHUNK, at)) > 0; at += n) writeFileSync(out, buffer.subarray(0, n));
        writeFileSync(out, LIST_CLOSE);
      }
      writeFileSync(out, frame.end);
    } finally {
      closeSync(out);
    }
    this.close();
  }

  /** Closes every file (again: nothing); the staged folder removes them on abort. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const file of [...Object.values(this.csv), ...Object.values(this.json)]) closeSync(file.fd);
  }
}

/**
 * A sink that keeps what the reports need of a streamed run: the summaries
 * (one per scenario × policy) and the digest of the turn and probe records
 * (summed here, or merged from the sums a worker thread sent).
 */
export function digestSink(): { sink: RecordSink; reported(): Reported } {
  const summary: SummaryRecord[] = [];
  const digest = new DigestBuilder();
  return {
    sink: (records) => {
      for (const s of records.summary) summary.push(s);
      if (records.digest) digest.merge(records.digest);
      else digest.add(records);
    },
    reported: () => ({ summary, policies: byPolicy(summary), digest: digest.finish() }),
  };
}
