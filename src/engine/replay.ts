import { CtxsimError, UsageError } from '../errors.js';
import { blocks } from '../policies/blocks.js';
import { SessionDriver, type DrivenCall, type DrivenForget, type TurnObserver } from '../policies/driver.js';
import { guardPolicy } from '../policies/guard.js';
import { moduleFault } from '../policies/module-calls.js';
import type { PolicyVariant } from '../policies/spec.js';
import { sessionTokens } from '../policies/session-tokens.js';
import { policyStream } from '../policies/stream.js';
import type { Artifact, PromptPlan } from '../policies/types.js';
import { Meter, type CallCost, type CallRequest } from '../pricing/meter.js';
import { lookup, type PriceTable } from '../pricing/prices.js';
import { chooseModel, ONE_HOUR } from '../pricing/settings.js';
import { policyViolations } from '../message-rules/blame.js';
import { PromptRules, type RuleSet } from '../message-rules/provider.js';
import { PromptTokens, type TokenCounter } from '../tokens/counter.js';
import type { Conversation, Message, ProbeAnswer, ProbeOutcome, ToolDef, Turn, UpkeepCall } from '../types.js';
import type { ProbeRecord, TurnRecord, ViolationRecord } from '../records/registry.js';
import { toolDefTokens } from '../tokens/tools.js';
import type { PromptSequence } from '../tokens/templated.js';
import type { Cassette } from '../upkeep/cassette.js';
import type { Vector } from '../upkeep/embedder.js';
import type { Readings } from '../upkeep/readings.js';
import { DEFAULT_PROMPTS, judgedYes, judgeRequest } from '../upkeep/prompts.js';
import { answerRequest } from '../upkeep/answer.js';
import { recordedUpkeep, simulatedUpkeep, type MissHandler, type RecordedUpkeep, type Upkeep } from '../upkeep/upkeep.js';
import { SafetyWatch } from './safety.js';
import type { CheckedSpec } from './spec.js';
import { answeredIn, FactLedger, scoreProbe } from './score.js';
import type { ConversationEnd } from './summary.js';

/** Whether a transcript's calls wrote 1-hour cache entries (Claude Code's main sessions do): its replay keeps that TTL unless the study sets one. */
function wroteForAnHour(c: Conversation): boolean {
  return c.turns.some((t) => t.assistant?.billed?.written1h || t.tools.some((m) => m.billed?.written1h));
}

/**
 * What every replay of a run on one chat model shares: the run's spec, as
 * checked (`runSpecOf`), from which the replay reads every setting, and
 * what was resolved of it for the model (its token counter, the price
 * table, the message rules, the cassette); no setting is copied beside it.
 */
export interface ReplayContext {
  /** The settings that decide the records (seed, caching, routing, fallback, latency, tools, upkeep, …), checked, with their defaults. */
  spec: CheckedSpec;
  /** The chat model replayed: one of `spec.models` (or, checking a transcript's bill, the model it recorded). */
  model: string;
  /** The model's token counter (`spec.tokenizer` and `spec.tokenFactor` resolved). */
  tokens: TokenCounter;
  /** The price table (`spec.prices` loaded). */
  prices: PriceTable;
  /** The provider message rules every prompt is checked against (`spec.messageRules`, or the model's provider's). */
  messageRules: RuleSet;
  /** With a recorded upkeep (`spec.upkeep.recorded`, or the cassette a recording fills): its responses, and what a request it lacks does. */
  recorded?: RecordedResponses;
  /** The model's tokenizer stands in for its own (not published): every turn's counts are estimates. */
  standIn?: boolean;
  /**
   * The simulated embeddings of one scenario's texts, by text, shared by the
   * scenario's replays (`replayScenario` makes one per scenario): every
   * policy variant and model embeds a text once.
   */
  embeddings?: Map<string, Vector>;
  /** What the simulated extractor and summarizer read of each text, kept in the cache folder across runs (`Readings`; one per run and thread). */
  readings?: Readings;
}

/** A recorded upkeep's responses, and what a request they lack does. */
export interface RecordedResponses {
  cassette: Cassette;
  /** Told of each request the cassette has no response for (it throws, unless a recording is finding what to send). */
  onMiss: MissHandler;
}

/** One model call of a turn, as sent. */
export interface SentCall {
  plan: PromptPlan;
  /** The prompt's tokens: its messages, and the tool definitions offered with it. */
  promptTokens: number;
  /** Of `promptTokens`, the tool definitions' (0 when no tools are offered). */
  toolTokens: number;
  /** Of `promptTokens`, the stand-in for what the transcript's log leaves out (`unlogged_prefix`). */
  unloggedTokens: number;
  /** Under a chat template, the prompt could only be counted adapted or by the per-message rule (see TemplatePrompts). */
  templateEstimate?: true;
  /** Under a chat template, the rendered prompt's pieces: what prefix caching compares. */
  sequence?: PromptSequence;
  output?: Message;
}

export interface Replay {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  violations: ViolationRecord[];
  /** What the policy stores at the end of the conversation. */
  artifacts: Artifact[];
  /** Zombie artifacts and stored bytes at the end, for the summary row. */
  end: ConversationEnd;
}

/** Told of each model call of a turn once it is priced. */
export type OnCall = (turn: number, call: SentCall, cost: CallCost) => void;

/** Told of each upkeep call charged to a turn (summary, extraction, embedding), priced on its own model. */
export type OnUpkeep = (turn: number, upkeep: UpkeepCall, priced: UpkeepPrice) => void;

/** An upkeep call's price: nothing when it was over its model's context window (`overflow`). */
export type UpkeepPrice = ReturnType<Meter['upkeep']>;

/** The seeded stream of one (seed, scenario, policy). */
export function streamFor(seed: number, scenario: string, policy: string): () => number {
  return policyStream(seed, scenario, policy);
}

/**
 * Replays one conversation through one policy. Per turn: the policy builds the
 * prompt for each model call (after the user message, and again after each
 * round of tool results); each prompt is checked against the provider's message rules and
 * for forgotten values; the first for injections still in memory; the policy
 * stores the exchange; forget events after the turn are carried out; the meter
 * prices the calls and the upkeep; probes are scored on the prompt of the
 * turn's first call. At the end, the artifacts the policy stores are
 * inspected. `onCall` sees every call with what it cost, `onUpkeep` every
 * upkeep call with its price (for `explain`).
 */
export function replay(conversation: Conversation, variant: PolicyVariant, ctx: ReplayContext, onCall?: OnCall, onUpkeep?: OnUpkeep): Replay {
  const steps = replaySteps(conversation, variant, ctx, onCall, onUpkeep);
  let turns = 0;
  for (;;) {
    let r: IteratorResult<TurnRecord, Replay>;
    try {
      r = steps.next();
    } catch (e) {
      // A module's plan or upkeep that throws when it is read (a getter, a proxy) is the module's fault, not ctxsim's.
      if (!variant.module || e instanceof CtxsimError) throw e;
      throw moduleFault(`${variant.name}: turn ${conversation.turns[turns]?.index ?? turns} of ${conversation.id}`, 'what it returned cannot be read', e);
    }
    if (r.done) return r.value;
    turns++;
  }
}

/** One turn of a replay as `explain` shows it: each call as sent and priced, the upkeep charged to the turn, the turn's record and probes. */
export interface ExplainedReplay {
  calls: { sent: SentCall; cost: CallCost }[];
  upkeep: { upkeep: UpkeepCall; price: UpkeepPrice }[];
  record: TurnRecord | undefined;
  probes: ProbeRecord[];
}

/** Replays a conversation through one policy and keeps turn `n` (from 1) as `explain` shows it. */
export function replayTurn(conversation: Conversation, variant: PolicyVariant, ctx: ReplayContext, n: number): ExplainedReplay {
  const calls: ExplainedReplay['calls'] = [];
  const upkeep: ExplainedReplay['upkeep'] = [];
  const r = replay(
    conversation,
    variant,
    ctx,
    (t, sent, cost) => t === n && calls.push({ sent, cost }),
    (t, u, price) => t === n && upkeep.push({ upkeep: u, price }),
  );
  return { calls, upkeep, record: r.turns.find((t) => t.turn === n), probes: r.probes.filter((p) => p.turn === n) };
}

/**
 * The same replay, one turn at a time: yields each turn's record and returns
 * the whole replay. Several may run interleaved (sessions are independent).
 * A turn is a step of the session driver's turn loop, which the replayer
 * observes: begun (routed), prompted (its calls counted, then inspected:
 * provider rules, forgotten values, injections), committed and followed by
 * its forget events, then priced, recorded and scored.
 */
export function* replaySteps(conversation: Conversation, variant: PolicyVariant, ctx: ReplayContext, onCall?: OnCall, onUpkeep?: OnUpkeep): Generator<TurnRecord, Replay, void> {
  const r = new Replayer(conversation, variant, ctx, onCall, onUpkeep);
  return r.finish(yield* r.steps());
}

/** What the inspection of a turn's prompts found. */
type Inspected = Pick<TurnRecord, 'violations' | 'zombiePrompt' | 'injectionExposed' | 'overBudget' | 'estimatedTokens'>;

/** What a turn's calls and upkeep cost. */
type Priced = Pick<
  TurnRecord,
  | 'model'
  | 'inputTokens'
  | 'cachedTokens'
  | 'cacheWriteTokens'
  | 'outputTokens'
  | 'auxInputTokens'
  | 'auxOutputTokens'
  | 'embedTokens'
  | 'costInput'
  | 'costCached'
  | 'costOutput'
  | 'costUpkeep'
  | 'latencyMs'
  | 'overflow'
  | 'fallback'
> & {
  /** The first call (the one probes are scored on) was over the context window. */
  firstOverflow: boolean;
};

/** One conversation's replay under one policy: its session, meter, ledger and records so far; it observes the driver's turn loop. */
class Replayer implements TurnObserver<TurnRecord> {
  private readonly watch: SafetyWatch;
  /** Feeds the session its turns: what the policy may see, and nothing else. */
  private readonly driver: SessionDriver;
  private readonly meter: Meter;
  private readonly promptTokens: PromptTokens;
  /** The provider rules, checked on each prompt from where the previous one ended when it starts with it. */
  private readonly rules: PromptRules;
  private readonly ledger: FactLedger;
  private readonly turns: TurnRecord[] = [];
  private readonly probes: ProbeRecord[] = [];
  private readonly violations: ViolationRecord[] = [];
  private cumulative = 0n;
  /** The turn under way (0 before the first): where an upkeep request the cassette lacks was made. */
  private turn = 0;
  /** The model the turn under way is routed to. */
  private routed: string;
  /** The turn's calls as sent, and what inspecting them found. */
  private calls: SentCall[] = [];
  private inspected: Inspected | undefined;
  /** The upkeep charged to the turn under way (a forget before the first turn is charged to turn 1). */
  private upkeepOfTurn: UpkeepCall[] = [];
  /** The tool definitions offered with every call, and their tokens (sent first: caching sees them before the messages). */
  private readonly tools: { tokens: number; defs: readonly ToolDef[] } | undefined;
  /** The chat model's recorded replies to probe turns, when the run measures answers. */
  private recorded: RecordedUpkeep | undefined;
  /** The judge's model and instruction, when the run measures answers with a judge. */
  private judge: { model: string; prompt: string } | undefined;

  constructor(
    private readonly conversation: Conversation,
    private readonly variant: PolicyVariant,
    private readonly ctx: ReplayContext,
    private readonly onCall?: OnCall,
    private readonly onUpkeep?: OnUpkeep,
  ) {
    const { tokens, model, spec } = ctx;
    this.routed = model;
    this.promptTokens = new PromptTokens(tokens);
    this.rules = new PromptRules(ctx.messageRules);
    // Every call of every policy keeps the contract's per-call rules, or the run stops naming the policy, turn and scenario;
    // the checks count a prompt's tokens with the run's counter, so a prompt is counted once.
    const upkeep = this.upkeep();
    const contextWindow = lookup(ctx.prices, model).maxInputTokens;
    this.tools = offeredTools(spec.toolDefs, conversation.toolDefs, tokens);
    // The session counts the tool definitions and the unlogged prefix in every prompt, as the meter does.
    const deps = { tokens: sessionTokens(tokens, conversation, this.tools?.tokens ?? 0), random: streamFor(spec.seed, conversation.id, variant.name), model, blocks, upkeep, ...(contextWindow !== undefined && { contextWindow }) };
    const guarded = guardPolicy(variant.policy, variant.name, this.promptTokens);
    this.driver = new SessionDriver(conversation, (start) => guarded.start(start, variant.params, deps));
    this.meter = new Meter(ctx.prices, {
      settings: spec,
      count: (m) => tokens.message(m),
      ...(this.tools && { toolTokens: this.tools.tokens }),
      ...(conversation.unloggedTokens && { pinnedTokens: conversation.unloggedTokens }),
      ...(wroteForAnHour(conversation) && { recordedTtl: ONE_HOUR }),
      ...(conversation.warmStart && { warmTokens: conversation.warmStart }),
      // Its own stream, so drawing failures leaves the policy's draws unchanged (made only when calls may fail).
      ...(spec.fallback && { random: streamFor(spec.seed, conversation.id, `${variant.name}:fallback`) }),
    });
    this.ledger = FactLedger.of(conversation);
    this.watch = new SafetyWatch();
  }

  /** The session's upkeep: simulated, or from the run's cassette; with the spec's upkeep prompts (default: `DEFAULT_PROMPTS`). */
  private upkeep(): Upkeep {
    const { tokens, spec, recorded: responses } = this.ctx;
    const prompts = spec.upkeep?.prompts ?? DEFAULT_PROMPTS;
    if (!responses) return simulatedUpkeep(tokens, prompts, this.ctx.embeddings, this.ctx.readings);
    const where = () => ({ scenario: this.conversation.id, policy: this.variant.name, turn: this.turn });
    const recorded = recordedUpkeep({ tokens, cassette: responses.cassette, prompts, onMiss: responses.onMiss, where });
    const { answers, judge } = spec.upkeep ?? {};
    if (answers) this.recorded = recorded;
    if (answers && judge !== undefined) this.judge = { model: judge, prompt: prompts.judge };
    return recorded;
  }

  /** The replay, a turn per step of the driver's turn loop, which this replayer observes; returns what the session stores at the end. */
  steps(): Generator<TurnRecord, Artifact[], void> {
    return this.driver.turns(this);
  }

  /** A turn starts: where a missing upkeep response is placed, what the safety watch knows of it, and the model it is routed to. */
  begin(turn: Turn): void {
    this.turn = turn.index;
    this.watch.startTurn(turn);
    // The user message's output count is needed only to route the turn.
    const { route } = this.ctx.spec;
    this.routed = route ? chooseModel(route, this.ctx.model, this.ctx.tokens.output(turn.user)) : this.ctx.model;
  }

  /** The turn's calls as the session planned them: counted as sent, then inspected before the turn changes memory. */
  prompted(turn: Turn, calls: DrivenCall[]): void {
    this.calls = this.sent(calls);
    this.inspected = this.inspect(turn.index, this.calls, this.upkeepOfTurn);
  }

  /** The exchange stored: its upkeep is the turn's. */
  committed(_turn: Turn, upkeep: UpkeepCall[]): void {
    for (const u of upkeep) this.upkeepOfTurn.push(u);
  }

  /** A forget event carried out: the safety watch learns the erased values; its upkeep is the turn's (turn 1's before the first). */
  forgot(_afterTurn: number, event: DrivenForget): void {
    this.watch.forget(event.facts);
    for (const u of event.upkeep) this.upkeepOfTurn.push(u);
  }

  /** The turn is over: priced, recorded and scored; its record. */
  end(turn: Turn): TurnRecord {
    this.watch.endTurn(turn);
    const upkeep = this.upkeepOfTurn;
    this.upkeepOfTurn = [];
    const priced = this.price(turn.index, this.routed, this.calls, upkeep);
    const row = this.record(turn.index, this.calls, this.inspected!, priced);
    this.score(turn, this.calls[0]!, priced.firstOverflow, row);
    return row;
  }

  /** The turn's model calls as sent (the prompt after the user message, and another after each round of tool calls), with their tokens. */
  private sent(calls: readonly DrivenCall[]): SentCall[] {
    const { template } = this.ctx.tokens;
    const toolTokens = this.tools?.tokens ?? 0;
    // What the log left out is sent first, whatever the policy sends.
    const unloggedTokens = this.conversation.unloggedTokens ?? 0;
    const sent: SentCall[] = [];
    for (const { plan, output } of calls) {
      let call: SentCall;
      if (template) {
        // A chat template lays out the prompt itself, tool definitions included: its rendering is counted.
        const t = template.count(plan.messages, this.tools?.defs, () => this.promptTokens.count(plan.messages) + toolTokens);
        call = { plan, promptTokens: unloggedTokens + t.tokens, toolTokens, unloggedTokens };
        if (t.estimated) call.templateEstimate = true;
        if (t.sequence) call.sequence = t.sequence;
      } else call = { plan, promptTokens: unloggedTokens + this.promptTokens.count(plan.messages) + toolTokens, toolTokens, unloggedTokens };
      if (output) call.output = output;
      sent.push(call);
    }
    return sent;
  }

  /** What was sent, before the turn changes memory: rule violations, forgotten values, injections; the plans' upkeep goes to `upkeep`. */
  private inspect(turn: number, calls: readonly SentCall[], upkeep: UpkeepCall[]): Inspected {
    const { tokens } = this.ctx;
    // A stand-in for what the log left out is an estimate of its tokens.
    const found: Inspected = { violations: 0, zombiePrompt: false, injectionExposed: false, overBudget: false, estimatedTokens: this.ctx.standIn === true || this.conversation.unloggedTokens !== undefined };
    for (let k = 0; k < calls.length; k++) {
      const { plan, output } = calls[k]!;
      for (const v of policyViolations(plan.messages, this.rules, this.conversation)) {
        this.violations.push({ scenario: this.conversation.id, policy: this.variant.name, model: this.ctx.model, turn, call: k + 1, rule: v.rule, detail: v.detail });
        found.violations++;
      }
      found.zombiePrompt ||= this.watch.zombieIn(plan.messages);
      found.overBudget ||= plan.overBudget;
      found.estimatedTokens ||= calls[k]!.templateEstimate === true || (tokens.anyEstimated && (tokens.estimatedIn(plan.messages) || (output !== undefined && tokens.estimated(output))));
      for (const u of plan.upkeep) upkeep.push(u);
    }
    found.injectionExposed = this.watch.exposedIn(calls[0]!.plan.messages, 1);
    return found;
  }

  /** Prices the turn's calls on `model` and its upkeep (the user waits for synchronous upkeep). */
  private price(turn: number, model: string, calls: readonly SentCall[], upkeep: readonly UpkeepCall[]): Priced {
    const { onCall, onUpkeep } = this;
    const { tokens } = this.ctx;
    const p: Priced = {
      model,
      inputTokens: 0,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      auxInputTokens: 0,
      auxOutputTokens: 0,
      embedTokens: 0,
      costInput: 0n,
      costCached: 0n,
      costOutput: 0n,
      costUpkeep: 0n,
      latencyMs: 0,
      overflow: false,
      firstOverflow: false,
      fallback: false,
    };
    for (const call of calls) {
      const outputTokens = call.output ? tokens.output(call.output) : 0;
      const request: CallRequest = { model, messages: call.plan.messages, promptTokens: call.promptTokens, stablePrefix: call.plan.stablePrefix, outputTokens, time: this.driver.time };
      if (call.sequence) request.sequence = call.sequence;
      if (call.output) request.output = call.output;
      if (call.output?.delay !== undefined) request.gap = call.output.delay;
      const c = this.meter.call(request);
      onCall?.(turn, call, c);
      p.inputTokens += c.inputTokens;
      p.cachedTokens += c.cachedTokens;
      p.cacheWriteTokens += c.cacheWriteTokens;
      p.outputTokens += c.outputTokens;
      p.costInput += c.input;
      p.costCached += c.cached;
      p.costOutput += c.output;
      p.latencyMs += c.latencyMs;
      p.overflow ||= c.overflow;
      if (call === calls[0]) p.firstOverflow = c.overflow;
      p.fallback ||= c.fallback;
    }
    for (const u of upkeep) {
      if (u.kind === 'embed') p.embedTokens += u.inputTokens;
      else {
        p.auxInputTokens += u.inputTokens;
        p.auxOutputTokens += u.outputTokens;
      }
      const priced = this.upkeepPrice(turn, u);
      onUpkeep?.(turn, u, priced);
      p.costUpkeep += priced.cost;
      p.overflow ||= priced.overflow;
      if (u.sync) p.latencyMs += priced.latencyMs;
    }
    return p;
  }

  /** An upkeep call priced; a model the price table lacks (only a policy module can name one: the run checks its own) names the policy, turn and scenario. */
  private upkeepPrice(turn: number, u: UpkeepCall): UpkeepPrice {
    try {
      return this.meter.upkeep(u.model, u.inputTokens, u.outputTokens);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      throw new CtxsimError(`${this.variant.name}: turn ${turn} of ${this.conversation.id}: upkeep ${u.kind}: ${e.message}`, 'policy');
    }
  }

  /** The turn's record, made whole in one go, its fields in the order of the `TURN_RECORD` registry (as results.json and shard files list them). */
  private record(turn: number, calls: readonly SentCall[], sent: Inspected, p: Priced): TurnRecord {
    const cost = p.costInput + p.costCached + p.costOutput + p.costUpkeep;
    this.cumulative += cost;
    const row: TurnRecord = {
      scenario: this.conversation.id,
      policy: this.variant.name,
      turn,
      contextMessages: calls[0]!.plan.messages.length,
      model: p.model,
      fallback: p.fallback,
      inputTokens: p.inputTokens,
      cachedTokens: p.cachedTokens,
      cacheWriteTokens: p.cacheWriteTokens,
      outputTokens: p.outputTokens,
      auxInputTokens: p.auxInputTokens,
      auxOutputTokens: p.auxOutputTokens,
      embedTokens: p.embedTokens,
      cost,
      cumulativeCost: this.cumulative,
      latencyMs: Math.round(p.latencyMs),
      overflow: p.overflow,
      overBudget: sent.overBudget,
      probes: 0,
      retained: 0,
      violations: sent.violations,
      zombiePrompt: sent.zombiePrompt,
      injectionExposed: sent.injectionExposed,
      costInput: p.costInput,
      costCached: p.costCached,
      costOutput: p.costOutput,
      costUpkeep: p.costUpkeep,
      estimatedTokens: sent.estimatedTokens,
      calls: calls.length,
    };
    this.turns.push(row);
    return row;
  }

  /**
   * Scores the turn's probes on the prompt of its first call; counts them in
   * `row`. When that call was over the context window a real backend rejects
   * it: every probe is an `overflow` (where the value was in the prompt is
   * still its source), never retained and never a violation. When the run
   * measures answers, a probe of a fact not forgotten is also scored on the
   * chat model's reply to that prompt (`reply`): `answered` when it holds
   * the current value; an overflow probe is `unanswered`, and not sent.
   * With a judge, a reply that does not hold the value as written is sent to
   * the judge model with the turn's user message and the value, and the
   * probe is `answered` when its verdict is yes (`judged`) and the prompt
   * held the current value; a yes on a value that was not sent (the probe
   * not `retained`) leaves it `unanswered`, counted apart (`judgedUnsent`),
   * so no answered figure rests on what the memory never sent.
   */
  private score(turn: Turn, first: SentCall, overflow: boolean, row: TurnRecord): void {
    const reply = this.reply(turn, first, overflow);
    for (const fact of turn.probe) {
      const state = this.ledger.at(fact, turn.index)!;
      // A forgotten fact has no current value: finding its last (or an older) value is a violation.
      const found = scoreProbe(first.plan.messages, state.current.value, state.older);
      const { source } = found;
      const outcome: ProbeOutcome = overflow ? 'overflow' : found.outcome;
      if (!state.forgotten) {
        row.probes++;
        if (outcome === 'retained') row.retained++;
      }
      let answer: ProbeAnswer | undefined = !this.recorded || state.forgotten ? undefined : reply && !reply.standIn && answeredIn(reply.text, state.current.value) ? 'answered' : 'unanswered';
      let judged: boolean | undefined;
      let judgedUnsent: boolean | undefined;
      if (answer && this.judge) {
        const yes = answer === 'unanswered' && reply !== undefined && this.judgeSaysYes(turn, fact, state.current.turn, reply.text);
        // A yes on a value the prompt did not hold cannot be the memory's doing: it stays unanswered, counted apart.
        judgedUnsent = yes && outcome !== 'retained';
        judged = yes && !judgedUnsent;
        if (judged) answer = 'answered';
      }
      this.probes.push({
        scenario: this.conversation.id,
        policy: this.variant.name,
        model: this.ctx.model,
        turn: turn.index,
        fact,
        outcome,
        ageTurns: turn.index - state.current.turn,
        source,
        expected: state.forgotten ? 'missing' : 'retained',
        violation: state.forgotten && outcome !== 'missing' && outcome !== 'overflow',
        ...(answer && { answer }),
        ...(judged !== undefined && { judged }),
        ...(judgedUnsent !== undefined && { judgedUnsent }),
      });
    }
  }

  /**
   * The chat model's recorded reply to the turn's first prompt, as sent
   * (messages and tool definitions), when the run measures answers and the
   * turn probes a fact not forgotten; none for a call over the context
   * window (a real backend rejects it).
   */
  private reply(turn: Turn, first: SentCall, overflow: boolean): { text: string; standIn?: true } | undefined {
    if (!this.recorded || overflow || !turn.probe.some((fact) => !this.ledger.at(fact, turn.index)!.forgotten)) return undefined;
    const request = answerRequest(this.ctx.model, first.plan.messages, this.tools?.defs);
    const text = this.recorded.reply(request, first.promptTokens);
    if (text !== undefined) return { text };
    // Recording, the reply not yet recorded: a judge's request holds a stand-in, so it waits for the reply and is counted at its most.
    return this.judge ? { text: this.recorded.replyStandIn(request), standIn: true } : undefined;
  }

  /**
   * The judge's verdict on a reply to the turn's first prompt: sent the
   * turn's user message, the fact's current value as the scenario states it
   * (`stated`: the turn it was stated in), and the reply. Yes when the
   * verdict's first word is yes; a verdict not yet recorded is no.
   */
  private judgeSaysYes(turn: Turn, fact: string, stated: number, reply: string): boolean {
    const value = this.conversation.turns.find((t) => t.index === stated)?.facts[fact] ?? '';
    const verdict = this.recorded!.judge(judgeRequest(this.judge!.model, turn.user.content, value, reply, this.judge!.prompt));
    return verdict !== undefined && judgedYes(verdict);
  }

  /** The whole replay, with what the policy stores at the end (`artifacts`). */
  finish(artifacts: Artifact[]): Replay {
    const storedBytes = artifacts.reduce((n, a) => n + a.bytes, 0);
    return { turns: this.turns, probes: this.probes, violations: this.violations, artifacts, end: { zombies: this.watch.zombies(artifacts), storedBytes } };
  }
}

/**
 * The tools offered with a conversation's calls: the study's, then the
 * conversation's own (one of the same name replaces the study's); none: undefined.
 */
function offeredTools(study: readonly ToolDef[] | undefined, own: readonly ToolDef[] | undefined, tokens: TokenCounter): { tokens: number; defs: readonly ToolDef[] } | undefined {
  if (!study?.length && !own?.length) return undefined;
  const byName = new Map<string, ToolDef>();
  for (const d of [...(study ?? []), ...(own ?? [])]) byName.set(d.name, d);
  const defs = [...byName.values()];
  return { tokens: toolDefTokens(defs, tokens), defs };
}
