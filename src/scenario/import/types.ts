import type { z } from 'zod';
import type { ScenarioOut } from '../docs.js';

/** One kind of dataset oddity an importer tolerated, with how often it happened. */
export interface Quirk {
  /** Stable key, e.g. `unresolved-evidence`. */
  key: string;
  /** What it is, in words, for the report line. */
  label: string;
  count: number;
  /** A few instances (ids or values), to find them in the dataset. */
  examples: string[];
}

/** What an importer made of a file: scenario documents and the quirks it met. */
export interface ImportResult {
  docs: ScenarioOut[];
  quirks: Quirk[];
  /** The names a log wrote for the model that the documents' `model:` resolves, by the name resolved (SWE-agent's `gpt4` for gpt-4-1106-preview). */
  aliases?: ReadonlyMap<string, string>;
}

/** Where an importer reads from and resolves side files against. */
export interface ImportInput {
  /** Absolute path of the dataset. */
  path: string;
  /** How the dataset is named in messages. */
  file: string;
  /** Folder that relative side-file paths in the options are relative to. */
  base: string;
}

/**
 * A dataset format: its option schema (strict) and a reader that throws
 * ScenarioError on malformed data. The schema is an object of options, each
 * described (`.describe()`): the study file's `import:` keys, their JSON
 * Schema and the `ctxsim import` flags and help all read it.
 */
export interface Importer<O extends object = object> {
  id: string;
  describe: string;
  options: z.ZodType<O>;
  /**
   * Its logs can record what the provider billed for each model call
   * (`usage:` on the calls), which `import --unlogged-prefix billed` sizes
   * the part of the prompt the log leaves out from.
   */
  billedCalls?: boolean;
  read(input: ImportInput, options: O): ImportResult;
}

/** Collects quirks by key, keeping the first few examples. */
export class QuirkLog {
  private readonly byKey = new Map<string, Quirk>();

  add(key: string, label: string, example?: string): void {
    let q = this.byKey.get(key);
    if (!q) this.byKey.set(key, (q = { key, label, count: 0, examples: [] }));
    q.count++;
    if (example !== undefined && q.examples.length < 3) q.examples.push(example);
  }

  list(): Quirk[] {
    return [...this.byKey.values()];
  }
}
