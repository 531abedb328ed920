import { basename } from 'node:path';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { show, type DocPath } from '../../text/document.js';
import type { BilledTotal, ToolDef } from '../../types.js';
import type { ScenarioOut, ToolOut, UsageOut } from '../docs.js';
import { AgentTurns } from './_agent.js';
import { JsonSource, parseJson, readText, slug } from './_read.js';
import { isObject } from '../../text/json.js';
import { sessionLogOptions } from './_shared-options.js';
import { annotate, annotations, type OpenaiOptions } from './openai.js';
import { QuirkLog, type Importer } from './types.js';

/** The swe-agent format's options: a session log's (id, facts, probes), and the model when the trajectory names none. */
const sweAgentOptions = sessionLogOptions.extend({
  model: z
    .string()
    .min(1)
    .optional()
    .describe('the model the run was on, over the one the trajectory names (a SWE-agent 0.x .traj names none: its run folder’s name starts with it); a SWE-agent shortcut such as gpt4 is resolved'),
});

/** SWE-agent import options: the id, facts and probes as for `openai`, and the model. */
export type SweAgentOptions = OpenaiOptions & { model?: string | undefined };

const part = z.looseObject({ type: z.string(), text: z.string().optional(), refusal: z.string().optional() });
const content = z.union([z.string(), z.array(part), z.null()]).optional();
const toolCall = z.looseObject({
  id: z.string().min(1),
  function: z.looseObject({ name: z.string().min(1), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish() }),
});
const usage = z.looseObject({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0).nullish(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().int().min(0).nullish(), cache_creation_tokens: z.number().int().min(0).nullish() }).nullish(),
  // DeepSeek's own name for the cached tokens, in its responses beside (or, in older ones, without) prompt_tokens_details.
  prompt_cache_hit_tokens: z.number().int().min(0).nullish(),
  // Anthropic's tokens written to its cache, which LiteLLM passes on beside (and copies into) prompt_tokens_details; part of prompt_tokens.
  cache_creation_input_tokens: z.number().int().min(0).nullish(),
});
const modelName = z.string().min(1, 'expected a model name');
const message = z.looseObject({
  role: z.enum(['system', 'user', 'assistant', 'tool', 'exit']),
  content,
  // An assistant's refusal (OpenAI's, as LiteLLM passes it on) is what the model said instead of content: its text.
  refusal: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
  tool_call_id: z.string().nullish(),
  tool_call_ids: z.array(z.string()).nullish(),
  // SWE-agent: the action of a response, and demonstrations put in the history (not the run's messages).
  action: z.string().nullish(),
  is_demo: z.boolean().nullish(),
  // mini-swe-agent: the raw response (its usage, model, and `created`, when the API received the call, in whole seconds) and when the agent logged it.
  extra: z.looseObject({ response: z.looseObject({ usage: usage.nullish(), model: modelName.nullish(), created: z.number().nullish() }).nullish(), timestamp: z.number().nullish() }).nullish(),
});
type Msg = z.infer<typeof message>;
const step = z.looseObject({
  action: z.string(),
  observation: z.string().nullish(),
  thought: z.string().nullish(),
  // The open file and working directory: SWE-agent 1.x's after the step, 0.x's (JSON text) before its response.
  state: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
});
type Step = z.infer<typeof step>;

/** The templates of the message that brings the model a step's observation. */
const templates = z.looseObject({ next_step_template: z.string().nullish(), next_step_no_output_template: z.string().nullish() });
type Templates = z.infer<typeof templates>;
/**
 * What is read of a SWE-agent run's config (`replay_config`, an object or its
 * JSON text): the model (1.x `name`, 0.x `model_name`) and the observation
 * templates (1.x `templates`, 0.x `config`).
 */
const runConfig = z.looseObject({
  agent: z
    .looseObject({
      model: z.looseObject({ name: modelName.nullish(), model_name: modelName.nullish() }).nullish(),
      templates: templates.nullish(),
      config: templates.nullish(),
    })
    .nullish(),
});
type RunConfig = z.infer<typeof runConfig>;
const tokens = z.number().int().min(0);
/** SWE-agent's `info`: the run's totals (`model_stats`), no usage per call. */
const sweInfo = z.looseObject({ model_stats: z.looseObject({ tokens_sent: tokens.nullish(), tokens_received: tokens.nullish(), api_calls: tokens.nullish() }).nullish() });
/** mini-swe-agent's `info`: the run's config, with its model. */
const miniInfo = z.looseObject({ config: z.looseObject({ model: z.looseObject({ model_name: modelName.nullish() }).nullish() }).nullish() });

/**
 * SWE-agent 0.x's shortcut names for models (`--model_name gpt4`), and the
 * model each stood for: the name pairs of the `SHORTCUTS` tables of
 * `OpenAIModel`, `AnthropicModel`, `TogetherModel` and `GroqModel` in
 * SWE-agent 0.x's `sweagent/agent/models.py` (github.com/SWE-agent/SWE-agent,
 * 0.7). A run's folder and config name the shortcut (`gpt4__SWE-bench_Lite__…`);
 * the API was sent the model. SWE-agent 1.x passes names to LiteLLM as
 * written. Three 0.x shortcuts are model names of their own (`gpt-4o-mini`,
 * `o1`, `o1-mini`, which 0.x sent as a dated snapshot): left out, so a 1.x
 * run's name is kept as written.
 */
const SWE_AGENT_SHORTCUTS: ReadonlyMap<string, string> = new Map([
  ['gpt3', 'gpt-3.5-turbo-1106'],
  ['gpt3-legacy', 'gpt-3.5-turbo-16k-0613'],
  ['gpt3-0125', 'gpt-3.5-turbo-0125'],
  ['gpt4', 'gpt-4-1106-preview'],
  ['gpt4-legacy', 'gpt-4-0613'],
  ['gpt4-0125', 'gpt-4-0125-preview'],
  ['gpt4-turbo', 'gpt-4-turbo-2024-04-09'],
  ['gpt4o', 'gpt-4o-2024-05-13'],
  ['gpt4omini', 'gpt-4o-mini-2024-07-18'],
  ['claude-2', 'claude-2.1'],
  ['claude-opus', 'claude-3-opus-20240229'],
  ['claude-sonnet', 'claude-3-sonnet-20240229'],
  ['claude-haiku', 'claude-3-haiku-20240307'],
  ['claude-sonnet-3.5', 'claude-3-5-sonnet-20240620'],
  ['llama13b', 'meta-llama/Llama-2-13b-chat-hf'],
  ['llama70b', 'meta-llama/Llama-2-70b-chat-hf'],
  ['mistral7b', 'mistralai/Mistral-7B-Instruct-v0.2'],
  ['mixtral8x7b', 'mistralai/Mixtral-8x7B-Instruct-v0.1'],
  ['redpajama7b', 'togethercomputer/RedPajama-INCITE-7B-Chat'],
  ['groq/llama8', 'llama3-8b-8192'],
  ['groq/llama70', 'llama3-70b-8192'],
  ['groq/llamaguard8', 'llama-guard-3-8b'],
  ['groq/llamainstant8', 'llama-3.1-8b-instant'],
  ['groq/llamaversatile70', 'llama-3.1-70b-versatile'],
  ['groq/gemma9it', 'gemma2-9b-it'],
  ['groq/gemma7it', 'gemma-7b-it'],
  ['groq/mixtral8x7', 'mixtral-8x7b-32768'],
]);

/**
 * The tool mini-swe-agent's tool-calling models offer with every call
 * (`BASH_TOOL` in its `models/utils/actions_toolcall.py`): its name,
 * description and parameters.
 */
const MINI_BASH: ToolDef = {
  name: 'bash',
  description: 'Execute a bash command',
  parameters: { type: 'object', properties: { command: { type: 'string', description: 'The bash command to execute' } }, required: ['command'] },
};

/** SWE-agent's stand-ins for a model (a replayed trajectory, a person typing, a test): no model ran. */
const STAND_INS: ReadonlySet<string> = new Set(['replay', 'human', 'human_thought', 'instant_empty_submit']);

/** What a run was recorded on: the model as sent, and the name the log wrote when that was a shortcut. */
interface RunModel {
  model: string;
  alias?: string;
}

/**
 * SWE-agent trajectories (`<instance>.traj`: `history` chat messages and
 * `trajectory` steps) and mini-swe-agent ones (`<instance>.traj.json`:
 * `messages`), one conversation per file. The system and first user
 * message (the task) open it; each model response that calls tools is a
 * round, each tool message the result of the call it names; the billed usage
 * of a response (mini-swe-agent's `extra.response.usage`) is kept on its
 * round, SWE-agent's totals (`info.model_stats`) on the conversation
 * (`billed:`). The model the run was on is kept as `model:`, a SWE-agent
 * shortcut (`gpt4`) resolved to the model it stood for.
 */
export const sweAgent: Importer<SweAgentOptions> = {
  id: 'swe-agent',
  describe: 'SWE-agent .traj (history messages, or trajectory steps) and mini-swe-agent .traj.json (messages with tool_calls, usage per response)',
  options: sweAgentOptions,
  billedCalls: true,
  read(input, opts) {
    const { path, file } = input;
    const text = readText(path, file);
    const root = parseJson(text, file);
    const id = opts.prefix ?? (slug(basename(path).replace(/(\.traj)?\.json$|\.traj$/i, '')) || 'swe-agent');
    const quirks = new QuirkLog();
    const src = new JsonSource(file, text);
    const problems: Problem[] = [];
    const check = <T>(schema: z.ZodType<T>, value: unknown, at: DocPath): T | undefined => src.check(schema, value, at, problems);
    const problem = (at: DocPath, msg: string) => problems.push(src.problem(at, msg));
    const obj = isObject(root) ? root : undefined;
    let out: { system: string[]; turns: AgentTurns; recorded?: string } | undefined;
    let model: RunModel | undefined;
    /** The run was on a stand-in for a model (replay, human…): no model ran. */
    let standIn = false;
    let billed: BilledTotal | undefined;
    let toolDefs: ToolDef[] | undefined;
    if (obj && Array.isArray(obj.messages)) {
      const msgs = check(z.array(message).min(1), obj.messages, ['messages']);
      if (msgs) out = fold(msgs, ['messages'], id, quirks, problem);
      // mini-swe-agent's tool-calling agents offer one tool, `bash`, which the trajectory does not hold.
      const names = new Set((msgs ?? []).flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name)));
      if (names.size === 1 && names.has(MINI_BASH.name)) {
        toolDefs = [MINI_BASH];
        quirks.add('bash-tool', 'tool definitions the trajectory leaves out: mini-swe-agent’s bash tool (written as tool_defs)', id);
      }
      const info = obj.info === undefined ? undefined : check(miniInfo.nullable(), obj.info, ['info']);
      const configured = info?.config?.model?.model_name ?? undefined;
      model = configured !== undefined ? { model: configured } : responseModel(msgs ?? []);
    } else if (obj && (Array.isArray(obj.history) || Array.isArray(obj.trajectory))) {
      const config = runConfigOf(obj.replay_config, check, problem);
      const history = obj.history === undefined ? [] : check(z.array(message), obj.history, ['history']);
      const steps = obj.trajectory === undefined ? [] : check(z.array(step), obj.trajectory, ['trajectory']);
      if (history && steps) {
        if (history.some((m) => m.role === 'assistant' && !m.is_demo && m.tool_calls?.length) || !steps.length) out = fold(history, ['history'], id, quirks, problem);
        else out = fromSteps(history, steps, obj.trajectory as unknown[], id, quirks, config?.agent?.templates ?? config?.agent?.config ?? undefined);
      }
      model = sweAgentModel(config, quirks, id);
      standIn = STAND_INS.has(configuredName(config) ?? '');
      const info = obj.info === undefined ? undefined : check(sweInfo.nullable(), obj.info, ['info']);
      billed = totals(info?.model_stats ?? undefined, problem);
    } else problem([], 'expected a mini-swe-agent .traj.json ({messages: [...]}) or a SWE-agent .traj ({history: [...], trajectory: [...]})');
    if (problems.length) throw new ScenarioError(problems);
    if (opts.model !== undefined) model = resolvedModel(opts.model);
    else if (!model && !standIn) quirks.add('no-model', NO_MODEL, id);
    if (!out || out.turns.turn === 0) throw new ScenarioError([{ file, path: '', message: 'no user or assistant messages in the file' }]);
    const docs: ScenarioOut[] = [
      { id, ...(model && { model: model.model }), ...(billed && { billed }), ...(out.recorded !== undefined && { recorded: out.recorded }), ...(out.system.length && { system: out.system.join('\n\n') }), ...(toolDefs && { tool_defs: toolDefs }), turns: out.turns.finish() },
    ];
    annotate(docs, annotations(input, opts), quirks);
    return { docs, quirks: quirks.list(), ...(model?.alias !== undefined && { aliases: new Map([[model.model, model.alias]]) }) };
  },
};

/** A SWE-agent run's config (`replay_config`: an object, or its JSON text), as far as it is read; absent: none. */
function runConfigOf(raw: unknown, check: <T>(schema: z.ZodType<T>, value: unknown, at: DocPath) => T | undefined, problem: (at: DocPath, msg: string) => void): RunConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (e) {
      problem(['replay_config'], `expected the run's config as JSON text: ${(e as Error).message}`);
      return undefined;
    }
  }
  return check(runConfig, value, ['replay_config']);
}

/** The model a SWE-agent run's config names, a shortcut resolved; none for a stand-in such as `replay` (counted). */
function sweAgentModel(config: RunConfig | undefined, quirks: QuirkLog, id: string): RunModel | undefined {
  const name = configuredName(config);
  if (name === undefined) return undefined;
  if (STAND_INS.has(name)) {
    quirks.add('stand-in-model', 'runs on one of SWE-agent’s stand-ins for a model (replay, human…: no model kept)', `${id} ${name}`);
    return undefined;
  }
  return resolvedModel(name);
}

/** The model name a run's config gives (1.x `name`, 0.x `model_name`), as written. */
function configuredName(config: RunConfig | undefined): string | undefined {
  const m = config?.agent?.model;
  return m?.name ?? m?.model_name ?? undefined;
}

/** A model as SWE-agent was given it: a 0.x shortcut (`gpt4`) resolved to the model it stood for, any other name as written. */
function resolvedModel(name: string): RunModel {
  const resolved = SWE_AGENT_SHORTCUTS.get(name);
  return resolved === undefined ? { model: name } : { model: resolved, alias: name };
}

const NO_MODEL = 'trajectories that name no model (a SWE-agent 0.x .traj keeps it only in its run folder’s name, e.g. gpt4__…): give it with --model; a bill is not priced without one';

/** The model mini-swe-agent's responses name (`extra.response.model`), the most frequent when several do. */
function responseModel(msgs: readonly Msg[]): RunModel | undefined {
  const counts = new Map<string, number>();
  for (const m of msgs) {
    const name = m.extra?.response?.model;
    if (typeof name === 'string') counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  let best: string | undefined;
  for (const [name, n] of counts) if (best === undefined || n > counts.get(best)!) best = name;
  return best === undefined ? undefined : { model: best };
}

/**
 * The run's billed totals (SWE-agent's `model_stats`): prompt tokens over its
 * calls. Zero tokens sent is nothing recorded (a replayed demonstration, a
 * model that reports none): no total.
 */
function totals(stats: z.infer<typeof sweInfo>['model_stats'], problem: (at: DocPath, msg: string) => void): BilledTotal | undefined {
  const sent = stats?.tokens_sent ?? 0;
  if (!stats || sent === 0) return undefined;
  const calls = stats.api_calls ?? 0;
  if (calls === 0) {
    problem(['info', 'model_stats', 'api_calls'], `expected the number of model calls the ${sent} tokens_sent were billed for (≥ 1), got ${show(stats.api_calls ?? undefined)}`);
    return undefined;
  }
  return { calls, input: sent, ...(typeof stats.tokens_received === 'number' && { output: stats.tokens_received }) };
}

const DEMONSTRATION = 'demonstration messages in the history (an example run the agent sends in every call: kept before the task, in its user message)';
const DEMONSTRATION_MESSAGES =
  'demonstrations of several messages (put in the history as messages of their own: their texts kept before the task, one per line; their message framing is not counted)';

/**
 * The demonstration SWE-agent sends in every call, right after the system
 * prompt (`is_demo` history items: its `demonstration_template` filled in, one
 * user message, or with `put_demos_in_history` the example run's messages
 * themselves): their texts, one per line, or undefined when there is none.
 * It becomes the start of the first user message, joined to the task by a
 * newline — as SWE-agent joins the two for Claude; OpenAI's API was sent
 * them as two user messages, one message's framing (3–4 tokens) more.
 */
function demonstration(history: readonly Msg[], quirks: QuirkLog, id: string): string | undefined {
  const demo = history.filter((m) => m.is_demo);
  if (!demo.length) return undefined;
  for (let i = 0; i < demo.length; i++) quirks.add('demonstration', DEMONSTRATION, id);
  if (demo.length > 1) quirks.add('demonstration-messages', DEMONSTRATION_MESSAGES, `${id} ${demo.length} messages`);
  return demo.map((m) => textOf(m.content, quirks, id)).join('\n');
}

/** Chat messages (mini-swe-agent's `messages`, SWE-agent's `history`) into turns. */
function fold(msgs: Msg[], at: DocPath, id: string, quirks: QuirkLog, problem: (at: DocPath, msg: string) => void): { system: string[]; turns: AgentTurns; recorded?: string } {
  const system: string[] = [];
  const turns = new AgentTurns(quirks, id);
  /** When the first response was received (ISO 8601), and when the agent logged the last one (seconds). */
  let recorded: string | undefined;
  let logged: number | undefined;
  /** Calls waiting for their result, by id. */
  const pending = new Map<string, ToolOut>();
  let demo = demonstration(msgs, quirks, id);
  msgs.forEach((m, j) => {
    const here = (...p: (string | number)[]) => [...at, j, ...p];
    if (m.is_demo) {
      // Sent where it stands, after the system prompt: it opens the first user message.
      if (demo !== undefined) turns.user(demo);
      demo = undefined;
      return;
    }
    const text = [textOf(m.content, quirks, id), m.role === 'assistant' ? m.refusal : undefined].filter((t) => t).join('\n');
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
        const created = m.extra?.response?.created ?? undefined;
        recorded ??= created === undefined ? undefined : isoSeconds(created);
        // The API's `created` is in whole seconds: the gap is at least this, and less than a second more.
        const gap = created !== undefined && logged !== undefined ? `${Math.max(0, Math.round((created - logged) * 10) / 10)}s` : undefined;
        logged = m.extra?.timestamp ?? undefined;
        if (calls.length) turns.round(text, calls, billed, gap);
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
  return { system, turns, ...(recorded !== undefined && { recorded }) };
}

/**
 * SWE-agent trajectory steps (the thought/action form, without tool calls):
 * the system prompt and task from the messages before the first response
 * (`history`, else the first step's `query`), then each step a round whose
 * one call is the action (named by its first word, the whole action as
 * `command`) with the observation as the model was sent it as its result:
 * the history's message after the step's response, else the step's
 * `observation` in the run's `next_step_template` (its footer: open file,
 * directory, prompt) with the step's state.
 */
function fromSteps(history: Msg[], steps: Step[], raw: unknown[], id: string, quirks: QuirkLog, footer: Templates | undefined): { system: string[]; turns: AgentTurns } {
  const system: string[] = [];
  const turns = new AgentTurns(quirks, id);
  const query = isObject(raw[0]) && Array.isArray(raw[0].query) ? raw[0].query : [];
  const head = history.length ? history : query.flatMap((m) => (message.safeParse(m).success ? [message.parse(m)] : []));
  let demo = demonstration(head, quirks, id);
  for (const m of head) {
    if (m.is_demo) {
      if (demo !== undefined) turns.user(demo);
      demo = undefined;
      continue;
    }
    if (m.role === 'assistant' || m.role === 'tool') break;
    if (m.role === 'system' && turns.turn === 0) system.push(textOf(m.content, quirks, id));
    else if (m.role === 'user' || m.role === 'system') turns.user(textOf(m.content, quirks, id));
  }
  quirks.add('steps', 'trajectories read from their steps (thought, action, observation: no tool calls in the history)', id);
  const sent = sentObservations(history, steps, quirks, id);
  steps.forEach((s, i) => {
    const action = s.action.trim();
    if (!action) return turns.reply(s.thought ?? '');
    let result = sent[i] ?? withFooter(steps, i, footer);
    if (result === undefined) {
      result = s.observation ?? '';
      // SWE-agent 0.x's last observation was never sent: the run ended.
      if (!(typeof s.state === 'string' && i === steps.length - 1)) quirks.add('no-footer', 'observations kept as recorded, without the footer the model was sent (no history message, next_step_template or state to rebuild it)', `${id} step ${i + 1}`);
    }
    turns.round(s.thought ?? '', [{ call: action.split(/\s+/)[0]!, args: { command: action }, result }]);
  });
  return { system, turns };
}

/**
 * The observation the model was sent after each step, from the history: the
 * messages after the step's response (SWE-agent's template applied). The
 * responses are matched to the steps in order; one whose action is not its
 * step's ends the match.
 */
function sentObservations(history: readonly Msg[], steps: readonly Step[], quirks: QuirkLog, id: string): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  let k = -1;
  let texts: string[] = [];
  const close = () => {
    if (k >= 0 && texts.length) out[k] = texts.join('\n');
    texts = [];
  };
  for (const m of history) {
    if (m.is_demo) continue;
    if (m.role === 'assistant') {
      close();
      const s = steps[++k];
      if (!s || (typeof m.action === 'string' && m.action.trim() !== s.action.trim())) return out;
    } else if (k >= 0 && (m.role === 'user' || m.role === 'tool')) texts.push(textOf(m.content, quirks, id));
  }
  close();
  return out;
}

/**
 * A step's observation in the run's template, as SWE-agent sent it: the
 * no-output template for an empty one, the state's fields filled in — 1.x
 * keeps the state after the step on it, 0.x (JSON text) the state before
 * each response, so the next step's. Undefined when something is missing.
 */
function withFooter(steps: readonly Step[], i: number, t: Templates | undefined): string | undefined {
  const s = steps[i]!;
  const observation = s.observation ?? '';
  const template = observation.trim() ? t?.next_step_template : t?.next_step_no_output_template;
  if (!template) return undefined;
  let state: unknown = s.state;
  if (typeof state === 'string') {
    const next = steps[i + 1]?.state;
    try {
      state = typeof next === 'string' ? JSON.parse(next) : undefined;
    } catch {
      state = undefined;
    }
  }
  if (!isObject(state)) return undefined;
  const vars: Record<string, string> = { observation };
  for (const [k, v] of Object.entries(state)) vars[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return fill(template, vars);
}

/** A template's fields filled in — Jinja's `{{name}}` (SWE-agent 1.x) or Python's `{name}` (0.x); undefined for a field not given or a template with logic. */
function fill(template: string, vars: Readonly<Record<string, string>>): string | undefined {
  if (template.includes('{%')) return undefined;
  let missing = false;
  const out = template.replace(template.includes('{{') ? /\{\{\s*(\w+)\s*\}\}/g : /\{(\w+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) missing = true;
    return v ?? '';
  });
  return missing ? undefined : out;
}

/** Seconds since 1970 as an ISO 8601 time, to the second. */
function isoSeconds(seconds: number): string | undefined {
  const d = new Date(Math.floor(seconds) * 1000);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString().replace('.000Z', 'Z');
}

/** The billed usage of a response, from mini-swe-agent's copy of the raw response. */
function usageOf(m: Msg): UsageOut | undefined {
  const u = m.extra?.response?.usage;
  if (!u) return undefined;
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens;
  const written = u.cache_creation_input_tokens ?? u.prompt_tokens_details?.cache_creation_tokens;
  return {
    input: u.prompt_tokens,
    ...(typeof cached === 'number' && { cached }),
    ...(typeof written === 'number' && written > 0 && { written }),
    ...(typeof u.completion_tokens === 'number' && { output: u.completion_tokens }),
  };
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
    // A refusal part is text the model wrote, sent back as it on the next call.
    else if (p.type === 'refusal' && typeof p.refusal === 'string') texts.push(p.refusal);
    else quirks.add('non-text-part', 'non-text content parts (images: dropped)', id);
  }
  return texts.join('\n');
}
