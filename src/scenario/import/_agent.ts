import { z } from 'zod';
import type { RoundOut, ToolOut, TurnOut, UsageOut } from '../docs.js';
import { TurnBuilder } from './_turns.js';
import type { QuirkLog } from './types.js';

/** The content blocks of Anthropic's Messages API, as Claude Code's logs hold them too: any block, text, a tool call, a tool's result. */
export const block = z.looseObject({ type: z.string() });
export const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
export const toolUse = z.looseObject({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()).optional() });
export const toolResult = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(block), z.null()]).optional(),
  is_error: z.boolean().nullish(),
});

/** What a round's call recorded: its billed usage, and the time since the previous call's reply (a duration). */
interface RoundCall {
  usage?: UsageOut;
  gap?: string;
}

/** The billed usage recorded for the calls of one turn: one entry per round, and the reply's. */
interface TurnUsage {
  rounds: (RoundCall | undefined)[];
  reply?: UsageOut;
}

/**
 * Folds an agent transcript into turns, as TurnBuilder does, keeping what the
 * provider billed for each model call on the round (or reply) that call wrote.
 * A model response is one call: with tool calls it is a round, without them
 * the turn's reply; a response after the reply with no user message between
 * opens a turn whose user message is empty, so the order of calls is kept.
 */
export class AgentTurns {
  private readonly b = new TurnBuilder();
  private readonly usage: TurnUsage[] = [];

  constructor(
    private readonly quirks: QuirkLog,
    private readonly id: string,
  ) {}

  /** 1-based number of the turn being built (0 before the first). */
  get turn(): number {
    return this.b.turn;
  }

  /** A user message; a turn it opens has the gap `gap` when given (the time since the previous response). */
  user(text: string, gap?: string): void {
    this.b.user(text, false, undefined, gap);
  }

  /** One model response that made tool calls (at least one): a round, its text kept with its calls; `gap`: the time since the previous call's reply, when the log has it. */
  round(text: string, calls: ToolOut[], usage?: UsageOut, gap?: string): void {
    this.before();
    this.b.round(text);
    for (const c of calls) this.b.tool(c);
    this.slot().rounds.push(usage || gap !== undefined ? { ...(usage && { usage }), ...(gap !== undefined && { gap }) } : undefined);
  }

  /** One model response without tool calls: the turn's reply. */
  reply(text: string, usage?: UsageOut): void {
    this.before();
    this.b.assistant(text);
    if (usage) this.slot().reply = usage;
  }

  finish(): TurnOut[] {
    return this.b.finish().map((t, i) => {
      const u = this.usage[i];
      if (!u) return t;
      const out: TurnOut = { ...t };
      if (u.rounds.some(Boolean) && t.tools?.length) {
        const rounds: RoundOut[] = 'calls' in t.tools[0]! ? (t.tools as RoundOut[]) : [{ calls: t.tools as ToolOut[] }];
        out.tools = rounds.map((r, k) => (u.rounds[k] ? { ...r, ...u.rounds[k] } : r));
      }
      if (u.reply && t.assistant !== undefined) out.usage = u.reply;
      return out;
    });
  }

  /** Opens a turn with an empty user message when the model speaks first or again after its reply. */
  private before(): void {
    if (this.b.turn === 0) this.quirks.add('assistant-first', 'model responses before any user message (turn with an empty user message)', this.id);
    else if (this.b.hasReply) {
      this.quirks.add('response-after-reply', 'model responses after a reply with no user message between (turn with an empty user message)', this.id);
      this.b.breakTurn();
    }
  }

  private slot(): TurnUsage {
    while (this.usage.length < this.b.turn) this.usage.push({ rounds: [] });
    return this.usage[this.b.turn - 1]!;
  }
}

