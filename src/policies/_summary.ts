import type { z } from 'zod';
import type { Message, UpkeepCall } from '../types.js';
import type { Summary } from '../upkeep/summarizer.js';
import { artifact, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { eraseFromSummary, injected, upkeepOf } from './_memory.js';
import { fitFromNewest, sum, Transcript } from './_transcript.js';
import { int, model, probability, type CommonParams } from './params.js';
import type { Exchange, PolicyDeps, PolicySession } from './types.js';

/** `summaryTokens`, its description ending with `more` (what a policy adds about it). */
export function summaryTokensParam(more = '') {
  return int({ default: 200, min: 1, describe: `most tokens the running summary may have, its statements included (what does not fit is dropped, the least salient first)${more}` });
}

/** The parameters both summary policies take for their summarizer. */
export const SUMMARIZER_PARAMS = {
  summaryModel: model({ describe: 'model the summarizer runs on (default: the chat model)' }),
  summaryTokens: summaryTokensParam(),
  keep: probability({ default: 1, describe: 'chance that each fold keeps each statement it read (of the old summary and the folded messages; one lost once is gone)' }),
};

/** The summarizer's parameters, as a session reads them. */
export type SummarizerParams = z.output<z.ZodObject<typeof SUMMARIZER_PARAMS>>;

/**
 * The memory of the summary policies: the raw transcript, how much of it is
 * folded, and the running summary. The policies differ only in when they
 * fold and what they send; storing, forgetting and the artifacts are these.
 */
export class RunningSummary implements Pick<PolicySession, 'commit' | 'forget' | 'artifacts'> {
  readonly history: Transcript;
  /** Exchanges already folded into the summary. */
  folded = 0;
  summary: Summary | undefined;
  /** The turns the moderation classifier flagged, as they were committed: a fold quotes them. */
  private readonly flagged = new Set<number>();
  /**
   * Prefix sums of the stored exchanges' tokens from exchange `base` on:
   * sums[i] = tokens of the messages of exchanges base … base + i − 1.
   * Extended as the transcript grows and restarted from the fold point when
   * it changes otherwise (a session restart, a redaction), so a turn weighs
   * what is open without walking every message, and no folded message is
   * counted again.
   */
  private readonly sums: number[] = [0];
  private base = 0;

  constructor(
    private readonly params: SummarizerParams & CommonParams,
    private readonly deps: PolicyDeps,
  ) {
    this.history = new Transcript(params.sessionCap);
  }

  /** Exchanges not folded yet. */
  open(): Exchange[] {
    return this.history.exchanges.slice(this.folded);
  }

  /** How many exchanges are not folded yet. */
  openCount(): number {
    return this.history.exchanges.length - this.folded;
  }

  /** Tokens of the open exchanges' messages (as `sum(tokens, open().flat())`). */
  openTokens(): number {
    const sums = this.counted();
    return sums[sums.length - 1]! - sums[this.folded - this.base]!;
  }

  /** Tokens of the messages of open exchange `i` (0: the oldest open). */
  openExchangeTokens(i: number): number {
    const sums = this.counted();
    const at = this.folded - this.base + i;
    return sums[at + 1]! - sums[at]!;
  }

  /** How many of the newest open exchanges fit in `room` tokens (at most `max`): `newestExchangesThatFit` on `open()`. */
  newestOpenThatFit(room: number, max = Infinity): number {
    const sums = this.counted();
    const from = this.folded - this.base;
    return fitFromNewest(sums.length - 1 - from, (i) => sums[from + i + 1]! - sums[from + i]!, room, max);
  }

  /** The prefix sums, extended to the newest stored exchange. */
  private counted(): number[] {
    const { sums, base } = this;
    const { exchanges } = this.history;
    for (let i = base + sums.length - 1; i < exchanges.length; i++) sums.push(sums[i - base]! + sum(this.deps.tokens, exchanges[i]!));
    return sums;
  }

  /** Restarts the prefix sums at the fold point (the transcript changed other than by growing). */
  private recount(): void {
    this.sums.length = 1;
    this.base = this.folded;
  }

  /** The summary as a message to send, if there is one. */
  message(): Message[] {
    return this.summary ? [this.summary.message] : [];
  }

  /** Folds the oldest `count` open exchanges into a summary of at most `summaryTokens` (default: the policy's): one summarizer call. */
  fold(count: number, summaryTokens = this.params.summaryTokens): UpkeepCall {
    const { params, deps } = this;
    const leaving = this.open().slice(0, count);
    const r = upkeepOf(deps).summarize({
      tokens: deps.tokens,
      random: deps.random,
      model: params.summaryModel ?? deps.model,
      summaryTokens,
      keep: params.keep,
      ...(this.summary && { previous: this.summary }),
      folded: this.history.messages(this.folded, this.folded + leaving.length),
      injected: injected(this.flagged, leaving),
    });
    this.summary = r.summary;
    this.folded += leaving.length;
    return r.call;
  }

  commit: PolicySession['commit'] = (exchange, info) => {
    if (moderated(this.params, info)) return [];
    if (info.turn.injection) this.flagged.add(info.turn.index);
    // A new session starts blank: the running summary belongs to the session.
    if (this.history.add(exchange)) {
      this.folded = 0;
      this.summary = undefined;
      this.recount();
    }
    return [];
  };

  forget: PolicySession['forget'] = (facts) => {
    const values = valuesOf(facts);
    this.history.redact(values);
    this.recount();
    const { tokens, model } = this.deps;
    const r = eraseFromSummary(this.summary, facts, values, { tokens, params: this.params, model, upkeep: upkeepOf(this.deps) });
    this.summary = r.memory;
    return r.upkeep;
  };

  artifacts: PolicySession['artifacts'] = () => [
    transcriptArtifact(this.history.messages(this.folded)),
    artifact('summary', this.summary ? [this.summary.message.content] : []),
  ];
}
