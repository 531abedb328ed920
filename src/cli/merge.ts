import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Argv } from 'yargs';
import { CtxsimError } from '../errors.js';
import { mergeShards, readShard } from '../gate/shard.js';
import { reportFiles } from '../report/outputs.js';
import { policyTable } from '../report/text.js';
import { displayPath } from '../study/study.js';
import type { Command } from './_app.js';
import { writeFilesAtomic, type IO } from '../study/files.js';
import { resultsMeta } from './run.js';

interface MergeFlags {
  dirs: string[];
  out: string;
  quiet?: boolean;
}

export function mergeCommand(io: IO): Command<MergeFlags> {
  return {
    command: 'merge <dirs..>',
    describe: 'combine the outputs of `run --shard K/N` into the files an unsharded run writes',
    builder: (y: Argv) =>
      y
        .positional('dirs', { type: 'string', array: true, describe: 'folders (or files) holding shard-K-of-N.json' })
        .option('out', { type: 'string', default: 'reports', describe: 'output folder' })
        .option('quiet', { type: 'boolean' }),
    handler: (argv: MergeFlags) => merge(argv, io),
  };
}

function shardFiles(path: string): string[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new CtxsimError(`merge: ${path}: no such file or folder`, 'input');
  }
  if (!st.isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => /^shard-\d+-of-\d+\.json$/.test(f))
    .sort()
    .map((f) => join(path, f));
}

/** `ctxsim merge`: reads every shard, checks they form one whole run, writes its outputs. */
export async function merge(flags: MergeFlags, io: IO): Promise<number> {
  const files = flags.dirs.flatMap(shardFiles);
  const shards = files.map((f) => ({ file: displayPath(f), shard: readShard(displayPath(f), readFileSync(f, 'utf8')) }));
  const { results, info } = mergeShards(shards);
  const out = resolve(flags.out);
  const written = await reportFiles(results, info, resultsMeta(info.priceDate));
  writeFilesAtomic(out, written);
  io.out(policyTable(results));
  if (!flags.quiet) io.err(`merged ${shards.length} shards; wrote ${written.size} files to ${displayPath(out)}/\n`);
  return 0;
}
