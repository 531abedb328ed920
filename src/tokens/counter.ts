import type { Message } from '../types.js';
import { UsageError } from '../errors.js';
import type { TokenCount } from './bounded.js';
import { cacheKey, TokenCache } from './token-cache.js';
import { KeyTable } from './keys.js';
import { chatTokenizer, chatTokenizerId, type ChatTokenizer } from './chat-template.js';
import { counterId, isOpenWeight, overheadFor, textMeasure, TOKENIZERS, type EncodingName, type Overhead, type TextCounter, type TextMeasure, type TokenizerName } from './encoding.js';
import type { OpenWeightName } from './open-weights.js';
import { sharedPrefix } from './resume.js';
import { TemplatePrompts } from './templated.js';

/** `head` and `parts` joined by single spaces (`joined`'s text): one join makes a flat string, where a template would make a rope that the first reader of the text copies again. */
export function joinedText(head: string, parts: readonly string[]): string {
  return parts.length ? [head].concat(parts).join(' ') : head;
}

/** The text of a message that is tokenized: content, then each tool call's name and JSON arguments. */
export function messageText(m: Message): string {
  if (!m.toolCalls?.length) return m.content;
  const calls = m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join('\n');
  return m.content ? `${m.content}\n${calls}` : calls;
}

/**
 * Counts tokens once: every distinct text goes through the tokenizer a single
 * time per run (and not at all when the token cache has it); message and
 * prompt counts are sums of cached text counts.
 *
 * Texts are remembered by content only for the scenario being replayed; the
 * run remembers each counted text by its key (the first 128 bits of its
 * SHA-256, as the token cache does), not the text itself, so a text met
 * again in a later scenario is not tokenized again, and memory does not grow
 * with every text of the study.
 */
export class TokenCounter {
  /** Texts of the scenario being replayed, and the counts per message object (see `forgetScenario`). */
  private texts = new Map<string, number>();
  private spaced = new Map<string, number>();
  /** For `joined`: a part's tokens after a space, or −1 when the part cannot be summed (white space at an edge, an estimate). */
  private joinable = new Map<string, number>();
  private messageMemo = new WeakMap<Message, number>();
  private outputMemo = new WeakMap<Message, number>();
  /** Every text counted in the run, by key: its count, an estimate stored as −1 − tokens. */
  private readonly runIndex = new KeyTable();
  /** Texts whose count is an estimate (see bounded.ts); almost always empty. */
  private readonly estimatedTexts = new Set<string>();
  /** How many texts went through the tokenizer (not served by the memo or the token cache). */
  tokenizerCalls = 0;
  /** How many texts the token cache served. */
  tokenCacheHits = 0;

  private readonly raw: TextMeasure | TextCounter;
  /** For an open-weight tokenizer: its name, the tokenizer being loaded on the first count (see `template`). */
  private readonly openWeight: OpenWeightName | undefined;
  private loadedChat: ChatTokenizer | undefined;
  private prompts: TemplatePrompts | undefined;
  /** Whether a text's count is the sum of its space-separated parts' (see `joined`). */
  private readonly splitsAtSpaces: boolean;
  /** The overhead when it is not the template's: given, OpenAI's rule, or none. */
  private readonly fixedOverhead: Overhead | undefined;

  /**
   * Counts with `encoding`'s tokenizer (and, for an open-weight one, its chat
   * template) unless `raw` and `overhead` are given. An open-weight
   * tokenizer's packages are checked here (installed, at the pinned
   * version), but its files are loaded on the first count, so a run that
   * counts nothing (every unit from the replay cache) never loads them.
   */
  constructor(
    readonly encoding: TokenizerName,
    overhead?: Overhead,
    raw?: TextMeasure | TextCounter,
    /** The persistent cache to read counts from and add new ones to. */
    readonly tokenCache?: TokenCache,
    /** Multiplies every text's count (rounded per text): a team's measured correction of a stand-in tokenizer. */
    readonly factor = 1,
  ) {
    this.openWeight = isOpenWeight(encoding) ? encoding : undefined;
    const base = tokenizerId(encoding);
    this.raw = raw ?? (this.openWeight ? (text) => this.chat().measure(text) : textMeasure(encoding as EncodingName));
    this.splitsAtSpaces = raw === undefined && factor === 1 && (encoding === 'o200k_base' || encoding === 'cl100k_base');
    this.fixedOverhead = overhead ?? (this.openWeight ? undefined : overheadFor(encoding as EncodingName));
    // An overhead given by hand is part of what counts depend on; otherwise the tokenizer (and its template) decides it.
    const given = overhead ? ` overhead:${overhead.perMessage}/${overhead.perName}/${overhead.replyPriming}` : '';
    this.id = `${base}${factor === 1 ? '' : ` ×${factor}`}${given}`;
  }

  /** What its counts depend on: the tokenizer, its files and libraries (the token cache's counter id), the factor, and an overhead given by hand. */
  readonly id: string;

  /** Per-message chat overhead: OpenAI's rule, none for `chars4`, or measured on the chat template (which loads it). */
  get overhead(): Overhead {
    return this.fixedOverhead ?? this.template!.overhead;
  }

  /** For an open-weight tokenizer: its chat template, which lays out (and so counts) each prompt; loaded on first use. */
  get template(): TemplatePrompts | undefined {
    if (!this.openWeight) return undefined;
    // Measuring the overhead counts a few texts through `text`, as any other.
    return (this.prompts ??= new TemplatePrompts(this.chat(), (t) => this.text(t)));
  }

  /** The open-weight tokenizer, loaded (once per process) when first needed. */
  private chat(): ChatTokenizer {
    return (this.loadedChat ??= chatTokenizer(this.openWeight!));
  }

  /** Tokens of a text, without chat overhead. */
  text(text: string): number {
    const n = this.texts.get(text);
    return n === undefined ? this.first(text) : n;
  }

  /** A text not seen in this scenario: from the run's index, the token cache, or the tokenizer. */
  private first(text: string): number {
    const key = cacheKey(text);
    const v = this.runIndex.get(key);
    let c: TokenCount | undefined;
    if (v !== undefined) c = v < 0 ? { tokens: -1 - v, estimated: true } : { tokens: v, estimated: false };
    else {
      c = this.tokenCache?.get(key);
      if (c) this.tokenCacheHits++;
      else {
        this.tokenizerCalls++;
        const r = this.raw(text);
        c = typeof r === 'number' ? { tokens: r, estimated: false } : r;
        this.tokenCache?.put(key, c);
      }
      this.runIndex.set(key, c.estimated ? -1 - c.tokens : c.tokens);
    }
    const n = this.factor === 1 ? c.tokens : Math.round(c.tokens * this.factor);
    this.texts.set(text, n);
    if (c.estimated) this.estimatedTexts.add(text);
    return n;
  }

  /**
   * Tokens of `' ' + text`: a sentence as it continues a longer text (a
   * summary is laid out by summing its sentences' counts). Remembered by the
   * sentence itself, so one weighed at every summarization is not joined to
   * its space and looked up again each time.
   */
  afterSpace(text: string): number {
    let n = this.spaced.get(text);
    if (n === undefined) this.spaced.set(text, (n = this.text(` ${text}`)));
    return n;
  }

  /**
   * `head` and `parts` joined by single spaces, and its tokens as `text`
   * would count it (a fact sheet, a summary: rewritten each turn from
   * mostly the same sentences). Under OpenAI's encodings, whose
   * pre-tokenizer always cuts before a space that follows a non-space (no
   * piece spans it, and no look-ahead reads past it), that count is the sum
   * of `head`'s and each part's `afterSpace`: the sum is taken, and the text
   * remembered with it, so a prompt that sends this very text tokenizes
   * nothing. Otherwise (an open-weight tokenizer, `chars4`, a factor, a part
   * that begins or ends with white space or whose count is an estimate) the
   * joined text is counted.
   */
  joined(head: string, parts: readonly string[]): { text: string; tokens: number } {
    const text = joinedText(head, parts);
    const sum = this.sumOf(head, parts);
    if (sum === undefined) return { text, tokens: this.text(text) };
    this.texts.set(text, sum);
    return { text, tokens: sum };
  }

  /** The tokens of `joined`'s text, for a text no prompt sends (a model's answer): where they are the sum of its parts', the text is not made. */
  joinedTokens(head: string, parts: readonly string[]): number {
    return this.sumOf(head, parts) ?? this.text(joinedText(head, parts));
  }

  /** The tokens of `joined`'s text as the sum of its parts', when that is its count; remembered with the text. */
  private sumOf(head: string, parts: readonly string[]): number | undefined {
    if (!this.splitsAtSpaces || !trimmed(head)) return undefined;
    let n = this.text(head);
    if (this.estimatedTexts.has(head)) return undefined;
    for (const part of parts) {
      let c = this.joinable.get(part);
      if (c === undefined) {
        c = trimmed(part) ? this.afterSpace(part) : -1;
        if (this.estimatedTexts.has(` ${part}`)) c = -1;
        this.joinable.set(part, c);
      }
      if (c < 0) return undefined;
      n += c;
    }
    return n;
  }

  /** Tokens of a message in a prompt: overhead + role + text (+ name + 1). */
  message(m: Message): number {
    let n = this.messageMemo.get(m);
    if (n === undefined) this.messageMemo.set(m, (n = this.framed(m, this.text(messageText(m)))));
    return n;
  }

  /**
   * `m`, a message whose text's tokens are known to be `textTokens` (its
   * content is a `joinedTokens` text): `message` counts it without looking
   * the text up (a fact sheet, rewritten each turn, is not read again to be
   * sent).
   */
  counted<M extends Message>(m: M, textTokens: number): M {
    this.messageMemo.set(m, this.framed(m, textTokens));
    return m;
  }

  /** A message's tokens in a prompt, from its text's: + overhead + role (+ name + 1). */
  private framed(m: Message, textTokens: number): number {
    const o = this.overhead;
    let n = textTokens;
    if (o.perMessage) n += o.perMessage + this.text(m.role);
    if (m.name !== undefined && o.perName) n += this.text(m.name) + o.perName;
    return n;
  }

  /**
   * Drops what only the last scenario needed: its texts and per-message
   * counts (the run still knows every count by key), so memory stays the
   * size of one conversation instead of growing with the run.
   */
  forgetScenario(): void {
    this.prompts?.forgetScenario();
    this.texts = new Map();
    this.spaced = new Map();
    this.joinable = new Map();
    this.messageMemo = new WeakMap();
    this.outputMemo = new WeakMap();
  }

  /** Tokens a model writes for a message: its text alone (with its calls); under a format that says how output is billed (DeepSeek-V3.2), as it lays it out. */
  output(m: Message): number {
    let n = this.outputMemo.get(m);
    if (n === undefined) this.outputMemo.set(m, (n = (this.openWeight && this.template!.outputTokens(m)) ?? this.text(messageText(m))));
    return n;
  }

  /** Tokens of a whole prompt: its messages plus reply priming. */
  prompt(messages: readonly Message[]): number {
    let n = this.overhead.replyPriming;
    for (const m of messages) n += this.message(m);
    return n;
  }

  /**
   * Tokens every model call of a conversation sends besides its messages
   * (the tool definitions offered, a log's unlogged prefix): none here. The
   * counter a policy session is given carries its conversation's (see
   * `sessionTokens` in policies), which its budgets and thresholds count as
   * part of every prompt, as the provider does.
   */
  get carried(): number {
    return 0;
  }

  /**
   * This counter for the prompts of one conversation, whose every call
   * carries `carried` tokens besides its messages: the same counter for
   * everything else — its memos, token cache, tokenizer, template and
   * statistics (it reads and writes this one's) — with `carried` its own.
   * This counter itself when it carries as much already.
   */
  carrying(carried: number): TokenCounter {
    if (carried === this.carried) return this;
    const shared = (key: 'tokenizerCalls' | 'tokenCacheHits') => ({ get: () => this[key], set: (v: number) => (this[key] = v) });
    // A view that reads this counter's memos through its prototype; what a count writes goes to this counter, not to the
    // view: its statistics, and the template it loads once.
    return Object.create(this, {
      carried: { value: carried },
      tokenizerCalls: shared('tokenizerCalls'),
      tokenCacheHits: shared('tokenCacheHits'),
      template: { get: () => this.template },
    }) as TokenCounter;
  }

  /** Whether any count so far was an estimate. */
  get anyEstimated(): boolean {
    return this.estimatedTexts.size > 0;
  }

  /** Whether a counted message's tokens are an estimate (its text or name was too costly to count exactly). */
  estimated(m: Message): boolean {
    if (!this.estimatedTexts.size) return false;
    return this.estimatedTexts.has(messageText(m)) || (m.name !== undefined && this.estimatedTexts.has(m.name));
  }

  /** Whether any of the messages' counts is an estimate. */
  estimatedIn(messages: readonly Message[]): boolean {
    return this.estimatedTexts.size > 0 && messages.some((m) => this.estimated(m));
  }

  /** Distinct texts counted so far in the run. */
  get distinct(): number {
    return this.runIndex.size;
  }

  /** Problems with the token cache so far (load and save), one line each. */
  get warnings(): readonly string[] {
    return this.tokenCache?.warnings ?? [];
  }

  /** Saves new counts to the token cache (if any); returns this save's warnings. */
  save(): string[] {
    return this.tokenCache?.save() ?? [];
  }
}

/**
 * Tokens of the successive prompts of one session. A prompt that starts with
 * messages of the previous one (the same objects, as a growing transcript
 * sends them) reuses their running sums, and so does a run of them further
 * on (a sliding window's): only the messages new to the prompt are looked
 * up. Equal to `TokenCounter.prompt`, without walking the whole history each
 * call. Prompts must not change after they are counted (PromptPlan says so).
 */
export class PromptTokens {
  private last: readonly Message[] = [];
  /** sums[i] = tokens of the last prompt's first i messages (the list only grows, so it is not reallocated each call). */
  private readonly sums: number[] = [0];

  constructor(private readonly tokens: TokenCounter) {}

  count(messages: readonly Message[]): number {
    const last = this.last;
    // The same prompt again (counted by a check, then by the run): its sum is known.
    if (messages === last) return this.tokens.overhead.replyPriming + this.sums[messages.length]!;
    let i = sharedPrefix(messages, last);
    const sums = this.sums;
    // Entries past the prompt's end are stale, never read: writing by index keeps the list from shrinking.
    // The messages after the shared prefix may be a run of the last prompt's further on (a window slid past its oldest messages):
    // their sums are differences of its running sums, rewritten in place (each read lies ahead of the writes so far).
    const j = i < messages.length ? last.indexOf(messages[i]!, i + 1) : -1;
    if (j > i) {
      const from = sums[i]! - sums[j]!;
      for (let k = j; k < last.length && i < messages.length && messages[i] === last[k]; k++, i++) sums[i + 1] = sums[k + 1]! + from;
    }
    for (; i < messages.length; i++) sums[i + 1] = sums[i]! + this.tokens.message(messages[i]!);
    this.last = messages;
    return this.tokens.overhead.replyPriming + sums[messages.length]!;
  }
}

/**
 * A counter for a run: with the persistent token cache in `dir` loaded (none
 * for `chars4`, which costs nothing to count, or when `dir` is omitted or
 * false). An open-weight tokenizer's packages are checked here; its files
 * are loaded on the first count.
 */
export function openTokenCounter(name: TokenizerName, dir?: string | false, factor = 1): TokenCounter {
  if (!TOKENIZERS.includes(name)) {
    throw new UsageError(`openTokenCounter: ${JSON.stringify(name)} is not a tokenizer (${TOKENIZERS.join(', ')}); encodingForModel(model, tokenizer).name is one`);
  }
  const tokenCache = dir && name !== 'chars4' ? TokenCache.open(dir, tokenizerId(name)) : undefined;
  return new TokenCounter(name, undefined, undefined, tokenCache, factor);
}

/** What a tokenizer's counts depend on (the token cache's counter id): its encoding, or an open-weight tokenizer's packages, files and libraries (checked installed, not loaded). */
function tokenizerId(name: TokenizerName): string {
  return isOpenWeight(name) ? chatTokenizerId(name) : counterId(name);
}

/** Whether a text is non-empty and neither begins nor ends with white space. */
function trimmed(text: string): boolean {
  return text.length > 0 && !/\s/.test(text[0]!) && !/\s/.test(text[text.length - 1]!);
}
