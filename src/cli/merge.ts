import { resolve } from 'node:path';
import { runSummary } from '../report/text.js';
import { mergeShardFiles } from '../study/merge.js';
import type { RecordsMode } from '../records/json.js';
import { defaultOutFolder } from '../study/confine.js';
import { folderSink } from '../output/sinks.js';
import { DEFAULT_OUT } from '../study/study.js';
import { displayPath } from '../output/display.js';
import type { IO } from './_io.js';
import { checkOutputFolder } from './_output.js';
import { tableOptions } from './_table.js';

export interface MergeFlags {
  dirs: string[];
  out?: string;
  records?: string;
  quiet?: boolean;
  sort?: string;
  wide?: boolean;
}

/** `ctxsim merge`: reads every shard, checks they form one whole run, writes its outputs. */
export async function merge(flags: MergeFlags, io: IO): Promise<number> {
  const table = tableOptions(flags, io);
  const out = flags.out !== undefined ? resolve(flags.out) : defaultOutFolder(DEFAULT_OUT);
  checkOutputFolder(out, flags.out ?? DEFAULT_OUT);
  const { output, policies, summary, info, shards } = await mergeShardFiles(flags.dirs, folderSink(out, { ...(flags.records !== undefined && { records: flags.records as RecordsMode }) }));
  io.out(runSummary({ policies, summary }, info, table));
  if (!flags.quiet) io.err(`merged ${shards} shards; wrote ${output.length} files to ${displayPath(out)}/\n`);
  return 0;
}
