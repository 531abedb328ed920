import { basename } from 'node:path';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { SourceDoc, type DocPath } from '../../text/document.js';
import type { ScenarioOut, ToolOut, UsageOut } from '../docs.js';
import { AgentTurns, slug } from './_agent.js';
import { isObject, parseJson, readText } from './_read.js';
import { annotate, annotations, options, type OpenaiOptions } from './openai.js';
import { QuirkLog, type Importer } from './types.js';

/** SWE-agent import options: the id, and facts and probes as for `openai`. */
export type SweAgentOptions = OpenaiOptions;

const part = z.looseObject({ type: z.string(), text: z.string().optional() });
const content = z.union([z.string(), z.array(part), z.null()]).optional();
const toolCall = z.looseObject({
  id: z.string().min(1),
  function: z.looseObject({ name: z.string().min(1), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish() }),
});
const usage = z.looseObject({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0).nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().int().min(0).nullish() }).nullish(),
});
const message = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool', 'exit']),
  content,
  tool_calls: z.array(toolCall).nullish(),
  tool_call_id: z.string().nullish(),
  tool_call_ids: z.array(z.string()).nullish(),
  extra: z.looseObject({ response: z.looseObject({ usage: usage.nullish() }).nullish() }).nullish(),
});
type Msg = z.infer<typeof message>;
const step = z.looseObject({
  action: z.string(),
  observation: z.string().nullish(),
  thought: z.string().nullish(),
});

/**
 * SWE-agent trajectories (`<instance>.traj`: `history` chat messages and
 * `trajectory` steps) and mini-swe-agent ones (`<instance>.traj.json`:
 * `messages`), one conversation per file. The system and first user
 * message (the task) open it; each model response that calls tools is a
 * round, each tool message the result of the call it names; the billed usage
 * of a response (mini-swe-agent's `extra.response.usage`) is kept on its round.
 */
export const sweAgent: Importer<SweAgentOptions> = {
  id: 'swe-agent',
  describe: 'SWE-agent .traj (history messages, or trajectory steps) and mini-swe-agent .traj.json (messages with tool_calls, usage per response)',
  options,
  read(input, opts) {
    const { path, file } = input;
    const text = readText(path, file);
    const root = parseJson(text, file);
    const id = opts.prefix ?? (slug(basename(path).replace(/(\.traj)?\.json$|\.traj$/i, '')) || 'swe-agent');
    const quirks = new QuirkLog();
    // Positions are looked up only when something is wrong: parsing for them costs more than the import.
    let src: SourceDoc | undefined;
    const doc = () => (src ??= SourceDoc.parse(file, text));
    const problems: Problem[] = [];
    const check = <T>(schema: z.ZodType<T>, value: unknown, at: DocPath): T | undefined => {
      const r = schema.safeParse(value);
      return r.success ? r.data : doc().check(schema, value, at, problems);
    };
    const problem = (at: DocPath, msg: string) => problems.push(doc().problem(at, msg));
    const obj = isObject(root) ? root : undefined;
    let out: { system: string[]; turns: AgentTurns } | undefined;
    if (obj && Array.isArray(obj.messages)) {
      const msgs = check(z.array(message).min(1), obj.messages, ['messages']);
      if (msgs) out = fold(msgs, ['messages'], id, quirks, problem);
    } else if (obj && (Array.isArray(obj.history) || Array.isArray(obj.trajectory))) {
      const history = obj.history === undefined ? [] : check(z.array(message), obj.history, ['history']);
      const steps = obj.trajectory === undefined ? [] : check(z.array(step), obj.trajectory, ['trajectory']);
      if (history && steps) {
        if (history.some((m) => m.role === 'assistant' && m.tool_calls?.length) || !steps.length) out = fold(history, ['history'], id, quirks, problem);
        else out = fromSteps(history, steps, obj.trajectory as unknown[], id, quirks);
      }
    } else problem([], 'expected a mini-swe-agent .traj.json ({messages: [...]}) or a SWE-agent .traj ({history: [...], trajectory: [...]})');
    if (problems.length) throw new ScenarioError(problems);
    if (!out || out.turns.turn === 0) throw new ScenarioError([{ file, path: '', message: 'no user or assistant messages in the file' }]);
    const docs: ScenarioOut[] = [{ id, ...(out.system.length && { system: out.system.join('\n\n') }), turns: out.turns.finish() }];
    annotate(docs, annotations(input, opts), quirks);
    return { docs, quirks: quirks.list() };
  },
};

/** Chat messages (mini-swe-agent's `messages`, SWE-agent's `history`) into turns. */
function fold(msgs: Msg[], at: DocPath, id: string, quirks: QuirkLog, problem: (at: DocPath, msg: string) => void): { system: string[]; turns: AgentTurns } {
  const system: string[] = [];
  const turns = new AgentTurns(quirks, id);
  /** Calls waiting for their result, by id. */
  const pending = new Map<string, ToolOut>();
  msgs.forEach((m, j) => {
    const here = (...p: (string | number)[]) => [...at, j, ...p];
    const text = textOf(m.content, quirks, id);
    switch (m.role) {
      case 'system':
        if (turns.turn > 0) problem(here('role'), 'a system message after the conversation started is not supported');
        else system.push(text);
        return;
      case 'user':
        turns.user(text);
        return;
      case 'exit':
        // mini-swe-agent's last entry: the run's end (its exit status and submission), not a message the model saw.
        if (j !== msgs.length - 1) problem(here('role'), 'an exit entry before the last message');
        else quirks.add('exit', 'exit entries (the run’s end, not a message: skipped)', id);
        return;
      case 'assistant': {
        const calls: ToolOut[] = [];
        (m.tool_calls ?? []).forEach((c, k) => {
          const args = argsOf(c.function.arguments);
          if (!args) return problem(here('tool_calls', k, 'function', 'arguments'), `expected a JSON object, got ${JSON.stringify(String(c.function.arguments).slice(0, 40))}`);
          const tool: ToolOut = { call: c.function.name, ...(Object.keys(args).length && { args }) };
          calls.push(tool);
          pending.set(c.id, tool);
        });
        const billed = usageOf(m);
        if (calls.length) turns.round(text, calls, billed);
        else turns.reply(text, billed);
        return;
      }
      case 'tool': {
        const ids = m.tool_call_ids ?? (m.tool_call_id ? [m.tool_call_id] : []);
        const tool = ids.length ? pending.get(ids[0]!) : undefined;
        if (!tool) return problem(here(m.tool_call_ids ? 'tool_call_ids' : 'tool_call_id'), `answers no tool call before it (${JSON.stringify(ids[0] ?? null)})`);
        pending.delete(ids[0]!);
        if (ids.length > 1) quirks.add('shared-observation', 'tool messages answering several calls (the text is the first call’s result)', `${id} ${ids.join(',')}`);
        tool.result = text;
        return;
      }
    }
  });
  if (pending.size) quirks.add('no-result', 'tool calls without a result (the run ended first)', `${id} ${[...pending.keys()][0]}`);
  return { system, turns };
}

/**
 * SWE-agent trajectory steps (the thought/action form, without tool calls):
 * the system prompt and task from the messages before the first response
 * (`history`, else the first step's `query`), then each step a round whose
 * one call is the action (named by its first word, the whole action as
 * `command`) with the observation as its result.
 */
function fromSteps(history: Msg[], steps: z.infer<typeof step>[], raw: unknown[], id: string, quirks: QuirkLog): { system: string[]; turns: AgentTurns } {
  const system: string[] = [];
  const turns = new AgentTurns(quirks, id);
  const query = isObject(raw[0]) && Array.isArray(raw[0].query) ? raw[0].query : [];
  const head = history.length ? history : query.flatMap((m) => (message.safeParse(m).success ? [message.parse(m)] : []));
  for (const m of head) {
    if (m.role === 'assistant' || m.role === 'tool') break;
    if (m.role === 'system' && turns.turn === 0) system.push(textOf(m.content, quirks, id));
    else if (m.role === 'user' || m.role === 'system') turns.user(textOf(m.content, quirks, id));
  }
  quirks.add('steps', 'trajectories read from their steps (thought, action, observation: no tool calls in the history)', id);
  for (const s of steps) {
    const action = s.action.trim();
    if (!action) {
      turns.reply(s.thought ?? '');
      continue;
    }
    turns.round(s.thought ?? '', [{ call: action.split(/\s+/)[0]!, args: { command: action }, result: s.observation ?? '' }]);
  }
  return { system, turns };
}

/** The billed usage of a response, from mini-swe-agent's copy of the raw response. */
function usageOf(m: Msg): UsageOut | undefined {
  const u = m.extra?.response?.usage;
  if (!u) return undefined;
  const cached = u.prompt_tokens_details?.cached_tokens;
  return { input: u.prompt_tokens, ...(typeof cached === 'number' && { cached }), ...(typeof u.completion_tokens === 'number' && { output: u.completion_tokens }) };
}

function argsOf(a: string | Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  if (a === undefined || a === null) return {};
  if (typeof a !== 'string') return a;
  if (!a.trim()) return {};
  try {
    const v: unknown = JSON.parse(a);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function textOf(c: Msg['content'], quirks: QuirkLog, id: string): string {
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  const texts: string[] = [];
  for (const p of c) {
    if (p.type === 'text' && typeof p.text === 'string') texts.push(p.text);
    else quirks.add('non-text-part', 'non-text content parts (images: dropped)', id);
  }
  return texts.join('\n');
}
