import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type * as Parallel from '../src/engine/parallel.js';
import { inOrder, workerError } from '../src/engine/parallel.js';
import { CtxsimError } from '../src/errors.js';
import { runStudy, streamStudy, type RecordLists, type ScenarioRecordLists, type ScenarioRecords } from '../src/engine/run.js';
import type { RunOptions } from '../src/engine/spec.js';
import type * as Study from '../src/study/study.js';
import { policiesFromFlags } from '../src/study/study.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { handOver } from '../src/study/pipeline.js';
import type { Conversation } from '../src/types.js';
import { ROOT } from './_shared.js';

/**
 * A streamed run hands each scenario's records to the sink in scenario
 * order, one thread or several, and they are the records `runStudy` keeps.
 */

const FLAGS = ['full', 'window-turns:turns=3', 'summary-buffer'];
const POLICIES = policiesFromFlags(FLAGS);

/** Scenario 0 is long (`turns`) and the rest short, so with two workers the later ones come back first. */
function study(turns = 40): RunOptions {
  const long = generateConversations({ profile: 'support', count: 1, seed: 5, params: { turns: [turns, turns] } });
  const short = generateConversations({ profile: 'support', count: 5, seed: 6, params: { turns: [3, 4] } });
  return { conversations: [{ ...long[0]!, id: 'long' }, ...short], policies: POLICIES, seed: 1, models: ['gpt-4o-mini'], tokenizer: 'chars4', cacheFolder: false };
}

/** The records of a run, scenario by scenario, in the order a sink got them. */
function collector() {
  const got: { index: number; records: ScenarioRecords }[] = [];
  return { got, sink: (records: ScenarioRecords, index: number) => void got.push({ index, records }) };
}

function lists(r: ScenarioRecords): ScenarioRecordLists {
  if (r.kind !== 'records') throw new Error('expected records as lists');
  return r;
}

function flat(parts: readonly { records: ScenarioRecords }[]): RecordLists {
  return {
    turns: parts.flatMap((p) => lists(p.records).turns),
    probes: parts.flatMap((p) => lists(p.records).probes),
    summary: parts.flatMap((p) => p.records.summary),
    violations: parts.flatMap((p) => lists(p.records).violations),
  };
}

describe('inOrder: scenarios that come back in any order go on in index order', () => {
  it('passes each on as soon as every earlier one has gone, whatever the arrival order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n })), (arrival) => {
        const passed: number[] = [];
        const sink = inOrder((_r, i) => void passed.push(i));
        const seen = new Set<number>();
        for (const i of arrival) {
          sink({ kind: 'records', turns: [], probes: [], summary: [], violations: [] }, i);
          seen.add(i);
          // Passed on so far: exactly the unbroken run 0, 1, … of what has arrived (nothing held longer than needed).
          let k = 0;
          while (seen.has(k)) k++;
          expect(passed).toEqual([...Array(k).keys()]);
        }
      }),
      { seed: 42, numRuns: 200 },
    );
  });
});

describe('streamStudy: one thread', () => {
  it('hands over each scenario once, in order, with the records runStudy keeps', () => {
    const opts = study();
    const c = collector();
    const info = streamStudy(opts, c.sink);
    const kept = runStudy(opts);
    expect(c.got.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5]);
    // Every scenario's records are its own: 3 policies' summaries each.
    expect(c.got.map((g) => new Set(lists(g.records).turns.map((t) => t.scenario)).size)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(c.got.every((g) => g.records.summary.length === 3)).toBe(true);
    const { turns, probes, summary, violations } = kept;
    expect(flat(c.got)).toEqual({ turns, probes, summary, violations });
    expect(info.tokenizerCalls).toBe(kept.tokenizerCalls);
  });

  it('stops at a sink that throws, and tells why', () => {
    let calls = 0;
    expect(() =>
      streamStudy(study(), () => {
        if (++calls === 2) throw new Error('disk full');
      }),
    ).toThrow('disk full');
    expect(calls).toBe(2);
  });
});

/**
 * Worker threads load the compiled worker: these run against dist/ (built by
 * `npm test`), skipped when it is missing or stale. Policies come from dist's
 * registry too (a policy from elsewhere keeps a run on one thread).
 */
const DIST = join(ROOT, 'dist', 'engine', 'parallel.js');

async function parallel(turns?: number): Promise<{ streamStudyParallel: typeof Parallel.streamStudyParallel; opts: RunOptions }> {
  const { streamStudyParallel } = (await import(DIST)) as typeof Parallel;
  const { policiesFromFlags: distPolicies } = (await import(join(ROOT, 'dist', 'study', 'study.js'))) as typeof Study;
  return { streamStudyParallel, opts: { ...study(turns), policies: distPolicies(FLAGS) } };
}
const built = existsSync(DIST) && existsSync(join(ROOT, 'dist', 'engine', 'worker.js')) && statSync(DIST).mtimeMs >= statSync(join(ROOT, 'src', 'engine', 'parallel.ts')).mtimeMs;
const describeBuilt = built ? describe : describe.skip;

describeBuilt(`streamStudyParallel: two worker threads${built ? '' : ' (skipped: dist/ is missing or stale; run `npm run build`)'}`, () => {
  it('hands scenarios over in order though workers finish them out of order, the records of one thread', async () => {
    // Long enough that the other worker starts and finishes short ones meanwhile, even on a busy machine.
    const { streamStudyParallel, opts } = await parallel(3000);
    const arrived: string[] = [];
    const c = collector();
    await streamStudyParallel({ ...opts, jobs: 2, onProgress: (_d, _t, id) => void arrived.push(id) }, c.sink);
    const ids = Array.from({ length: opts.conversations.length }, (_, i) => opts.conversations.at(i)!.id);
    // The long scenario 0 came back after some short one: out of order…
    expect(arrived.indexOf(ids[0]!)).toBeGreaterThan(0);
    // …yet the sink saw 0, 1, …, 5, with the records of a one-thread run.
    expect(c.got.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5]);
    const { turns, probes, summary, violations } = runStudy({ ...opts, policies: POLICIES });
    expect(flat(c.got)).toEqual({ turns, probes, summary, violations });
  });

  it('asks the source for each conversation once (so a source may let each go once it is given)', async () => {
    const { streamStudyParallel, opts } = await parallel();
    const asked: number[] = [];
    const source = { length: opts.conversations.length, at: (i: number) => (asked.push(i), opts.conversations.at(i)) };
    await streamStudyParallel({ ...opts, conversations: source, jobs: 2 }, () => {});
    expect(asked).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('stops the workers at a sink that throws, and rejects with its error', async () => {
    const { streamStudyParallel, opts } = await parallel();
    let calls = 0;
    await expect(
      streamStudyParallel({ ...opts, jobs: 2 }, () => {
        if (++calls === 2) throw new Error('disk full');
      }),
    ).rejects.toThrow('disk full');
    expect(calls).toBe(2);
  });

  it('runs the encoder the run names on each worker: every scenario comes as it made it (a typed array too)', async () => {
    const { streamStudyParallel, opts } = await parallel();
    const encoder = { module: pathToFileURL(join(ROOT, 'test', 'fixtures', 'encoders', 'count.mjs')).href, options: { tag: 'x' } };
    const c = collector();
    await streamStudyParallel({ ...opts, jobs: 2, encoder }, c.sink);
    // The lists of a one-thread run, scenario by scenario, say what each encoding must hold.
    const one = collector();
    streamStudy({ ...opts, policies: POLICIES }, one.sink);
    expect(c.got.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5]);
    const expected = one.got.map((g) => {
      const r = lists(g.records);
      return { turnRecords: r.turns.length, probeRecords: r.probes.length, options: { tag: 'x' }, models: ['gpt-4o-mini'], turns: new Uint32Array(r.summary.map((s) => s.turns)) };
    });
    // Scenario 0 has 40 turns, under each of the 3 policies.
    expect(expected[0]!.turnRecords).toBe(120);
    expect(c.got.map((g) => (g.records.kind === 'encoded' ? g.records.encoded : g.records.kind))).toEqual(expected);
    expect(c.got.map((g) => g.records.summary)).toEqual(one.got.map((g) => g.records.summary));
    // On one thread the sink gets the lists: the encoder is for workers.
    const lone = collector();
    await streamStudyParallel({ ...opts, jobs: 1, encoder }, lone.sink);
    expect(lone.got.map((g) => g.records.kind)).toEqual(Array(6).fill('records'));
  });

  it('fails the run at an encoder module without encodeScenario, or that cannot be loaded, naming it: a usage error', async () => {
    const { streamStudyParallel, opts } = await parallel();
    const module = pathToFileURL(join(ROOT, 'test', 'fixtures', 'encoders', 'none.mjs')).href;
    await expect(streamStudyParallel({ ...opts, jobs: 2, encoder: { module } }, () => {})).rejects.toThrow(`encoder module ${module} exports no encodeScenario function`);
    const missing = pathToFileURL(join(ROOT, 'test', 'fixtures', 'encoders', 'missing.mjs')).href;
    await expect(streamStudyParallel({ ...opts, jobs: 2, encoder: { module: missing } }, () => {})).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(new RegExp(`^encoder module ${missing} cannot be loaded \\(`)) });
  });
});

describe('the library', () => {
  it('offers the streamed runs beside runStudy', async () => {
    const lib = await import('../src/api/engine.js');
    const got = collector();
    const info = lib.streamStudy(study(6), got.sink);
    expect(got.got.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(flat(got.got)).toEqual((({ turns, probes, summary, violations }) => ({ turns, probes, summary, violations }))(lib.runStudy(study(6))));
    expect(info.encoding.name).toBe('chars4');
    expect(typeof lib.streamStudyParallel).toBe('function');
  });
});

describe('a lazy source of conversations', () => {
  it('is asked for each conversation once, in order, and gives the records of the array', () => {
    const opts = study(6);
    const array = opts.conversations;
    const asked: number[] = [];
    // A source that makes each conversation anew when asked (as one reading from disk would).
    const source = { length: array.length, at: (i: number) => (asked.push(i), structuredClone(array.at(i)!)) };
    const got = collector();
    streamStudy({ ...opts, conversations: source }, got.sink);
    expect(asked).toEqual([0, 1, 2, 3, 4, 5]);
    expect(flat(got.got)).toEqual((({ turns, probes, summary, violations }) => ({ turns, probes, summary, violations }))(runStudy(opts)));
  });
});

describe('the CLI hands the loaded conversations over', () => {
  it('each once, in order, and lets it go', () => {
    const list = (study(3).conversations as Conversation[]).slice(0, 3);
    const [a, b, c] = list;
    const source = handOver(list);
    expect(source.length).toBe(3);
    expect([source.at(0), source.at(1), source.at(2)]).toEqual([a, b, c]);
    expect(list).toEqual([undefined, undefined, undefined]);
  });
});

describe('a worker that runs out of memory', () => {
  it('is reported as what to do (one thread), other worker errors as they are', () => {
    const oom = Object.assign(new Error('Worker terminated due to reaching memory limit: JS heap out of memory'), { code: 'ERR_WORKER_OUT_OF_MEMORY' });
    const e = workerError(oom);
    expect(e).toBeInstanceOf(CtxsimError);
    expect(e.message).toBe('a worker thread ran out of memory (its heap is limited to 1024 MB): a scenario is too large to replay beside others; run with --jobs 1');
    const other = new Error('boom');
    expect(workerError(other)).toBe(other);
  });
});
