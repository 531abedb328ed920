import { eachLine, InputFileError } from '../process.js';
import { CtxsimError, UsageError } from '../errors.js';
import { replayContexts, type ModelContext } from '../engine/run.js';
import { ReplayThread } from '../engine/parallel.js';
import { runSpecOf, type Execution, type RunSpec, type RunUpkeep } from '../engine/spec.js';
import { replay } from '../engine/replay.js';
import type { PolicyVariant } from '../policies/spec.js';
import { priceUsage } from '../pricing/meter.js';
import { lookup, picoPerToken as usdToPico, type PriceTable } from '../pricing/prices.js';
import { usd } from '../records/format.js';
import type { Conversation, Pico } from '../types.js';
import { Cassette, cassetteDigest, cassetteLineLimit, type BilledUsage, type CassetteEntry, type EndpointAnswer } from '../upkeep/cassette.js';
import type { UpkeepRequest } from '../upkeep/request.js';
import { openEndpoint, responseError } from '../upkeep/endpoint.js';
import { Journal } from '../upkeep/journal.js';
import { DEFAULT_PROMPTS } from '../upkeep/prompts.js';
import type { Miss } from '../upkeep/upkeep.js';
import { exists, writeFileAtomic } from '../output/files.js';
import { displayPath } from '../output/display.js';
import { sha256 } from '../gate/baseline.js';

/**
 * Real upkeep, recorded once and replayed: where a study's summaries,
 * extractions and embeddings come from (`upkeep:` in a study, `--upkeep`).
 *
 *  - simulate — the simulated summarizer, extractor and lexical embedding
 *               (the default; offline, deterministic);
 *  - record   — every upkeep request the cassette lacks is sent to an
 *               OpenAI-compatible endpoint and its response added (to the
 *               journal beside the cassette as it arrives, so a stopped
 *               recording keeps it and the next one carries on; to the
 *               cassette once the recording completes); then the run
 *               replays the cassette;
 *  - replay   — the cassette only, never a socket; a request it lacks is an
 *               error naming where and how to record it, and so is a
 *               cassette whose recording did not finish (a journal beside it);
 *  - live     — every request is sent, nothing is written.
 *
 * A recording learns which requests a conversation makes by replaying it
 * with what the cassette has: a summary chain (each fold reads the summary
 * before it) needs one replay per link, the requests of one replay go out
 * together (up to `concurrency` at a time), and the conversations and
 * policies are recorded side by side. The outputs of a recording are then
 * those of a replay of the cassette it leaves: byte-identical to every
 * later replay.
 *
 * A study with `answers` also sends each probe turn's first prompt to the
 * chat model the same way: its answers are requests of kind `answer`,
 * found by the same replays, sent once the unit's upkeep is complete (its
 * prompt is then final), recorded and counted with the rest (a
 * measurement: no policy's cost includes them). With a `judge`, a reply
 * that does not hold a probed value as written is sent to the judge model
 * to grade (requests of kind `judge`, a measurement too), once the reply is
 * recorded.
 */

import { defaultUpkeep, type UpkeepSettings } from './upkeep-settings.js';

export { defaultUpkeep, NETWORK_MODES, PROMPTS_SCHEMA, UPKEEP_MODES, withUpkeepOverrides, type UpkeepMode, type UpkeepOverrides, type UpkeepSettings } from './upkeep-settings.js';

/** Where requests go, for the line that tells it: the endpoint and the variable the key is read from (never the key). */
export function endpointText(u: Pick<UpkeepSettings, 'baseURL' | 'apiKeyEnv'>, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return `${u.baseURL} ${env[u.apiKeyEnv] ? `with the API key in $${u.apiKeyEnv}` : `without an API key ($${u.apiKeyEnv} is not set)`}`;
}

/**
 * Why a study file's own `mode: record` or `live` is refused: it would open
 * the network (to the host named), which only the command line may do.
 */
export function networkProblem(u: Pick<UpkeepSettings, 'mode' | 'baseURL' | 'apiKeyEnv'>): string {
  return `${u.mode} sends requests to ${new URL(u.baseURL).host} (the API key from $${u.apiKeyEnv}); a study file cannot open the network by itself: add --upkeep ${u.mode} to the command line`;
}

/** What a study runs with that a recording needs. */
export interface UpkeepStudy {
  file?: string;
  upkeepSource?: UpkeepSettings;
  policies: readonly PolicyVariant[];
  seed: number;
  models: readonly string[];
  tokenizer: string;
  prices: string;
  /** Each probe turn's first prompt also goes to the chat model, through the upkeep endpoint (the study's `answers`). */
  answers?: boolean;
  /** With `answers`: the model that grades a reply that does not hold the value as written (the study's `judge`). */
  judge?: string;
  /** The limits of a policy module's calls, where its units are replayed (`--policy-timeout`, `--policy-memory`). */
  policyTimeout?: number;
  policyMemory?: number;
}

/** What a recording tells while it goes. */
export interface UpkeepEvents {
  /** A line for stderr: what is to be recorded, progress, what was. */
  onNote?: (line: string) => void;
}

/** A study's upkeep as its run takes it: the spec's (undefined: simulated with the default prompts), and the cassette named in the error a missing response is. */
export interface RunUpkeepOf {
  upkeep: RunUpkeep | undefined;
  cassette?: Execution['cassette'];
}

/** How a study's upkeep is told in its fingerprint (absent: simulated with the default prompts). */
export function upkeepFingerprint(study: UpkeepStudy, { upkeep: run, cassette }: RunUpkeepOf): string | undefined {
  const u = study.upkeepSource;
  if (!u) return undefined;
  // The judge's prompt counts only when it is not the default, so a fingerprint made before there was one stays as it was.
  const { judge: judgePrompt, ...others } = u.prompts;
  const told = judgePrompt === DEFAULT_PROMPTS.judge ? others : u.prompts;
  const { judge: _, ...defaults } = DEFAULT_PROMPTS;
  const prompts = JSON.stringify(told) === JSON.stringify(defaults) ? '' : ` prompts sha256:${sha256(JSON.stringify(told)).slice(0, 12)}`;
  if (!run?.recorded) return prompts ? `simulated${prompts}` : undefined;
  const answers = run.answers ? ` answers${run.judge !== undefined ? ` judge ${run.judge}` : ''}` : '';
  if (u.mode === 'live') return `live ${u.baseURL}${prompts}${answers}`;
  return `recorded ${cassette!.file} sha256:${cassetteDigest(run.recorded.entries).slice(0, 12)}${prompts}${answers}`;
}

/**
 * A study that measures answers needs a real chat model: simulated upkeep
 * has none to send the probe turns to; a judge grades answers, so it needs
 * them. `name` and `judgeName` are what asked (the study's key, or the flag).
 */
export function checkAnswers(study: Pick<UpkeepStudy, 'answers' | 'upkeepSource' | 'judge'>, name = 'answers', judgeName = 'judge'): void {
  const p = answersProblem(study);
  if (p) throw new UsageError(`${p.key === 'judge' ? judgeName : name}: ${p.message}`);
}

/** Why a study's `answers` or `judge` cannot be measured, and which of the two says so; undefined when both can. */
export function answersProblem(study: Pick<UpkeepStudy, 'answers' | 'upkeepSource' | 'judge'>): { key: 'answers' | 'judge'; message: string } | undefined {
  if (study.judge !== undefined && !study.answers) {
    return { key: 'judge', message: "the judge grades the chat model's answers to probe turns, which this run does not measure: add --answers (or answers: true in the study)" };
  }
  if (study.answers && (study.upkeepSource?.mode ?? 'simulate') === 'simulate') {
    return { key: 'answers', message: 'the probe turns go to the chat model through the upkeep endpoint, which simulated upkeep has not: add --upkeep record (or replay, live)' };
  }
  return undefined;
}

/**
 * The run's upkeep for a study: simulated (nothing, or the study's prompts),
 * or a cassette — read (replay), recorded into and saved (record), or
 * recorded afresh in memory (live). `display` shows a path in its messages
 * (default: relative to the working folder when that is shorter).
 */
export async function studyUpkeep(study: UpkeepStudy, conversations: readonly Conversation[], display: (path: string) => string = displayPath, events: UpkeepEvents = {}): Promise<RunUpkeepOf> {
  checkAnswers(study);
  const u = study.upkeepSource;
  if (!u) return { upkeep: undefined };
  if (u.mode === 'simulate') return { upkeep: u.prompts === DEFAULT_PROMPTS ? undefined : { prompts: u.prompts } };
  const answers = study.answers ? { answers: true, ...(study.judge !== undefined && { judge: study.judge }) } : {};
  const file = display(u.cassette);
  // A run told to answer by its flag records the answers only when told again.
  const recordCommand = `ctxsim run${study.file ? ` ${display(study.file)}` : ''} --upkeep record --cassette ${file}${study.answers ? ' --answers' : ''}${study.answers && study.judge !== undefined ? ` --judge ${study.judge}` : ''}`;
  if (u.mode === 'replay') {
    const journal = Journal.pathOf(u.cassette);
    if (exists(journal)) {
      throw new UsageError(`upkeep: the recording into ${file} did not finish: ${display(journal)} holds the responses it received; finish it with \`${recordCommand}\` (or delete ${display(journal)} to drop them)`);
    }
    if (!exists(u.cassette)) throw new UsageError(`upkeep cassette ${file} does not exist: record it with \`${recordCommand}\``);
    return { upkeep: { prompts: u.prompts, recorded: { entries: readCassette(u.cassette, file).entries() }, ...answers }, cassette: { file, recordCommand } };
  }
  const say = events.onNote ?? (() => {});
  const { cassette, journal } = u.mode === 'record' ? readRecording(u.cassette, display) : { cassette: new Cassette(), journal: undefined };
  if (journal?.size) say(`upkeep: ${journal.shown} holds ${journal.size} responses of a recording that did not finish: carrying on from them`);
  const before = cassette.size;
  const recorder = new Recorder(study, u, conversations, cassette);
  let plan: UpkeepPlan;
  try {
    plan = await recorder.plan();
    if (plan.calls === 0) say(`upkeep: every request is in ${journal?.size ? `${file} and its journal` : file} (${cassette.size} responses)`);
    else {
      say(`upkeep: recording about ${planText(plan)} from ${endpointText(u)}`);
      if (u.maxUpkeepCost !== undefined && plan.cost > usdToPico(u.maxUpkeepCost)) {
        throw new UsageError(`upkeep: recording needs about ${planText(plan)}, more than maxUpkeepCost $${u.maxUpkeepCost}; raise it or record fewer scenarios or policies`);
      }
      try {
        await recorder.record(plan.calls, say, journal);
      } catch (e) {
        // The error says where what was received is kept: in the journal, which the next recording carries on from.
        if (!journal?.size || !(e instanceof CtxsimError)) throw e;
        const kept = journal.size === 1 ? 'the response received is kept' : `the ${journal.size} responses received are kept`;
        throw new CtxsimError(`${e.message}; ${kept} in ${journal.shown}: run the same command again to carry on`, e.code, e.exitCode);
      } finally {
        journal?.close();
      }
    }
  } finally {
    await recorder.close();
  }
  // Complete: the cassette takes every response, sorted, and the journal goes (a kill between the two leaves a journal the next recording finds already in the cassette).
  if (journal?.exists) {
    writeFileAtomic(u.cassette, cassette.lines());
    journal.remove();
  }
  if (plan.calls) say(`upkeep: recorded ${cassette.size - before} responses for $${usd(recorder.spent, 4)}${u.mode === 'record' ? ` into ${file}${before ? ` (${before} were there already)` : ''}` : ''}`);
  return { upkeep: { prompts: u.prompts, recorded: { entries: cassette.entries() }, ...answers }, cassette: { file: u.mode === 'live' ? 'the live recording' : file, recordCommand } };
}

/** A recording's cassette with the responses of its journal (when a recording into it did not finish), and the journal to append to. */
function readRecording(path: string, display: (path: string) => string): { cassette: Cassette; journal: Journal } {
  const cassette = exists(path) ? readCassette(path, display(path)) : new Cassette();
  return { cassette, journal: Journal.read(path, cassette, display) };
}

/** Reads a cassette file, a line at a time; a bad line is an input error at its line. */
function readCassette(path: string, file: string): Cassette {
  const parser = Cassette.parser(file);
  try {
    eachLine(path, parser.line, { limit: cassetteLineLimit(file), shown: file });
  } catch (e) {
    if (e instanceof InputFileError) throw new UsageError(`upkeep cassette ${e.message}`);
    if (e instanceof CtxsimError) throw e;
    throw new UsageError(`cannot read upkeep cassette ${file} (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
  return parser.done();
}

/** Calls, their tokens and what they cost at most. */
interface PlanTotals {
  calls: number;
  inputTokens: number;
  /** Chat answers at their `max_tokens`: an upper bound. */
  maxOutputTokens: number;
  cost: Pico;
}

/** What a recording is expected to send: how many calls of each kind, their tokens, and what they cost at most; of them, the answers to probe turns apart. */
export interface UpkeepPlan extends PlanTotals {
  byKind: Record<UpkeepRequest['kind'], number>;
  /** The chat model's answers to probe turns (a measurement, not the policies' cost), counted in the totals too. */
  answers: PlanTotals;
  /**
   * The judge's verdicts (a measurement too), counted in the totals too: one
   * for every probe of a fact not forgotten whose reply is not yet recorded
   * (the reply may not hold the value as written), at its most.
   */
  judge: PlanTotals;
}

/** `12 calls (4 summaries, 8 embeddings), at most $0.0021`, and what the answers to probe turns and the judge's verdicts among them come to. */
export function planText(plan: UpkeepPlan): string {
  const names = {
    summary: ['summary', 'summaries'],
    extract: ['extraction', 'extractions'],
    embed: ['embedding', 'embeddings'],
    answer: ['answer to a probe turn', 'answers to probe turns'],
    judge: ['verdict of the judge', 'verdicts of the judge'],
  } as const;
  const parts = (Object.keys(names) as (keyof typeof names)[]).filter((k) => plan.byKind[k]).map((k) => `${plan.byKind[k]} ${names[k][plan.byKind[k] === 1 ? 0 : 1]}`);
  const apart = (t: PlanTotals, one: string, many: string) => (t.calls ? `; the ${t.calls === 1 ? one : `${t.calls} ${many}`}: ${t.inputTokens} input tokens and at most ${t.maxOutputTokens} output tokens, at most $${usd(t.cost, 4)}` : '');
  const measured = apart(plan.answers, 'answer', 'answers') + apart(plan.judge, 'verdict', 'verdicts');
  return `${plan.calls} calls (${parts.join(', ')}), ${plan.inputTokens} input tokens and at most ${plan.maxOutputTokens} output tokens, at most $${usd(plan.cost, 4)}${measured}`;
}

/** The plan of a study's recording without sending anything (`--dry-run`); a policy module's units are replayed on worker threads, as a run's. */
export async function upkeepPlan(study: UpkeepStudy, conversations: readonly Conversation[]): Promise<UpkeepPlan> {
  checkAnswers(study);
  const u = study.upkeepSource ?? defaultUpkeep(process.cwd());
  const cassette = u.mode === 'record' ? readRecording(u.cassette, (path) => path).cassette : new Cassette();
  const recorder = new Recorder(study, u, conversations, cassette);
  try {
    return await recorder.plan();
  } finally {
    await recorder.close();
  }
}

/** The requests that measure a reply (a probe turn's answer, the judge's verdict on it): sent only once a unit's upkeep is complete. */
const MEASUREMENTS: ReadonlySet<UpkeepRequest['kind']> = new Set(['answer', 'judge']);

/** One conversation under one policy on one chat model: what a recording replays until it makes no request the cassette lacks (each numbered: conversation, model, policy). */
interface Unit {
  conversation: Conversation;
  variant: PolicyVariant;
  ctx: ModelContext;
  at: { conversation: number; model: number; policy: number };
}

/** A study's recording into a cassette. */
class Recorder {
  private readonly ctxs: ModelContext[];
  /** The worker thread that replays the units of policy modules (whose code never runs on this thread), and the responses it was told of. */
  private thread: ReplayThread | undefined;
  private readonly told = new Set<string>();
  private readonly prices: PriceTable;
  private readonly policies: readonly PolicyVariant[];
  /** The run the recording replays: the study's spec, its upkeep the one recorded (its prompts, answers and judge), whose responses are the cassette's so far. */
  private readonly run: UpkeepStudy & RunSpec;
  /** Pico-dollars the responses recorded so far were billed. */
  spent = 0n;

  constructor(
    study: UpkeepStudy,
    private readonly settings: UpkeepSettings,
    private readonly conversations: readonly Conversation[],
    private readonly cassette: Cassette,
  ) {
    const answers = study.answers === true;
    const upkeep: RunUpkeep = { prompts: settings.prompts, ...(answers && { answers }), ...(answers && study.judge !== undefined && { judge: study.judge }) };
    this.run = { ...(study as UpkeepStudy & RunSpec), upkeep };
    this.ctxs = replayContexts(runSpecOf(this.run), { cacheFolder: false });
    this.prices = this.ctxs[0]!.prices;
    this.policies = study.policies;
  }

  private units(): Unit[] {
    return this.conversations.flatMap((conversation, c) => this.ctxs.flatMap((ctx, m) => this.policies.map((variant, p) => ({ conversation, variant, ctx, at: { conversation: c, model: m, policy: p } }))));
  }

  /**
   * Replays a unit with what the cassette has, telling each request it
   * lacks. A policy module's unit is replayed as a run replays it: on a
   * worker thread (opened for the first), the module's sessions on its own
   * thread, under the run's limits; the thread is told the responses
   * recorded since it was last asked.
   */
  private async replayWith(unit: Unit, onMiss: (m: Miss) => void): Promise<void> {
    if (!unit.variant.module) {
      replay(unit.conversation, unit.variant, { ...unit.ctx, recorded: { cassette: this.cassette, onMiss } });
      return;
    }
    this.thread ??= new ReplayThread({ ...this.run, cacheFolder: false });
    const { conversation, at } = unit;
    const r = await this.thread.request(() => {
      const entries = this.cassette.entries().filter((e) => !this.told.has(e.key));
      for (const e of entries) this.told.add(e.key);
      return { kind: 'misses', index: at.conversation, conversation, model: at.model, policy: at.policy, entries };
    }, [[at.conversation, conversation.id]]);
    if (r.kind === 'misses') for (const m of r.misses) onMiss(m);
  }

  /** Ends the worker thread of the modules' units, if one was opened. */
  async close(): Promise<void> {
    await this.thread?.close();
  }

  /**
   * One replay of every unit, each missing request counted once (those after
   * a stand-in too): what recording would send. Output is counted at each
   * request's `max_tokens`. A stand-in summary is as long as the summary it
   * stands for may be (`recordedUpkeep`), so a later request that holds it is
   * counted at its most too: the recorded summary may be that long, and
   * nothing else covers it when output is cheap (a model that charges input
   * only).
   */
  async plan(): Promise<UpkeepPlan> {
    const misses = new Map<string, { miss: Miss; ctx: ModelContext }>();
    for (const unit of this.units()) await this.replayWith(unit, (miss) => misses.set(miss.key, { miss, ctx: unit.ctx }));
    const plan: UpkeepPlan = { calls: 0, byKind: { summary: 0, extract: 0, embed: 0, answer: 0, judge: 0 }, inputTokens: 0, maxOutputTokens: 0, cost: 0n, answers: { calls: 0, inputTokens: 0, maxOutputTokens: 0, cost: 0n }, judge: { calls: 0, inputTokens: 0, maxOutputTokens: 0, cost: 0n } };
    for (const { miss, ctx } of misses.values()) {
      const r = miss.request;
      const input = requestTokens(miss, ctx);
      const output = r.kind === 'embed' ? 0 : r.maxTokens;
      const cost = this.cost(r.model, { input, output });
      plan.byKind[r.kind]++;
      for (const t of r.kind === 'answer' ? [plan, plan.answers] : r.kind === 'judge' ? [plan, plan.judge] : [plan]) {
        t.calls++;
        t.inputTokens += input;
        t.maxOutputTokens += output;
        t.cost += cost;
      }
    }
    return plan;
  }

  /** What `usage` costs on the price table: cache reads and writes, when the endpoint reported some, at their own prices, as the provider bills them. */
  private cost(model: string, usage: BilledUsage): Pico {
    const c = priceUsage(lookup(this.prices, model), { input: usage.input, cached: usage.cached ?? 0, written: usage.written ?? 0, output: usage.output });
    return c.input + c.cached + c.output;
  }

  /**
   * Records until no unit makes a request the cassette lacks (about
   * `expected` requests, for the progress lines). Each unit is
   * replayed; the requests it made that do not depend on a stand-in are sent
   * (each key once, whichever unit asked first; answers and verdicts only
   * once it made no other request); then it is replayed again.
   * Each response, checked (its vector's length against its model's other
   * vectors too), goes to the journal as it comes, then to the cassette.
   * On a failure the requests under way finish (they are paid for) and the
   * failure is thrown. Once the responses recorded were billed
   * `maxUpkeepCost` or more, no request is sent: those under way finish and
   * are recorded, and unless nothing was left to record, the recording
   * stops with a message counting every response recorded and their cost.
   */
  async record(expected: number, say: (line: string) => void, journal: Journal | undefined): Promise<void> {
    const u = this.settings;
    const endpoint = { baseURL: u.baseURL, apiKey: process.env[u.apiKeyEnv] || undefined, apiKeyEnv: u.apiKeyEnv, timeoutSeconds: u.timeout, maxRetries: u.retries, maxResponseBytes: u.maxResponseBytes };
    const send = await openEndpoint(endpoint);
    const cap = u.maxUpkeepCost === undefined ? undefined : usdToPico(u.maxUpkeepCost);
    const inflight = new Map<string, Promise<void>>();
    const limit = pool(u.concurrency);
    let failure: unknown;
    /** The billed cost reached the cap: nothing more is sent (a failure, thrown first, wins over it). */
    let capped = false;
    const stopped = () => failure !== undefined || capped;
    let made = 0;
    const fetch = (miss: Miss, ctx: ModelContext): Promise<void> => {
      let p = inflight.get(miss.key);
      if (!p) {
        p = limit(async () => {
          // Checked as the request would go out, not when it was queued: a response recorded meanwhile may have reached the cap.
          if (stopped()) return;
          try {
            const entry = withUsage(await send(miss.request), miss, ctx);
            const issue = this.cassette.dimensionIssue(entry);
            if (issue) throw responseError(endpoint, miss.request, issue);
            journal?.append(entry);
            this.cassette.add(entry);
            this.spent += this.cost(entry.model, entry.usage);
            if (++made % 25 === 0) say(`upkeep: recorded ${made} of about ${Math.max(expected, made)} responses ($${usd(this.spent, 4)})`);
            if (cap !== undefined && this.spent >= cap) capped = true;
          } catch (e) {
            // Set before the pool starts the next request, which then is not sent.
            failure ??= e;
          }
        });
        inflight.set(miss.key, p);
      }
      return p;
    };
    const run = async (unit: Unit): Promise<void> => {
      while (!stopped()) {
        const misses = new Map<string, Miss>();
        let upkeepComplete = true;
        await this.replayWith(unit, (m) => {
          if (!MEASUREMENTS.has(m.request.kind)) upkeepComplete = false;
          if (!m.dependent) misses.set(m.key, m);
        });
        if (!misses.size) return;
        // A probe turn's prompt is final only once every summary, extraction and embedding before it is recorded (a stand-in extraction or embedding changes what is sent without appearing in it): asked earlier, its answer would be for a prompt the finished recording never sends, and which one would depend on where a recording was stopped.
        const send = upkeepComplete ? [...misses.values()] : [...misses.values()].filter((m) => !MEASUREMENTS.has(m.request.kind));
        await Promise.all(send.map((m) => fetch(m, unit.ctx)));
      }
    };
    await Promise.all(this.units().map(run));
    await Promise.all(inflight.values());
    if (failure !== undefined) throw failure;
    // The response that reached the cap may have been the last one needed: then the recording is complete.
    if (capped && (await this.plan()).calls > 0) {
      const responses = made === 1 ? '1 response' : `${made} responses`;
      throw new CtxsimError(`upkeep: the recording reached maxUpkeepCost $${u.maxUpkeepCost} after ${responses} ($${usd(this.spent, 4)})`, 'upkeep-cost');
    }
  }
}

/**
 * A response with its usage: the endpoint's, or (when it reports none) the
 * request and answer counted with the run's tokenizer — the answer at most
 * the request's `max_tokens`, which the endpoint generated it within (the
 * run's tokenizer may count its text as more).
 */
function withUsage(a: EndpointAnswer, miss: Miss, ctx: ModelContext): CassetteEntry {
  if (a.usage) return { ...a, usage: a.usage };
  const r = miss.request;
  const output = r.kind === 'embed' || a.text === undefined ? 0 : Math.min(r.maxTokens, ctx.tokens.text(a.text));
  return { ...a, usage: { input: requestTokens(miss, ctx), output } };
}

/** A request's input tokens, counted with the run's tokenizer (an answer's prompt, tool definitions included, as the replay counted it). */
function requestTokens(miss: Miss, ctx: ModelContext): number {
  const r = miss.request;
  if (r.kind === 'embed') return ctx.tokens.text(r.input);
  if (r.kind === 'answer') return miss.inputTokens ?? 0;
  return ctx.tokens.prompt(r.messages);
}

/** Runs at most `n` tasks at once, in the order they are given. */
function pool(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active >= n) await new Promise<void>((go) => waiting.push(go));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
