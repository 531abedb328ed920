import { joinedText, type TokenCounter } from '../tokens/counter.js';
import type { Message, UpkeepCall } from '../types.js';
import { holds, redactText } from '../upkeep/redact.js';
import { dropsBefore } from '../upkeep/mentions.js';
import type { Summary } from '../upkeep/summarizer.js';
import { factEntry, factSalience, isStatement } from '../upkeep/extractor.js';
import { Restatements } from '../upkeep/statements.js';
import type { Day } from '../upkeep/times.js';
import type { Injected } from '../upkeep/types.js';
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
  /** The sheet's entries by name, in the order they are listed. */
  private readonly entries = new Map<string, Entry>();
  /**
   * The drop order of the entries as the last write left it (first to drop
   * first); an entry found since has `moved` set and is sorted in again by
   * the next write, one taken off is passed over.
   */
  private order: Entry[] = [];
  /** The entries found since the last write, new or mentioned again: their place in the drop order is found again. */
  private moved: Entry[] = [];
  /** Entries taken in so far: the next one's place in the listing. */
  private listed = 0;
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
    const turn = info.turn.index;
    let changed = false;
    for (const [name, value] of r.found) {
      const salience = factSalience(name, value);
      const tier = salience ?? Infinity;
      let e = this.entries.get(name);
      if (!e) {
        // A statement that restates an entry's fact replaces it, as a later value of a named fact does.
        if (salience !== undefined) for (const other of this.filed.restatedBy(value)) this.forget(other);
        e = { name, value, tier, count: 1, lastTurn: turn, at: this.listed++, tokens: -1, moved: true, gone: false };
        this.entries.set(name, e);
        this.moved.push(e);
        if (isStatement(name)) this.filed.set(name, value);
        changed = true;
        continue;
      }
      e.count++;
      e.lastTurn = turn;
      e.tier = tier;
      if (!e.moved) {
        e.moved = true;
        this.moved.push(e);
      }
      if (e.value === value) continue;
      e.value = value;
      e.tokens = -1;
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
    for (const e of [...this.entries.values()]) {
      // A statement of the simulated extractor goes whole.
      if (names.has(e.name) || (isStatement(e.name) && holds(e.value, values))) this.forget(e.name);
      else if (holds(e.value, values)) {
        e.value = redactText(e.value, values);
        e.tokens = -1;
      } else continue;
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

  /** Takes an entry off the sheet (its place in the drop order is passed over from now on). */
  private forget(name: string): void {
    this.entries.get(name)!.gone = true;
    this.entries.delete(name);
    this.filed.delete(name);
  }

  /**
   * Writes the sheet, dropping facts until it fits `sheetTokens`: what is
   * kept is the longest tail of the drop order whose sentences' tokens fit
   * after the head, summed from the end (so a statement dropped as soon as
   * it came is never weighed); then the whole is counted (`joined`) and,
   * where it is longer than its sentences' sum, the next in order go until
   * it fits. The drop order is the last write's with the entries found since
   * sorted in (`dropOrder`'s rule: what else it holds has not changed).
   */
  private write(): void {
    const { tokens } = this.deps;
    const limit = this.params.sheetTokens ?? SHEET_TOKENS;
    const order = this.dropOrder();
    let room = limit - tokens.text(HEAD);
    let dropped = order.length;
    for (; dropped > 0; dropped--) {
      const e = order[dropped - 1]!;
      if (e.tokens < 0) e.tokens = tokens.afterSpace(factEntry(e.name, e.value));
      if (e.tokens > room) break;
      room -= e.tokens;
    }
    for (let i = 0; i < dropped; i++) this.forget(order[i]!.name);
    const entries = () => {
      const out: string[] = [];
      for (const e of this.entries.values()) out.push(factEntry(e.name, e.value));
      return out;
    };
    let parts = entries();
    let sheet = tokens.joinedTokens(HEAD, parts);
    while (this.entries.size && sheet > limit) {
      this.forget(order[dropped++]!.name);
      sheet = tokens.joinedTokens(HEAD, (parts = entries()));
    }
    this.order = dropped ? order.slice(dropped) : order;
    // Its tokens are known: the prompt that sends it does not look its text up.
    this.sheet = this.entries.size ? tokens.counted({ role: 'system', content: joinedText(HEAD, parts), origin: 'facts' }, sheet) : undefined;
  }

  /** The entries in drop order: the last write's still on the sheet and not found since, merged with the ones found since, sorted. */
  private dropOrder(): Entry[] {
    const moved = this.moved.filter((e) => !e.gone).sort(dropsBefore);
    const out: Entry[] = [];
    let j = 0;
    for (const e of this.order) {
      if (e.gone || e.moved) continue;
      while (j < moved.length && dropsBefore(moved[j]!, e) < 0) out.push(moved[j++]!);
      out.push(e);
    }
    while (j < moved.length) out.push(moved[j++]!);
    for (const e of this.moved) e.moved = false;
    this.moved = [];
    return out;
  }
}

/** An entry of a fact sheet: its fact, how it was found, and its place in the listing. */
interface Entry {
  readonly name: string;
  value: string;
  /** Its statement's salience; Infinity for a named fact (kept before any statement). */
  tier: number;
  /** Turns an extraction found it in since the sheet took it in. */
  count: number;
  /** The last of them. */
  lastTurn: number;
  /** Its place in the listing: entries are listed in the order the sheet took them in. */
  readonly at: number;
  /** Tokens of its sentence as it continues the sheet (`afterSpace`), once weighed; -1 until then. */
  tokens: number;
  /** Found since the last write: its place in the drop order is found again. */
  moved: boolean;
  /** Taken off the sheet. */
  gone: boolean;
}

