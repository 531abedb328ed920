import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { byPolicy } from '../engine/summary.js';
import { CtxsimError } from '../errors.js';
import { lostProbes } from '../records/digest.js';
import { mergeShards, readShardFile } from '../gate/shard.js';
import type { StudySink } from '../output/sink.js';
import { resultsMeta, type SinkOutcome } from './pipeline.js';
import { displayPath } from '../output/display.js';

/** The shard files a path names: the file itself, or every `shard-K-of-N.json` in the folder, sorted. */
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

/**
 * Combines the shard files of a `--shard K/N` run (files, or folders holding
 * them) into `sink`, as the unsharded run would have given it its records:
 * checks that the shards come from one study and that none is missing.
 */
export async function mergeShardFiles<R>(paths: readonly string[], sink: StudySink<R>): Promise<SinkOutcome<R> & { shards: number }> {
  try {
    const files = paths.flatMap(shardFiles);
    const shards = files.map((f) => readShardFile(f, displayPath(f)));
    const { results, info, study: fingerprint } = mergeShards(shards);
    const { turns, probes, summary, violations } = results;
    sink.add({ kind: 'records', turns, probes, summary, violations }, 0);
    const done = { fingerprint, info, meta: resultsMeta(info.priceDate) };
    const output = await sink.finish(done);
    return { ...done, output, summary, lost: lostProbes(probes), policies: byPolicy(summary), shards: shards.length };
  } catch (e) {
    sink.abort();
    throw e;
  }
}
