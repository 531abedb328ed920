import { getEncoding, type Tiktoken } from 'js-tiktoken';
import { UsageError } from '../errors.js';

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

export interface ResolvedEncoding {
  name: EncodingName;
  /** True when the model is not an OpenAI model, so counts are an estimate. */
  estimate: boolean;
}

/** Picks the encoding for a model: gpt-4o*, gpt-4.1*, o-series → o200k; gpt-4, gpt-3.5 → cl100k. */
export function encodingForModel(model: string, tokenizer = 'auto'): ResolvedEncoding {
  if (tokenizer !== 'auto') {
    if (!(ENCODINGS as readonly string[]).includes(tokenizer)) {
      throw new UsageError(`tokenizer: unknown tokenizer "${tokenizer}" (expected auto|${ENCODINGS.join('|')})`);
    }
    return { name: tokenizer as EncodingName, estimate: false };
  }
  const m = model.replace(/^openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o\d)/.test(m)) return { name: 'o200k_base', estimate: false };
  if (/^(gpt-4|gpt-3\.5)/.test(m)) return { name: 'cl100k_base', estimate: false };
  return { name: 'o200k_base', estimate: true };
}

/** Counts the tokens of one text; never throws on special-token strings. */
export type TextCounter = (text: string) => number;

const loaded = new Map<EncodingName, Tiktoken>();

/** The raw counter of an encoding (no memo): `chars4` is max(1, floor(len/4)). */
export function textCounter(name: EncodingName): TextCounter {
  if (name === 'chars4') return (text) => Math.max(1, Math.floor(text.length / 4));
  let enc = loaded.get(name);
  if (!enc) {
    enc = getEncoding(name);
    loaded.set(name, enc);
  }
  const e = enc;
  // Special tokens are ordinary text here: allow none, disallow none.
  return (text) => e.encode(text, [], []).length;
}

export function overheadFor(name: EncodingName): Overhead {
  return name === 'chars4' ? NO_OVERHEAD : OPENAI_OVERHEAD;
}
