/** Builders shared by the pricing tests: exact-size texts, scenarios and price tables. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runStudy, type RunResults } from '../src/engine/run.js';
import type { RunOptions } from '../src/engine/spec.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { policiesFromFlags } from '../src/study/study.js';
import type { Conversation } from '../src/types.js';
import { tempDir } from './_tmp.js';

/**
 * A text of exactly `tokens` tokens under `chars4` (4 characters per token),
 * starting with `label`, padded with ` .` (a piece of one token under
 * OpenAI's encodings, where a run of dots is one long piece, slow to count).
 */
export function text(label: string, tokens: number): string {
  const n = tokens * 4;
  return label.length >= n ? label.slice(0, n) : label + ' .'.repeat(Math.ceil((n - label.length) / 2)).slice(0, n - label.length);
}

export interface TurnSpec {
  user: number;
  assistant?: number;
  /** Seconds since the previous turn (default 30). */
  gap?: number;
}

/** A conversation built through the scenario loader; sizes are chars4 tokens. */
export function conversation(id: string, turns: readonly TurnSpec[], system?: number): Conversation {
  const doc = {
    id,
    ...(system !== undefined && { system: text('SYSTEM', system) }),
    turns: turns.map((t, i) => ({
      user: text(`U${i + 1}`, t.user),
      ...(t.gap !== undefined && { gap: `${t.gap}s` }),
      ...(t.assistant !== undefined && { assistant: text(`A${i + 1}`, t.assistant) }),
    })),
  };
  return scenarioFromText(`${id}.yaml`, JSON.stringify(doc));
}

/**
 * The growing conversation: with `full`, call n sends 500 × n tokens
 * (plus the system prompt): user 1 has 500 tokens, later users 400, every reply 100.
 */
export function growing(id: string, exchanges: number, opts: { system?: number; gaps?: Record<number, number> } = {}): Conversation {
  const turns = Array.from({ length: exchanges }, (_, i) => ({ user: i === 0 ? 500 : 400, assistant: 100, gap: opts.gaps?.[i + 1] }));
  return conversation(id, turns, opts.system);
}

/** Writes a LiteLLM-format price table to a fresh temp folder; returns its path. */
export function priceFile(entries: Record<string, unknown>, name = 'prices.json'): string {
  const dir = tempDir('ctxsim-prices-');
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(entries, null, 2));
  return file;
}

/** Runs the whole study path with chars4 counts. */
export function study(conversations: readonly Conversation[], policies: readonly string[], opts: Partial<RunOptions> & { model: string }): RunResults {
  const { model, ...rest } = opts;
  return runStudy({ seed: 42, tokenizer: 'chars4', ...rest, models: [model], conversations, policies: policiesFromFlags(policies) });
}

/**
 * The four-turn scenario of the context-window tests, written to `dir` as
 * `<id>.yaml`: every message 32 characters (8 chars4 tokens), the fact `code`
 * stated in turn 1 and probed in turns 2 and 4.
 */
export function tinyWindowScenario(dir: string, id = 'tiny-window'): string {
  const line = (label: string) => label.padEnd(32, '.');
  const file = join(dir, `${id}.yaml`);
  const doc = {
    id,
    turns: [
      { user: line('My code is ZX-42 '), facts: { code: 'ZX-42' }, assistant: line('Noted') },
      { user: line('What is my code?'), probe: ['code'], assistant: line('It is ZX-42 ') },
      { user: line('Thanks'), assistant: line('Welcome') },
      { user: line('Remind me of my code'), probe: ['code'], assistant: line('Sure') },
    ],
  };
  writeFileSync(file, JSON.stringify(doc));
  return file;
}
