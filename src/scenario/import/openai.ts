import { basename, resolve } from 'node:path';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { SourceDoc, type DocPath } from '../../text/document.js';
import { normalizeText, type ScenarioOut, type SystemOut, type ToolOut, type TurnOut } from '../docs.js';
import { JsonSource, parseJson, parseJsonLines, readText, slug } from './_read.js';
import { isObject } from '../../text/json.js';
import { numberedFileOptions } from './_shared-options.js';
import { TurnBuilder } from './_turns.js';
import { QuirkLog, type ImportInput, type Importer } from './types.js';

/** OpenAI chat import options: the id prefix, facts and probes (the agent-transcript importers' too). */
export type OpenaiOptions = z.output<typeof numberedFileOptions>;

const part = z.looseObject({ type: z.string(), text: z.string().optional(), refusal: z.string().optional() });
const content = z.union([z.string(), z.array(part), z.null()]).optional();
const toolCall = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});
// The API returns null for an absent field, and SDK dumps of its messages keep those nulls: null is
// absent here (`audio` and `annotations`, also null in dumps, are not read). An assistant's `refusal`
// is what the model said instead of content, and is sent back as it on the next call: its text.
const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content,
  refusal: z.string().nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
  tool_call_id: z.string().nullish(),
  function_call: z.looseObject({ name: z.string().min(1), arguments: z.string() }).nullish(),
});
type Msg = z.infer<typeof message>;

/** Facts and probes for one conversation, from the side file or flags. */
interface Annotation {
  facts: [string, string[]][];
  probe: [number | 'last', string[]][];
  /** Where it was written, to position problems. */
  at: (path: DocPath, message: string) => Problem;
  /** `*` entries skip conversations where a fact's value never occurs; per-id entries must match. */
  lenient: boolean;
}

const annotationSchema = z.strictObject({
  facts: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
  probe: z.record(z.string().regex(/^([1-9]\d*|last)$/, 'expected a turn number from 1, or last'), z.array(z.string()).min(1)).optional(),
});

/**
 * OpenAI chat messages: a JSON array of messages (one conversation), an
 * object or array of objects with `messages`, or JSON Lines of
 * `{"messages": [...]}` (the chat fine-tuning format), with `tool_calls` and
 * `tool` messages. Facts and probes come from a side file or flags.
 */
export const openai: Importer<OpenaiOptions> = {
  id: 'openai',
  describe: 'OpenAI chat messages: JSON array of messages, or JSONL of {"messages": [...], "tools": [...]} (fine-tuning format)',
  options: numberedFileOptions,
  read(input, opts) {
    const { path, file } = input;
    const text = readText(path, file);
    const conversations = splitConversations(text, file);
    const problems: Problem[] = [];
    const quirks = new QuirkLog();
    const prefix = opts.prefix ?? (slug(basename(path).replace(/\.(jsonl?|ndjson)$/i, '')) || 'openai');
    const docs: ScenarioOut[] = [];
    const width = Math.max(4, String(conversations.length).length);
    conversations.forEach(({ messages, src, path: at, tools, responses }, k) => {
      const id = `${prefix}-${String(k + 1).padStart(width, '0')}`;
      const msgs = responses ? responsesMessages(messages, responses.instructions, src, at, problems, quirks, id) : src.check(z.array(message).min(1), messages, at, problems);
      const defs =
        tools === undefined ? [] : responses ? src.check(z.array(z.union([toolEntry, responsesTool, builtinTool])), tools.value, tools.path, problems) : src.check(z.array(toolEntry), tools.value, tools.path, problems);
      if (!msgs || !defs) return;
      const doc = conversationDoc(id, msgs, src, at, problems, quirks);
      if (!doc) return;
      // The tools offered with the conversation's calls: each entry's function, as a scenario's tool_defs.
      // (A Responses API entry is the function itself.)
      const toolDefs = defs
        .flatMap((d): { name: string; description?: string | null; parameters?: Record<string, unknown> | null }[] => {
          const chat = toolEntry.safeParse(d);
          if (chat.success) return [chat.data.function];
          const fn = responsesTool.safeParse(d);
          if (fn.success) return [fn.data];
          quirks.add('builtin-tool', 'built-in tools offered (web search, file search…: no definition to count, left out)', `${id} ${String(d.type)}`);
          return [];
        })
        .map((f) => ({ name: f.name, ...(typeof f.description === 'string' && { description: f.description }), ...(f.parameters && { parameters: f.parameters }) }));
      const { turns, ...head } = doc;
      docs.push({ ...head, ...(toolDefs.length && { tool_defs: toolDefs }), turns });
    });
    if (problems.length) throw new ScenarioError(problems);
    annotate(docs, annotations(input, opts), quirks);
    return { docs, quirks: quirks.list() };
  },
};

/** An entry of a request's `tools`: a function the model is offered. */
const toolEntry = z.looseObject({
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().min(1), description: z.string().nullish(), parameters: z.looseObject({}).nullish() }),
});

/** An entry of a Responses API request's `tools`: a function, flat. */
const responsesTool = z.looseObject({ type: z.literal('function'), name: z.string().min(1), description: z.string().nullish(), parameters: z.looseObject({}).nullish() });

/** A built-in tool of the Responses API (`web_search`, `file_search`…): no function definition. */
const builtinTool = z.looseObject({ type: z.string().regex(/^(?!function$)/, 'expected a built-in tool type') });

const responsesMessage = z.looseObject({
  type: z.literal('message').nullish(),
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(part)]),
});
const functionCall = z.looseObject({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() });
const functionCallOutput = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: z.union([z.string(), z.array(part)]) });

/**
 * Responses API input items as chat messages: a `message` item is a message,
 * `function_call` items join the assistant message before them (one model
 * response: its text and its calls) or open one, a `function_call_output`
 * is a tool message; `instructions` is the first system message. Reasoning and
 * other items are dropped and counted. Problems name the item.
 */
function responsesMessages(input: unknown, instructions: unknown, src: JsonSource, at: DocPath, problems: Problem[], quirks: QuirkLog, id: string): Msg[] | undefined {
  const before = problems.length;
  const problem = (path: DocPath, msg: string) => problems.push(src.problem(path, msg));
  const items = typeof input === 'string' ? [{ role: 'user', content: input }] : src.check(z.array(z.looseObject({ type: z.string().nullish() })).min(1), input, at, problems);
  if (!items) return undefined;
  const out: Msg[] = [];
  if (typeof instructions === 'string' && instructions) out.push({ role: 'system', content: instructions });
  const pending = new Set<string>();
  /** The assistant message of the response being read, open for more calls. */
  let open: Msg | undefined;
  items.forEach((item, j) => {
    const here: DocPath = [...at, j];
    const type = item.type ?? 'message';
    if (type === 'message') {
      const m = src.check(responsesMessage, item, here, problems);
      if (!m) return;
      const msg: Msg = { role: m.role, content: m.content };
      out.push(msg);
      open = m.role === 'assistant' ? msg : undefined;
    } else if (type === 'function_call') {
      const c = src.check(functionCall, item, here, problems);
      if (!c) return;
      let args: unknown;
      try {
        args = c.arguments.trim() ? JSON.parse(c.arguments) : {};
      } catch {
        args = undefined;
      }
      if (!args || typeof args !== 'object' || Array.isArray(args)) return problem([...here, 'arguments'], `expected a JSON object, got ${JSON.stringify(c.arguments.slice(0, 40))}`);
      if (!open) out.push((open = { role: 'assistant', content: null }));
      open.tool_calls = [...(open.tool_calls ?? []), { id: c.call_id, type: 'function', function: { name: c.name, arguments: c.arguments } }];
      pending.add(c.call_id);
    } else if (type === 'function_call_output') {
      const o = src.check(functionCallOutput, item, here, problems);
      if (!o) return;
      if (!pending.delete(o.call_id)) return problem([...here, 'call_id'], `answers no function call before it (${JSON.stringify(o.call_id)})`);
      out.push({ role: 'tool', tool_call_id: o.call_id, content: o.output });
      open = undefined;
    } else quirks.add('responses-item', 'Responses API items other than messages and function calls (reasoning, built-in tool calls: dropped)', `${id} ${type}`);
  });
  if (problems.length > before) return undefined;
  if (!out.length) {
    problem(at, 'expected at least one message or function call');
    return undefined;
  }
  return out;
}

/** One conversation of a file: its messages with their path in the document or line they are in (`src`), and the `tools` beside them, if any. */
interface FileConversation {
  messages: unknown;
  src: JsonSource;
  path: DocPath;
  tools?: { value: unknown; path: DocPath };
  /** Set for the Responses API's input items (with the request's `instructions`). */
  responses?: { instructions: unknown };
}

/** The conversations of a file, each with its path in the file for messages. */
function splitConversations(text: string, file: string): FileConversation[] {
  const trimmed = text.trimStart();
  /** The values of the file; for JSON Lines, each with its line. */
  let items: unknown[];
  /** Where each item is: the whole document, or its line of a JSON Lines file. */
  let sources: JsonSource[] | undefined;
  const doc = new JsonSource(file, text);
  if (trimmed.startsWith('[')) items = [parseJson(text, file)];
  else {
    // One JSON object (possibly pretty-printed), else JSON Lines.
    let whole: unknown;
    try {
      whole = JSON.parse(text);
    } catch {
      whole = undefined;
    }
    if (whole === undefined) {
      const read = parseJsonLines(text, file, { format: 'openai', document: true });
      items = read.map((l) => l.value);
      sources = read.map((l) => new JsonSource(file, l.text, l.line));
    } else items = [whole];
  }
  const out: FileConversation[] = [];
  const single = !sources && Array.isArray(items[0]) ? (items[0] as unknown[]) : undefined;
  // A Responses API input: items with a `type` (function_call, function_call_output, message) or a `role`.
  if (single && single.length && single.every((m) => isObject(m) && ('role' in m || 'type' in m)) && single.some((m) => isObject(m) && typeof m.type === 'string')) {
    return [{ messages: single, src: doc, path: [], responses: { instructions: undefined } }];
  }
  if (single && single.length && single.every((m) => m && typeof m === 'object' && 'role' in m)) return [{ messages: single, src: doc, path: [] }];
  const list = single ?? items;
  // `tools: null` (how a dump writes an absent field) offers none.
  list.forEach((item, i) => {
    const src = sources?.[i] ?? doc;
    // A file that is one array names its items by index; a line, or a file that is one object, is the item.
    const path: DocPath = single ? [i] : [];
    if (Array.isArray(item)) out.push({ messages: item, src, path });
    else if (item && typeof item === 'object' && 'messages' in item) {
      const { messages, tools } = item as { messages: unknown; tools?: unknown };
      out.push({ messages, src, path: [...path, 'messages'], ...(tools != null && { tools: { value: tools, path: [...path, 'tools'] } }) });
    } else if (item && typeof item === 'object' && 'input' in item) {
      // A Responses API request: `input` items (or text), `instructions`, `tools`.
      const { input, tools, instructions } = item as { input: unknown; tools?: unknown; instructions?: unknown };
      out.push({ messages: input, src, path: [...path, 'input'], responses: { instructions }, ...(tools != null && { tools: { value: tools, path: [...path, 'tools'] } }) });
    }
    else out.push({ messages: undefined, src, path: [...path, 'messages'] });
  });
  if (!out.length) throw new ScenarioError([doc.problem([], 'no conversations in the file')]);
  return out;
}

function textOf(c: Msg['content'], quirks: QuirkLog, id: string): string {
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  const texts: string[] = [];
  for (const p of c) {
    if (typeof p.text === 'string' && (p.type === 'text' || p.type === 'input_text' || p.type === 'output_text')) texts.push(p.text);
    // A refusal part is text the model wrote (Chat Completions and Responses alike).
    else if (p.type === 'refusal' && typeof p.refusal === 'string') texts.push(p.refusal);
    else quirks.add('non-text-part', 'non-text content parts (images, audio, files: dropped)', id);
  }
  return texts.join('\n');
}

function conversationDoc(id: string, msgs: Msg[], src: JsonSource, at: DocPath, problems: Problem[], quirks: QuirkLog): ScenarioOut | undefined {
  const before = problems.length;
  const here = (j: number, key?: string) => [...at, j, ...(key ? [key] : [])];
  const problem = (path: DocPath, msg: string) => problems.push(src.problem(path, msg));
  const system: SystemOut[] = [];
  const b = new TurnBuilder();
  /** Calls of the open turn waiting for their results, by id. */
  let pending = new Map<string, ToolOut>();
  msgs.forEach((m, j) => {
    const text = [textOf(m.content, quirks, id), m.role === 'assistant' ? m.refusal : undefined].filter((t) => t).join('\n');
    // An empty name is no name (a scenario's names are not empty).
    const name = m.role !== 'function' && m.name ? m.name : undefined;
    switch (m.role) {
      case 'system':
      case 'developer':
        // A scenario pins its system messages: one that came later is pinned after the leading ones, in order.
        if (b.turn > 0) quirks.add('late-system', 'system messages after the conversation started (pinned after the leading ones: sent from the first call)', `${id} message ${j + 1}`);
        system.push({ content: text, ...(name !== undefined && { name }) });
        return;
      case 'user':
        b.user(text, false, name);
        pending = new Map();
        return;
      case 'assistant': {
        const calls = [
          ...(m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
          ...(m.function_call ? [{ id: `function:${m.function_call.name}`, name: m.function_call.name, arguments: m.function_call.arguments }] : []),
        ];
        // A message that calls tools is a round of the agent's loop, its text kept with its calls; one without is the reply.
        if (calls.length && name !== undefined) quirks.add('round-name', 'names on assistant messages that call tools (dropped: a round has none)', id);
        const opened = calls.length ? b.round(text) : b.assistant(text, name);
        if (opened) quirks.add('assistant-first', 'assistant messages before any user message (turn with an empty user message)', id);
        calls.forEach((c, k) => {
          let args: unknown;
          try {
            args = c.arguments.trim() ? JSON.parse(c.arguments) : {};
          } catch {
            args = undefined;
          }
          if (!args || typeof args !== 'object' || Array.isArray(args)) {
            problem(m.function_call && k === calls.length - 1 ? here(j, 'function_call') : [...here(j, 'tool_calls'), k, 'function', 'arguments'], `expected a JSON object, got ${JSON.stringify(c.arguments.slice(0, 40))}`);
            return;
          }
          const tool: ToolOut = { call: c.name, ...(Object.keys(args).length && { args: args as Record<string, unknown> }) };
          b.tool(tool);
          pending.set(c.id, tool);
        });
        return;
      }
      case 'tool':
      case 'function': {
        if (name !== undefined) quirks.add('tool-name', 'names on tool messages (dropped: a tool result has none)', id);
        const key = m.role === 'tool' ? (m.tool_call_id ?? undefined) : `function:${m.name}`;
        const tool = key === undefined ? undefined : pending.get(key);
        if (!tool) {
          problem(here(j, m.role === 'tool' ? 'tool_call_id' : 'name'), `answers no tool call of this turn (${JSON.stringify(key ?? null)})`);
          return;
        }
        pending.delete(key!);
        tool.result = text;
        return;
      }
    }
  });
  if (problems.length > before) return undefined;
  if (b.turn === 0) {
    problem(at, 'expected at least one user or assistant message');
    return undefined;
  }
  return { id, ...(system.length && { system: systemDoc(system) }), turns: b.finish() };
}

/** A scenario's `system:` of imported system messages: the text of a single unnamed one, else the list. */
function systemDoc(system: readonly SystemOut[]): string | SystemOut[] {
  return system.length === 1 && system[0]!.name === undefined ? system[0]!.content : [...system];
}

/** Reads the side file and flags into annotations by conversation id (`*` = all). */
export function annotations({ base }: ImportInput, opts: OpenaiOptions): Map<string, Annotation[]> {
  const out = new Map<string, Annotation[]>();
  const add = (id: string, a: Annotation) => out.set(id, [...(out.get(id) ?? []), a]);
  if (opts.annotations) {
    const path = resolve(base, opts.annotations);
    const src = SourceDoc.parse(opts.annotations, readText(path, opts.annotations));
    const root = src.value;
    const problems: Problem[] = [];
    if (!root || typeof root !== 'object' || Array.isArray(root)) throw new ScenarioError([src.problem([], 'expected a mapping from conversation id (or "*") to {facts, probe}')]);
    for (const [id, value] of Object.entries(root)) {
      const a = src.check(annotationSchema, value, [id], problems);
      if (!a) continue;
      add(id, {
        facts: Object.entries(a.facts ?? {}).map(([k, v]) => [k, typeof v === 'string' ? [v] : v]),
        probe: Object.entries(a.probe ?? {}).map(([t, names]) => [t === 'last' ? 'last' : Number(t), names]),
        at: (p, msg) => src.problem([id, ...p], msg, p.length === 0 || p[0] === 'probe'),
        lenient: id === '*',
      });
    }
    if (problems.length) throw new ScenarioError(problems);
  }
  if (opts.fact?.length || opts.probe?.length) {
    add('*', {
      facts: (opts.fact ?? []).map((f) => {
        const eq = f.indexOf('=');
        return [f.slice(0, eq).trim(), [f.slice(eq + 1).trim()]];
      }),
      probe: (opts.probe ?? []).map((p) => {
        const [t, names] = [p.slice(0, p.indexOf(':')), p.slice(p.indexOf(':') + 1)];
        return [t === 'last' ? 'last' : Number(t), names.split(',').map((n) => n.trim())];
      }),
      at: (p, msg) => ({ file: '--fact/--probe', path: p.join('.'), message: msg }),
      lenient: true,
    });
  }
  return out;
}

/**
 * Places annotated facts and probes. A fact value goes on the first turn
 * whose user message contains it (a list of values: each after the previous,
 * a correction); a probe goes on its turn.
 */
export function annotate(docs: ScenarioOut[], byId: Map<string, Annotation[]>, quirks: QuirkLog): void {
  const problems: Problem[] = [];
  const known = new Set(docs.map((d) => d.id));
  for (const id of byId.keys()) {
    if (id !== '*' && !known.has(id)) problems.push(byId.get(id)![0]!.at([], `no imported conversation has id "${id}" (ids: ${[...known].slice(0, 3).join(', ')}${known.size > 3 ? ', …' : ''})`));
  }
  for (const doc of docs) {
    const turns = doc.turns as TurnOut[];
    for (const a of [...(byId.get('*') ?? []), ...(byId.get(doc.id) ?? [])]) {
      const placed = new Map<string, number>();
      for (const [name, values] of a.facts) {
        let from = 0;
        for (const [vi, value] of values.entries()) {
          const v = normalizeText(value);
          const t = turns.findIndex((turn, i) => i >= from && normalizeText(turn.user).includes(v));
          if (t < 0) {
            if (a.lenient) quirks.add('fact-not-found', 'annotated facts whose value no user message contains (skipped)', `${doc.id} ${name}`);
            else problems.push(a.at(['facts', name, ...(values.length > 1 ? [vi] : [])], `no user message of ${doc.id} contains "${value}"${vi ? ' after the previous value' : ''}`));
            break;
          }
          turns[t]!.facts = { ...turns[t]!.facts, [name]: value };
          placed.set(name, Math.min(placed.get(name) ?? t, t));
          from = t + 1;
        }
      }
      for (const [when, names] of a.probe) {
        const t = when === 'last' ? turns.length - 1 : when - 1;
        if (t < 0 || t >= turns.length) {
          if (a.lenient) quirks.add('probe-out-of-range', 'annotated probes past the last turn (skipped)', `${doc.id} ${when}`);
          else problems.push(a.at(['probe', when], `${doc.id} has ${turns.length} turns`));
          continue;
        }
        for (const name of names) {
          const first = placed.get(name) ?? firstStated(turns, name);
          if (first === undefined || first > t) {
            if (a.lenient) quirks.add('probe-before-fact', 'annotated probes of facts not stated by their turn (skipped)', `${doc.id} ${name}`);
            else problems.push(a.at(['probe', when], `fact "${name}" is not stated in ${doc.id} by turn ${t + 1}`));
            continue;
          }
          const probe = turns[t]!.probe ?? [];
          if (!probe.includes(name)) turns[t]!.probe = [...probe, name];
        }
      }
    }
  }
  if (problems.length) throw new ScenarioError(problems);
}

function firstStated(turns: readonly TurnOut[], name: string): number | undefined {
  const i = turns.findIndex((t) => t.facts && name in t.facts);
  return i < 0 ? undefined : i;
}

