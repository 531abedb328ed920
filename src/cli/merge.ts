import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { runSummary } from '../report/text.js';
import { mergeShardFiles } from '../study/merge.js';
import { defaultOutFolder } from '../study/confine.js';
import { folderSink } from '../output/sinks.js';
import { DEFAULT_OUT, STDOUT } from '../study/study.js';
import { displayPath } from '../output/display.js';
import type { IO } from './_io.js';
import { checkOutputFile, checkOutputFolder } from './_output.js';
import { ownSettings } from './_setting-flags.js';
import { tableOptions } from './_table.js';

/** `merge`'s flags: `--out` and `--records` are the study's own settings' (`ownSettings`), read as a study's are. */
export interface MergeFlags {
  dirs: string[];
  /** As given, for messages. */
  out?: string;
  quiet?: boolean;
  /** Also write the baseline of the merged run, as `run --save-baseline` does of an unsharded one. */
  saveBaseline?: string;
  force?: boolean;
  sort?: string;
  wide?: boolean;
}

/** `ctxsim merge`: reads every shard, checks they form one whole run, writes its outputs. */
export async function merge(flags: MergeFlags, io: IO): Promise<number> {
  const table = tableOptions(flags, io);
  if (flags.out === '' || flags.out === STDOUT) throw new UsageError(`--out${flags.out ? ` ${STDOUT}` : ''}: merge writes the files of a run's output folder; name a folder`);
  const { out: given, records } = ownSettings(flags);
  const out = given ?? defaultOutFolder(DEFAULT_OUT);
  checkOutputFolder(out, flags.out ?? DEFAULT_OUT);
  const baseline = flags.saveBaseline === undefined ? undefined : resolve(flags.saveBaseline);
  if (baseline) checkOutputFile(baseline, '--save-baseline', flags.saveBaseline!);
  if (baseline && existsSync(baseline) && !flags.force) throw new UsageError(`--save-baseline: ${displayPath(baseline)} exists; add --force to replace it`);
  const sink = folderSink(out, { ...(records !== undefined && { records }) });
  const { output, policies, summary, info, shards } = await mergeShardFiles(flags.dirs, sink, { ...(baseline && { baseline }) });
  io.out(runSummary({ policies, summary }, info, table));
  if (!flags.quiet) io.err(`merged ${shards} shards; wrote ${output.length} files to ${displayPath(out)}/${baseline ? ` and the baseline ${displayPath(baseline)}` : ''}\n`);
  return 0;
}
