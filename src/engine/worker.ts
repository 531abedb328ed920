import { Console } from 'node:console';
import { parentPort, workerData } from 'node:worker_threads';
import { CtxsimError, UsageError } from '../errors.js';
import { REGISTRY } from '../policies/index.js';
import { loadPolicyModule } from '../policies/module.js';
import { describeThrown, setModuleCallHooks } from '../policies/module-calls.js';
import { markingHooks } from './module-watch.js';
import type { PolicyVariant } from '../policies/spec.js';
import type { FromWorker, ToWorker, WorkerSetup } from './parallel.js';
import { finishContexts, replayCacheOf, replayContexts, replayScenario, type EncodeScenario, type EncoderContext, type ScenarioRecordLists } from './run.js';
import type { ScenarioEncoder } from './spec.js';

/**
 * A worker thread of a parallel run (see parallel.ts): a replay context per
 * chat model (one token counter per encoding, so a text is tokenized once per
 * worker; an open-weight tokenizer is loaded on the worker's first count, so
 * a worker whose units all come from the replay cache loads none), then
 * every scenario it is sent through every model and policy, records sent
 * back per scenario: as lists, or as the run's encoder makes them (the
 * sink's module, imported here once). An error (a tokenizer file with
 * another hash, found when it is loaded) goes back to the run as its
 * message and code.
 */

const setup = workerData as WorkerSetup;
const port = parentPort!;
/** With policy modules: each call into one is marked for the run's watchdog, and the console is stderr's even for what a module writes from a timer. */
const marking = setup.watch?.marks && markingHooks(setup.watch.marks, setup.watch.modules);
if (marking) {
  setModuleCallHooks(marking);
  globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
}

function post(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

/** The run's encoder, imported once: its `encodeScenario`, with the encoder's options and what it knows of the run. */
async function importEncoder(encoder: ScenarioEncoder, ctx: EncoderContext): Promise<(records: ScenarioRecordLists) => ReturnType<EncodeScenario>> {
  let m: { encodeScenario?: EncodeScenario };
  try {
    m = (await import(encoder.module)) as typeof m;
  } catch (e) {
    throw new UsageError(`encoder module ${encoder.module} cannot be loaded (${describeThrown(e)})`);
  }
  const encode = m.encodeScenario;
  if (typeof encode !== 'function') throw new UsageError(`encoder module ${encoder.module} exports no encodeScenario function`);
  return (records) => encode(records, encoder.options, ctx);
}

/** The run's policies, rebuilt: policies hold functions, which do not cross threads; a module is imported again by path, and must not have changed. */
async function rebuild(list: WorkerSetup['policies']): Promise<PolicyVariant[]> {
  const out: PolicyVariant[] = [];
  for (const p of list) {
    if (p.module) {
      const m = await loadPolicyModule(p.module.file, p.module.file, undefined, setup.watch?.limits.timeoutSeconds);
      if (m.hash !== p.module.hash) throw new CtxsimError(`policy module ${p.module.file} changed while the run was starting; run again`, 'policy-module');
      out.push({ name: p.name, policy: m.policy, params: p.params, module: p.module });
      continue;
    }
    const policy = REGISTRY.get(p.id);
    if (!policy) throw new CtxsimError(`worker: unknown policy "${p.id}"`, 'internal');
    out.push({ name: p.name, policy, params: p.params });
  }
  return out;
}

try {
  // Messages sent meanwhile wait in the port until the listener below is added.
  const policies = await rebuild(setup.policies);
  const ctxs = replayContexts({ ...setup.spec, ...(setup.cacheFolder && { cacheFolder: setup.cacheFolder }), ...(setup.cassette && { cassette: setup.cassette }) });
  const cache = replayCacheOf(setup);
  const encode = setup.encoder && (await importEncoder(setup.encoder, { models: ctxs.map((c) => c.model) }));
  /** Units replayed without a cache (a cache counts its own). */
  let replayed = 0;
  port.on('message', (message: ToWorker) => {
    try {
      if (message.kind === 'finish') {
        const { tokenizerCalls, warnings, replayedUnits, cachedUnits } = finishContexts(ctxs, cache);
        post({ kind: 'finished', tokenizerCalls, warnings, replayedUnits: cache ? replayedUnits : replayed, cachedUnits });
        port.close();
        return;
      }
      const { index: i, conversation } = message;
      marking?.scenario(i);
      const records = replayScenario(conversation, i, policies, ctxs, setup.shard, cache);
      if (!cache) replayed += records.summary.length;
      if (!encode) return post({ kind: 'scenario', index: i, records });
      const { encoded, transfer } = encode(records);
      post({ kind: 'scenario', index: i, records: { kind: 'encoded', summary: records.summary, encoded } }, transfer);
    } catch (e) {
      post(failure(e));
    }
  });
} catch (e) {
  post(failure(e));
}

function failure(e: unknown): FromWorker {
  const err = e instanceof Error ? e : new Error(describeThrown(e));
  return {
    kind: 'error',
    message: err instanceof CtxsimError ? err.message : describeThrown(err),
    ...(err instanceof CtxsimError && { code: err.code, exitCode: err.exitCode }),
    ...(typeof err.stack === 'string' && { stack: err.stack }),
  };
}
