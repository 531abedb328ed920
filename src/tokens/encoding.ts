import type { TiktokenBPE } from 'js-tiktoken/lite';
import { createRequire } from 'node:module';
import { UsageError } from '../errors.js';
import { packageVersion } from '../process.js';
import { BoundedCounter, type TokenCount, type Tokenizer } from './bounded.js';
import { OPEN_WEIGHT_NAMES, type OpenWeightName } from './open-weights.js';
import { loadTiktoken } from './ranks.js';
import { REFERENCE_UNICODE, runtimeUnicode, unicodeUnsure } from './unicode.js';

export type EncodingName = 'o200k_base' | 'cl100k_base' | 'chars4';
export const ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base', 'chars4'];

/** Chat overhead in tokens (OpenAI's published rule); all zero for `chars4`. */
export interface Overhead {
  perMessage: number;
  perName: number;
  replyPriming: number;
}

export const OPENAI_OVERHEAD: Overhead = { perMessage: 3, perName: 1, replyPriming: 3 };
export const NO_OVERHEAD: Overhead = { perMessage: 0, perName: 0, replyPriming: 0 };

/** A tokenizer ctxsim counts with: an OpenAI encoding (with OpenAI's per-message rule), `chars4`, or an open-weight model's tokenizer with its chat template. */
export type TokenizerName = EncodingName | OpenWeightName;
export const TOKENIZERS: readonly TokenizerName[] = [...ENCODINGS, ...OPEN_WEIGHT_NAMES];

export function isOpenWeight(name: TokenizerName): name is OpenWeightName {
  return (OPEN_WEIGHT_NAMES as readonly string[]).includes(name);
}

export interface ResolvedEncoding {
  name: TokenizerName;
  /** True when the tokenizer stands in for the model's own (not published, or a variant whose template differs), so counts are an estimate. */
  estimate: boolean;
  /** The study's `tokenFactor` for the model, when not 1: every text's count is multiplied by it. */
  factor?: number;
}

/**
 * Open-weight models by name, wherever a provider hosts them
 * (`together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo`,
 * `bedrock/meta.llama3-1-70b-instruct-v1:0`, `groq/qwen-2.5-32b`,
 * `ollama/gemma3:12b`): the first rule that matches names the tokenizer;
 * `estimate` when the model is a variant whose template is not the
 * family's (counted with the family's, an estimate).
 */
const OPEN_WEIGHT_RULES: readonly { test: RegExp; name: OpenWeightName; estimate?: true }[] = [
  { test: /llama[-_.]?3[-_.]?[123](?!\d)/, name: 'llama3.1' },
  { test: /llama[-_.]?3(?!\d)/, name: 'llama3' },
  { test: /qwen[-_]?2[.p]?5(?!\d)/, name: 'qwen2.5' },
  { test: /qwen[-_]?3(?![\d.])(?!.*(2507|coder|next|-vl|max))/, name: 'qwen3' },
  { test: /qwen/, name: 'qwen3', estimate: true },
  { test: /gemma[-_]?3(?![\dn])/, name: 'gemma3' },
  // DeepSeek-V3.2 wherever it is hosted (thinking off unless the name says so); V3.2-Exp's format is not V3.2's.
  { test: /deepseek[-_./]?v3[-_.]2[-_.]?exp/, name: 'deepseek-v3.2', estimate: true },
  { test: /deepseek[-_./]?v3[-_.]2(?!\d).*(thinking|speciale)/, name: 'deepseek-v3.2-thinking' },
  { test: /deepseek[-_./]?v3[-_.]2(?!\d)/, name: 'deepseek-v3.2' },
  // Other hosts' deepseek-chat (OpenRouter's is DeepSeek V3) and deepseek-reasoner (R1).
  { test: /deepseek[-_./]?(v3(?![.\d])|v3-0324|chat)/, name: 'deepseek-v3' },
  { test: /deepseek[-_./]?(v3|r1|reasoner)/, name: 'deepseek-v3', estimate: true },
  { test: /mistral-nemo|open-mistral-nemo/, name: 'mistral-nemo' },
  // Mistral's v3 SentencePiece tokenizer, by mistral_common's table of models and endpoints: Mistral 7B Instruct v0.3 (its
  // endpoint open-mistral-7b, Fireworks' mistral-7b-instruct-v3), Mixtral 8x22B Instruct (open-mixtral-8x22b; the base Mixtral-8x22B-v0.1 has v1's 32,000 ids),
  // Codestral 22B (codestral-22b, codestral-2405), Codestral Mamba, Mathstral, Mistral Large 2407. Not v3: Mistral 7B v0.1/v0.2
  // and Mixtral 8x7B (v1), mistral-small-2402 and mistral-large-2402 (v2), NeMo (tekken), and the `-latest` aliases, which
  // now name later models with other tokenizers (codestral-latest is Codestral 25.x, mistral-large-latest Large 2411 and later).
  { test: /mistral[-_.]?7b[-_.]?(instruct[-_.]?)?v(0[._p]?)?3(?!\d)|(^|\/)open-mistral-7b$/, name: 'mistral-v3' },
  { test: /mixtral[-_.]?8x22b[-_.]?(instruct|v0[._]?3(?!\d))|open-mixtral-8x22b/, name: 'mistral-v3' },
  { test: /codestral[-_.]?(22b|2405)(?!\d)|codestral[-_.]?mamba|mamba[-_.]?codestral|mathstral/, name: 'mistral-v3' },
  { test: /mistral[-_.]?large[-_.]?(instruct[-_.]?)?2407/, name: 'mistral-v3' },
];

/**
 * What DeepSeek's own API names (`deepseek-chat`, non-thinking, and
 * `deepseek-reasoner`, thinking) served when, by DeepSeek's change log
 * (api-docs.deepseek.com/updates): DeepSeek-V3 (the chat) and R1 until
 * 2025-08-21; V3.1, V3.1-Terminus and V3.2-Exp, whose formats ctxsim does
 * not carry, until 2025-12-01; DeepSeek-V3.2 from then; DeepSeek-V4-Flash
 * (another tokenizer and format) from DeepSeek's V4 release on 2026-04-24.
 * A transcript's date picks the row; without one, V3.2 (the latest format
 * ctxsim carries).
 */
const DEEPSEEK_API: readonly { until: string; chat: ResolvedEncoding; reasoner: ResolvedEncoding }[] = [
  { until: '2025-08-21', chat: { name: 'deepseek-v3', estimate: false }, reasoner: { name: 'deepseek-v3', estimate: true } },
  { until: '2025-12-01', chat: { name: 'deepseek-v3', estimate: true }, reasoner: { name: 'deepseek-v3', estimate: true } },
  { until: '2026-04-24', chat: { name: 'deepseek-v3.2', estimate: false }, reasoner: { name: 'deepseek-v3.2-thinking', estimate: false } },
  { until: '9999-12-31', chat: { name: 'deepseek-v3.2', estimate: true }, reasoner: { name: 'deepseek-v3.2-thinking', estimate: true } },
];

/** The tokenizer of DeepSeek's API name (`deepseek-chat`, `deepseek/deepseek-reasoner`: its own, not another host's) on a date (an ISO date or time; none: the latest format ctxsim carries); undefined for other names. */
function deepSeekApi(model: string, recorded: string | undefined): ResolvedEncoding | undefined {
  const m = /^(?:deepseek\/)?deepseek-(chat|reasoner)$/.exec(model);
  if (!m) return undefined;
  const row = recorded === undefined ? DEEPSEEK_API[2]! : DEEPSEEK_API.find((r) => recorded.slice(0, 10) < r.until)!;
  return m[1] === 'chat' ? row.chat : row.reasoner;
}

/** Variants of an open-weight family whose tokenizer or template differs from the family's: counted as other models are (o200k_base, an estimate). */
const NOT_OPEN_WEIGHT = /distill|hermes|guard|llama[-_.]?4|codellama|-vl-|vision/;

/** A study's correction of token counts: one number for every model counted with a stand-in, or a factor by model. */
export type TokenFactor = number | Readonly<Record<string, number>>;

/**
 * Picks the tokenizer for a model: gpt-4o*, gpt-4.1*, gpt-5*, o-series →
 * o200k_base; gpt-4, gpt-3.5 → cl100k_base; DeepSeek's API names → what
 * they served on the date `recorded` (a transcript's, see DEEPSEEK_API); an
 * open-weight family (OPEN_WEIGHT_RULES) → its tokenizer and template;
 * anything else o200k_base as an estimate. `tokenizer` (not `auto`)
 * overrides, exact. With `tokenFactor`, the model's factor: its own, else the
 * number when its counts are an estimate.
 */
export function encodingForModel(model: string, tokenizer = 'auto', tokenFactor?: TokenFactor, recorded?: string): ResolvedEncoding {
  const e = tokenizerForModel(model, tokenizer, recorded);
  const factor = typeof tokenFactor === 'number' ? (e.estimate ? tokenFactor : 1) : (tokenFactor?.[model] ?? 1);
  if (!(Number.isFinite(factor) && factor > 0)) throw new UsageError(`tokenFactor for ${model}: ${factor} is not a positive number`);
  return factor === 1 ? e : { ...e, factor };
}

function tokenizerForModel(model: string, tokenizer: string, recorded: string | undefined): ResolvedEncoding {
  if (tokenizer !== 'auto') {
    if (!(TOKENIZERS as readonly string[]).includes(tokenizer)) {
      throw new UsageError(`tokenizer: unknown tokenizer "${tokenizer}" (expected auto|${TOKENIZERS.join('|')})`);
    }
    return { name: tokenizer as TokenizerName, estimate: false };
  }
  const m = model.replace(/^openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o\d)/.test(m)) return { name: 'o200k_base', estimate: false };
  if (/^(gpt-4|gpt-3\.5)/.test(m)) return { name: 'cl100k_base', estimate: false };
  const lower = model.toLowerCase();
  const api = deepSeekApi(lower, recorded);
  if (api) return { ...api };
  if (!NOT_OPEN_WEIGHT.test(lower)) {
    const rule = OPEN_WEIGHT_RULES.find((r) => r.test.test(lower));
    if (rule) return { name: rule.name, estimate: rule.estimate ?? false };
  }
  return { name: 'o200k_base', estimate: true };
}

/** Counts the tokens of one text; never throws on special-token strings. */
export type TextCounter = (text: string) => number;

/** Counts the tokens of one text in bounded time, saying whether the count is an estimate. */
export type TextMeasure = (text: string) => TokenCount;

const requireCjs = createRequire(import.meta.url);

const tokenizers = new Map<EncodingName, Tokenizer>();

/** Loads an encoding's BPE ranks (about 0.4 s; once per process) and returns its unbounded tokenizer. */
export function tokenizer(name: Exclude<EncodingName, 'chars4'>): Tokenizer {
  let t = tokenizers.get(name);
  if (!t) {
    const ranks = requireCjs(`js-tiktoken/ranks/${name}`) as TiktokenBPE;
    const enc = loadTiktoken(ranks);
    // Special tokens are ordinary text here: allow none, disallow none.
    t = { encodeLength: (text) => enc.encode(text, [], []).length, pattern: ranks.pat_str };
    tokenizers.set(name, t);
  }
  return t;
}

const measures = new Map<EncodingName, TextMeasure>();

/**
 * The bounded counter of an encoding (no memo of whole texts; one per process
 * and encoding, so its pieces are shared by every run). The BPE ranks are
 * loaded on the first text, not before, so a run served from the token cache
 * never loads them. `chars4` is max(1, floor(len/4)). A text holding a code
 * point that OpenAI's tiktoken may class differently (its regex tables are of
 * another Unicode version than the runtime's; see unicode.ts) is counted the
 * same way and flagged as an estimate.
 */
export function textMeasure(name: EncodingName): TextMeasure {
  if (name === 'chars4') return (text) => ({ tokens: Math.max(1, Math.floor(text.length / 4)), estimated: false });
  let m = measures.get(name);
  if (!m) {
    const bounded = new BoundedCounter(() => tokenizer(name));
    m = (text) => {
      const c = bounded.count(text);
      return c.estimated || !unicodeUnsure(text) ? c : { tokens: c.tokens, estimated: true };
    };
    measures.set(name, m);
  }
  return m;
}

/** The raw counter of an encoding (no memo): the token count of `textMeasure`. */
export function textCounter(name: EncodingName): TextCounter {
  if (!ENCODINGS.includes(name)) {
    throw new UsageError(`textCounter: ${JSON.stringify(name)} is not an OpenAI encoding (${ENCODINGS.join(', ')}): count an open-weight tokenizer with openTokenCounter(name)`);
  }
  const m = textMeasure(name);
  return (text) => m(text).tokens;
}

/**
 * What produced a count, for the token cache: the encoding, the tokenizer
 * library's version, the long-input method's version, and the runtime's and
 * the reference's Unicode versions (which texts are flagged depends on
 * both). Counts from another counter are not reused.
 */
export function counterId(name: EncodingName): string {
  return `${name} js-tiktoken@${packageVersion('js-tiktoken')} bounded@${BOUNDED_VERSION} unicode@${runtimeUnicode()} reference-unicode@${REFERENCE_UNICODE}`;
}

/** Bump when `bounded.ts` changes how estimates are made. */
export const BOUNDED_VERSION = 1;


export function overheadFor(name: EncodingName): Overhead {
  return name === 'chars4' ? NO_OVERHEAD : OPENAI_OVERHEAD;
}
