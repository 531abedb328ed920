import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { csvHeader, PROBE_COLUMNS, TURN_COLUMNS, VIOLATION_COLUMNS } from '../records/csv.js';
import { EMPTY_LIST, LIST_CLOSE, LIST_OPEN, streamedLists, type RecordsMode, type ResultsJsonFrame, type StreamedList } from '../records/json.js';
import { recordText } from '../records/encode.js';
import type { StagedFiles } from './files.js';
import type { StudyRecords } from './record-encoder.js';

/**
 * The record files of an output folder, written as the records stream in:
 * turns.csv, probes.csv and violations.csv (the header first), and the
 * turns, probes and violations lists of results.json to scratch files, a
 * batch's bytes at a time (made by the worker thread that replayed it, or
 * here); with `summary` records, violations only (a worker's text of the
 * turns and probes is dropped; text made here leaves them out). `finish`
 * then writes results.json: its head (policies and summary are known only
 * at the end), each list copied from its scratch file in chunks, its end.
 * All of it goes through `staged`, so nothing is in place until the folder
 * is committed. (writeFileSync on a descriptor writes at its position, and
 * all of it.) Without the CSV files (`csv: false`), it writes results.json
 * alone, under the name given: `ctxsim run --out FILE.json`; or gives it to
 * a writer (`finishTo`, `ctxsim run --out - --format json`).
 */

/** Bytes copied per read from a scratch file into results.json. */
const CHUNK = 1 << 20;

/** Each record file's header row. */
const HEADERS: Record<StreamedList, string> = { turns: csvHeader(TURN_COLUMNS), probes: csvHeader(PROBE_COLUMNS), violations: csvHeader(VIOLATION_COLUMNS) };

/** A list's CSV file, and the scratch file of its results.json list (with whether it holds a line yet). */
interface ListFiles {
  csv: number | undefined;
  json: { fd: number; started: boolean };
}

export class RecordFiles {
  /** The lists written, in file order. */
  private readonly lists: readonly StreamedList[];
  private readonly files: Partial<Record<StreamedList, ListFiles>> = {};
  private readonly results: string;
  private closed = false;

  /**
   * Opens the files in `staged` (names: turns.csv, probes.csv,
   * violations.csv, results.json; with `summary` records, no turns.csv or
   * probes.csv; with `csv: false`, results.json alone, named `results`).
   */
  constructor(staged: StagedFiles, records: RecordsMode = 'full', opts: { csv?: boolean; results?: string } = {}) {
    this.lists = streamedLists(records);
    const fds: number[] = [];
    const open = (path: string, flags: string): number => {
      const fd = openSync(path, flags);
      fds.push(fd);
      return fd;
    };
    try {
      const results = opts.results ?? 'results.json';
      for (const list of this.lists) {
        const csv = opts.csv === false ? undefined : open(staged.path(`${list}.csv`), 'w');
        // Read back in `finish`: opened for writing and reading.
        this.files[list] = { csv, json: { fd: open(staged.scratch(`${results}.${list}`), 'w+'), started: false } };
        if (csv !== undefined) writeFileSync(csv, HEADERS[list]);
      }
      this.results = staged.path(results);
    } catch (e) {
      for (const fd of fds) closeSync(fd);
      throw e;
    }
  }

  /** Appends the next scenario's records (in run order) to every file: its text as a worker thread made it (record-encoder.ts), or made here. */
  add(records: StudyRecords): void {
    const text = records.kind === 'encoded' ? records.encoded.text : recordText(records, this.lists);
    for (const list of this.lists) {
      const { csv, json } = text[list];
      const files = this.files[list]!;
      if (csv.length && files.csv !== undefined) writeFileSync(files.csv, csv);
      if (!json.length) continue;
      const scratch = files.json;
      if (scratch.started) writeFileSync(scratch.fd, ',\n');
      writeFileSync(scratch.fd, json);
      scratch.started = true;
    }
  }

  /** Writes results.json to its file from its frame (made for the same records mode) and the streamed lists, and closes every file. */
  finish(frame: ResultsJsonFrame): void {
    const out = openSync(this.results, 'w');
    try {
      for (const chunk of this.chunks(frame)) writeFileSync(out, chunk);
    } finally {
      closeSync(out);
    }
    this.close();
  }

  /**
   * Gives results.json to `write` a chunk at a time (`ctxsim run --out -
   * --format json`), waiting whenever `write` asks (a promise: its reader
   * is behind), and closes every file: however slow the reader, no more than
   * a chunk waits in memory.
   */
  async finishTo(frame: ResultsJsonFrame, write: Writer): Promise<void> {
    await writeAll(this.chunks(frame), write);
    this.close();
  }

  /** results.json's chunks: its head, each list copied from its scratch file (chunks of one buffer, each valid until the next), its end. */
  private *chunks(frame: ResultsJsonFrame): Generator<string | Uint8Array> {
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (const { list, before } of frame.lists) {
      const { fd, started } = this.files[list]!.json;
      yield before;
      if (!started) {
        yield EMPTY_LIST;
        continue;
      }
      yield LIST_OPEN;
      yield* fileChunks(fd, buffer);
      yield LIST_CLOSE;
    }
    yield frame.end;
  }

  /** Closes every file (again: nothing); the staged folder removes them on abort. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const list of this.lists) {
      const { csv, json } = this.files[list]!;
      if (csv !== undefined) closeSync(csv);
      closeSync(json.fd);
    }
  }
}

/**
 * What takes an output a chunk at a time; a promise returned says to wait
 * for it before the next chunk (stdout's reader is behind). A chunk given as
 * bytes is valid only until the call returns: a writer that keeps it copies it.
 */
export type Writer = (chunk: string | Uint8Array) => void | Promise<void>;

/** The bytes of the file open at `fd`, a chunk at a time (views of `buffer`, each valid until the next). */
export function* fileChunks(fd: number, buffer: Uint8Array = Buffer.allocUnsafe(CHUNK)): Generator<Uint8Array> {
  for (let at = 0, n; (n = readSync(fd, buffer, 0, buffer.length, at)) > 0; at += n) yield buffer.subarray(0, n);
}

/** Gives `write` every chunk, waiting for each promise it returns before the next. */
export async function writeAll(chunks: Iterable<string | Uint8Array>, write: Writer): Promise<void> {
  for (const chunk of chunks) {
    const wait = write(chunk);
    if (wait) await wait;
  }
}
