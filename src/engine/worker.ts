import { parentPort, workerData } from 'node:worker_threads';
import { CtxsimError, UsageError } from '../errors.js';
import { checkVariants } from '../policies/contract/checker.js';
import type { ContractViolation } from '../policies/contract/rules.js';
import { REGISTRY } from '../policies/index.js';
import { describeThrown } from '../policies/module-calls.js';
import { ModuleLink } from '../policies/module-link.js';
import type { PolicyVariant } from '../policies/spec.js';
import { TokenCounter } from '../tokens/counter.js';
import type { Conversation } from '../types.js';
import { Cassette } from '../upkeep/cassette.js';
import type { Miss } from '../upkeep/upkeep.js';
import { markingHooks } from './module-watch.js';
import type { FromWorker, ToWorker, WorkerSetup } from './parallel.js';
import { replay, replayTurn } from './replay.js';
import { finishContexts, replayCacheOf, replayContexts, replayScenario, type EncodeScenario, type EncoderContext, type ScenarioRecordLists, type UnitContext } from './run.js';
import type { ScenarioEncoder } from './spec.js';

/**
 * A worker thread of a parallel run (see parallel.ts): a replay context per
 * chat model (one token counter per encoding, so a text is tokenized once per
 * worker; an open-weight tokenizer is loaded on the worker's first count, so
 * a worker whose units all come from the replay cache loads none), then
 * every scenario it is sent through every model and policy, records sent
 * back per scenario: as lists, or as the run's encoder makes them (the
 * sink's module, imported here once). A policy module's sessions run on the
 * module's own thread, through a link (policies/module-link.ts): no module
 * code runs here. An error (a tokenizer file with another hash, found when
 * it is loaded) goes back to the run as its message and code. A worker kept
 * for requests (`ReplayThread`) answers them instead: a turn to explain, the
 * contract check, a recording's replay of one unit.
 */

const setup = workerData as WorkerSetup;
const port = parentPort!;
/** With policy modules: each call into one is marked for the run's watchdog. */
const marking = setup.watch?.marks && markingHooks(setup.watch.marks);
const link = setup.watch?.link && new ModuleLink(setup.watch.link.port, setup.watch.link.signal, setup.watch.modules, setup.watch.limits.memoryMb, marking);

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

/** The run's policies, rebuilt: policies hold functions, which do not cross threads; a module's is its link's, its sessions on the module's thread (imported there first, its hash checked). */
function rebuild(list: WorkerSetup['policies']): PolicyVariant[] {
  const modules = setup.watch?.modules ?? [];
  if (link) for (const i of modules.keys()) link.load(i);
  return list.map((p) => {
    if (p.module) {
      const i = modules.findIndex((m) => m.file === p.module!.file);
      if (!link || i < 0) throw new CtxsimError(`worker: policy module ${p.module.file} has no thread`, 'internal');
      return { name: p.name, policy: link.policy(i, p.name), params: p.params, module: p.module };
    }
    const policy = REGISTRY.get(p.id);
    if (!policy) throw new CtxsimError(`worker: unknown policy "${p.id}"`, 'internal');
    return { name: p.name, policy, params: p.params };
  });
}

/** The requests a recording would send for one unit: replayed with the cassette so far (`entries` are those added since the last request). */
function missesOf(conversation: Conversation, policy: PolicyVariant, ctx: UnitContext, cassette: Cassette): Miss[] {
  const misses: Miss[] = [];
  // The spec's upkeep is the recording's (its prompts, answers and judge); its responses are those recorded so far.
  replay(conversation, policy, { ...ctx, recorded: { cassette, onMiss: (m) => misses.push(m) } });
  return misses;
}

/** The contract check of the run's variants, one at a time (the module's thread forgets each one's sessions after it). */
function contract(policies: readonly PolicyVariant[], conversations: readonly Conversation[], options: Extract<ToWorker, { kind: 'contract' }>['options']): ContractViolation[] {
  const limit = options.limit ?? 100;
  const tokens = new TokenCounter('chars4');
  const out: ContractViolation[] = [];
  conversations.forEach((c, i) => marking?.scenario(i, c.id));
  for (const v of policies) {
    if (out.length >= limit) break;
    for (const x of checkVariants([v], conversations, { ...options, tokens, limit: limit - out.length })) out.push(x);
    link?.nextScenario();
  }
  return out;
}

try {
  // Messages sent meanwhile wait in the port until the listener below is added.
  const policies = rebuild(setup.policies);
  const ctxs = replayContexts(setup.spec, { ...(setup.cacheFolder && { cacheFolder: setup.cacheFolder }), ...(setup.cassette && { cassette: setup.cassette }) });
  const cache = replayCacheOf(setup);
  const encode = setup.encoder && (await importEncoder(setup.encoder, { models: ctxs.map((c) => c.model) }));
  /** A recording's cassette as far as this thread has been told. */
  const recorded = new Cassette();
  /** Units replayed without a cache (a cache counts its own). */
  let replayed = 0;
  port.on('message', (message: ToWorker) => {
    try {
      switch (message.kind) {
        case 'finish': {
          const { tokenizerCalls, warnings, replayedUnits, cachedUnits } = finishContexts(ctxs, cache);
          post({ kind: 'finished', tokenizerCalls, warnings, replayedUnits: cache ? replayedUnits : replayed, cachedUnits });
          port.close();
          return;
        }
        case 'explain':
          marking?.scenario(message.index, message.conversation.id);
          post({ kind: 'explained', ...replayTurn(message.conversation, policies[0]!, ctxs[0]!, message.turn) });
          break;
        case 'contract':
          post({ kind: 'contract', violations: contract(policies, message.conversations, message.options) });
          break;
        case 'misses':
          marking?.scenario(message.index, message.conversation.id);
          for (const e of message.entries) recorded.add(e);
          post({ kind: 'misses', misses: missesOf(message.conversation, policies[message.policy]!, ctxs[message.model]!, recorded) });
          break;
        case 'scenario': {
          const { index: i, conversation } = message;
          marking?.scenario(i, conversation.id);
          const records = replayScenario(conversation, i, policies, ctxs, setup.shard, cache);
          if (!cache) replayed += records.summary.length;
          if (!encode) post({ kind: 'scenario', index: i, records });
          else {
            const { encoded, transfer } = encode(records);
            post({ kind: 'scenario', index: i, records: { kind: 'encoded', summary: records.summary, encoded } }, transfer);
          }
          break;
        }
      }
      // The module's thread forgets the sessions and messages of what was replayed.
      link?.nextScenario();
    } catch (e) {
      post(failure(e));
    }
  });
} catch (e) {
  post(failure(e));
}

function failure(e: unknown): FromWorker {
  const err = e instanceof Error ? e : new Error(describeThrown(e));
  // What a policy threw is the cause of its error: its stack is for whoever debugs the policy (CTXSIM_DEBUG=1).
  const cause = err instanceof CtxsimError && err.cause instanceof Error && typeof err.cause.stack === 'string' ? err.cause.stack : undefined;
  return {
    kind: 'error',
    message: err instanceof CtxsimError ? err.message : describeThrown(err),
    ...(err instanceof CtxsimError && { code: err.code, exitCode: err.exitCode }),
    ...(typeof err.stack === 'string' && { stack: err.stack }),
    ...(cause !== undefined && { causeStack: cause }),
  };
}
