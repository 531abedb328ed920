import type { RoundOut, ToolOut, TurnOut } from '../docs.js';

interface Draft {
  user: string[];
  assistant: string[];
  /** The rounds of tool calls so far. */
  rounds: RoundOut[];
  facts: Record<string, string>;
  probe: string[];
  gap?: string;
  /** The first name given to a message merged into the user message, and into the reply. */
  names: { user?: string; assistant?: string };
}

/**
 * Folds a stream of dataset messages into turns (one user message, rounds of
 * tool calls, one assistant reply): consecutive user messages merge,
 * consecutive assistant messages merge (joined by a newline), each assistant
 * message that calls tools is a round of its own (its text kept with its
 * calls), and an assistant message with no user message before it opens a
 * turn whose user message is empty. A merged message keeps the first name
 * given to its parts.
 */
export class TurnBuilder {
  private readonly drafts: Draft[] = [];
  /** Set by breakTurn: the next message opens a turn with this gap. */
  private pendingBreak = false;
  private pendingGap: string | undefined;

  private get current(): Draft | undefined {
    return this.drafts[this.drafts.length - 1];
  }

  /** 1-based number of the turn being built (0 before the first). */
  get turn(): number {
    return this.drafts.length;
  }

  /**
   * Adds user text (with its author's `name`, if any): merged into the open
   * turn while it has no reply or tools yet, unless `fresh`; a turn it opens
   * has the gap `gap` when given.
   */
  user(text: string, fresh = false, name?: string, gap?: string): void {
    const c = this.current;
    if (c && !fresh && !this.pendingBreak && !c.assistant.length && !c.rounds.length) c.user.push(text);
    else {
      if (gap !== undefined) this.pendingGap = gap;
      this.open(text);
    }
    if (name !== undefined) this.current!.names.user ??= name;
  }

  /** Adds assistant text (with its `name`, if any) to the open turn; returns true when it had to open one with an empty user message. */
  assistant(text: string, name?: string): boolean {
    const opened = this.ensure();
    this.current!.assistant.push(text);
    if (name !== undefined) this.current!.names.assistant ??= name;
    return opened;
  }

  /** Starts a round of tool calls in the open turn: one model call, with the text it wrote beside its calls; returns true when it had to open a turn. */
  round(text?: string): boolean {
    const opened = this.ensure();
    this.current!.rounds.push({ ...(text && { assistant: text }), calls: [] });
    return opened;
  }

  /** Adds a tool call with its result to the open turn's last round (a round of its own when there is none; tools come before the reply in a turn). */
  tool(tool: ToolOut): boolean {
    const opened = this.ensure();
    const rounds = this.current!.rounds;
    if (!rounds.length) rounds.push({ calls: [] });
    rounds[rounds.length - 1]!.calls.push(tool);
    return opened;
  }

  /** Whether the open turn already has reply text (a tool added now moves before it). */
  get hasReply(): boolean {
    return Boolean(this.current?.assistant.length);
  }

  /** Starts a new turn on the next message, e.g. at a session boundary; `gap` is its duration. */
  breakTurn(gap?: string): void {
    this.pendingBreak = true;
    this.pendingGap = gap;
  }

  fact(name: string, value: string): void {
    this.current!.facts[name] = value;
  }

  probe(name: string): void {
    const c = this.current!;
    if (!c.probe.includes(name)) c.probe.push(name);
  }

  /** Facts of a finished turn (1-based), for placing facts after the fact. */
  factAt(turn: number, name: string, value: string): void {
    this.drafts[turn - 1]!.facts[name] = value;
  }

  /** Adds a finished turn as is (e.g. a question appended after the dialogue). */
  push(turn: TurnOut): void {
    const tools = turn.tools ?? [];
    this.drafts.push({
      user: [turn.user],
      assistant: turn.assistant === undefined ? [] : [turn.assistant],
      rounds: tools.length && 'calls' in tools[0]! ? (tools as RoundOut[]) : tools.length ? [{ calls: tools as ToolOut[] }] : [],
      facts: { ...turn.facts },
      probe: [...(turn.probe ?? [])],
      ...(turn.gap !== undefined && { gap: turn.gap }),
      names: { ...turn.names },
    });
  }

  finish(): TurnOut[] {
    return this.drafts.map((d) => ({
      user: d.user.join('\n'),
      ...(d.gap !== undefined && { gap: d.gap }),
      ...(Object.keys(d.facts).length && { facts: d.facts }),
      ...(d.probe.length && { probe: d.probe }),
      ...(toolsOf(d.rounds) && { tools: toolsOf(d.rounds)! }),
      ...(d.assistant.length && { assistant: d.assistant.join('\n') }),
      ...((d.names.user !== undefined || d.names.assistant !== undefined) && { names: d.names }),
    }));
  }

  private open(user: string): void {
    this.drafts.push({ user: [user], assistant: [], rounds: [], facts: {}, probe: [], names: {}, ...(this.pendingGap !== undefined && { gap: this.pendingGap }) });
    this.pendingBreak = false;
    this.pendingGap = undefined;
  }

  private ensure(): boolean {
    if (this.current && !this.pendingBreak) return false;
    this.open('');
    return true;
  }
}

/** A turn's tools as a scenario writes them: the calls of a single round without text, else the rounds (none: undefined). */
function toolsOf(rounds: RoundOut[]): ToolOut[] | RoundOut[] | undefined {
  const kept = rounds.filter((r) => r.calls.length);
  if (!kept.length) return undefined;
  return kept.length === 1 && kept[0]!.assistant === undefined ? kept[0]!.calls : kept;
}
