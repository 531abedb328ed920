import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import type { RecordSink, ScenarioRecords } from '../engine/run.js';
import { byPolicy } from '../engine/summarize.js';
import { DigestBuilder, type Reported } from '../report/aggregate.js';
import { csvHeader, csvRow, PROBE_COLUMNS, TURN_COLUMNS, VIOLATION_COLUMNS, type Column } from '../report/csv.js';
import { EMPTY_LIST, jsonRow, LIST_CLOSE, LIST_OPEN, STREAMED_LISTS, type ResultsJsonFrame } from '../report/json.js';
import type { SummaryRecord } from '../types.js';
import type { StagedFiles } from './_io.js';

/**
 * The record files of an output folder, written as the records stream in:
 * turns.csv, probes.csv and violations.csv row by row (the header first),
 * and the turns, probes and violations lists of results.json to scratch
 * files, through buffers. `finish` then writes results.json: its head (policies and
 * summary are known only at the end), each list copied from its scratch file
 * in chunks, its end. All of it goes through `staged`, so nothing is in
 * place until the folder is committed.
 */

/** The records a batch holds for these files. */
export type RecordBatch = Pick<ScenarioRecords, 'turns' | 'probes' | 'violations'>;

/** Bytes a file collects before they go to disk. */
const BUFFER = 1 << 20;

/**
 * A file written line by line through a buffer: lines are encoded into it as
 * they come (one large string per batch would be built, flattened and
 * encoded again), and it goes to disk when full, on `flush`.
 */
export class LineFile {
  private readonly buffer = Buffer.allocUnsafe(BUFFER);
  private at = 0;
  /** Lines written so far. */
  lines = 0;

  constructor(readonly fd: number) {}

  write(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.at + 3 * line.length > BUFFER) {
      this.flush();
      if (3 * line.length > BUFFER) {
        writeFileSync(this.fd, line);
        this.lines++;
        return;
      }
    }
    this.at += this.buffer.write(line, this.at);
    this.lines++;
  }

  /** Writes what the buffer holds (writeFileSync on a descriptor writes at its position, and all of it). */
  flush(): void {
    if (this.at) writeFileSync(this.fd, this.buffer.subarray(0, this.at));
    this.at = 0;
  }
}

/** A CSV file fed batch by batch: the header first, then a line per row. */
interface CsvFeed {
  file: LineFile;
  add(batch: RecordBatch): void;
}

function csvFeed<T>(file: LineFile, columns: readonly Column<T>[], rows: (batch: RecordBatch) => readonly T[]): CsvFeed {
  file.write(csvHeader(columns));
  return {
    file,
    add(batch) {
      for (const r of rows(batch)) file.write(csvRow(columns, r));
    },
  };
}

/** Bytes copied per read from a scratch file into results.json. */
const CHUNK = 1 << 20;

export class RecordFiles {
  private readonly csv: CsvFeed[];
  private readonly json: Record<keyof RecordBatch, LineFile>;
  private readonly results: string;
  private closed = false;

  /** Opens the files in `staged` (names: turns.csv, probes.csv, violations.csv, results.json). */
  constructor(staged: StagedFiles) {
    const fds: number[] = [];
    const open = (path: string, flags: string): LineFile => {
      const fd = openSync(path, flags);
      fds.push(fd);
      return new LineFile(fd);
    };
    try {
      this.csv = [
        csvFeed(open(staged.path('turns.csv'), 'w'), TURN_COLUMNS, (b) => b.turns),
        csvFeed(open(staged.path('probes.csv'), 'w'), PROBE_COLUMNS, (b) => b.probes),
        csvFeed(open(staged.path('violations.csv'), 'w'), VIOLATION_COLUMNS, (b) => b.violations),
      ];
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
  }

  /** Appends the next batch of records (in run order) to every file. */
  add(batch: RecordBatch): void {
    for (const c of this.csv) c.add(batch);
    for (const list of STREAMED_LISTS) {
      const file = this.json[list];
      for (const r of batch[list]) file.write(jsonRow(r, file.lines === 0));
    }
  }

  /** Writes results.json from its frame and the streamed lists, and closes every file. */
  finish(frame: ResultsJsonFrame): void {
    for (const c of this.csv) c.file.flush();
    const out = openSync(this.results, 'w');
    try {
      const buffer = Buffer.allocUnsafe(CHUNK);
      for (const list of STREAMED_LISTS) {
        const file = this.json[list];
        file.flush();
        writeFileSync(out, frame.before[list]);
        if (!file.lines) {
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
    for (const file of [...this.csv.map((c) => c.file), ...Object.values(this.json)]) closeSync(file.fd);
  }
}

/**
 * A sink that keeps what the reports need of a streamed run: the summaries
 * (one per scenario × policy) and the digest of the turn and probe records.
 */
export function digestSink(): { sink: RecordSink; reported(): Reported } {
  const summary: SummaryRecord[] = [];
  const digest = new DigestBuilder();
  return {
    sink: (records) => {
      for (const s of records.summary) summary.push(s);
      digest.add(records);
    },
    reported: () => ({ summary, policies: byPolicy(summary), digest: digest.finish() }),
  };
}
