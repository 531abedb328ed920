import { closeSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { appendRecords, type RecordLists } from '../engine/run.js';
import { byPolicy } from '../engine/summary.js';
import { shardFileName, toJson, type ShardFile } from '../gate/shard.js';
import { csvHeader, TURN_COLUMNS } from '../records/csv.js';
import { DigestBuilder, severalModels, type Reported } from '../records/digest.js';
import { recordText } from '../records/encode.js';
import { RECORDS_MODES, resultsJson, resultsJsonFrame, type RecordsMode, streamedLists } from '../records/json.js';
import { reportOnlyFiles, reportOutput, singleOutput, type OutputFormat, type ReportFilesOptions } from '../report/outputs.js';
import type { Results, SummaryRecord } from '../records/registry.js';
import { checkFileTarget, naming, StagedFiles, writeFileAtomic, type OutputSet } from './files.js';
import type { StudyDone, StudySink } from './sink.js';
import { fileChunks, RecordFiles, writeAll, type Writer } from './record-files.js';
import type { StudyRecords } from './record-encoder.js';

/**
 * The outputs of a study, each a `StudySink` for `runStudyPipeline`: every
 * record kept in memory, only what the reports need (summaries and the
 * digest), an output folder, one output's text, a shard file.
 */

/** A study's results kept in memory: every record, with what describes the run. */
export interface KeptResults extends StudyDone {
  results: Results;
}

/** Keeps every record: the in-memory results of the study. */
export function memorySink(): StudySink<KeptResults> {
  const all: RecordLists = { turns: [], probes: [], summary: [], violations: [] };
  return {
    add(records) {
      if (records.kind === 'encoded') throw new Error('memorySink: given encoded records');
      appendRecords(all, records);
    },
    finish: async (done) => ({ ...done, results: { ...all, policies: byPolicy(all.summary) } }),
    abort() {},
  };
}

/** What the reports need of a streamed run, and what describes it. */
export interface ReportedResults extends StudyDone {
  results: Reported;
}

/**
 * Keeps what the reports need: the summaries (one per scenario × policy) and
 * the digest of the turn and probe records (summed here, or merged from the
 * sums a worker thread sent).
 */
export function digestSink(): StudySink<ReportedResults> & { reported(): Reported } {
  const summary: SummaryRecord[] = [];
  // Made at the first scenario, whose summaries tell whether the run has several models (every scenario runs on each).
  let digest: DigestBuilder | undefined;
  const reported = (): Reported => ({ summary, policies: byPolicy(summary), digest: (digest ?? new DigestBuilder()).finish() });
  return {
    add(records: StudyRecords) {
      for (const s of records.summary) summary.push(s);
      digest ??= new DigestBuilder(severalModels(records.summary));
      if (records.kind === 'encoded') digest.merge(records.encoded.digest);
      else digest.add(records);
    },
    reported,
    finish: async (done) => ({ ...done, results: reported() }),
    abort() {},
  };
}

/** What an output a sink writes holds. */
export interface RecordsOptions {
  /**
   * `full` (default): every record; `summary`: no turn or probe rows — no
   * turns.csv or probes.csv, results.json without its `turns` and `probes`
   * lists. Every other file is the same in both.
   */
  records?: RecordsMode;
}

/**
 * Writes an output folder all-or-nothing: the record files as the records
 * stream in (worker threads encode them), then the reports from the
 * summaries and the digest; every file is renamed into place only when all
 * are written. Its output is the list of files written. With `summary`
 * records the folder has no turns.csv or probes.csv and results.json no
 * turns or probes; the reports, made from the digest, are the same.
 */
export function folderSink(dir: string, opts: RecordsOptions & Pick<ReportFilesOptions, 'charts'> = {}): StudySink<string[]> {
  const mode = recordsMode(opts);
  const staged = new StagedFiles(dir);
  let files: RecordFiles;
  try {
    files = new RecordFiles(staged, mode);
    // The record files of the other mode, from an earlier run, go too: never old and new side by side.
    for (const list of streamedLists('full')) if (!streamedLists(mode).includes(list)) staged.retire(`${list}.csv`);
  } catch (e) {
    staged.abort();
    throw e;
  }
  const kept = digestSink();
  return {
    encodedLists: streamedLists(mode),
    add(records) {
      naming(dir, () => files.add(records));
      kept.add(records, 0);
    },
    async finish(done, outputs) {
      const results = kept.reported();
      naming(dir, () => files.finish(resultsJsonFrame(results, done.info, done.meta, mode)));
      for (const [name, content] of await reportOnlyFiles(results, done.info, opts.charts && { charts: opts.charts })) staged.write(name, content);
      if (!outputs) return staged.commit();
      outputs.add(staged);
      return staged.targets();
    },
    abort() {
      files.close();
      staged.abort();
    },
  };
}

/**
 * The sink of `ctxsim check`: given an output folder, writes the run's
 * reports there as `folderSink` does; else keeps nothing (the gate compares
 * the run's summaries and lost probes, which the pipeline keeps).
 */
export function gateSink(dir?: string): StudySink<string[]> {
  if (dir !== undefined) return folderSink(dir);
  return { add() {}, finish: async () => [], abort() {} };
}

/** Why `--records summary` has no csv output. */
const SUMMARY_CSV = '--records summary: the csv output is turns.csv, which summary records leave out; write json, a report, or a folder';

/**
 * One output's text (`--out FILE`, `--out -`): a report (md, html) from the
 * summaries and the digest, the records streamed past; a record file (csv:
 * turns.csv, json: results.json) from every record, kept. With `summary`
 * records, results.json without turns or probes (they are not kept), and no
 * csv: that output is turns.csv.
 */
export function textSink(format: OutputFormat, opts: RecordsOptions = {}): StudySink<string> {
  const mode = recordsMode(opts);
  if (format === 'md' || format === 'html') {
    const kept = digestSink();
    return { ...kept, finish: async (done) => reportOutput(format, kept.reported(), done.info) };
  }
  if (mode === 'summary') {
    if (format === 'csv') throw new UsageError(SUMMARY_CSV);
    const kept = memorySink();
    return {
      ...kept,
      add: (records, index) => kept.add(records.kind === 'records' ? { ...records, turns: [], probes: [] } : records, index),
      async finish(done) {
        const { results } = await kept.finish(done);
        return resultsJson(results, done.info, done.meta, 'summary');
      },
    };
  }
  const kept = memorySink();
  return {
    ...kept,
    async finish(done) {
      const { results } = await kept.finish(done);
      return singleOutput(format, results, done.info, done.meta);
    },
  };
}

/**
 * Writes the slice of a sharded run, losslessly, as `shard-K-of-N.json` in
 * `dir`; its output is the file's path. A shard file always holds every
 * record (whatever the records mode): `ctxsim merge` makes the reports'
 * digest from its turn and probe rows.
 */
export function shardSink(dir: string, shard: { index: number; count: number }): StudySink<string> {
  const kept = memorySink();
  return {
    ...kept,
    async finish(done, outputs) {
      const { results } = await kept.finish(done);
      const { turns, probes, summary, violations } = results;
      const file: ShardFile = { kind: 'ctxsim-shard', schemaVersion: 1, shard, study: done.fingerprint, info: done.info, turns, probes, summary, violations };
      const path = join(dir, shardFileName(shard));
      writeIn(outputs, path, toJson(file));
      return path;
    },
  };
}

/**
 * Writes one output file, all-or-nothing, to `path`; its output is the
 * file's path. The record files stream as `folderSink` writes them:
 * results.json's lists (`json`) and turns.csv's rows (`csv`) go to scratch
 * files in the staging folder as the records come, and only the summaries
 * are kept, so memory does not grow with the records. The reports (`md`,
 * `html`) are made from `textSink`'s text.
 */
export function fileSink(path: string, format: OutputFormat, opts: RecordsOptions = {}): StudySink<string> {
  if (format === 'json') return jsonFileSink(path, recordsMode(opts));
  if (format === 'csv') return csvFileSink(path, recordsMode(opts));
  const text = textSink(format, opts);
  return {
    ...text,
    async finish(done, outputs) {
      writeIn(outputs, path, await text.finish(done));
      return path;
    },
  };
}

/** `fileSink` of turns.csv: its rows streamed to a scratch file beside it, then copied into the staged file. */
function csvFileSink(path: string, mode: RecordsMode): StudySink<string> {
  // Refused before any folder is made for it.
  checkFileTarget(path);
  return turnsCsvSink(mode, dirname(path), (chunks, staged, outputs) => {
    naming(path, () => {
      const fd = openSync(staged.path(basename(path)), 'w');
      try {
        for (const chunk of chunks()) writeFileSync(fd, chunk);
      } finally {
        closeSync(fd);
      }
    });
    if (outputs) outputs.add(staged);
    else staged.commit();
    return path;
  });
}

/** `fileSink` of results.json: the record lists streamed to scratch files (worker threads encode them), the summaries kept for its head. */
function jsonFileSink(path: string, mode: RecordsMode): StudySink<string> {
  // Refused before any folder is made for it.
  checkFileTarget(path);
  return resultsJsonSink(mode, dirname(path), path, (make, staged, outputs) => {
    make();
    if (outputs) outputs.add(staged);
    else staged.commit();
    return path;
  });
}

/**
 * results.json as the records come: its lists go to scratch files staged in
 * `dir` (`RecordFiles`, worker threads encode them) and only the summaries
 * are kept, so memory does not grow with the records; once the run is done,
 * `deliver` makes it (`make()`: the staged file `path`; `make(write)`: given
 * to a writer, a promise). Errors of `path`'s files name it.
 */
function resultsJsonSink<R>(mode: RecordsMode, dir: string, path: string | undefined, deliver: (make: Make, staged: StagedFiles, outputs?: OutputSet) => R | Promise<R>): StudySink<R> {
  const staged = new StagedFiles(dir);
  const named = <T>(f: () => T): T => (path === undefined ? f() : naming(path, f));
  let files: RecordFiles;
  try {
    files = new RecordFiles(staged, mode, { csv: false, ...(path !== undefined && { results: basename(path) }) });
  } catch (e) {
    staged.abort();
    throw e;
  }
  const summary: SummaryRecord[] = [];
  return {
    encodedLists: streamedLists(mode),
    add(records) {
      named(() => files.add(records));
      for (const s of records.summary) summary.push(s);
    },
    async finish(done, outputs) {
      const frame = resultsJsonFrame({ summary, policies: byPolicy(summary) }, done.info, done.meta, mode);
      const make = ((write?: Writer) => (write ? files.finishTo(frame, write) : named(() => files.finish(frame)))) as Make;
      return deliver(make, staged, outputs);
    },
    abort() {
      files.close();
      staged.abort();
    },
  };
}

/** How results.json is made at the end: into its staged file, or given to a writer (waiting as it asks). */
interface Make {
  (): void;
  (write: Writer): Promise<void>;
}

/**
 * results.json, given to `write` a chunk at a time once the run is done
 * (`ctxsim run --out - --format json`): as `fileSink` streams it, its lists
 * go to scratch files as the records come — in a staging folder of the
 * system's temp folder, removed at the end, on failure and on a signal — and
 * only the summaries are kept, so memory does not grow with the records.
 * Nothing is given to `write` unless the run succeeds; when `write` returns
 * a promise (its reader is behind), the next chunk waits for it, so a slow
 * reader holds at most a chunk in memory.
 */
export function jsonStreamSink(write: Writer, opts: RecordsOptions = {}): StudySink<void> {
  return resultsJsonSink(recordsMode(opts), tmpdir(), undefined, async (make, staged) => {
    try {
      await make(write);
    } finally {
      staged.abort();
    }
  });
}

/**
 * turns.csv, given to `write` a chunk at a time once the run is done
 * (`ctxsim run --out -`): as `fileSink` streams it, in a staging folder of
 * the system's temp folder removed at the end, on failure and on a signal;
 * nothing is given to `write` unless the run succeeds, and it is waited
 * for as it asks (as `jsonStreamSink`).
 */
export function csvStreamSink(write: Writer, opts: RecordsOptions = {}): StudySink<void> {
  return turnsCsvSink(recordsMode(opts), tmpdir(), async (chunks, staged) => {
    try {
      await writeAll(chunks(), write);
    } finally {
      staged.abort();
    }
  });
}

/**
 * turns.csv as the records come: their rows (made on the worker threads) go
 * to a scratch file staged in `dir`, so memory does not grow with them; once
 * the run is done, `deliver` copies the file's text (header first, `chunks`)
 * where it goes.
 */
function turnsCsvSink<R>(mode: RecordsMode, dir: string, deliver: (chunks: () => Iterable<string | Uint8Array>, staged: StagedFiles, outputs?: OutputSet) => R | Promise<R>): StudySink<R> {
  // Refused before any folder is made for it.
  if (mode === 'summary') throw new UsageError(SUMMARY_CSV);
  const staged = new StagedFiles(dir);
  let fd: number | undefined;
  const close = () => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  try {
    fd = openSync(staged.scratch('turns.csv'), 'w+');
  } catch (e) {
    staged.abort();
    throw e;
  }
  const scratch = fd;
  return {
    encodedLists: ['turns'],
    add(records) {
      const text = records.kind === 'encoded' ? records.encoded.text : recordText(records, ['turns']);
      writeFileSync(scratch, text.turns.csv);
    },
    async finish(_done, outputs) {
      try {
        const chunks = function* () {
          yield csvHeader(TURN_COLUMNS);
          yield* fileChunks(scratch);
        };
        return await deliver(chunks, staged, outputs);
      } finally {
        close();
      }
    },
    abort() {
      close();
      staged.abort();
    },
  };
}

/** Stages file `path` in `outputs`, for its owner to commit; without, writes it all-or-nothing at once. */
function writeIn(outputs: OutputSet | undefined, path: string, content: string): void {
  if (outputs) outputs.file(path, content);
  else writeFileAtomic(path, content);
}

/** The records mode of `opts` (default `full`), checked: a library caller's typo is not silently a full run. */
function recordsMode(opts: RecordsOptions): RecordsMode {
  const mode = opts.records ?? 'full';
  if (!RECORDS_MODES.includes(mode)) throw new UsageError(`--records: expected one of ${RECORDS_MODES.join('|')}, got ${String(mode)}`);
  return mode;
}
