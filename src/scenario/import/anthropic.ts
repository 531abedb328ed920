import { basename } from 'node:path';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import type { DocPath } from '../../text/document.js';
import type { ScenarioOut, ToolOut } from '../docs.js';
import type { ToolDef } from '../../types.js';
import { AgentTurns, block, textBlock, toolResult, toolUse } from './_agent.js';
import { JsonSource, parseJson, parseJsonLines, readText, slug } from './_read.js';
import { isObject } from '../../text/json.js';
import { numberedFileOptions } from './_shared-options.js';
import { annotate, annotations, type OpenaiOptions } from './openai.js';
import { QuirkLog, type Importer } from './types.js';

/** Anthropic import options: the id prefix, and facts and probes as for `openai`. */
export type AnthropicOptions = OpenaiOptions;

// The SDK's models write an absent optional field as null (a tool's `type` and `description`): null is
// absent here. Keys not read (a dumped response's `stop_sequence`, a text block's `citations`) may be null too.
const message = z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block)]) });
const tool = z.looseObject({ name: z.string().min(1), description: z.string().nullish(), input_schema: z.looseObject({}).nullish(), type: z.string().nullish() });
const request = z.looseObject({
  system: z.union([z.string(), z.array(block)]).nullish(),
  messages: z.array(message).min(1),
  tools: z.array(tool).nullish(),
});
type Request = z.infer<typeof request>;

/** A request of the file: its value and where it is (a JSONL line, else a path). */
interface FileRequest {
  value: unknown;
  /** The document, or the line of a JSON Lines file, the request is in. */
  src: JsonSource;
  path: DocPath;
}

/**
 * Anthropic Messages API requests: a JSON object `{system, messages, tools}`
 * (one conversation), a JSON array of them, or JSON Lines of them; a Message
 * Batches entry's `params` is read as its request. Each assistant message is
 * one model call: with `tool_use` blocks a round, else the reply; a
 * `tool_result` block answers the call its `tool_use_id` names; `tools`
 * become the scenario's tool definitions.
 */
export const anthropic: Importer<AnthropicOptions> = {
  id: 'anthropic',
  describe: 'Anthropic Messages API requests: JSON object or array, or JSONL, of {system, messages, tools} (content blocks text/tool_use/tool_result)',
  options: numberedFileOptions,
  read(input, opts) {
    const { path, file } = input;
    const text = readText(path, file);
    const requests = splitRequests(text, file);
    const prefix = opts.prefix ?? (slug(basename(path).replace(/\.(jsonl?|ndjson)$/i, '')) || 'anthropic');
    const width = Math.max(4, String(requests.length).length);
    const quirks = new QuirkLog();
    const problems: Problem[] = [];
    const docs: ScenarioOut[] = [];
    requests.forEach((r, k) => {
      const problem = (at: DocPath, msg: string) => problems.push(r.src.problem([...r.path, ...at], msg));
      const check = <T>(schema: z.ZodType<T>, value: unknown, at: DocPath): T | undefined => r.src.check(schema, value, [...r.path, ...at], problems);
      const value = isObject(r.value) && isObject(r.value.params) && !('messages' in r.value) ? r.value.params : r.value;
      const at: DocPath = value === r.value ? [] : ['params'];
      const req = check(request, value, at);
      if (!req) return;
      const id = `${prefix}-${String(k + 1).padStart(width, '0')}`;
      const doc = requestDoc(id, req, at, problem, quirks);
      if (doc) docs.push(doc);
    });
    if (problems.length) throw new ScenarioError(problems);
    annotate(docs, annotations(input, opts), quirks);
    return { docs, quirks: quirks.list() };
  },
};

function requestDoc(id: string, req: Request, at: DocPath, problem: (at: DocPath, msg: string) => void, quirks: QuirkLog): ScenarioOut | undefined {
  let failed = false;
  const bad = (p: DocPath, msg: string) => {
    failed = true;
    problem(p, msg);
  };
  const system = typeof req.system === 'string' ? req.system : req.system ? texts(req.system, [...at, 'system'], bad, quirks, id) : undefined;
  const turns = new AgentTurns(quirks, id);
  const pending = new Map<string, ToolOut>();
  req.messages.forEach((m, j) => {
    const here: DocPath = [...at, 'messages', j, 'content'];
    if (m.role === 'user') {
      if (typeof m.content === 'string') return turns.user(m.content);
      const userTexts: string[] = [];
      m.content.forEach((b, k) => {
        if (b.type === 'tool_result') {
          const r = toolResult.safeParse(b);
          if (!r.success) return bad([...here, k, 'tool_use_id'], 'expected a tool_result with a tool_use_id');
          const call = pending.get(r.data.tool_use_id);
          if (!call) return bad([...here, k, 'tool_use_id'], `answers no tool call before it (${JSON.stringify(r.data.tool_use_id)})`);
          pending.delete(r.data.tool_use_id);
          const c = r.data.content;
          call.result = c === undefined || c === null ? '' : typeof c === 'string' ? c : texts(c, [...here, k, 'content'], bad, quirks, id);
          if (r.data.is_error) quirks.add('error-result', 'tool results marked is_error (kept as results)', id);
        } else if (b.type === 'text') {
          const t = textBlock.safeParse(b);
          if (t.success) userTexts.push(t.data.text);
          else bad([...here, k, 'text'], 'expected a text block with text');
        } else quirks.add('non-text-block', 'non-text user blocks (images, documents: dropped)', `${id} ${b.type}`);
      });
      if (userTexts.length) turns.user(userTexts.join('\n'));
      return;
    }
    if (typeof m.content === 'string') return turns.reply(m.content);
    const said: string[] = [];
    const calls: ToolOut[] = [];
    m.content.forEach((b, k) => {
      if (b.type === 'text') {
        const t = textBlock.safeParse(b);
        if (t.success) said.push(t.data.text);
        else bad([...here, k, 'text'], 'expected a text block with text');
      } else if (b.type === 'tool_use') {
        const t = toolUse.safeParse(b);
        if (!t.success) return bad([...here, k], 'expected a tool_use block with id, name and input');
        const call: ToolOut = { call: t.data.name, ...(t.data.input && Object.keys(t.data.input).length && { args: t.data.input }) };
        calls.push(call);
        pending.set(t.data.id, call);
      } else if (b.type === 'thinking' || b.type === 'redacted_thinking') quirks.add('thinking', 'thinking blocks (dropped)', id);
      else quirks.add('assistant-other', 'other assistant blocks (server tool calls and results: dropped)', `${id} ${b.type}`);
    });
    if (calls.length) turns.round(said.join('\n'), calls);
    else turns.reply(said.join('\n'));
  });
  if (failed) return undefined;
  if (pending.size) quirks.add('no-result', 'tool calls without a result (the request ends with them)', id);
  const toolDefs: ToolDef[] = (req.tools ?? []).flatMap((t) => {
    if (!t.input_schema) {
      quirks.add('server-tool', 'server tools without an input_schema (not a definition the model reads as JSON Schema: left out)', `${id} ${t.name}`);
      return [];
    }
    return [{ name: t.name, ...(typeof t.description === 'string' && { description: t.description }), parameters: t.input_schema }];
  });
  return { id, ...(system && { system }), ...(toolDefs.length && { tool_defs: toolDefs }), turns: turns.finish() };
}

/** Text blocks joined by a newline; others dropped and counted. */
function texts(blocks: { type: string }[], at: DocPath, bad: (p: DocPath, msg: string) => void, quirks: QuirkLog, id: string): string {
  const out: string[] = [];
  blocks.forEach((b, k) => {
    if (b.type !== 'text') return quirks.add('non-text-block', 'non-text blocks (images, documents: dropped)', `${id} ${b.type}`);
    const t = (b as { text?: unknown }).text;
    if (typeof t === 'string') out.push(t);
    else bad([...at, k, 'text'], 'expected a text block with text');
  });
  return out.join('\n');
}

/** The requests of a file: a JSON object, a JSON array of them, or JSON Lines. */
function splitRequests(text: string, file: string): FileRequest[] {
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    whole = undefined;
  }
  if (whole === undefined) {
    if (text.trimStart().startsWith('[')) parseJson(text, file);
    return parseJsonLines(text, file, { format: 'anthropic', document: true }).map((l) => ({ value: l.value, src: new JsonSource(file, l.text, l.line), path: [] }));
  }
  const src = new JsonSource(file, text);
  if (Array.isArray(whole)) return whole.map((value, i) => ({ value, src, path: [i] }));
  return [{ value: whole, src, path: [] }];
}
