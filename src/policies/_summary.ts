import type { Conversation, Message, UpkeepCall } from '../types.js';
import { summarize, type Summary } from '../upkeep/summarizer.js';
import { artifact, Erasures, moderated, transcriptArtifact, valuesOf } from './_forget.js';
import { eraseFromSummary, factValues, injected, statedFacts } from './_memory.js';
import { Transcript, type Exchange } from './_transcript.js';
import type { ParamSpec, Params, PolicyDeps, PolicySession } from './types.js';

/** The parameters both summary policies take for their summarizer. */
export const SUMMARIZER_PARAMS: Readonly<Record<string, ParamSpec>> = {
  summaryModel: { default: undefined, kind: 'string' },
  summaryTokens: { default: 200, kind: 'int', min: 1 },
  keep: { default: 1, kind: 'probability' },
};

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
  private readonly erased = new Erasures();
  private readonly hidden: string[];

  constructor(
    private readonly conversation: Conversation,
    private readonly params: Params,
    private readonly deps: PolicyDeps,
  ) {
    this.history = new Transcript(params.sessionCap as number | undefined);
    this.hidden = factValues(conversation);
  }

  /** Exchanges not folded yet. */
  open(): Exchange[] {
    return this.history.exchanges.slice(this.folded);
  }

  /** The summary as a message to send, if there is one. */
  message(): Message[] {
    return this.summary ? [this.summary.message] : [];
  }

  /** Folds the oldest `count` open exchanges into the summary: one summarizer call. */
  fold(count: number): UpkeepCall {
    const { conversation, params, deps } = this;
    const leaving = this.open().slice(0, count);
    const r = summarize({
      tokens: deps.tokens,
      random: deps.random,
      model: (params.summaryModel as string | undefined) ?? deps.model,
      summaryTokens: params.summaryTokens as number,
      keep: params.keep as number,
      ...(this.summary && { previous: this.summary }),
      folded: leaving.flat(),
      stated: statedFacts(conversation, leaving, this.erased),
      hidden: this.hidden,
      injected: injected(conversation, leaving),
    });
    this.summary = r.summary;
    this.folded += leaving.length;
    return r.call;
  }

  commit: PolicySession['commit'] = (exchange, info) => {
    if (moderated(this.params, info)) return [];
    // A new session starts blank: the running summary belongs to the session.
    if (this.history.add(exchange)) {
      this.folded = 0;
      this.summary = undefined;
    }
    return [];
  };

  forget: PolicySession['forget'] = (facts, info) => {
    const values = valuesOf(facts);
    this.history.redact(values);
    this.erased.add(info.afterTurn, values);
    const { tokens, model } = this.deps;
    const r = eraseFromSummary(this.summary, facts, values, { tokens, params: this.params, model, hidden: this.hidden });
    this.summary = r.memory;
    return r.upkeep;
  };

  artifacts: PolicySession['artifacts'] = () => [
    transcriptArtifact(this.history.messages(this.folded)),
    artifact('summary', this.summary ? [this.summary.message.content] : []),
  ];
}
