/**
 * Which prompt-caching rule a model follows, chosen from its price entry.
 *
 * - `explicit` (Anthropic-style breakpoints): Claude models served by
 *   Anthropic, Bedrock or Vertex AI, and any Claude entry that lists a cache
 *   price. Minimum cacheable prefix per model (see `explicitMinTokens`).
 * - `automatic` (OpenAI-style prefix caching): every other model whose entry
 *   has a `cache_read_input_token_cost` (OpenAI, Azure, DeepSeek, Gemini, xAI…):
 *   prefixes of 1024 tokens or more in 128-token steps, except on DeepSeek's
 *   own API, which caches in 64-token units from 64 tokens and keeps what the
 *   model wrote as well as the prompt (its context-caching guide: a unit ends
 *   at the end of the user input and another at the end of the model output;
 *   every cache hit its bills record is a multiple of 64).
 * - `none`: everything else (e.g. gpt-3.5-turbo, embedding models).
 *
 * `ready` (automatic rules): seconds before what a call wrote can be read.
 * DeepSeek's cache is on disk and best-effort: its guide says a hit needs the
 * prefix "persisted" first, and gives no time; DeepSeek's bills show one.
 * In the mini-swe-agent session of docs/agents.md (deepseek-chat, 2026-04),
 * every call sent 1.8 s or more after the previous reply read that reply
 * whole (122 of 123); in another such session, calls sent about 0.5 s after
 * the previous reply often read an older, shorter prefix. So a unit becomes
 * readable between 0.5 and 1.8 s after it is written: ctxsim takes 1 s.
 * OpenAI's and Anthropic's caches are read at once (no figure published,
 * none seen in bills).
 */
export type CacheRule =
  | { kind: 'none' }
  | { kind: 'automatic'; minTokens: number; step: number; output?: true; ready?: number }
  | { kind: 'explicit'; minTokens: number };

/** OpenAI's rule: prefixes of 1024 tokens or more, cached in 128-token steps. */
export const AUTOMATIC: CacheRule = { kind: 'automatic', minTokens: 1024, step: 128 };

/** DeepSeek's rule: 64-token storage units, nothing under 64 tokens cached, a call's output cached after its prompt, readable 1 s after it is written. */
export const DEEPSEEK_READY_SECONDS = 1;
const DEEPSEEK: CacheRule = { kind: 'automatic', minTokens: 64, step: 64, output: true, ready: DEEPSEEK_READY_SECONDS };

/** Providers that serve Claude with Anthropic's cache_control breakpoints. */
const CLAUDE_HOSTS = new Set(['anthropic', 'bedrock', 'bedrock_converse', 'vertex_ai-anthropic_models']);

/** Picks the rule from the model name, its `litellm_provider` and which cache prices it lists. */
export function cacheRuleFor(model: string, provider: string, hasRead: boolean, hasWrite: boolean): CacheRule {
  const claude = provider === 'anthropic' || /claude/i.test(model);
  if (claude && (CLAUDE_HOSTS.has(provider) || hasRead || hasWrite)) return { kind: 'explicit', minTokens: explicitMinTokens(model) };
  if (hasRead) return provider === 'deepseek' ? DEEPSEEK : AUTOMATIC;
  return { kind: 'none' };
}

/**
 * Anthropic's minimum cacheable prompt length, as its prompt-caching
 * documentation lists it: 4096 for Opus 4.5, Opus 4.6 and Haiku 4.5; 2048 for
 * Haiku 3 and 3.5; 1024 for the others (Sonnet 3.7–4.6, Opus 3–4.1).
 * Names are matched in any provider's spelling (`claude-haiku-4-5`,
 * `anthropic.claude-3-5-haiku-…`, `anthropic/claude-opus-4.5`).
 */
export function explicitMinTokens(model: string): number {
  const m = model.toLowerCase();
  if (/(opus|haiku)-4[-.]5|opus-4[-.]6/.test(m)) return 4096;
  if (/claude-3[-.](5[-.])?haiku|haiku-3/.test(m)) return 2048;
  return 1024;
}
