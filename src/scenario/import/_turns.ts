import type { ToolOut, TurnOut } from '../docs.js';

interface Draft {
  user: string[];
  assistant: string[];
  tools: ToolOut[];
  facts: Record<string, string>;
  probe: string[];
  gap?: string;
}

/**
 * Folds a stream of dataset messages into turns (one user message, tool
 * calls, one assistant reply): consecutive user messages merge, consecutive
 * assistant messages merge (joined by a newline), and an assistant message
 * with no user message before it opens a turn whose user message is empty.
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

  /** Adds user text: merged into the open turn while it has no reply or tools yet, unless `fresh`. */
  user(text: string, fresh = false): void {
    const c = this.current;
    if (c && !fresh && !this.pendingBreak && !c.assistant.length && !c.tools.length) c.user.push(text);
    else this.open(text);
  }

  /** Adds assistant text to the open turn; returns true when it had to open one with an empty user message. */
  assistant(text: string): boolean {
    const opened = this.ensure();
    this.current!.assistant.push(text);
    return opened;
  }

  /** Adds a tool call with its result to the open turn (tools come before the reply in a turn). */
  tool(tool: ToolOut): boolean {
    const opened = this.ensure();
    this.current!.tools.push(tool);
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
    this.drafts.push({
      user: [turn.user],
      assistant: turn.assistant === undefined ? [] : [turn.assistant],
      tools: turn.tools ?? [],
      facts: { ...turn.facts },
      probe: [...(turn.probe ?? [])],
      ...(turn.gap !== undefined && { gap: turn.gap }),
    });
  }

  finish(): TurnOut[] {
    return this.drafts.map((d) => ({
      user: d.user.join('\n'),
      ...(d.gap !== undefined && { gap: d.gap }),
      ...(Object.keys(d.facts).length && { facts: d.facts }),
      ...(d.probe.length && { probe: d.probe }),
      ...(d.tools.length && { tools: d.tools }),
      ...(d.assistant.length && { assistant: d.assistant.join('\n') }),
    }));
  }

  private open(user: string): void {
    this.drafts.push({ user: [user], assistant: [], tools: [], facts: {}, probe: [], ...(this.pendingGap !== undefined && { gap: this.pendingGap }) });
    this.pendingBreak = false;
    this.pendingGap = undefined;
  }

  private ensure(): boolean {
    if (this.current && !this.pendingBreak) return false;
    this.open('');
    return true;
  }
}
