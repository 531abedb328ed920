import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import type { ScenarioRecords } from '../engine/run.js';
import { csvHeader, PROBE_COLUMNS, TURN_COLUMNS, VIOLATION_COLUMNS } from '../records/csv.js';
import { EMPTY_LIST, LIST_CLOSE, LIST_OPEN, STREAMED_LISTS, type ResultsJsonFrame, type StreamedList } from '../records/json.js';
import { recordText } from '../records/encode.js';
import type { StagedFiles } from './files.js';

/**
 * The record files of an output folder, written as the records stream in:
 * turns.csv, probes.csv and violations.csv (the header first), and the
 * turns, probes and violations lists of results.json to scratch files, a
 * batch's bytes at a time (made by the worker thread that replayed it, or
 * here). `finish` then writes results.json: its head (policies and summary
 * are known only at the end), each list copied from its scratch file in
 * chunks, its end. All of it goes through `staged`, so nothing is in place
 * until the folder is committed. (writeFileSync on a descriptor writes at
 * its position, and all of it.)
 */

/** Bytes copied per read from a scratch file into results.json. */
const CHUNK = 1 << 20;

export class RecordFiles {
  private readonly csv: Record<StreamedList, number>;
  /** The scratch file of each results.json list, and whether it holds a line yet. */
  private readonly json: Record<StreamedList, { fd: number; started: boolean }>;
  private readonly results: string;
  private closed = false;

  /** Opens the files in `staged` (names: turns.csv, probes.csv, violations.csv, results.json). */
  constructor(staged: StagedFiles) {
    const fds: number[] = [];
    const open = (path: string, flags: string): number => {
      const fd = openSync(path, flags);
      fds.push(fd);
      return fd;
    };
    try {
      this.csv = {
        turns: open(staged.path('turns.csv'), 'w'),
        probes: open(staged.path('probes.csv'), 'w'),
        violations: open(staged.path('violations.csv'), 'w'),
      };
      // Read back in `finish`: opened for writing and reading.
      const scratch = (list: StreamedList) => ({ fd: open(staged.scratch(`results.json.${list}`), 'w+'), started: false });
      this.json = { turns: scratch('turns'), probes: scratch('probes'), violations: scratch('violations') };
      this.results = staged.path('results.json');
      writeFileSync(this.csv.turns, csvHeader(TURN_COLUMNS));
      writeFileSync(this.csv.probes, csvHeader(PROBE_COLUMNS));
      writeFileSync(this.csv.violations, csvHeader(VIOLATION_COLUMNS));
    } catch (e) {
      for (const fd of fds) closeSync(fd);
      throw e;
    }
  }

  /** Appends the next scenario's records (in run order) to every file: its text as a worker thread made it, or made here. */
  add(records: ScenarioRecords): void {
    const text = records.kind === 'encoded' ? records.text : recordText(records);
    for (const list of STREAMED_LISTS) {
      const { csv, json } = text[list];
      if (csv.length) writeFileSync(this.csv[list], csv);
      if (!json.length) continue;
      const scratch = this.json[list];
      if (scratch.started) writeFileSync(scratch.fd, ',\n');
      writeFileSync(scratch.fd, json);
      scratch.started = true;
    }
  }

  /** Writes results.json from its frame and the streamed lists, and closes every file. */
  finish(frame: ResultsJsonFrame): void {
    const out = openSync(this.results, 'w');
    try {
      const buffer = Buffer.allocUnsafe(CHUNK);
      for (const list of STREAMED_LISTS) {
        const { fd, started } = this.json[list];
        writeFileSync(out, frame.before[list]);
        if (!started) {
          writeFileSync(out, EMPTY_LIST);
          continue;
        }
        writeFileSync(out, LIST_OPEN);
        for (let at = 0, n; (n = readSync(fd, buffer, 0, CHUNK, at)) > 0; at += n) writeFileSync(out, buffer.subarray(0, n));
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
    for (const list of STREAMED_LISTS) {
      closeSync(this.csv[list]);
      closeSync(this.json[list].fd);
    }
  }
}
