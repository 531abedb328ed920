import { accessSync, constants, existsSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import type { PolicyRecord } from '../types.js';
import { parseShard } from '../gate/shard.js';
import { formatOfPath, OUTPUT_FORMATS, type OutputFormat } from '../report/outputs.js';
import { overflowWarnings, policyTable } from '../report/text.js';
import { runStudyPipeline } from '../study/pipeline.js';
import { fileSink, folderSink, shardSink, textSink } from '../study/sinks.js';
import { displayPath } from '../study/study.js';
import type { Command } from './_command.js';
import { reasonOf, studyEvents, type IO } from './_io.js';
import { STUDY_OPTIONS, studyFromFlags, type StudyFlags } from './_study.js';

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
    examples: [
      ['ctxsim run', 'replay the built-in default study into reports/'],
      ['ctxsim run study.yaml --out reports/', 'replay a study, write every report'],
      ['ctxsim run --scenario \'scenarios/*.yaml\' --policy full --policy \'window-tokens:budget=1000|2000\' --out - --format md', 'two policies (one a sweep), report.md on stdout'],
      ['ctxsim run study.yaml --save-baseline ctxsim-baseline.json', 'also save a baseline for `ctxsim check`'],
    ],
    builder: (y: Argv) =>
      y
        .positional('study', { type: 'string', describe: 'study file (default: the built-in default study)' })
        .options(STUDY_OPTIONS)
        // nargs: 1 lets `--out -` take the dash (yargs otherwise reads it as a positional).
        .option('out', { type: 'string', nargs: 1, describe: 'output folder, or one file (.csv .json .md .html), or - for stdout' })
        .option('format', { type: 'string', choices: OUTPUT_FORMATS, describe: 'format of the single output (without --out: to stdout; --out - writes csv unless told)' })
        .option('quiet', { type: 'boolean', describe: 'no progress on stderr' })
        .option('save-baseline', { type: 'string', describe: 'also write a baseline JSON for `ctxsim check`' })
        .option('force', { type: 'boolean', describe: 'let --save-baseline replace an existing file' })
        .option('shard', { type: 'string', describe: 'run slice K/N of the scenario × policy work (combine with `ctxsim merge`)' }),
    handler: (argv: RunFlags) => run(argv, io),
  };
}

/** Where a run's output goes: a folder of every file, one file, or stdout. */
type Target = { kind: 'dir'; dir: string } | { kind: 'file'; path: string; format: OutputFormat } | { kind: 'stdout'; format: OutputFormat };

/**
 * `--out -` (or `--format` without `--out`) is stdout; `--format` or a known
 * extension makes `--out` one file; otherwise it is a folder. The target is
 * checked before the run: a file where a folder is needed, a device, a
 * folder that cannot be written, an unknown extension.
 */
function outputTarget(out: string, rawOut: string | undefined, format: OutputFormat | undefined): Target {
  if (rawOut === '-' || (rawOut === undefined && format)) return { kind: 'stdout', format: format ?? 'csv' };
  const shown = rawOut ?? displayPath(out);
  const isDir = existsSync(out) && statSync(out).isDirectory();
  const asFolder = isDir || /[\\/]$/.test(rawOut ?? '');
  let target: Target;
  if (format) {
    if (asFolder) throw new UsageError(`--format ${format}: names the format of one output file, but --out ${shown} is a folder`);
    target = { kind: 'file', path: out, format };
  } else {
    const byExtension = asFolder ? undefined : formatOfPath(out);
    const ext = asFolder ? undefined : /\.([a-z][a-z0-9]*)$/i.exec(basename(out))?.[1];
    if (!byExtension && ext !== undefined && !existsSync(out)) {
      throw new UsageError(`--out ${shown}: unknown file type .${ext}; name a file ending in ${ACCEPTED}, - for stdout, or a folder (end it with /)`);
    }
    target = byExtension ? { kind: 'file', path: out, format: byExtension } : { kind: 'dir', dir: out };
  }
  checkWritable(target, shown);
  return target;
}

/** The extensions `--out` takes for one file. */
const ACCEPTED = '.csv, .json, .md (.markdown), .html (.htm)';

/** Refuses an output folder that cannot be made or written (for commands that write one folder). */
export function checkOutputFolder(dir: string, shown: string): void {
  checkWritable({ kind: 'dir', dir }, shown, false);
}

/** What is at `path`, or undefined when nothing is (a file on the way is found when the loop above gets to it). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/** Refuses an output path that cannot be written as asked: named in the message, with the reason. */
function checkWritable(target: Target, shown: string, oneFile = true): void {
  if (target.kind === 'stdout') return;
  const path = target.kind === 'dir' ? target.dir : target.path;
  const fail = (reason: string): never => {
    throw new UsageError(`--out ${shown}: ${reason}`);
  };
  const stat = statOf(path);
  if (stat && target.kind === 'dir' && !stat.isDirectory()) {
    fail(`${stat.isFile() ? 'is a file' : 'is not a folder (a device or special file)'}; the reports need a folder${oneFile ? ` (or name one file ending in ${ACCEPTED})` : ''}`);
  }
  if (stat && target.kind === 'file' && !stat.isFile()) fail('is not a regular file (a device or special file); name a file or a folder');
  // The folder that will hold the output: the folder itself, or the nearest one that exists above it.
  let dir = target.kind === 'dir' && stat ? path : dirname(path);
  let above = statOf(dir);
  while (!above && dirname(dir) !== dir) {
    dir = dirname(dir);
    above = statOf(dir);
  }
  if (above && !above.isDirectory()) fail(`${displayPath(dir)} is a file, not a folder`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    fail(`cannot write in ${displayPath(dir)}: ${reasonOf(e as NodeJS.ErrnoException)}`);
  }
}

/** Warns on stderr (even with --quiet) of each policy whose calls went over a context window. */
function warnOverflows(io: IO, policies: readonly PolicyRecord[]): void {
  for (const line of overflowWarnings(policies)) io.err(`ctxsim: warning: ${line}\n`);
}

/**
 * `ctxsim run`: settles where the output goes (so a bad flag fails before a
 * long run), runs the study into that sink, prints the policy table and
 * warns of context-window overflows. With
 * `--out -` stdout carries the output and nothing else.
 */
export async function run(flags: RunFlags, io: IO): Promise<number> {
  if (flags.out === '') throw new UsageError('--out: expected a folder, a file (.csv .json .md .html) or - for stdout');
  if (flags.format !== undefined && !OUTPUT_FORMATS.includes(flags.format)) {
    throw new UsageError(`--format: expected one of ${OUTPUT_FORMATS.join('|')}, got ${flags.format}`);
  }
  const study = await studyFromFlags(flags);
  const target = outputTarget(study.out, flags.out, flags.format);
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  const baseline = flags.saveBaseline === undefined ? undefined : resolve(flags.saveBaseline);
  if (shard && target.kind !== 'dir') throw new UsageError('--shard: --out must name a folder for the shard file');
  if (baseline && shard) throw new UsageError('--save-baseline: save the baseline from the merged run, not from a shard');
  if (baseline && existsSync(baseline) && !flags.force) {
    throw new UsageError(`--save-baseline: ${displayPath(baseline)} exists; add --force to replace it`);
  }
  const opts = { ...studyEvents(io, flags.quiet), ...(shard && { shard }), ...(baseline && { baseline }) };
  const say = (line: string) => {
    if (!flags.quiet) io.err(`${line}\n`);
  };
  if (shard && target.kind === 'dir') {
    const { output, policies } = await runStudyPipeline(study, shardSink(target.dir, shard), opts);
    warnOverflows(io, policies);
    say(`wrote ${displayPath(output)}; combine the shards with \`ctxsim merge\``);
  } else if (target.kind === 'dir') {
    const { output, policies, info } = await runStudyPipeline(study, folderSink(target.dir), opts);
    io.out(policyTable({ policies }, info));
    warnOverflows(io, policies);
    say(`wrote ${output.length} files to ${displayPath(target.dir)}/${baseline ? ` and the baseline ${displayPath(baseline)}` : ''}`);
  } else if (target.kind === 'file') {
    const { policies, info } = await runStudyPipeline(study, fileSink(target.path, target.format), opts);
    io.out(policyTable({ policies }, info));
    warnOverflows(io, policies);
    say(`wrote ${displayPath(target.path)}`);
  } else {
    const { output, policies } = await runStudyPipeline(study, textSink(target.format), opts);
    io.out(output);
    warnOverflows(io, policies);
  }
  return 0;
}
