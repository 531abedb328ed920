import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { baselineJson, makeBaseline, type StudyFingerprint } from '../gate/baseline.js';
import { parseShard, shardFileName, toJson, type ShardFile } from '../gate/shard.js';
import { resultsJsonFrame, type ResultsMeta } from '../records/json.js';
import { formatOfPath, OUTPUT_FORMATS, reportOnlyFiles, reportOutput, singleOutput, type OutputFormat } from '../report/outputs.js';
import { policyTable } from '../report/text.js';
import { displayPath, PACKAGE_DIR } from '../study/study.js';
import type { Command } from './_app.js';
import type { Results, SummaryRecord } from '../types.js';
import { StagedFiles, writeFilesAtomic, type IO } from '../study/files.js';
import { digestSink, RecordFiles } from '../study/record-files.js';
import { executeStudy, streamStudy, STUDY_OPTIONS, studyFromFlags, type RunnableStudy, type StudyFlags } from '../study/pipeline.js';

export interface RunFlags extends StudyFlags {
  quiet?: boolean;
  format?: OutputFormat;
  saveBaseline?: string;
  force?: boolean;
  shard?: string;
}

export function runCommand(io: IO): Command<RunFlags> {
  return {
    command: 'run [study]',
    describe: 'replay the study and write reports',
    builder: (y: Argv) =>
      y
        .positional('study', { type: 'string', describe: 'study file (default: the built-in default study)' })
        .options(STUDY_OPTIONS)
        // nargs: 1 lets `--out -` take the dash (yargs otherwise reads it as a positional).
        .option('out', { type: 'string', nargs: 1, describe: 'output folder, or one file (.csv .json .md .html), or - for stdout' })
        .option('format', { type: 'string', choices: OUTPUT_FORMATS, describe: 'format of the single output (--out - writes csv unless told)' })
        .option('quiet', { type: 'boolean', describe: 'no progress on stderr' })
        .option('save-baseline', { type: 'string', describe: 'also write a baseline JSON for `ctxsim check`' })
        .option('force', { type: 'boolean', describe: 'let --save-baseline replace an existing file' })
        .option('shard', { type: 'string', describe: 'run slice K/N of the scenario × policy work (combine with `ctxsim merge`)' }),
    handler: (argv: RunFlags) => run(argv, io),
  };
}

/** Where a run's output goes: a folder of every file, one file, or stdout. */
type Target = { kind: 'dir'; dir: string } | { kind: 'file'; path: string; format: OutputFormat } | { kind: 'stdout'; format: OutputFormat };

/** `--out -` is stdout; `--format` or a known extension makes `--out` one file; otherwise it is a folder. */
export function outputTarget(out: string, rawOut: string | undefined, format: OutputFormat | undefined): Target {
  if (rawOut === '-') return { kind: 'stdout', format: format ?? 'csv' };
  const isDir = existsSync(out) && statSync(out).isDirectory();
  if (format) {
    if (isDir || /[\\/]$/.test(rawOut ?? '')) throw new UsageError(`--format ${format}: names the format of one output file, but --out ${rawOut ?? displayPath(out)} is a folder`);
    return { kind: 'file', path: out, format };
  }
  const byExtension = isDir ? undefined : formatOfPath(out);
  return byExtension ? { kind: 'file', path: out, format: byExtension } : { kind: 'dir', dir: out };
}

/** `results.json`'s meta: package version, price-table date, and the time (`SOURCE_DATE_EPOCH` if set, for reproducible builds). */
export function resultsMeta(priceDate: string, env: NodeJS.ProcessEnv = process.env, now = () => new Date()): ResultsMeta {
  const epoch = env.SOURCE_DATE_EPOCH;
  const at = epoch && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : now();
  return { tool: 'ctxsim', version: packageVersion(), priceTable: priceDate, generatedAt: at.toISOString() };
}

let version: string | undefined;

function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/**
 * `ctxsim run`: load, replay, write every output atomically (or the one
 * output asked for), print the policy table. With `--out -` stdout carries
 * the output and nothing else. Into a folder, records stream to their files
 * as the run goes; a shard, and a single csv or json output, keep them.
 */
export async function run(flags: RunFlags, io: IO): Promise<number> {
  if (flags.out === '') throw new UsageError('--out: expected a folder, a file (.csv .json .md .html) or - for stdout');
  if (flags.format !== undefined && !OUTPUT_FORMATS.includes(flags.format)) {
    throw new UsageError(`--format: expected one of ${OUTPUT_FORMATS.join('|')}, got ${flags.format}`);
  }
  const study = studyFromFlags(flags);
  // Settle where output goes before the (possibly long) run, so a bad flag fails at once.
  const target = outputTarget(study.out, flags.out, flags.format);
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  const baselineFile = flags.saveBaseline === undefined ? undefined : resolve(flags.saveBaseline);
  if (shard && target.kind !== 'dir') throw new UsageError('--shard: --out must name a folder for the shard file');
  if (baselineFile && shard) throw new UsageError('--save-baseline: save the baseline from the merged run, not from a shard');
  if (baselineFile && existsSync(baselineFile) && !flags.force) {
    throw new UsageError(`--save-baseline: ${displayPath(baselineFile)} exists; add --force to replace it`);
  }
  if (shard && target.kind === 'dir') {
    const { results, info, fingerprint } = await executeStudy(study, io, { quiet: flags.quiet, shard });
    const { turns, probes, summary } = results;
    const file: ShardFile = { kind: 'ctxsim-shard', schemaVersion: 1, shard, study: fingerprint, info, turns, probes, summary, violations: results.violations };
    writeFilesAtomic(target.dir, new Map([[shardFileName(shard), toJson(file)]]));
    if (!flags.quiet) io.err(`wrote ${displayPath(join(target.dir, shardFileName(shard)))}; combine the shards with \`ctxsim merge\`\n`);
    return 0;
  }
  const saveBaseline = (fp: StudyFingerprint, summary: readonly SummaryRecord[]) => {
    if (baselineFile) writeFilesAtomic(dirname(baselineFile), new Map([[basename(baselineFile), baselineJson(makeBaseline(fp, summary))]]));
  };
  if (target.kind === 'dir') {
    const written = await runToFolder(study, target.dir, flags, saveBaseline, io);
    if (!flags.quiet) io.err(`wrote ${written} files to ${displayPath(target.dir)}/${baselineFile ? ` and the baseline ${displayPath(baselineFile)}` : ''}\n`);
    return 0;
  }
  const text = await runToText(study, target.format, flags, saveBaseline, io);
  if (target.kind === 'stdout') {
    io.out(text.output);
    return 0;
  }
  writeFilesAtomic(dirname(target.path), new Map([[basename(target.path), text.output]]));
  io.out(policyTable(text));
  if (!flags.quiet) io.err(`wrote ${displayPath(target.path)}\n`);
  return 0;
}

type SaveBaseline = (fp: StudyFingerprint, summary: readonly SummaryRecord[]) => void;

/**
 * Runs the study into an output folder, all-or-nothing: the record files are
 * written as the records stream in (only the summaries and the digest are
 * kept), then the reports; every file is renamed into place only when all
 * are written. Prints the policy table; returns how many files it wrote.
 */
async function runToFolder(study: RunnableStudy, dir: string, flags: RunFlags, saveBaseline: SaveBaseline, io: IO): Promise<number> {
  const staged = new StagedFiles(dir);
  let records: RecordFiles | undefined;
  try {
    const files = (records = new RecordFiles(staged));
    const kept = digestSink();
    const { info, fingerprint } = await streamStudy(study, io, { quiet: flags.quiet, recordText: true }, (part, i) => {
      files.add(part);
      kept.sink(part, i);
    });
    const results = kept.reported();
    files.finish(resultsJsonFrame(results, info, resultsMeta(info.priceDate)));
    saveBaseline(fingerprint, results.summary);
    for (const [name, content] of await reportOnlyFiles(results, info)) staged.write(name, content);
    const written = staged.commit();
    io.out(policyTable(results));
    return written.length;
  } catch (e) {
    records?.close();
    staged.abort();
    throw e;
  }
}

/**
 * Runs the study into one output's text: a report (md, html) from the
 * summaries and the digest, the records streamed past; a record file (csv,
 * json) from every record, kept.
 */
async function runToText(study: RunnableStudy, format: OutputFormat, flags: RunFlags, saveBaseline: SaveBaseline, io: IO): Promise<{ output: string } & Pick<Results, 'policies'>> {
  if (format === 'md' || format === 'html') {
    const kept = digestSink();
    const { info, fingerprint } = await streamStudy(study, io, { quiet: flags.quiet }, kept.sink);
    const results = kept.reported();
    saveBaseline(fingerprint, results.summary);
    return { output: await reportOutput(format, results, info), policies: results.policies };
  }
  const { results, info, fingerprint } = await executeStudy(study, io, { quiet: flags.quiet });
  saveBaseline(fingerprint, results.summary);
  return { output: await singleOutput(format, results, info, resultsMeta(info.priceDate)), policies: results.policies };
}
