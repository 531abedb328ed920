import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { baselineJson, makeBaseline } from '../gate/baseline.js';
import { parseShard, shardFileName, toJson, type ShardFile } from '../gate/shard.js';
import { policiesCsv, probesCsv, summaryCsv, turnsCsv } from '../report/csv.js';
import { policyTable } from '../report/text.js';
import { displayPath } from '../scenario/study.js';
import type { Results } from '../types.js';
import type { Command } from './_app.js';
import { writeFilesAtomic, type IO } from './_io.js';
import { executeStudy, STUDY_OPTIONS, studyFromFlags, type StudyFlags } from './_study.js';

export interface RunFlags extends StudyFlags {
  quiet?: boolean;
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
        .option('quiet', { type: 'boolean', describe: 'no progress on stderr' })
        .option('save-baseline', { type: 'string', describe: 'also write a baseline JSON for `ctxsim check`' })
        .option('force', { type: 'boolean', describe: 'let --save-baseline replace an existing file' })
        .option('shard', { type: 'string', describe: 'run slice K/N of the scenario × policy work (combine with `ctxsim merge`)' }),
    handler: (argv: RunFlags) => run(argv, io),
  };
}

/** Every report file of a run, by name. */
export function outputs(results: Results): Map<string, string> {
  return new Map([
    ['turns.csv', turnsCsv(results)],
    ['probes.csv', probesCsv(results)],
    ['summary.csv', summaryCsv(results)],
    ['policies.csv', policiesCsv(results)],
  ]);
}

/** `ctxsim run`: load, replay, write every output atomically, print the policy table. */
export function run(flags: RunFlags, io: IO): number {
  const study = studyFromFlags(flags);
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  const baselineFile = flags.saveBaseline === undefined ? undefined : resolve(flags.saveBaseline);
  if (baselineFile && shard) throw new UsageError('--save-baseline: save the baseline from the merged run, not from a shard');
  if (baselineFile && existsSync(baselineFile) && !flags.force) {
    throw new UsageError(`--save-baseline: ${displayPath(baselineFile)} exists; add --force to replace it`);
  }
  const { results, fingerprint } = executeStudy(study, io, { quiet: flags.quiet, shard });
  if (shard) {
    const { turns, probes, summary } = results;
    const file: ShardFile = { kind: 'ctxsim-shard', schemaVersion: 1, shard, study: fingerprint, turns, probes, summary };
    writeFilesAtomic(study.out, new Map([[shardFileName(shard), toJson(file)]]));
    if (!flags.quiet) io.err(`wrote ${displayPath(resolve(study.out, shardFileName(shard)))}; combine the shards with \`ctxsim merge\`\n`);
    return 0;
  }
  const files = outputs(results);
  writeFilesAtomic(study.out, files);
  if (baselineFile) writeFilesAtomic(dirname(baselineFile), new Map([[basename(baselineFile), baselineJson(makeBaseline(fingerprint, results.summary))]]));
  io.out(policyTable(results));
  if (!flags.quiet) io.err(`wrote ${files.size} files to ${displayPath(study.out)}/${baselineFile ? ` and the baseline ${displayPath(baselineFile)}` : ''}\n`);
  return 0;
}
