import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { byPolicy } from '../engine/summary.js';
import { CtxsimError, UsageError } from '../errors.js';
import { lostProbes } from '../records/digest.js';
import { mergeShards, readShardFile } from '../gate/shard.js';
import type { StudySink } from '../output/sink.js';
import { resultsMeta, type SinkOutcome } from './pipeline.js';
import { displayPath } from '../output/display.js';
import { realPath } from '../output/real-path.js';
import { baselineJson, makeBaseline } from '../gate/baseline.js';
import { checkFileTarget, OutputSet } from '../output/files.js';

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

/** How shards are merged. */
interface MergeOptions {
  /** Also write the baseline the unsharded run's `--save-baseline` writes, to this (absolute) path, with the sink's files: all or none. */
  baseline?: string;
}

/**
 * Combines the shard files of a `--shard K/N` run (files, or folders holding
 * them) into `sink`, as the unsharded run would have given it its records:
 * checks that the shards come from one study and that none is missing.
 */
export async function mergeShardFiles<R>(paths: readonly string[], sink: StudySink<R>, opts: MergeOptions = {}): Promise<SinkOutcome<R> & { shards: number }> {
  const outputs = new OutputSet();
  try {
    // Refused before the shards are read: a device, a folder or a file on the way is never written.
    if (opts.baseline) checkFileTarget(opts.baseline);
    const files = paths.flatMap(shardFiles);
    // The baseline written over a shard it is made of would lose that shard (`--force` replaces a file, not an input).
    if (opts.baseline && files.some((f) => realPath(f) === realPath(opts.baseline!))) {
      throw new UsageError(`merge: the baseline ${displayPath(opts.baseline)} is one of the shard files merged, which an output never replaces: name another file`);
    }
    const shards = files.map((f) => readShardFile(f, displayPath(f)));
    const { results, info, study: fingerprint } = mergeShards(shards);
    const { turns, probes, summary, violations } = results;
    sink.add({ kind: 'records', turns, probes, summary, violations }, 0);
    const done = { fingerprint, info, meta: resultsMeta(info.priceDate) };
    const output = await sink.finish(done, outputs);
    const lost = lostProbes(probes);
    if (opts.baseline) outputs.file(opts.baseline, baselineJson(makeBaseline(fingerprint, summary, lost)));
    outputs.commit();
    return { ...done, output, summary, lost, policies: byPolicy(summary), shards: shards.length };
  } catch (e) {
    sink.abort();
    outputs.abort();
    throw e;
  }
}
