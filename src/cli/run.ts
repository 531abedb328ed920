import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { RunInfo } from '../engine/run.js';
import type { PolicyRecord } from '../records/registry.js';
import { shardFromEnv, shardNote } from '../gate/shard.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../report/outputs.js';
import { judgedUnsentWarning, overflowWarnings, runSummary } from '../report/text.js';
import { runStudyPipeline } from '../study/pipeline.js';
import { csvStreamSink, fileSink, folderSink, jsonStreamSink, shardSink, textSink } from '../output/sinks.js';
import { defaultOutFolder } from '../study/confine.js';
import { displayPath } from '../output/display.js';
import { DEFAULT_OUT, failAtStudyKey, loadScenarios, STDOUT, studyInputs, type Study } from '../study/study.js';
import { planText, upkeepPlan } from '../recording/upkeep.js';
import { billedLine, type BilledCheck } from '../study/billed.js';
import { cachedCharts } from '../output/chart-store.js';
import { bytesOut, studyEvents, type IO } from './_io.js';
import { checkOutputFile, flagFail, outputTarget, refuseInput, refuseSameFile } from './_output.js';
import { studyFromFlags, withFolderStudy, type StudyFlags } from './_study.js';
import { tableOptions } from './_table.js';

export interface RunFlags extends StudyFlags {
  quiet?: boolean;
  format?: OutputFormat;
  saveBaseline?: string;
  force?: boolean;
  shard?: string;
  dryRun?: boolean;
  sort?: string;
  wide?: boolean;
}

/** Warns on stderr (even with --quiet) of each policy whose calls went over a context window, and of a judge's yeses on values not sent. */
function warnOverflows(io: IO, policies: readonly PolicyRecord[]): void {
  for (const line of overflowWarnings(policies)) io.err(`ctxsim: warning: ${line}\n`);
  const unsent = judgedUnsentWarning(policies);
  if (unsent) io.err(`ctxsim: warning: ${unsent}\n`);
}

/**
 * `ctxsim run`: settles where the output goes (so a bad flag fails before a
 * long run), runs the study into that sink, prints the policy table and
 * warns of context-window overflows. With
 * `--out -` stdout carries the output and nothing else.
 */
export async function run(given: RunFlags, io: IO): Promise<number> {
  const flags = withFolderStudy(given, io);
  if (flags.out === '') throw new UsageError('--out: expected a folder, a file (.csv .json .md .html) or - for stdout');
  if (flags.format !== undefined && !OUTPUT_FORMATS.includes(flags.format)) {
    throw new UsageError(`--format: expected one of ${OUTPUT_FORMATS.join('|')}, got ${flags.format}`);
  }
  const table = tableOptions(flags, io);
  const study = await studyFromFlags(flags, io);
  const records = { records: study.records ?? 'full' } as const;
  if (flags.dryRun) return dryRun(study, io);
  // The default folder of the built-in study is checked as a study's `out` is: a planted link must not lead out.
  if (flags.study === undefined && flags.out === undefined && !flags.format) study.out = defaultOutFolder(DEFAULT_OUT);
  // An `out` of the study file that cannot be written is the study's problem, at its key.
  const studyOut = flags.out === undefined && !flags.format && study.file !== undefined && study.out !== STDOUT;
  const atKey = studyOut ? failAtStudyKey(study.file!, ['out']) : undefined;
  const outFail = atKey ? (reason: string) => atKey(`${displayPath(study.out)}: ${reason}`) : flagFail('--out', flags.out ?? displayPath(study.out));
  // A study's `out: -` is stdout, as `--out -` is.
  const target = outputTarget(study.out, flags.out ?? (study.out === STDOUT ? STDOUT : undefined), flags.format, true, outFail);
  const chosen = flags.shard === undefined ? undefined : shardFromEnv(flags.shard, process.env);
  const shard = chosen && { index: chosen.index, count: chosen.count };
  const baseline = flags.saveBaseline === undefined ? undefined : resolve(flags.saveBaseline);
  if (shard && target.kind !== 'dir') throw new UsageError('--shard: --out must name a folder for the shard file');
  if (baseline && shard) throw new UsageError('--save-baseline: a shard holds part of the run; save the baseline when merging the shards: ctxsim merge DIR... --save-baseline FILE');
  if (baseline) checkOutputFile(baseline, '--save-baseline', flags.saveBaseline!);
  const inputs = studyInputs(study);
  // The study's gate baseline is not an input of a run, but reports written over it would lose it (`--save-baseline` refreshes it).
  if (target.kind === 'file') refuseInput(target.path, study.gate?.baseline ? [...inputs, study.gate.baseline] : inputs, outFail);
  if (baseline) refuseInput(baseline, inputs, flagFail('--save-baseline', flags.saveBaseline!));
  refuseSameFile([target.kind === 'file' ? ['--out', flags.out ?? displayPath(target.path), target.path] : undefined, baseline ? ['--save-baseline', flags.saveBaseline!, baseline] : undefined]);
  if (baseline && existsSync(baseline) && !flags.force) {
    throw new UsageError(`--save-baseline: ${displayPath(baseline)} exists; add --force to replace it`);
  }
  if (chosen?.from && !flags.quiet) io.err(`${shardNote(chosen)}\n`);
  const opts = { ...studyEvents(io, flags.quiet), ...(shard && { shard }), ...(baseline && { baseline }) };
  const say = (line: string) => {
    if (!flags.quiet) io.err(`${line}\n`);
  };
  // A transcript that records what the provider billed: ctxsim's count of those calls against the bill, on stderr.
  const billed = (checks: readonly BilledCheck[]) => checks.forEach((b) => say(billedLine(b)));
  // A rerun says how much of it the replay cache served.
  const cached = (run: RunInfo) => {
    if (run.cachedUnits) say(`replay cache: ${run.cachedUnits} of ${run.cachedUnits + run.replayedUnits} units served, ${run.replayedUnits} replayed`);
  };
  if (shard && target.kind === 'dir') {
    const { output, policies } = await runStudyPipeline(study, shardSink(target.dir, shard), opts);
    warnOverflows(io, policies);
    say(`wrote ${displayPath(output)}; combine the shards with \`ctxsim merge\``);
  } else if (target.kind === 'dir') {
    // Charts rendered by an earlier run are kept in the cache folder, beside its replays.
    const charts = study.cacheFolder ? cachedCharts(study.cacheFolder) : undefined;
    const { output, policies, summary, info, billed: checks, run: ran } = await runStudyPipeline(study, folderSink(target.dir, { ...records, ...(charts && { charts }) }), opts);
    io.out(runSummary({ policies, summary }, info, table));
    warnOverflows(io, policies);
    for (const w of charts?.warnings ?? []) io.err(`ctxsim: warning: ${w}\n`);
    billed(checks);
    cached(ran);
    say(`wrote ${output.length} files to ${displayPath(target.dir)}/${baseline ? ` and the baseline ${displayPath(baseline)}` : ''}`);
  } else if (target.kind === 'file') {
    const { policies, summary, info, billed: checks } = await runStudyPipeline(study, fileSink(target.path, target.format, records), opts);
    io.out(runSummary({ policies, summary }, info, table));
    warnOverflows(io, policies);
    billed(checks);
    say(`wrote ${displayPath(target.path)}`);
  } else if (target.format === 'json' || target.format === 'csv') {
    // A record file streams to stdout as to a file: memory does not grow with the records.
    const out = bytesOut(io);
    const sink = target.format === 'json' ? jsonStreamSink(out.write, records) : csvStreamSink(out.write, records);
    const { policies, billed: checks } = await runStudyPipeline(study, sink, opts);
    out.end();
    warnOverflows(io, policies);
    billed(checks);
  } else {
    const { output, policies, billed: checks } = await runStudyPipeline(study, textSink(target.format, records), opts);
    io.out(output);
    warnOverflows(io, policies);
    billed(checks);
  }
  return 0;
}

/** `--dry-run`: what recording the study's upkeep would send, on stdout; nothing is sent or written. */
async function dryRun(study: Study, io: IO): Promise<number> {
  const mode = study.upkeepSource?.mode;
  if (mode !== 'record' && mode !== 'live') throw new UsageError('--dry-run: only a recording has calls to plan; add --upkeep record (or live)');
  const plan = await upkeepPlan(study, loadScenarios(study.scenarios, { seed: study.seed }));
  io.out(plan.calls ? `a recording would send ${planText(plan)} to ${study.upkeepSource!.baseURL}\n` : 'a recording would send nothing: the cassette has every response\n');
  return 0;
}
