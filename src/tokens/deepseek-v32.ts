/** A message as the encoder reads it (chat-template.ts' TemplateMessage: the OpenAI chat shape, arguments as JSON text or a value). */
interface TemplateMessage {
  role: string;
  content: string | null;
  tool_calls?: readonly { function: { name: string; arguments: unknown } }[];
}

/** A tool definition as a request sends it (its `function` is rendered). */
interface TemplateTool {
  function: unknown;
}

/**
 * DeepSeek-V3.2's prompt format, written in ctxsim's own code: the model
 * ships no Jinja chat template but a Python encoder
 * (`encoding/encoding_dsv32.py` in its model repository, MIT), and DeepSeek's
 * API renders deepseek-chat (non-thinking) and deepseek-reasoner (thinking)
 * prompts with it from 2025-12-01. This lays a prompt out as that encoder's
 * `encode_messages(messages, thinking_mode)` does, byte for byte (held to it
 * by scripts/reference-tokens, and to DeepSeek's bills by
 * test/agents-deepseek-v32.test.ts):
 *
 * - the beginning of sentence, then each message in order: a system message
 *   as its text, followed (on the first, which carries them) by the tools
 *   block; a user message between `<｜User｜>` and `<｜Assistant｜>`, then
 *   `</think>` (`<think>` for the last user message in thinking mode);
 * - an assistant message as its text, then its tool calls as a DSML
 *   `function_calls` block (each argument a `parameter`, strings as they are,
 *   other values as Python's `json.dumps` writes them), then the end of
 *   sentence; in thinking mode, one after the last user message opens with
 *   its reasoning (ctxsim keeps none) and `</think>`;
 * - the results of one round of calls inside one `<function_results>`
 *   block, each in `<result>`, then `</think>` (`<think>` in thinking mode
 *   after the last user message).
 *
 * The tools go with the first message when it is a system message, else
 * with an empty system message put first (as inference engines that serve
 * the model do). What the encoder refuses (a tool result with no call
 * before it, arguments that are not a JSON object, an assistant message
 * after the last user message in thinking mode with neither reasoning nor
 * calls) throws here too.
 */
export function renderDeepSeekV32(messages: readonly TemplateMessage[], tools: readonly TemplateTool[] | undefined, thinking: boolean): string {
  const list = messages.slice();
  let toolsAt = -1;
  if (tools?.length) {
    if (list[0]?.role !== 'system') list.unshift({ role: 'system', content: '' });
    toolsAt = 0;
  }
  let lastUser = -1;
  for (let i = list.length - 1; i >= 0; i--) {
    if (list[i]!.role === 'user') {
      lastUser = i;
      break;
    }
  }
  let out = BOS;
  for (let i = 0; i < list.length; i++) {
    const m = list[i]!;
    switch (m.role) {
      case 'system':
        out += m.content ?? '';
        if (i === toolsAt) out += `\n\n${toolsBlock(tools!)}`;
        break;
      case 'user':
        out += `${USER}${m.content ?? 'None'}${ASSISTANT}${thinking && i === lastUser ? THINK : END_THINK}`;
        break;
      case 'tool':
        out += toolResult(list, i, thinking && i >= lastUser);
        break;
      case 'assistant': {
        const calls = m.tool_calls?.length ? callsBlock(m) : '';
        let reasoning = '';
        if (thinking && i > lastUser) {
          if (!calls) throw new Error(`DeepSeek-V3.2 (thinking): an assistant message after the last user message has neither reasoning nor tool calls (message ${i})`);
          reasoning = END_THINK;
        }
        out += `${reasoning}${m.content ?? ''}${calls}${EOS}`;
        break;
      }
      default:
        throw new Error(`DeepSeek-V3.2: unknown role ${m.role}`);
    }
  }
  return out;
}

/**
 * What a model writes for an assistant message, as DeepSeek bills its
 * output: its text and its tool calls as the encoder lays them out (in
 * thinking mode after the `</think>` that ends its reasoning), without the
 * end of sentence (the bills of deepseek-chat count one token less than the
 * message renders: the end of sentence is not billed).
 */
export function deepSeekV32Output(m: TemplateMessage, thinking: boolean): string {
  return `${thinking ? END_THINK : ''}${m.content ?? ''}${m.tool_calls?.length ? callsBlock(m) : ''}`;
}

/** The encoder's special strings (each one token of the model's tokenizer). */
const BOS = '<｜begin▁of▁sentence｜>';
const EOS = '<｜end▁of▁sentence｜>';
const USER = '<｜User｜>';
const ASSISTANT = '<｜Assistant｜>';
const THINK = '<think>';
const END_THINK = '</think>';
const DSML = '｜DSML｜';

/** The strings a rendered prompt is cut at: each is one token, and the tokenizer reads the texts between them apart. */
export const DEEPSEEK_V32_FRAMING: readonly string[] = [BOS, EOS, USER, ASSISTANT, THINK, END_THINK, DSML];

/** The results of one round: the block opens at its first result and closes at its last, followed by the think marker. */
function toolResult(list: readonly TemplateMessage[], i: number, think: boolean): string {
  let a = i - 1;
  while (a >= 0 && list[a]!.role === 'tool') a--;
  const calls = a >= 0 && list[a]!.role === 'assistant' ? (list[a]!.tool_calls?.length ?? 0) : 0;
  const order = i - a;
  if (order > calls) throw new Error(`DeepSeek-V3.2: a tool result (message ${i}) answers no tool call before it`);
  let out = order === 1 ? '\n\n<function_results>' : '';
  out += `\n<result>${list[i]!.content ?? 'None'}</result>`;
  if (order === calls) out += `\n</function_results>\n\n${think ? THINK : END_THINK}`;
  return out;
}

/** An assistant message's calls as the DSML block, made once per message (prompts resend it). */
function callsBlock(m: TemplateMessage): string {
  let block = blocks.get(m);
  if (block === undefined) {
    const invokes = m.tool_calls!.map((c) => {
      const args = c.function.arguments;
      const params = entriesOf(typeof args === 'string' ? parseJson(args) : fromValue(args)).map(
        ([k, v]) => `<${DSML}parameter name="${k}" string="${v.kind === 'string' ? 'true' : 'false'}">${v.kind === 'string' ? v.value : pythonJson(v)}</${DSML}parameter>`,
      );
      return `<${DSML}invoke name="${c.function.name}">\n${params.join('\n')}\n</${DSML}invoke>`;
    });
    blocks.set(m, (block = `\n\n<${DSML}function_calls>\n${invokes.join('\n')}\n</${DSML}function_calls>`));
  }
  return block;
}

const blocks = new WeakMap<TemplateMessage, string>();

/** The tools block of the system message: its instructions, then each tool's definition as Python's `json.dumps` writes it, one a line. */
function toolsBlock(tools: readonly TemplateTool[]): string {
  const schemas = tools.map((t) => pythonJson(fromValue(t.function))).join('\n');
  return TOOLS_BLOCK.replace('{schemas}', () => schemas);
}

/** The tools block's text; `{schemas}` is where the definitions go. */
const TOOLS_BLOCK = [
  '## Tools',
  '',
  "You have access to a set of tools you can use to answer the user's question.",
  `You can invoke functions by writing a "<${DSML}function_calls>" block like the following as part of your reply to the user:`,
  `<${DSML}function_calls>`,
  `<${DSML}invoke name="$FUNCTION_NAME">`,
  `<${DSML}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</${DSML}parameter>`,
  '...',
  `</${DSML}invoke>`,
  `<${DSML}invoke name="$FUNCTION_NAME2">`,
  '...',
  `</${DSML}invoke>`,
  `</${DSML}function_calls>`,
  '',
  'String and scalar parameters should be specified as is without any escaping or quotes, while lists and objects should use JSON format. The "string" attribute should be set to "true" for string type parameters and "false" for other types (numbers, booleans, arrays, objects).',
  '',
  'If the thinking_mode is enabled, then after function results you should strongly consider outputting a thinking block. Here is an example:',
  '',
  `<${DSML}function_calls>`,
  '...',
  `</${DSML}function_calls>`,
  '',
  '<function_results>',
  '...',
  '</function_results>',
  '',
  `${THINK}...thinking about results${END_THINK}`,
  '',
  'Here are the functions available in JSONSchema format:',
  '<functions>',
  '{schemas}',
  '</functions>',
  '',
].join('\n');

/**
 * A JSON value as Python's `json.loads` reads it: objects keep their keys in
 * order (a repeated key keeps its first place and its last value), numbers
 * keep their text (an integer stays an integer, `1.0` a float).
 */
type PyValue =
  | { kind: 'null' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'int'; text: string }
  | { kind: 'float'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'array'; items: PyValue[] }
  | { kind: 'object'; entries: [string, PyValue][] };

/** An object's entries; anything else is refused (the encoder iterates the arguments' items). */
function entriesOf(v: PyValue): [string, PyValue][] {
  if (v.kind !== 'object') throw new Error(`DeepSeek-V3.2: tool call arguments are not a JSON object`);
  return v.entries;
}

/** A JavaScript value (parsed already: tool definitions) as Python would hold it; integral numbers as integers. */
function fromValue(v: unknown): PyValue {
  if (v === null || v === undefined) return { kind: 'null' };
  if (typeof v === 'boolean') return { kind: 'bool', value: v };
  if (typeof v === 'number') return Number.isSafeInteger(v) && !Object.is(v, -0) ? { kind: 'int', text: String(v) } : { kind: 'float', value: v };
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (Array.isArray(v)) return { kind: 'array', items: v.map(fromValue) };
  if (typeof v === 'object') return { kind: 'object', entries: Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).map(([k, x]) => [k, fromValue(x)]) };
  return { kind: 'string', value: String(v) };
}

/** Python's `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` between items, floats as Python's repr. */
function pythonJson(v: PyValue): string {
  switch (v.kind) {
    case 'null':
      return 'null';
    case 'bool':
      return v.value ? 'true' : 'false';
    case 'int':
      return v.text;
    case 'float':
      return pythonFloat(v.value);
    case 'string':
      return JSON.stringify(v.value);
    case 'array':
      return `[${v.items.map(pythonJson).join(', ')}]`;
    case 'object':
      return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}: ${pythonJson(x)}`).join(', ')}}`;
  }
}

/** Python's `repr` of a float as `json.dumps` writes it: the shortest digits that read back, fixed from 1e-4 to below 1e16, else `1e+16`, `1.5e-05`. */
function pythonFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const [mantissa, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const e = Number(exp);
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  const int = digits.slice(0, e + 1).padEnd(e + 1, '0');
  const frac = digits.slice(e + 1);
  return `${sign}${int}.${frac || '0'}`;
}

/**
 * Reads JSON text as Python's `json.loads` does (its NaN and Infinity
 * included); throws on what it refuses.
 */
function parseJson(text: string): PyValue {
  let at = 0;
  const fail = (): never => {
    throw new Error(`DeepSeek-V3.2: tool call arguments are not JSON (at character ${at})`);
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const value = (): PyValue => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      const entries: [string, PyValue][] = [];
      const index = new Map<string, number>();
      space();
      if (text[at] === '}') {
        at++;
        return { kind: 'object', entries };
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        const key = string();
        space();
        if (text[at++] !== ':') fail();
        const v = value();
        const seen = index.get(key);
        if (seen === undefined) {
          index.set(key, entries.length);
          entries.push([key, v]);
        } else entries[seen] = [key, v];
        space();
        const d = text[at++];
        if (d === '}') return { kind: 'object', entries };
        if (d !== ',') fail();
      }
    }
    if (c === '[') {
      at++;
      const items: PyValue[] = [];
      space();
      if (text[at] === ']') {
        at++;
        return { kind: 'array', items };
      }
      for (;;) {
        items.push(value());
        space();
        const d = text[at++];
        if (d === ']') return { kind: 'array', items };
        if (d !== ',') fail();
      }
    }
    if (c === '"') return { kind: 'string', value: string() };
    for (const [word, v] of WORDS) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return v;
      }
    }
    const m = NUMBER.exec(text.slice(at, at + 1024));
    if (!m) return fail();
    at += m[0].length;
    if (m[2] === undefined && m[3] === undefined) return { kind: 'int', text: m[1] === '-0' ? '0' : m[1]! };
    return { kind: 'float', value: Number(m[0]) };
  };
  const string = (): string => {
    // From the opening quote: JSON.parse reads the escapes as Python does (a lone surrogate escape included).
    const start = at;
    at++;
    for (;;) {
      const c = text[at];
      if (c === undefined || c < ' ') fail();
      if (c === '"') break;
      at += c === '\\' ? 2 : 1;
    }
    at++;
    try {
      return JSON.parse(text.slice(start, at)) as string;
    } catch {
      return fail();
    }
  };
  const v = value();
  space();
  if (at !== text.length) fail();
  return v;
}

const WORDS: [string, PyValue][] = [
  ['null', { kind: 'null' }],
  ['true', { kind: 'bool', value: true }],
  ['false', { kind: 'bool', value: false }],
  ['NaN', { kind: 'float', value: NaN }],
  ['Infinity', { kind: 'float', value: Infinity }],
  ['-Infinity', { kind: 'float', value: -Infinity }],
];

/** A JSON number: its integer part, fraction and exponent. */
const NUMBER = /^(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?/;
