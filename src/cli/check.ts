import { appendFileSync, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { makeBaseline, readBaseline, type Baseline } from '../gate/baseline.js';
import { compare, type GateResult } from '../gate/compare.js';
import { appliedLimits, limitsOfWords, studyLimits } from '../gate/limits.js';
import { gateAnnotations, gateJson, gateJunit, gateMarkdown } from '../report/gate.js';
import { gateComment, gateSummary } from '../report/gate-summary.js';
import { verdict } from '../report/verdict.js';
import { changePlaces, placeFile } from '../study/gate-places.js';
import { OutputSet } from '../output/files.js';
import { runStudyPipeline, type RunnableStudy } from '../study/pipeline.js';
import { studyInputs } from '../study/study.js';
import type { RunInfo } from '../engine/run.js';
import { checkoutOf, insideRoots, studyRoots } from '../study/confine.js';
import { fileSink, gateSink } from '../output/sinks.js';
import { displayPath } from '../output/display.js';
import { shellWord, studyEvents, type IO } from './_io.js';
import { checkOutputFile, flagFail, outputTarget, refuseInput, refuseSameFile } from './_output.js';
import { gateSettings, settingArgs } from './_setting-flags.js';
import { studyFromFlags, withFolderStudy, type StudyFlags } from './_study.js';
import { scenarioNotes } from '../report/text.js';

/** `check`'s flags: the gate's (`GATE_OPTIONS`, read by `gateSettings`) among the settings' flags, and its own. */
export interface CheckFlags extends StudyFlags {
  /** As given, for messages; `gateSettings` reads it. */
  baseline?: string;
  junit?: string;
  /** Also write the markdown a bot posts on the pull request here. */
  comment?: string;
  json?: boolean;
  verbose?: boolean;
  quiet?: boolean;
}

/** The flags that change what a run computes, as given (so the accepting run computes the same): what it runs, then every setting's that decides records. */
function studyArgs(flags: CheckFlags): string[] {
  return [...(flags.policy ?? []).flatMap((p) => ['--policy', p]), ...(flags.scenario ?? []).flatMap((p) => ['--scenario', p]), ...settingArgs(flags)];
}

/** The command that saves this run as the baseline, with the study and baseline paths as used (`--force`: replacing one). */
function saveCommand(flags: CheckFlags, baseline: string, force = true): string {
  const words = ['npx', 'ctxsim', 'run', ...(flags.study ? [flags.study] : []), ...studyArgs(flags), '--save-baseline', baseline, ...(force ? ['--force'] : [])];
  return words.map(shellWord).join(' ');
}

/** The baseline of a check: a missing file is a usage error that says how to save one. */
function baselineAt(file: string, shown: string, flags: CheckFlags): Baseline {
  if (!existsSync(file)) throw new UsageError(`${shown}: no baseline there yet; save one first: ${saveCommand(flags, shown, false)}`);
  return readBaseline(file, displayPath(file));
}

/**
 * A cache folder that lies in the checkout — the working folder, the
 * study's, or the git work tree either is in (a job may run in a subfolder),
 * real paths compared — holds what a pull request can write:
 * entries it forged would be served as replays of this run. So it is,
 * named on purpose or the user's by default (`$XDG_CACHE_HOME` or the home
 * folder set into the checkout). The check runs without it, and says so.
 */
function untrustedCache(study: RunnableStudy, io: IO): void {
  const dir = study.cacheFolder;
  if (!dir) return;
  const roots = studyRoots(study.file ? dirname(study.file) : process.cwd());
  const checkouts = roots.flatMap((r) => checkoutOf(r) ?? []);
  if (!insideRoots(resolve(dir), [...roots, ...checkouts])) return;
  io.err(`ctxsim: note: the cache folder ${displayPath(resolve(dir))} lies in the checkout (the working folder, the study's, or the git work tree they are in), whose files a pull request can change: check runs without a cache; name a folder outside it to keep one\n`);
  study.cacheFolder = false;
}

/** How many units the replay cache served, and from where: the gate trusts them as this run's replays. */
function servedLine(run: RunInfo, dir: string | false | undefined): string | undefined {
  if (!dir || !run.cachedUnits) return undefined;
  return `replay cache: ${run.cachedUnits} of ${run.cachedUnits + run.replayedUnits} units served from ${displayPath(resolve(dir))}, ${run.replayedUnits} replayed; the gate trusts that folder (--no-token-cache replays every unit)`;
}

/**
 * A gate that compared no scenario × policy judged nothing: every row of the
 * run is `added` and every row of the baseline `removed` (a baseline of
 * another study, or every scenario renamed). Passing it would let any change
 * through, so it is bad input, with the command that saves a baseline of
 * this study.
 */
function nothingCompared(result: GateResult, shown: string, accept: string): void {
  if (result.rows.some((r) => r.verdict === 'pass' || r.verdict === 'fail')) return;
  const count = (verdict: 'added' | 'removed') => result.rows.filter((r) => r.verdict === verdict).length;
  throw new UsageError(
    `${shown}: no scenario × policy of this run is in the baseline (${count('added')} rows of the run, ${count('removed')} of the baseline, none in both): nothing to compare; is it the baseline of another study? To make it this study's: ${accept}`,
  );
}

/**
 * `ctxsim check`: exit 0 pass, 1 regression. The reports (`--out`) and the
 * JUnit file are committed together, before the verdict is printed: all of
 * them are written, or none.
 */
export async function check(given: CheckFlags, io: IO): Promise<number> {
  const flags = withFolderStudy(given, io);
  // Refused before the run: a device or FIFO is never replaced, a file on the way is named.
  if (flags.junit) checkOutputFile(resolve(flags.junit), '--junit', flags.junit);
  if (flags.comment === '') throw new UsageError('--comment: name a file for the pull request comment (markdown)');
  if (flags.comment) checkOutputFile(resolve(flags.comment), '--comment', flags.comment);
  // The reports go where run's would: a folder, or one file by its extension (stdout is the verdict's).
  if (flags.out === '' || flags.out === '-') throw new UsageError(`--out${flags.out ? ' -' : ''}: check prints its verdict on stdout; name a folder or a file (.csv .json .md .html) for the reports`);
  const study = await studyFromFlags(flags, io);
  untrustedCache(study, io);
  const { baseline: named, ...flagLimits } = gateSettings(flags);
  const file = named ?? study.gate?.baseline;
  if (!file) throw new UsageError('check: name the baseline with --baseline FILE or gate.baseline in the study');
  const shown = flags.baseline ?? displayPath(file);
  const baseline = baselineAt(file, shown, flags);
  // The study's limits come with the pull request: none looser than the baseline's applies (flags, the workflow's, win).
  const limits = appliedLimits(studyLimits(study.gate), baseline.study.gate && limitsOfWords(baseline.study.gate), flagLimits);
  const target = flags.out === undefined ? undefined : outputTarget(resolve(flags.out), flags.out, undefined, false);
  // The baseline is an input too: a JUnit file written over it would pass the next check against itself.
  const inputs = [...studyInputs(study), resolve(file)];
  if (flags.junit) refuseInput(resolve(flags.junit), inputs, flagFail('--junit', flags.junit));
  if (flags.comment) refuseInput(resolve(flags.comment), inputs, flagFail('--comment', flags.comment));
  if (target?.kind === 'file') refuseInput(target.path, inputs, flagFail('--out', flags.out!));
  refuseSameFile([
    target?.kind === 'file' ? ['--out', flags.out!, target.path] : undefined,
    flags.junit ? ['--junit', flags.junit, resolve(flags.junit)] : undefined,
    flags.comment ? ['--comment', flags.comment, resolve(flags.comment)] : undefined,
  ]);
  const out = target?.kind === 'dir' ? target.dir : target?.kind === 'file' ? target.path : undefined;
  const sink = target?.kind === 'file' ? fileSink(target.path, target.format) : gateSink(out);
  const outputs = new OutputSet();
  const run = await runStudyPipeline<unknown>(study, sink, { ...studyEvents(io, flags.quiet), outputs });
  const accept = saveCommand(flags, shown);
  const note = scenarioNotes(run.info, run.policies).join('. ');
  const places = changePlaces(study, run.scenarioPlaces);
  let result;
  try {
    result = compare(baseline, makeBaseline(run.fingerprint, run.summary), limits, run.lost);
    nothingCompared(result, shown, accept);
    if (flags.junit) outputs.file(resolve(flags.junit), gateJunit(result));
    if (flags.comment) outputs.file(resolve(flags.comment), gateComment(result, { accept, places, verdict: verdict(run.policies, run.info, run.summary), ...(note && { note }) }));
    outputs.commit();
  } catch (e) {
    outputs.abort();
    throw e;
  }
  const table = gateMarkdown(result, { accept, ...(flags.verbose && { verbose: true }), ...(note && { note }) });
  io.out(flags.json ? gateJson(result) : table);
  // On stderr, beside the table or the JSON on stdout: the runner reads workflow commands on both.
  // One per cause, at the file and line that changed, named from the workspace's root as GitHub names files.
  if (process.env.GITHUB_ACTIONS === 'true' && result.failed) {
    const root = process.env.GITHUB_WORKSPACE || process.cwd();
    io.err(gateAnnotations(result, { ...(study.file && { study: placeFile(study.file, root) }), places: changePlaces(study, run.scenarioPlaces, root) }));
  }
  // Not silenced by --quiet: what the verdict rests on besides this run's replays.
  const served = servedLine(run.run, study.cacheFolder);
  if (served) io.err(`${served}\n`);
  const summary = process.env.GITHUB_STEP_SUMMARY;
  if (summary) {
    try {
      appendFileSync(summary, `${gateSummary(result, { accept, places, ...(note && { note }) })}\n${served ? `\n${served}\n` : ''}`);
    } catch (e) {
      // The step summary is a courtesy: the gate's verdict and exit code stand.
      io.err(`ctxsim: warning: cannot append to GITHUB_STEP_SUMMARY ${summary}: ${(e as NodeJS.ErrnoException).code ?? String(e)}\n`);
    }
  }
  if (out !== undefined && !flags.quiet) io.err(`reports: ${displayPath(out)}\n`);
  return result.failed ? 1 : 0;
}
