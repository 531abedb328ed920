import type { TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { holds, redactText } from '../upkeep/redact.js';
import { dropOrder } from '../upkeep/mentions.js';
import type { Summary } from '../upkeep/summarizer.js';
import { factEntry, factSalience, isStatement } from '../upkeep/extractor.js';
import { Restatements } from '../upkeep/statements.js';
import type { Day } from '../upkeep/times.js';
import type { Injected, Mentions } from '../upkeep/types.js';
import { simulatedUpkeep, type Upkeep } from '../upkeep/upkeep.js';
import { artifact, cascades, valuesOf } from './_forget.js';
import { fitFromNewest, sum } from './_transcript.js';
import type { CommonParams } from './params.js';
import type { Artifact, Exchange, FactSheetBlock, FactSheetParams, ForgetFact, PolicyDeps, TurnInfo } from './types.js';

/** The stored user messages of the exchanges whose turn the moderation classifier flagged (`flagged` holds their numbers), oldest first. */
export function injected(flagged: ReadonlySet<number>, exchanges: readonly Exchange[]): Injected[] {
  const out: Injected[] = [];
  for (const e of exchanges) {
    const turn = e[0]?.turn;
    if (turn !== undefined && flagged.has(turn)) out.push({ turn, text: e[0]!.content });
  }
  return out;
}

/** The upkeep a session's deps give: the run's, or simulated for a session started without one. */
export function upkeepOf(deps: Pick<PolicyDeps, 'tokens' | 'upkeep'>): Upkeep {
  return deps.upkeep ?? simulatedUpkeep(deps.tokens);
}

/**
 * Upkeep happens once per turn, on the turn's first model call; the call
 * after tool results reuses what it decided.
 */
export class TurnGate {
  private last: number | undefined;

  /** True on the first call of a turn. */
  first(info: TurnInfo): boolean {
    if (this.last === info.turn.index) return false;
    this.last = info.turn.index;
    return true;
  }
}

/** How many of the newest exchanges fit in `room` tokens (at most `max`), walking back; stops at the first that does not fit. */
export function newestExchangesThatFit(tokens: TokenCounter, exchanges: readonly Exchange[], room: number, max = Infinity): number {
  return fitFromNewest(exchanges.length, (i) => sum(tokens, exchanges[i]!), room, max);
}

/** Tokens a policy-made `system` message of `contentTokens` tokens costs in a prompt. */
export function systemMessageTokens(tokens: TokenCounter, contentTokens: number): number {
  return contentTokens + (tokens.overhead.perMessage ? tokens.overhead.perMessage + tokens.text('system') : 0);
}

/**
 * The cascade for a running summary: when its text still states a value to
 * forget, one re-summarization (priced) rewrites it without those facts.
 * Under `forget: naive` the summary is left as it is — the common bug.
 */
export function eraseFromSummary(
  memory: Summary | undefined,
  facts: readonly ForgetFact[],
  values: readonly string[],
  ctx: { tokens: TokenCounter; params: { summaryModel?: string | undefined; summaryTokens: number } & Pick<CommonParams, 'forget'>; model: string; upkeep: Upkeep },
): { memory: Summary | undefined; upkeep: UpkeepCall[] } {
  if (!memory || !cascades(ctx.params) || !holds(memory.message.content, values)) return { memory, upkeep: [] };
  const r = ctx.upkeep.forgetInSummary({
    tokens: ctx.tokens,
    model: ctx.params.summaryModel ?? ctx.model,
    summaryTokens: ctx.params.summaryTokens,
    previous: memory,
    names: facts.map((f) => f.name),
    values,
  });
  return { memory: r.summary, upkeep: [r.call] };
}

/** The fact sheet's first words. */
const HEAD = 'Known facts:';

/** Tokens a fact sheet may have when its parameters do not say (the `facts` policy's `sheetTokens` default). */
export const SHEET_TOKENS = 500;

/**
 * The fact sheet of the `facts` policy ("Known facts: The user is Kavya.
 * The user's order is SE-10423."): after each turn one extraction reads the
 * turn and updates it, a later value of a named fact replacing the earlier
 * one — a real extractor names facts; the simulated one writes statements,
 * which add up. The sheet has at most `sheetTokens` tokens: when it would
 * be longer, entries are dropped in `dropOrder` (the least salient
 * statement first — a named fact last —, then the one found in the fewest
 * turns, then the one last found longest ago, then the one listed first); a
 * dropped entry is gone until an extraction finds it again.
 */
export class FactSheet implements FactSheetBlock {
  private readonly known = new Map<string, string>();
  /** For each fact on the sheet: the turns an extraction found it in, and the last of them. */
  private readonly mentions = new Map<string, Mentions>();
  /** The sheet's statements, filed to find the ones a new statement restates. */
  private readonly filed = new Restatements();
  // One message object per version of the sheet, so it is counted once and stays a stable prefix.
  private sheet: Message | undefined;
  /** The day the conversation last stated, as the extractor read it: the next extraction resolves relative times against it. */
  private today: Day | undefined;

  constructor(
    private readonly params: FactSheetParams,
    private readonly deps: Pick<PolicyDeps, 'tokens' | 'random' | 'model' | 'upkeep'>,
  ) {}

  read(exchange: Exchange, info: TurnInfo): UpkeepCall {
    const { tokens, random, model } = this.deps;
    const r = upkeepOf(this.deps).extract({
      tokens,
      random,
      model: this.params.extractModel ?? model,
      recall: this.params.recall,
      exchange,
      today: this.today,
      injection: info.turn.injection,
      maxTokens: this.params.sheetTokens ?? SHEET_TOKENS,
    });
    // A recorded extraction reads no day: the one the sheet has stays.
    if (r.today !== undefined) this.today = r.today;
    let changed = false;
    for (const [name, value] of r.found) {
      const tier = factSalience(name, value);
      // A statement that restates an entry's fact replaces it, as a later value of a named fact does.
      if (tier !== undefined && !this.known.has(name)) {
        for (const other of this.filed.restatedBy(value)) {
          this.forget(other);
          changed = true;
        }
      }
      this.mentions.set(name, { count: (this.mentions.get(name)?.count ?? 0) + 1, lastTurn: info.turn.index, ...(tier !== undefined && { tier }) });
      if (this.known.get(name) === value) continue;
      this.known.set(name, value);
      if (isStatement(name)) this.filed.set(name, value);
      changed = true;
    }
    if (changed) this.write();
    return r.call;
  }

  erase(facts: readonly ForgetFact[]): void {
    const values = valuesOf(facts);
    const names = new Set(facts.map((f) => f.name));
    let changed = false;
    for (const [name, value] of [...this.known]) {
      // A statement of the simulated extractor goes whole.
      if (names.has(name) || (isStatement(name) && holds(value, values))) this.forget(name);
      else if (holds(value, values)) this.known.set(name, redactText(value, values));
      else continue;
      changed = true;
    }
    if (changed) this.write();
  }

  messages(): Message[] {
    return this.sheet ? [this.sheet] : [];
  }

  artifact(): Artifact {
    return artifact('facts', this.sheet ? [this.sheet.content] : []);
  }

  /** Takes an entry off the sheet. */
  private forget(name: string): void {
    this.known.delete(name);
    this.mentions.delete(name);
    this.filed.delete(name);
  }

  /**
   * Writes the sheet, dropping facts until it fits `sheetTokens`: what is
   * kept is the longest tail of the drop order whose sentences' tokens fit
   * after the head, summed from the end (so a statement dropped as soon as
   * it came is never weighed); then the whole is counted (`joined`) and,
   * where it is longer than its sentences' sum, the next in order go until
   * it fits.
   */
  private write(): void {
    const { known } = this;
    const { tokens } = this.deps;
    const limit = this.params.sheetTokens ?? SHEET_TOKENS;
    const order = dropOrder(known, this.mentions);
    let room = limit - tokens.text(HEAD);
    let dropped = order.length;
    for (; dropped > 0; dropped--) {
      const name = order[dropped - 1]!;
      const cost = tokens.afterSpace(factEntry(name, known.get(name)!));
      if (cost > room) break;
      room -= cost;
    }
    for (let i = 0; i < dropped; i++) this.forget(order[i]!);
    const entries = () => {
      const out: string[] = [];
      known.forEach((value, name) => out.push(factEntry(name, value)));
      return out;
    };
    let sheet = tokens.joined(HEAD, entries());
    while (known.size && sheet.tokens > limit) {
      this.forget(order[dropped++]!);
      sheet = tokens.joined(HEAD, entries());
    }
    this.sheet = known.size ? { role: 'system', content: sheet.text, origin: 'facts' } : undefined;
  }
}
