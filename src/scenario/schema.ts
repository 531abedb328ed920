import { z } from 'zod';
import { DURATION_PATTERN, parseDuration } from '../text/duration.js';

/** Scenario file schema (SPEC §2.1). Unknown keys are errors everywhere. */
const factValue = z.string();
const duration = z.union([z.string(), z.number()]).refine((v) => parseDuration(v) !== undefined, {
  message: 'expected a duration such as 30s, 5m, 2h or 1d',
});
const facts = z.record(z.string(), factValue).describe('facts the user states in this turn, name: value (values are text); a later value of a fact supersedes earlier ones');
const probe = z.array(z.string()).describe('facts this turn needs, stated in this or an earlier turn: scored for retention');
const gap = duration.optional().describe('simulated time since the previous turn, e.g. 45s, 5m, 2h (default 30s)');
const injection = z.boolean().optional().describe('the user message is a prompt-injection attempt: its exposure in later prompts is measured');

export const toolSchema = z.strictObject({
  call: z.string().min(1).describe('the function called'),
  args: z.record(z.string(), z.unknown()).optional().describe('its arguments (sent as JSON)'),
  result: z.unknown().optional().describe('what it returned: text, or any value (sent as JSON)'),
});

export const toolFields = {
  name: z.string().min(1).describe('the function’s name'),
  description: z.string().optional().describe('what it does'),
  parameters: z
    .looseObject({ properties: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .describe('JSON Schema of its arguments: {type: object, properties: {…}, required: […]}'),
};

/** The two shapes a tool is written in, as errors name them. */
const TOOL_SHAPES = 'a tool is {name, description, parameters}, or as OpenAI sends it {type: function, function: {name, description, parameters}}';

/**
 * A tool the model is offered: the `function` of an OpenAI `tools` entry
 * (`{name, description, parameters}`), or the entry itself as a request
 * sends it (`{type: function, function: {…}}`); either reads as the first.
 */
export const toolDefSchema = z
  .strictObject({
    ...toolFields,
    name: toolFields.name.optional(),
    type: z.literal('function').optional().describe('with `function`: the tool as OpenAI’s request sends it'),
    function: z.strictObject(toolFields).optional().describe('with `type: function`: the tool’s name, description and parameters'),
  })
  .superRefine((t, ctx) => {
    const wire = t.type !== undefined || t.function !== undefined;
    const flat = t.name !== undefined || t.description !== undefined || t.parameters !== undefined;
    if (wire && flat) ctx.addIssue({ code: 'custom', path: [], message: `expected one shape: ${TOOL_SHAPES}` });
    else if (wire && t.function === undefined) ctx.addIssue({ code: 'custom', path: ['function'], message: `expected the tool's {name, description, parameters} (${TOOL_SHAPES})` });
    else if (wire && t.type === undefined) ctx.addIssue({ code: 'custom', path: ['type'], message: `expected "function" (${TOOL_SHAPES})` });
    else if (!wire && t.name === undefined) ctx.addIssue({ code: 'custom', path: ['name'], message: `expected the tool's name (${TOOL_SHAPES})` });
  })
  .transform((t): z.output<z.ZodObject<typeof toolFields>> => {
    if (t.function) return t.function;
    const { name, description, parameters } = t;
    return { name: name!, ...(description !== undefined && { description }), ...(parameters !== undefined && { parameters }) };
  });

/** What a provider billed for one model call, as a transcript recorded it. */
export const usageSchema = z
  .strictObject({
    input: z.number().int().min(0).describe('prompt tokens billed (cached ones included)'),
    cached: z.number().int().min(0).optional().describe('of them, read from the cache'),
    written: z.number().int().min(0).optional().describe('of them, written to an explicit (Anthropic-style) cache'),
    written1h: z.number().int().min(0).optional().describe('of the written ones, those written with the 1-hour TTL (priced at the 1-hour write rate)'),
    output: z.number().int().min(0).optional().describe('output tokens billed'),
    output_partial: z
      .literal(true)
      .optional()
      .describe('output is what the log wrote before the reply ended, less than was billed (Claude Code’s logs): the billed check leads with the prompts’ cost'),
  })
  .superRefine((u, ctx) => {
    // An input refused by its own check is said there once: comparing with it would blame cached for it.
    if (!(Number.isInteger(u.input) && u.input >= 0)) return;
    // Cached and written tokens are of the prompt's: more than it holds is no bill a provider wrote.
    const cached = u.cached ?? 0;
    const written = u.written ?? 0;
    if (cached > u.input) ctx.addIssue({ code: 'custom', path: ['cached'], message: `more than the input (${u.input}) it is part of` });
    else if (cached + written > u.input) ctx.addIssue({ code: 'custom', path: ['written'], message: `with cached (${cached}), more than the input (${u.input}) they are part of` });
    if (u.written1h !== undefined && u.written1h > written) ctx.addIssue({ code: 'custom', path: ['written1h'], message: `more than written (${written}) it is part of` });
  })
  .describe('what the provider billed for the call that wrote this (from a transcript): compared with what ctxsim counts');

/** What a provider billed for a whole conversation, as a transcript that keeps totals only recorded it. */
const billedTotalSchema = z
  .strictObject({
    calls: z.number().int().min(1).describe('the model calls the bill covers'),
    input: z.number().int().min(0).describe('prompt tokens billed over all of them'),
    output: z.number().int().min(0).optional().describe('output tokens billed over all of them'),
  })
  .describe('what the provider billed for the whole conversation, when a transcript records totals only (SWE-agent’s model_stats): compared with ctxsim’s count of all of full’s calls (a conversation whose calls carry their usage gives none)');

/** One model call of an agent's loop: what the assistant said, the calls it made, their results. */
export const roundSchema = z.strictObject({
  assistant: z.string().optional().describe('what the assistant wrote in this round, beside its calls'),
  calls: z.array(toolSchema).min(1).describe('the tool calls of this round, each with its result'),
  usage: usageSchema.optional(),
  gap: duration
    .optional()
    .describe('time between the previous model call’s reply and the call that wrote this round, as a transcript recorded it, e.g. 0.5s: a cache that needs time to make what it wrote readable (DeepSeek’s) is read with it'),
});

/** A participant's name on a message: OpenAI's `name` field, counted in the prompt. */
const name = z.string().min(1, 'expected a non-empty name').describe('the participant\'s name on the message (OpenAI\'s name field: counted in the prompt)');

/** One pinned system message of a list. */
export const systemMessageSchema = z.strictObject({
  content: z.string().describe('the message text'),
  name: name.optional(),
});

const turnFields = {
  user: z.string().describe('the user message'),
  assistant: z.string().optional().describe('the assistant reply (none: no output tokens)'),
  usage: usageSchema.optional(),
  facts: facts.optional(),
  probe: probe.optional(),
  gap,
  injection,
  names: z
    .strictObject({ user: name.optional(), assistant: name.optional() })
    .optional()
    .describe('names on the user message and the reply (OpenAI\'s name field: counted in the prompt)'),
};
const ONE_ROUND = 'tool calls made while answering, each with its result (one round: one model call makes them all)';
const ROUNDS = 'rounds of tool calls, in order: each round is one model call that makes its calls and reads their results before the next';

/** A turn whose `tools` are calls of one round, or rounds. */
const turnSchema = z.strictObject({
  ...turnFields,
  tools: z.union([z.array(toolSchema).describe(ONE_ROUND), z.array(roundSchema).describe(ROUNDS)]).optional().describe(`${ONE_ROUND}; or ${ROUNDS}`),
});

/** The two forms of a turn, as the loader checks one (told apart by whether its tools have `calls`). */
export const oneRoundTurnSchema = z.strictObject({ ...turnFields, tools: z.array(toolSchema).optional() });
export const roundsTurnSchema = z.strictObject({ ...turnFields, tools: z.array(roundSchema).optional() });

/** A turn written as one chat message; user messages open a turn, assistant messages close it. */
export const messageSchema = z.strictObject({
  role: z.enum(['user', 'assistant']).describe('user opens a turn, assistant closes it'),
  content: z.string().describe('the message text'),
  name: name.optional(),
  facts: facts.optional(),
  probe: probe.optional(),
  gap,
  injection,
});

export const forgetSchema = z.strictObject({
  forget: z.array(z.string()).min(1).describe('facts stated earlier whose every value the user asks to erase: an event after the turn before it, not a turn'),
});

/**
 * What a scenario (or each conversation of a study entry) counts for in the
 * per-policy means, in real conversations: a positive number, not a count
 * (0.5 counts half as much as 1); taken to millionths (see `WEIGHT_SCALE`).
 */
export const weightSchema = z
  .number()
  .min(0.000001)
  .max(1_000_000_000)
  .describe('what this counts for in the per-policy means, in real conversations: a positive number, fractions allowed (0.5 counts half as much as 1; default 1)');

export const scenarioSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'expected an id of a-z, 0-9 and -, starting with a letter or digit')
    .describe('unique id: a-z, 0-9 and -, starting with a letter or digit'),
  title: z.string().optional().describe('a title for reports'),
  // Checked by the loader (text, or each message of a list, for errors at the message); see systemJsonSchema.
  system: z.unknown().optional(),
  user: z.string().optional().describe('the user id (default "user")'),
  weight: weightSchema.optional(),
  model: z
    .string()
    .min(1, 'expected a model name')
    .optional()
    .describe('the model the transcript was recorded on, as the log names it after aliases are resolved (an agent’s shortcut such as SWE-agent’s gpt4 written as the model it stood for): the billed check replays full on it when the price table knows it'),
  billed: billedTotalSchema.optional(),
  recorded: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/, 'expected an ISO 8601 date or time, e.g. 2026-04-10 or 2026-04-10T09:33:31Z')
    .optional()
    .describe('when the transcript was recorded (its first call, ISO 8601 UTC): the billed check counts with the prompt format the model name served then (DeepSeek’s deepseek-chat was DeepSeek-V3 until 2025-12-01, V3.2 from then)'),
  tool_defs: z.array(toolDefSchema).optional().describe('the tools the model is offered in every call: their definitions are part of each prompt'),
  unlogged_prefix: z
    .strictObject({
      tokens: z.number().int().min(1).describe('tokens sent first in every call'),
      from: z.literal('billed').describe('how it was sized: billed = the first call’s billed prompt tokens minus ctxsim’s count of what the log holds (an estimate)'),
    })
    .optional()
    .describe('a pinned stand-in for what the transcript’s log leaves out of every prompt (its system prompt and tool definitions): sent first in every call and cached with it, counted as an estimate; written by ctxsim import --unlogged-prefix billed'),
  warm_start: z
    .strictObject({
      cached: z.number().int().min(1).describe('prompt tokens the first call found in the cache'),
    })
    .optional()
    .describe('the provider’s cache already held the start of the first prompt (written by an earlier session or call): the first call reads that many tokens and does not write them; written by ctxsim import from the first billed call’s cache reads (a run with coldStart ignores it)'),
  turns: z.array(z.unknown()).min(1),
});

/** `system:` as the JSON Schema shows it. */
const systemJsonSchema = z
  .union([z.string().describe('one system message'), z.array(systemMessageSchema).min(1).describe('system messages, in order, each with an optional name')])
  .describe('the system prompt, pinned first in every prompt, in order: its text, or a list of messages {content, name}');

export type ToolDoc = z.infer<typeof toolSchema>;
export type RoundDoc = z.infer<typeof roundSchema>;
export type UsageDoc = z.infer<typeof usageSchema>;

/** Where the JSON Schemas of ctxsim's files are published: the package's `schema/` folder on unpkg, newest version. */
export const SCHEMA_BASE_URL = 'https://unpkg.com/ctxsim/schema/';

/**
 * A JSON Schema (draft-07, which YAML and JSON editors read) of an input
 * file's zod schema, the input side. `durations` are the loader's duration
 * schemas, whose check has no JSON Schema form: they are written as the
 * pattern parseDuration reads, or a number ≥ 0.
 */
export function fileJsonSchema(schema: z.ZodType, info: { file: string; title: string; durations?: readonly z.ZodType[] }): Record<string, unknown> {
  const durations = new Set<unknown>(info.durations ?? [duration]);
  const json = z.toJSONSchema(schema, {
    target: 'draft-07',
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      if (durations.has(zodSchema)) {
        for (const k of Object.keys(jsonSchema)) if (k !== 'description') delete jsonSchema[k];
        jsonSchema.anyOf = [
          { type: 'string', pattern: DURATION_PATTERN.source },
          { type: 'number', minimum: 0 },
        ];
      }
      // A list the library takes read-only is an ordinary list in a file (JSON Schema's readOnly means "not for the author to set").
      delete jsonSchema.readOnly;
      // zod's whole numbers stop at 2^53; saying so in every schema would only be noise.
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = json;
  return { $schema, $id: `${SCHEMA_BASE_URL}${info.file}`, title: info.title, $comment: 'Generated from ctxsim\'s zod schemas by scripts/gen-schema.mjs (npm run gen:schema); do not edit.', ...rest };
}

/** The JSON Schema of a scenario file: `schema/scenario.schema.json`. */
export function scenarioJsonSchema(): Record<string, unknown> {
  const file = scenarioSchema
    .extend({
      system: systemJsonSchema.optional(),
      turns: z
        .array(z.union([turnSchema, messageSchema, forgetSchema]))
        .min(1)
        .describe('the conversation: turns (user: …), chat messages (role: …) and forget events (forget: […]), in order'),
    })
    .describe('One conversation for ctxsim: what the user says, what the assistant replies, which facts the user states and which turns need them.');
  return fileJsonSchema(file, { file: 'scenario.schema.json', title: 'ctxsim scenario' });
}
