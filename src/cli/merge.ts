import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { runSummary } from '../report/text.js';
import { mergeShardFiles } from '../study/merge.js';
import type { RecordsMode } from '../records/json.js';
import { folderSink } from '../study/sinks.js';
import { displayPath } from '../study/study.js';
import type { Command } from './_command.js';
import type { IO } from './_io.js';
import { checkOutputFolder } from './_output.js';
import { TABLE_OPTIONS, tableOptions } from './_table.js';

interface MergeFlags {
  dirs: string[];
  out: string;
  records?: string;
  quiet?: boolean;
  sort?: string;
  wide?: boolean;
}

export function mergeCommand(io: IO): Command<MergeFlags> {
  return {
    command: 'merge <dirs..>',
    describe: 'combine the outputs of `run --shard K/N` into the files an unsharded run writes',
    examples: [
      ['ctxsim merge shard-1 shard-2 shard-3 --out reports', 'combine the outputs of `run --shard K/3` into the unsharded run\'s files'],
    ],
    builder: (y: Argv) =>
      y
        .positional('dirs', { type: 'string', array: true, describe: 'folders (or files) holding shard-K-of-N.json' })
        .option('out', { type: 'string', default: 'reports', describe: 'output folder' })
        .option('records', { type: 'string', describe: 'full | summary: summary writes no per-turn or per-probe rows, every report the same', defaultDescription: 'full' })
        .option('quiet', { type: 'boolean', describe: 'no summary line on stderr' })
        .options(TABLE_OPTIONS),
    handler: (argv: MergeFlags) => merge(argv, io),
  };
}

/** `ctxsim merge`: reads every shard, checks they form one whole run, writes its outputs. */
export async function merge(flags: MergeFlags, io: IO): Promise<number> {
  const table = tableOptions(flags);
  const out = resolve(flags.out);
  checkOutputFolder(out, flags.out);
  const { output, policies, info, shards } = await mergeShardFiles(flags.dirs, folderSink(out, { ...(flags.records !== undefined && { records: flags.records as RecordsMode }) }));
  io.out(runSummary({ policies }, info, table));
  if (!flags.quiet) io.err(`merged ${shards} shards; wrote ${output.length} files to ${displayPath(out)}/\n`);
  return 0;
}
