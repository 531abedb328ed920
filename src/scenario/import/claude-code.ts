import { basename } from 'node:path';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import type { DocPath } from '../../text/document.js';
import { formatDuration, type ScenarioOut, type ToolOut, type TurnOut, type UsageOut } from '../docs.js';
import { AgentTurns, block, textBlock, toolResult, toolUse } from './_agent.js';
import { JsonSource, parseJsonLines, readText, slug } from './_read.js';
import { isObject } from '../../text/json.js';
import { sessionLogOptions } from './_shared-options.js';
import { annotate, annotations, type OpenaiOptions } from './openai.js';
import { QuirkLog, type Importer } from './types.js';

/** Claude Code import options: the id, and facts and probes as for `openai`. */
export type ClaudeCodeOptions = OpenaiOptions;

const usage = z.looseObject({
  input_tokens: z.number().int().min(0),
  cache_creation_input_tokens: z.number().int().min(0).nullish(),
  cache_read_input_tokens: z.number().int().min(0).nullish(),
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: z.number().int().min(0).nullish() }).nullish(),
  output_tokens: z.number().int().min(0).nullish(),
});
const userLine = z.looseObject({
  type: z.literal('user'),
  message: z.looseObject({ content: z.union([z.string(), z.array(block)]) }),
});
const assistantLine = z.looseObject({
  type: z.literal('assistant'),
  message: z.looseObject({ id: z.string().optional(), model: z.string().min(1, 'expected a model name').optional(), content: z.array(block), usage: usage.optional() }),
});
const anyLine = z.looseObject({ type: z.string(), subtype: z.unknown().optional(), isSidechain: z.boolean().optional(), timestamp: z.unknown().optional() });

/** The model Claude Code names on the messages it writes itself (an API error's text). */
const SYNTHETIC = '<synthetic>';

/** One model response: the lines sharing a `message.id`, with the calls it made. */
interface Response {
  kind: 'response';
  id: string | undefined;
  texts: string[];
  calls: ToolOut[];
  usage?: UsageOut;
  /** The model that wrote it (`message.model`). */
  model?: string;
}
/**
 * A user message; after a response, `after` is the seconds since that
 * response's last line, or null when the log leaves either without a time.
 */
type Event = Response | { kind: 'user'; text: string; after?: number | null } | { kind: 'compacted' };

/**
 * Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`,
 * sub-agents in `subagents/agent-<id>.jsonl`): one conversation per file,
 * and one more after each compaction (`compact_boundary`), which starts
 * from the summary Claude Code sent in place of what came before.
 * User lines with text are user messages; assistant lines sharing a
 * `message.id` are one model response (Claude Code writes one line per
 * content block): with `tool_use` blocks a round, without them the reply;
 * `tool_result` blocks answer their call by `tool_use_id`. The billed usage of
 * each response is kept on its round or reply, its output marked partial
 * (`output_partial`: Claude Code logs it mid-stream).
 */
export const claudeCode: Importer<ClaudeCodeOptions> = {
  id: 'claude-code',
  describe: 'Claude Code session JSONL (one conversation, one more after each compaction: user and assistant lines, tool_use/tool_result blocks, usage per response)',
  options: sessionLogOptions,
  billedCalls: true,
  read(input, opts) {
    const { path, file } = input;
    const text = readText(path, file);
    const problems: Problem[] = [];
    const lines = parseJsonLines(text, file, { format: 'claude-code' });
    const quirks = new QuirkLog();
    const id = opts.prefix ?? (slug(basename(path).replace(/\.(jsonl?|ndjson)$/i, '')) || 'claude-code');
    // A main session's sidechain lines are a sub-agent's (also written to its own file): skipped.
    // A file of sidechain lines only is a sub-agent's session: kept.
    const kinds = lines.filter(({ value }) => isObject(value) && (value.type === 'user' || value.type === 'assistant'));
    const subagent = kinds.length > 0 && kinds.every(({ value }) => (value as { isSidechain?: unknown }).isSidechain === true);
    if (subagent) quirks.add('subagent-session', 'sub-agent sessions (every line isSidechain: kept as the conversation)', id);
    const events: Event[] = [];
    /** Calls waiting for their result, by tool_use id. */
    const pending = new Map<string, ToolOut>();
    /** The response open for more lines of the same message.id. */
    let open: Response | undefined;
    /** The response before the user message to come: when its last line was written (ms, undefined when the log does not say). */
    let answered: { at: number | undefined } | undefined;
    const user = (text: string, at: number | undefined) => {
      const after = answered && (at !== undefined && answered.at !== undefined ? Math.max(0, at - answered.at) / 1000 : null);
      events.push({ kind: 'user', text, ...(after !== undefined && { after }) });
      open = undefined;
      answered = undefined;
    };
    for (const { line, value, text: lineText } of lines) {
      const src = new JsonSource(file, lineText, line);
      const bad = (p: DocPath, message: string) => problems.push(src.problem(p, message));
      const check = <T>(schema: z.ZodType<T>, v: unknown, at: DocPath = []): T | undefined => src.check(schema, v, at, problems);
      const head = check(anyLine, value);
      if (!head) continue;
      // A compaction: what Claude Code sends next starts again from its summary (the next user line).
      if (head.type === 'system' && head.subtype === 'compact_boundary') {
        events.push({ kind: 'compacted' });
        open = undefined;
        answered = undefined;
        continue;
      }
      if (head.type !== 'user' && head.type !== 'assistant') {
        quirks.add('other-line', 'lines of other types (progress, summary, system, file-history-snapshot…: skipped)', `line ${line} ${head.type}`);
        continue;
      }
      if (head.isSidechain === true && !subagent) {
        quirks.add('sidechain', 'sidechain lines of a main session (a sub-agent’s: skipped)', `line ${line}`);
        continue;
      }
      const at = typeof head.timestamp === 'string' ? Date.parse(head.timestamp) : NaN;
      const time = Number.isNaN(at) ? undefined : at;
      if (head.type === 'user') {
        const u = check(userLine, value);
        if (!u) continue;
        const content = u.message.content;
        if (typeof content === 'string') {
          user(content, time);
          continue;
        }
        const texts: string[] = [];
        content.forEach((b, k) => {
          const at = ['message', 'content', k];
          if (b.type === 'tool_result') {
            const r = check(toolResult, b, at);
            if (!r) return;
            const call = pending.get(r.tool_use_id);
            if (!call) return bad([...at, 'tool_use_id'], `answers no tool call before it (${JSON.stringify(r.tool_use_id)})`);
            pending.delete(r.tool_use_id);
            call.result = resultText(r.content, quirks, line);
            if (r.is_error) quirks.add('error-result', 'tool results marked is_error (kept as results)', `line ${line}`);
          } else if (b.type === 'text') {
            const t = check(textBlock, b, at);
            if (t) texts.push(t.text);
          } else quirks.add('user-non-text', 'non-text user content blocks (images, documents: dropped)', `line ${line} ${b.type}`);
        });
        if (texts.length) user(texts.join('\n'), time);
        continue;
      }
      const a = check(assistantLine, value);
      if (!a) continue;
      answered = { at: time };
      const msg = a.message;
      if (!open || msg.id === undefined || open.id !== msg.id) {
        open = { kind: 'response', id: msg.id, texts: [], calls: [] };
        events.push(open);
      }
      const resp = open;
      if (msg.model !== undefined) resp.model = msg.model;
      msg.content.forEach((b, k) => {
        const at = ['message', 'content', k];
        if (b.type === 'text') {
          const t = check(textBlock, b, at);
          if (t) resp.texts.push(t.text);
        } else if (b.type === 'tool_use') {
          const t = check(toolUse, b, at);
          if (!t) return;
          if (pending.has(t.id)) return bad([...at, 'id'], `a tool call with this id is already waiting for its result (${JSON.stringify(t.id)})`);
          const call: ToolOut = { call: t.name, ...(t.input && Object.keys(t.input).length && { args: t.input }) };
          resp.calls.push(call);
          pending.set(t.id, call);
        } else if (b.type === 'thinking' || b.type === 'redacted_thinking') quirks.add('thinking', 'thinking blocks (dropped: not sent back to the model)', `line ${line}`);
        else quirks.add('assistant-other', 'other assistant content blocks (dropped)', `line ${line} ${b.type}`);
      });
      // Claude Code's own messages (an API error's text) name the model <synthetic>: no model call made them, and their usage (all zero) is no bill.
      if (msg.usage && msg.model === SYNTHETIC) quirks.add('synthetic', 'messages Claude Code wrote itself (model <synthetic>, an API error’s text: kept as text, their zero usage is no bill)', `line ${line}`);
      // Every line of a response repeats its usage; output_tokens may grow as it streams: the largest is kept.
      else if (msg.usage) {
        const u = msg.usage;
        const output = Math.max(resp.usage?.output ?? 0, u.output_tokens ?? 0);
        const written = u.cache_creation_input_tokens ?? 0;
        const written1h = Math.min(written, u.cache_creation?.ephemeral_1h_input_tokens ?? 0);
        resp.usage = {
          input: u.input_tokens + written + (u.cache_read_input_tokens ?? 0),
          cached: u.cache_read_input_tokens ?? 0,
          ...(written > 0 && { written }),
          ...(written1h > 0 && { written1h }),
          // Claude Code writes the line before the reply ends: the count is partial (the reply's text, kept whole, is what ctxsim counts).
          output,
          output_partial: true,
        };
      }
    }
    if (problems.length) throw new ScenarioError(problems);
    /** The conversation's turns, and after each compaction those of the conversation that starts from its summary. */
    const parts: TurnOut[][] = [];
    let turns = new AgentTurns(quirks, id);
    const finish = () => {
      if (turns.turn > 0) parts.push(turns.finish());
    };
    for (const e of events) {
      if (e.kind === 'compacted') {
        quirks.add('compacted', 'compactions (compact_boundary: what follows is a conversation of its own, <id>-compact-N, which starts from the summary)', id);
        finish();
        turns = new AgentTurns(quirks, id);
        continue;
      }
      if (e.kind === 'user') {
        turns.user(e.text, typeof e.after === 'number' ? formatDuration(e.after) : undefined);
        if (e.after === null) quirks.add('no-time', 'user messages after a response, one of them without a readable timestamp (the turn has the default gap)', id);
        continue;
      }
      if (e.usage) quirks.add('output-under-reported', 'responses whose usage.output_tokens was logged mid-stream (under-reports the output; kept as logged, marked output_partial)', e.id);
      if (e.calls.length) turns.round(e.texts.join('\n'), e.calls, e.usage);
      else if (e.texts.length) turns.reply(e.texts.join('\n'), e.usage);
      else quirks.add('empty-response', 'model responses with neither text nor tool calls (skipped)', e.id);
    }
    if (pending.size) quirks.add('no-result', 'tool calls without a result (the session ended first)', [...pending.keys()][0]);
    finish();
    if (!parts.length) throw new ScenarioError([{ file, path: '', message: 'no user or assistant messages in the file' }]);
    const model = sessionModel(events, quirks);
    const docs: ScenarioOut[] = parts.map((t, k) => ({ id: k ? `${id}-compact-${k}` : id, ...(model !== undefined && { model }), turns: t }));
    annotate(docs, annotations(input, opts), quirks);
    return { docs, quirks: quirks.list() };
  },
};

/**
 * The model of a session: the one its responses name (`message.model`), the
 * most frequent when several do (the others counted); Claude Code's
 * `<synthetic>` responses (written by Claude Code itself, as an error's
 * text) name no model.
 */
function sessionModel(events: readonly Event[], quirks: QuirkLog): string | undefined {
  const counts = new Map<string, number>();
  for (const e of events) if (e.kind === 'response' && e.model !== undefined && e.model !== SYNTHETIC) counts.set(e.model, (counts.get(e.model) ?? 0) + 1);
  const byUse = [...counts].sort((a, b) => b[1] - a[1]);
  for (const [name, n] of byUse.slice(1)) {
    for (let i = 0; i < n; i++) quirks.add('other-model', `responses by another model than the session’s ${byUse[0]![0]} (kept; the scenario names ${byUse[0]![0]})`, i === 0 ? name : undefined);
  }
  return byUse[0]?.[0];
}

/** A tool result's content as text: a string, or its text blocks joined by a newline. */
function resultText(content: string | { type: string }[] | null | undefined, quirks: QuirkLog, line: number): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const b of content) {
    const t = (b as { text?: unknown }).text;
    if (b.type === 'text' && typeof t === 'string') texts.push(t);
    else quirks.add('result-non-text', 'non-text tool result blocks (images: dropped)', `line ${line} ${b.type}`);
  }
  return texts.join('\n');
}
