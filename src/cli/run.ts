import type { Argv } from 'yargs';
import { runStudy } from '../engine/run.js';
import { policiesCsv, probesCsv, summaryCsv, turnsCsv } from '../report/csv.js';
import { policyTable } from '../report/text.js';
import { displayPath, loadScenarios } from '../scenario/study.js';
import { UsageError } from '../errors.js';
import type { Command } from './_app.js';
import { writeFilesAtomic, type IO } from './_io.js';
import { STUDY_OPTIONS, studyFromFlags, type StudyFlags } from './_study.js';

export interface RunFlags extends StudyFlags {
  quiet?: boolean;
}

export function runCommand(io: IO): Command<RunFlags> {
  return {
    command: 'run [study]',
    describe: 'replay the study and write reports',
    builder: (y: Argv) =>
      y
        .positional('study', { type: 'string', describe: 'study file (default: the built-in default study)' })
        .options(STUDY_OPTIONS)
        .option('quiet', { type: 'boolean', describe: 'no progress on stderr' }),
    handler: (argv: RunFlags) => run(argv, io),
  };
}

/** `ctxsim run`: load, replay, write every output atomically, print the policy table. */
export function run(flags: RunFlags, io: IO): number {
  const study = studyFromFlags(flags);
  if (study.prices !== 'builtin') throw new UsageError(`prices: custom price tables are not supported yet (${study.prices})`);
  const conversations = loadScenarios(study.scenarios, { seed: study.seed, onNote: flags.quiet ? undefined : (l) => io.err(`${l}\n`) });
  const progress = flags.quiet ? undefined : progressLine(io);
  const results = runStudy({ ...study, prices: undefined, conversations, onProgress: progress });
  const files = new Map([
    ['turns.csv', turnsCsv(results)],
    ['probes.csv', probesCsv(results)],
    ['summary.csv', summaryCsv(results)],
    ['policies.csv', policiesCsv(results)],
  ]);
  writeFilesAtomic(study.out, files);
  io.out(policyTable(results));
  if (!flags.quiet) io.err(`wrote ${files.size} files to ${displayPath(study.out)}/\n`);
  return 0;
}

/** Progress on stderr: one redrawn line on a terminal, plain lines otherwise. */
function progressLine(io: IO) {
  return (done: number, total: number, scenario: string) => {
    const line = `[${done}/${total}] ${scenario}`;
    if (io.isTTY) io.err(`\r\x1b[K${line}${done === total ? '\n' : ''}`);
    else io.err(`${line}\n`);
  };
}
