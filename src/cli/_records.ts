import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import type { RecordSink, ScenarioRecords } from '../engine/run.js';
import { byPolicy } from '../engine/summarize.js';
import { DigestBuilder, type Reported } from '../report/aggregate.js';
import { csvRows, PROBE_COLUMNS, TURN_COLUMNS, VIOLATION_COLUMNS, type Column } from '../report/csv.js';
import { EMPTY_LIST, jsonRows, LIST_CLOSE, LIST_OPEN, STREAMED_LISTS, type ResultsJsonFrame } from '../report/json.js';
import type { SummaryRecord } from '../types.js';
import type { StagedFiles } from './_io.js';

/**
 * The record files of an output folder, written as the records stream in:
 * turns.csv, probes.csv and violations.csv batch by batch (the header with
 * the first), and the turns, probes and violations lists of results.json to
 * scratch files. `finish` then writes results.json: its head (policies and
 * summary are known only at the end), each list copied from its scratch file
 * in chunks, its end. All of it goes through `staged`, so nothing is in
 * place until the folder is committed.
 */

/** The records a batch holds for these files. */
export type RecordBatch = Pick<ScenarioRecords, 'turns' | 'probes' | 'violations'>;

/** One file fed batch by batch. */
interface Feed {
  fd: number;
  /** Rows written so far. */
  rows: number;
  /** Whether anything (a header, for a CSV file) has been written. */
  started: boolean;
}

/** A CSV file fed batch by batch: the header goes with the first batch, even an empty one. */
interface CsvFeed {
  feed: Feed;
  add(batch: RecordBatch): void;
}

function csvFeed<T>(feed: Feed, columns: readonly Column<T>[], rows: (batch: RecordBatch) => readonly T[]): CsvFeed {
  return {
    feed,
    add(batch) {
      const list = rows(batch);
      if (!list.length && feed.started) return;
      writeFileSync(feed.fd, csvRows(columns, list, !feed.started));
      feed.started = true;
      feed.rows += list.length;
    },
  };
}

/** (writeFileSync on a descriptor writes at its position, and all of it.) Bytes copied per read from a scratch file into results.json. */
const CHUNK = 1 << 20;

export class RecordFiles {
  private readonly csv: CsvFeed[];
  private readonly json: Record<keyof RecordBatch, Feed>;
  private readonly results: string;
  private closed = false;

  /** Opens the files in `staged` (names: turns.csv, probes.csv, violations.csv, results.json). */
  constructor(staged: StagedFiles) {
    const fds: number[] = [];
    const open = (path: string, flags: string): Feed => {
      const fd = openSync(path, flags);
      fds.push(fd);
      return { fd, rows: 0, started: false };
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
      const feed = this.json[list];
      const rows = batch[list];
      if (!rows.length) continue;
      writeFileSync(feed.fd, jsonRows(rows, feed.rows === 0));
      feed.rows += rows.length;
    }
  }

  /** Writes results.json from its frame and the streamed lists, and closes every file. */
  finish(frame: ResultsJsonFrame): void {
    // A run without any batch still writes each CSV header.
    for (const c of this.csv) c.add({ turns: [], probes: [], violations: [] });
    const out = openSync(this.results, 'w');
    try {
      const buffer = Buffer.allocUnsafe(CHUNK);
      for (const list of STREAMED_LISTS) {
        const feed = this.json[list];
        writeFileSync(out, frame.before[list]);
        if (!feed.rows) {
          writeFileSync(out, EMPTY_LIST);
          continue;
        }
        writeFileSync(out, LIST_OPEN);
        for (let at = 0, n; (n = readSync(feed.fd, buffer, 0, CHUNK, at)) > 0; at += n) writeFileSync(out, buffer.subarray(0, n));
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
    for (const feed of [...this.csv.map((c) => c.feed), ...Object.values(this.json)]) closeSync(feed.fd);
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
