import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { defaultStudy, loadStudy, policiesFromFlags, type Study } from '../scenario/study.js';

/** Flags every study-running command takes; they override the study file. */
export interface StudyFlags {
  study?: string;
  out?: string;
  seed?: number;
  policy?: string[];
  scenario?: string[];
  model?: string;
  tokenizer?: string;
  prices?: string;
  cache?: string;
}

export const STUDY_OPTIONS = {
  out: { type: 'string', describe: 'output folder (overrides the study)' },
  seed: { type: 'number', describe: 'random seed' },
  policy: { type: 'string', array: true, describe: 'policy spec, e.g. window-tokens:budget=2000 (repeatable; replaces the study list)' },
  scenario: { type: 'string', array: true, describe: 'scenario file glob (repeatable; replaces the study list)' },
  model: { type: 'string', describe: 'chat model, e.g. gpt-4o-mini' },
  tokenizer: { type: 'string', describe: 'auto | o200k_base | cl100k_base | chars4' },
  prices: { type: 'string', describe: 'LiteLLM-format price table JSON' },
  cache: { type: 'string', choices: ['auto', 'off'], describe: 'prompt caching' },
} as const;

/** The study file (or the default study) with the command-line flags applied. */
export function studyFromFlags(flags: StudyFlags): Study {
  const study = flags.study ? loadStudy(flags.study) : defaultStudy();
  if (flags.out !== undefined) study.out = resolve(flags.out);
  if (flags.seed !== undefined) {
    if (!Number.isInteger(flags.seed)) throw new UsageError(`--seed: expected a whole number, got ${flags.seed}`);
    study.seed = flags.seed;
  }
  if (flags.model !== undefined) study.model = flags.model;
  if (flags.tokenizer !== undefined) study.tokenizer = flags.tokenizer;
  if (flags.prices !== undefined) study.prices = resolve(flags.prices);
  if (flags.cache !== undefined) study.cache = flags.cache as Study['cache'];
  if (flags.policy?.length) study.policies = policiesFromFlags(flags.policy);
  if (flags.scenario?.length) study.scenarios = flags.scenario.map((pattern) => ({ kind: 'glob', pattern, base: process.cwd() }));
  return study;
}
